// A copy whose operand has its unit stride on the result's second-to-last
// axis (x.T, k.transpose(-1, -2)) runs as transposed planes: the prelude's tf_transpose_block, in
// blocks of rows read along the operand, in registers for 2-, 4- and
// 8-byte values and in L1 strips for the others. These tests check that
// the fused copy and a Transpose's own stage (8-bit floats, which fused
// stages refuse) take that path, and that the result is the operand's bits
// moved: every dtype, every edge of a block (rows, columns, the column
// chunk of a task), padded and permuted operands, and copies large enough
// to stream. A row stage (softmax, RMSNorm) over such a Transpose reads a
// stored copy of it.
#include <cstring>

#include "compiler_helpers.h"
#include "core/compiler/codegen.h"
#include "core/frontend/parser.h"

namespace tf::comptest {
namespace {

std::string source() {
  std::string s = R"(from tilefoundry.dsl import *

A = DimVar("A", 1, 1 << 16)
B = DimVar("B", 1, 1 << 16)
C = DimVar("C", 1, 1 << 16)
)";
  for (const char* d : {"f32", "f64", "bf16", "f16", "i8", "i32", "i64", "bool", "fp8e4m3"}) {
    const std::string t = d;
    s += "\n@func\ndef t2_" + t + "(x: Tensor[(A, B), " + t + "]) -> Tensor[(B, A), " + t +
         "]:\n    return transpose(x, (1, 0))\n";
    s += "\n@func\ndef t3_" + t + "(x: Tensor[(A, B, C), " + t + "]) -> Tensor[(A, C, B), " + t +
         "]:\n    return transpose(x, (0, 2, 1))\n";
  }
  s += R"(
@func
def scaled(x: Tensor[(A, B), f32]) -> Tensor[(B, A), f32]:
    return transpose(x, (1, 0)) * 2.0

@func
def rows_kept(x: Tensor[(A, B, C), f32]) -> Tensor[(B, A, C), f32]:
    return transpose(x, (1, 0, 2))

@func
def softmax_t(x: Tensor[(A, B), f32]) -> Tensor[(B, A), f32]:
    return softmax(transpose(x, (1, 0)) * 2.0)

@func
def rms_norm_t(x: Tensor[(A, B, C), bf16], w: Tensor[(B,), bf16]) -> Tensor[(A, C, B), bf16]:
    return rms_norm(transpose(x, (0, 2, 1)), w, eps=1e-6)

@func
def softmax_rows_kept(x: Tensor[(A, B, C), f32]) -> Tensor[(B, A, C), f32]:
    return softmax(transpose(x, (1, 0, 2)))
)";
  return s;
}

const DType kDtypes[] = {DType::kF32, DType::kF64, DType::kBF16, DType::kF16, DType::kI8,
                         DType::kI32, DType::kI64, DType::kBool, DType::kFP8E4M3};

class TransposedPlanes : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { module_ = frontend::parse_module(source(), "transposed_planes.tf"); }
  static const ir::Function& fn(const std::string& name) { return *module_->lookup(name); }
  static std::string name(const std::string& f, DType d) { return f + "_" + std::string(ir::dtype_name(d)); }
  // Random bits in every element (NaNs with payloads among the floats), 0
  // or 1 in a bool.
  NDArray bits(DType d, const std::vector<int64_t>& shape) {
    NDArray a = NDArray::empty(d, shape);
    auto* p = static_cast<uint8_t*>(a.data());
    const int64_t n = a.numel() * ir::dtype_bytes(d);
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(d == DType::kBool ? rng_() & 1 : rng_());
    return a;
  }
  // The compiled copy holds the evaluator's bytes.
  void check(const std::string& f, const NDArray& x, const std::string& what) {
    auto k = compiler::compile(fn(f));
    std::vector<NDArray> want = eval::evaluate(*module_, fn(f), {x});
    std::vector<NDArray> got = run_native(*k, fn(f), {x});
    ASSERT_EQ(got.size(), 1u);
    ASSERT_EQ(got[0].shape(), want[0].shape()) << f << " " << what;
    const size_t n = static_cast<size_t>(want[0].numel() * ir::dtype_bytes(want[0].dtype()));
    EXPECT_EQ(std::memcmp(got[0].data(), want[0].data(), n), 0) << f << " " << what;
  }
  static ir::ModulePtr module_;
  std::mt19937 rng_{23};
};
ir::ModulePtr TransposedPlanes::module_;

