// Every stage that is not a built-in row op is lowered through TIR
// (lower_stages.h): the generated entry's stages are the TIR's stages, the
// checks keep their place (a precheck of parameters before any stage, the
// others in their stage), and the CPU printer spells the heap allocations
// some of them need.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/compiler/codegen.h"
#include "core/compiler/cpu/cpp_printer.h"
#include "core/compiler/scalar_lowering.h"
#include "core/compiler/stage_lowering.h"
#include "core/frontend/parser.h"
#include "core/ir/error.h"
#include "core/ops/registry.h"
#include "core/tir/op.h"

namespace tf {
namespace {

constexpr const char* kSource = R"(from tilefoundry.dsl import *

N = DimVar("N", 1, 1 << 20)
K = DimVar("K", 1, 1 << 16)
CTX = DimVar("CTX", 1, 8193)

@func
def shapes_and_data(x: Tensor[(CTX, 64), f32], idx: Tensor[(CTX, 2), i64], kv: Tensor[(1, CTX, 2, 32), f32],
                    new: Tensor[(1, 4, 2, 32), f32], pos: Tensor[(), i32], s: Tensor[(), i32]
                    ) -> tuple[Tensor[(CTX, 2), f32], Tensor[(2, CTX, 64), f32], Tensor[(CTX, 128), f32],
                               Tensor[(dim_min(512, CTX // 4), 64), f32], Tensor[(dim_min(512, CTX // 4), 64), i64],
                               Tensor[(1, CTX, 2, 32), f32], Tensor[(2,), i64]]:
    g = gather(x, idx, axis=1, batch_dims=1)
    st = stack((x, x), axis=0)
    w = insert_slice(x, slice(x, begin=(0, 0), end=(CTX, 8), strides=(1, 1)), (0, 56))
    vals, ids = topk(x, k=dim_min(512, CTX // 4), axis=0)
    kv2 = cache_update(kv, pos, s, new)
    sh = shape_of(x)
    return g, st, concat((w, x), axis=1), vals, ids, kv2, shape_compose((shape_extract(sh, index=1), rank(x)))

@func
def gemm_and_layout(a: Tensor[(N, K), f32], b: Tensor[(K, 16), f32]) -> tuple[Tensor[(16, N), f32], Tensor[(16,), f32], Tensor[(N, 4, 4), f32]]:
    h = matmul(a, b)
    return transpose(h, (1, 0)), sum(h, axes=(0,), keepdim=False), reshape(h, (N, 4, 4))

@func
def conv(x: Tensor[(1, 3, 8, 8), f32], w: Tensor[(4, 3, 3, 3), f32], b: Tensor[(4,), f32]) -> Tensor[(1, 4, 8, 8), f32]:
    return conv2d(x, w, b, padding=1)

@func
def rotary(q: Tensor[(1, 4, 2, 8), f32], k: Tensor[(1, 4, 2, 8), f32], c: Tensor[(16, 8), f32], sn: Tensor[(16, 8), f32], p: Tensor[(1, 4), i64]) -> tuple[Tensor[(1, 4, 2, 8), f32], Tensor[(1, 4, 2, 8), f32]]:
    return rope(q, k, c, sn, p)

@func
def rotary_computed_positions(q: Tensor[(1, 4, 2, 8), f32], k: Tensor[(1, 4, 2, 8), f32], c: Tensor[(16, 8), f32], sn: Tensor[(16, 8), f32], p: Tensor[(1, 4), i64]) -> tuple[Tensor[(1, 4, 2, 8), f32], Tensor[(1, 4, 2, 8), f32]]:
    return rope(q, k, c, sn, p + 1)

@func
def norm(x: Tensor[(N, 16), f32], w: Tensor[(16,), f32]) -> Tensor[(N, 16), f32]:
    return rms_norm(x, w, eps=1e-6)
)";

class StageLowerings : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { module_ = frontend::parse_module(kSource, "stages.py"); }
  static ir::ModulePtr module_;

  compiler::Program generate(const std::string& name) { return compiler::generate(*module_->lookup(name)); }

  static int count(const std::string& text, const std::string& what) {
    int n = 0;
    for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
    return n;
  }
};
ir::ModulePtr StageLowerings::module_;

TEST_F(StageLowerings, EveryDataAndShapeStageIsTir) {
  // (The slice InsertSlice reads from memory and the returned concat are
  // fused stages: views read in place.)
  const compiler::Program p = generate("shapes_and_data");
  for (const char* stage : {"stage: gather", "stage: stack", "stage: Slice", "stage: InsertSlice", "stage: topk",
                            "stage: CacheUpdate", "stage: shape_of", "stage: Concat", "stage: shape_extract",
                            "stage: rank", "stage: shape_compose"})
    EXPECT_NE(p.tir.find(stage), std::string::npos) << stage << "\n" << p.tir;
  EXPECT_EQ(count(p.body, "// stage:"), count(p.tir, "// stage:")) << p.body;
}

TEST_F(StageLowerings, GemmReduceAndLayoutStagesAreTir) {
  const compiler::Program p = generate("gemm_and_layout");
  for (const char* stage : {"stage: matmul", "stage: Transpose", "stage: reduce", "stage: Reshape"})
    EXPECT_NE(p.tir.find(stage), std::string::npos) << stage << "\n" << p.tir;
  EXPECT_EQ(count(p.body, "// stage:"), count(p.tir, "// stage:")) << p.body;
  EXPECT_NE(p.body.find("tf_gemm<float>(rt, "), std::string::npos) << p.body;
}

TEST_F(StageLowerings, ConvAllocatesItsIm2colBufferOnTheHeapAndFreesIt) {
  const compiler::Program p = generate("conv");
  EXPECT_NE(p.tir.find("stage: conv2d"), std::string::npos) << p.tir;
  EXPECT_EQ(count(p.body, "std::malloc("), 1) << p.body;
  EXPECT_EQ(count(p.body, "std::free(col)"), 1) << p.body;
}

// Positions given as a parameter are checked before any stage writes (a
// precheck that returns), so the kernel does not count as one that fails
// after writing; computed positions are checked in the stage.
TEST_F(StageLowerings, RopeChecksParameterPositionsFirst) {
  const compiler::Program given = generate("rotary");
  EXPECT_NE(given.tir.find("precheck: rope positions"), std::string::npos) << given.tir;
  EXPECT_FALSE(given.may_fail);
  const compiler::Program computed = generate("rotary_computed_positions");
  EXPECT_EQ(computed.tir.find("precheck: rope positions"), std::string::npos) << computed.tir;
  EXPECT_NE(computed.body.find("tf_fail(err, ((int32_t)3))"), std::string::npos) << computed.body;
  EXPECT_TRUE(computed.may_fail);
}

// The built-in row ops are their decompositions: a fused TIR stage, like
// every other stage; nothing of the entry is written as text.
TEST_F(StageLowerings, BuiltInRowOpsAreFusedTirStages) {
  const compiler::Program p = generate("norm");
  EXPECT_EQ(count(p.tir, "// stage: Binary"), 1) << p.tir;
  EXPECT_EQ(count(p.body, "// stage:"), 1) << p.body;
}

// Every registered op has the compiler's part: a scalar lowering, a stage
// lowering or a decomposition (Local's stage says it has no single-device
// meaning, as the evaluator's kernel does).
TEST(StageLowering, EveryOpHasANativeLowering) {
  EXPECT_EQ(ops::missing_parts(ops::all_ops(), {compiler::native_lowering_part()}), std::vector<std::string>{});
  for (const char* name : {"Binary", "MatMul", "RMSNorm", "Local"}) {
    const ops::OpInfo* op = ops::find_op(name);
    ASSERT_NE(op, nullptr) << name;
    EXPECT_TRUE(compiler::native_lowering_part().has(*op)) << name;
  }
  ops::OpInfo made_up = *ops::find_op("Binary");
  made_up.name = "NotLoweredAnywhere";
  EXPECT_EQ(ops::missing_parts({made_up}, {compiler::native_lowering_part()}),
            std::vector<std::string>{"NotLoweredAnywhere lacks a native lowering"});
}

TEST(StageLowering, EveryKeyIsARegisteredOp) {
  for (const std::string& gap : ops::missing_parts(ops::all_ops(), {compiler::stage_lowering_part()}))
    EXPECT_EQ(gap.find("is registered for"), std::string::npos) << gap;
}

TEST(StageLowering, ASecondLoweringForAnOpIsRefused) {
  const compiler::StageLowering* matmul = compiler::find_stage_lowering("MatMul");
  ASSERT_NE(matmul, nullptr);
  EXPECT_THROW(compiler::register_stage_lowering("MatMul", *matmul), ir::Error);
  EXPECT_EQ(compiler::find_stage_lowering("Binary"), nullptr);  // elementwise: a scalar lowering
}

TEST(CppPrinter, GlobalAllocationIsMallocAndFreeAroundItsBody) {
  using namespace tir;
  VarPtr n = Var::make("n", Type::scalar(ir::DType::kI64)), b = Var::make("b", Type::pointer(ir::DType::kF32));
  StmtPtr s = Allocate::make(b, n, MemoryScope::kGlobal, Store::make(b, i64(0), imm(ir::DType::kF32, 1)));
  compiler::cpu::CppPrinter p;
  p.predeclare(n, "n");
  const std::string text = p.stmt(s, 0);
  EXPECT_EQ(text,
            "float* b = static_cast<float*>(std::malloc(static_cast<size_t>(n) * sizeof(float)));\n"
            "b[INT64_C(0)] = 0x1p+0f;\n"
            "std::free(b);\n");
}

}  // namespace
}  // namespace tf