TEST_F(TransposedPlanes, CopiesCallThePlaneRoutine) {
  for (DType d : kDtypes)
    for (const char* f : {"t2", "t3"}) {
      const std::string t = compiler::generate(fn(name(f, d))).tir;
      EXPECT_EQ(count(t, "@tf_transpose_block("), 2) << name(f, d) << "\n" << t;  // parallel and serial
    }
  // A stage that computes does not.
  EXPECT_EQ(count(compiler::generate(fn("scaled")).tir, "tf_transpose_block"), 0);
}

TEST_F(TransposedPlanes, EveryDtypeAndBlockEdgeIsTheOperandMoved) {
  // Rows of y around a block (128 bytes of y's row: 16 to 128 values) and
  // columns around a register step (8 or 16) and past a task's 4096.
  const std::vector<std::vector<int64_t>> shapes = {{1, 1},  {3, 5},   {16, 16}, {17, 33},  {33, 15},
                                                    {8, 65}, {65, 8},  {129, 7}, {31, 130}, {5, 4100}};
  for (DType d : kDtypes) {
    for (const auto& s : shapes) check(name("t2", d), bits(d, s), "shape " + ::testing::PrintToString(s));
    check(name("t3", d), bits(d, {3, 19, 70}), "batched");
  }
}

TEST_F(TransposedPlanes, PaddedAndPermutedOperands) {
  for (DType d : {DType::kF32, DType::kF64, DType::kBF16, DType::kI8}) {
    // Rows padded past their extent: x[:, :50] of a [40, 64] buffer.
    NDArray wide = bits(d, {40, 64});
    check(name("t2", d), NDArray::view(wide, {40, 50}, {64, 1}), "padded rows");
    // A batch axis that is not outermost in memory: [B, A, C] viewed as [A, B, C].
    NDArray bac = bits(d, {9, 4, 37});
    check(name("t3", d), NDArray::view(bac, {4, 9, 37}, {37, 4 * 37, 1}), "permuted batch");
  }
}

// Copies that move at least three quarters of the pinned 32 MiB cache
// stream their lines: aligned rows (a multiple of a line) and rows that
// are not, whose blocks then store plainly.
TEST_F(TransposedPlanes, StreamedCopiesAreTheOperandMoved) {
  check("t2_f32", bits(DType::kF32, {1024, 3200}), "f32 streamed, aligned");
  check("t2_f32", bits(DType::kF32, {1023, 3201}), "f32 streamed, unaligned");
  check("t2_f64", bits(DType::kF64, {1600, 1024}), "f64 streamed");
  check("t3_bf16", bits(DType::kBF16, {4, 1600, 1024}), "bf16 streamed");
  // A permutation whose rows stay rows is not a plane: the tiles' copy.
  check("rows_kept", bits(DType::kF32, {300, 200, 70}), "rows kept");
}

// A row stage reads its rows along: a Transpose that moves the last axis
// under it is stored first (a copy of planes) rather than read down its
// columns, one line per element; one that keeps the last axis is read in
// place.
TEST_F(TransposedPlanes, RowStagesReadATransposeMovingTheLastAxisFromACopy) {
  for (const char* f : {"softmax_t", "rms_norm_t"}) {
    const std::string t = compiler::generate(fn(f)).tir;
    EXPECT_EQ(count(t, "// stage:"), 2) << f << "\n" << t;
    EXPECT_EQ(count(t, "// stage: Transpose"), 1) << f << "\n" << t;
    EXPECT_EQ(count(t, "@tf_transpose_block("), 2) << f << "\n" << t;
  }
  const std::string kept = compiler::generate(fn("softmax_rows_kept")).tir;
  EXPECT_EQ(count(kept, "// stage:"), 1) << kept;
  for (const auto& s : std::vector<std::vector<int64_t>>{{3, 5}, {70, 33}, {1, 300}})
    expect_agree(*compiler::compile(fn("softmax_t")), *module_, fn("softmax_t"),
                 {random_array(DType::kF32, s, rng_)}, "softmax_t");
  expect_agree(*compiler::compile(fn("rms_norm_t")), *module_, fn("rms_norm_t"),
               {random_array(DType::kBF16, {2, 40, 17}, rng_), random_array(DType::kBF16, {40}, rng_)}, "rms_norm_t");
  expect_agree(*compiler::compile(fn("softmax_rows_kept")), *module_, fn("softmax_rows_kept"),
               {random_array(DType::kF32, {4, 3, 20}, rng_)}, "softmax_rows_kept");
}

}  // namespace
}  // namespace tf::comptest
