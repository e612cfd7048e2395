// The worked examples of the IR reference (docs/ir.md) and of the README's
// kernel module, each as a conformance test: accepted with the structure and
// type the text gives it, and computing the value it describes, on the
// evaluator and compiled.
//  * the loop-carried accumulator: an rmem `zeros` accumulator plus one
//    `load_tile` per trip of a `tile(K, step=BLOCK)` loop, which becomes one
//    GridRegionExpr whose single carry keeps its type;
//  * rmsnorm, swiglu, resnorm (a shared value and a tuple return), rowsum (a
//    tile loop over a row window) and the decode dispatch prototype with two
//    variants.
#include <cmath>

#include "compiler_helpers.h"
#include "core/frontend/parser.h"
#include "core/ir/error.h"
#include "core/ops/math/math.h"
#include "core/ir/structural.h"
#include "core/ops/tensor/tensor.h"

namespace tf::comptest {
namespace {

// The accumulator example, wrapped in the function it needs to be a program.
const char* kAccumulator = R"(from tilefoundry.dsl import *

M = 64
BLOCK = 64
K = DimVar("K", 0, 1 << 16)

@func
def tile_sum(x: Tensor[(K,), f32]) -> Tensor[(M,), f32]:
    acc = zeros((M,), f32, storage="rmem")
    for i in tile(K, step=BLOCK):
        acc = acc + load_tile(x, i)
    # After the loop, `acc` resolves to the GridRegionExpr value.
    return acc
)";

// acc[j] = sum over tiles t of x[t * 64 + j], in double.
std::vector<double> tile_sums(const NDArray& x) {
  std::vector<double> acc(64, 0.0);
  for (int64_t i = 0; i < x.numel(); ++i) acc[i % 64] += element(x, i);
  return acc;
}

TEST(IrExamples, LoopCarriedAccumulatorBuildsOneGridRegionWhoseCarryKeepsItsType) {
  ir::ModulePtr m = frontend::parse_module(kAccumulator, "accumulator.tf");
  const ir::Function& f = *m->lookup("tile_sum");
  const auto* g = ir::expr_as<ir::GridRegionExpr>(f.body());
  ASSERT_NE(g, nullptr) << "the function's value is the loop itself";
  const auto& F = g->fields();
  EXPECT_EQ(F.induction_var->name(), "i");
  ASSERT_EQ(F.carried_args.size(), 1u);
  ASSERT_EQ(F.init_args.size(), 1u);
  ASSERT_EQ(F.yield_values.size(), 1u);
  EXPECT_EQ(F.extent, ir::ShapeDim::var("K", 0, 1 << 16));
  EXPECT_EQ(F.step, ir::ShapeDim(64));
  EXPECT_EQ(F.start, ir::ShapeDim(0));
  // init: the pre-loop `acc`, a Zeros call in rmem.
  const auto* init = ir::expr_as<ir::Call>(F.init_args[0]);
  ASSERT_NE(init, nullptr);
  const auto* zeros = dynamic_cast<const ops::Zeros*>(init->op().get());
  ASSERT_NE(zeros, nullptr);
  EXPECT_EQ(zeros->storage, ir::StorageKind::kRmem);
  // body = yield = add(acc_phi, load_tile(x, i)).
  EXPECT_EQ(F.body, F.yield_values[0]);
  const auto* add = ir::expr_as<ir::Call>(F.yield_values[0]);
  ASSERT_NE(add, nullptr);
  const auto* bin = dynamic_cast<const ops::Binary*>(add->op().get());
  ASSERT_NE(bin, nullptr);
  EXPECT_EQ(bin->kind, ops::BinaryKind::kAdd);
  ASSERT_EQ(add->args().size(), 2u);
  EXPECT_EQ(add->args()[0], ir::ExprPtr(F.carried_args[0]));
  const auto* load = ir::expr_as<ir::Call>(add->args()[1]);
  ASSERT_NE(load, nullptr);
  EXPECT_NE(dynamic_cast<const ops::Slice*>(load->op().get()), nullptr) << "load_tile is a window of x";
  EXPECT_EQ(load->args()[0], ir::ExprPtr(f.params()[0]));
  // Types: the carry, the yield and the loop are all Tensor[(64,), f32, "rmem"];
  // the function returns it by value into its declared gmem result.
  const std::string rmem = "Tensor[(64,), f32, \"rmem\"]";
  EXPECT_EQ(F.carried_args[0]->type()->to_string(), rmem);
  EXPECT_EQ(F.yield_values[0]->type()->to_string(), rmem);
  EXPECT_EQ(f.body()->type()->to_string(), rmem);
  EXPECT_EQ(f.return_type()->to_string(), "Tensor[(64,), f32]");
}

TEST(IrExamples, LoopCarriedAccumulatorSumsTheTilesOnBothBackends) {
  ir::ModulePtr m = frontend::parse_module(kAccumulator, "accumulator.tf");
  const ir::Function& f = *m->lookup("tile_sum");
  auto k = compiler::compile(f);  // throws kUnsupported when it cannot compile natively
  std::mt19937 rng(11);
  for (int64_t n : {0, 64, 1024, 64 * 37}) {
    NDArray x = random_array(DType::kF32, {n}, rng);
    std::vector<double> want = tile_sums(x);
    for (const auto& out : {eval::evaluate(*m, f, {x}), run_native(*k, f, {x})}) {
      ASSERT_EQ(out.size(), 1u);
      ASSERT_EQ(out[0].shape(), std::vector<int64_t>{64});
      for (int64_t j = 0; j < 64; ++j)
        EXPECT_NEAR(element(out[0], j), want[j], 1e-4 * (1 + std::abs(want[j]))) << "K=" << n << " j=" << j;
    }
  }
}

TEST(IrExamples, LoadTileTakesTheWindowOnTheNamedAxis) {
  ir::ModulePtr m = frontend::parse_module(R"(from tilefoundry.dsl import *
N = DimVar("N", 1, 64)

@func
def cols(x: Tensor[(N, 256), f32]) -> Tensor[(N, 32), f32]:
    acc = zeros((N, 32), f32, storage="rmem")
    for i in tile(256, step=32):
        acc = acc + load_tile(x, i)
    return acc

@func
def rows(x: Tensor[(128, 8), f32]) -> Tensor[(16, 8), f32]:
    acc = zeros((16, 8), f32, storage="rmem")
    for i in tile(128, step=16):
        acc = acc + load_tile(x, i, axis=0)
    return acc
)",
                                           "load_tile.tf");
  std::mt19937 rng(5);
  NDArray a = random_array(DType::kF32, {3, 256}, rng);
  NDArray got = eval::evaluate(*m, *m->lookup("cols"), {a})[0];
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t c = 0; c < 32; ++c) {
      double want = 0;
      for (int64_t t = 0; t < 8; ++t) want += element(a, r * 256 + t * 32 + c);
      EXPECT_NEAR(element(got, r * 32 + c), want, 1e-4);
    }
  NDArray b = random_array(DType::kF32, {128, 8}, rng);
  got = eval::evaluate(*m, *m->lookup("rows"), {b})[0];
  for (int64_t r = 0; r < 16; ++r)
    for (int64_t c = 0; c < 8; ++c) {
      double want = 0;
      for (int64_t t = 0; t < 8; ++t) want += element(b, (t * 16 + r) * 8 + c);
      EXPECT_NEAR(element(got, r * 8 + c), want, 1e-4);
    }
  for (const char* name : {"cols", "rows"}) {
    const ir::Function& f = *m->lookup(name);
    auto k = compiler::compile(f);
    expect_agree(*k, *m, f, {random_array(DType::kF32, name[0] == 'c' ? std::vector<int64_t>{5, 256}
                                                                      : std::vector<int64_t>{128, 8}, rng)},
                 name);
  }
}

TEST(IrExamples, LoadTileRejectsAnAxisOutOfRangeAndANonTensor) {
  auto expect_type_error = [](const std::string& body, const std::string& words) {
    std::string src = "from tilefoundry.dsl import *\n@func\ndef f(x: Tensor[(64,), f32]) -> Tensor[(8,), f32]:\n" +
                      body;
    try {
      frontend::parse_module(src, "bad.tf");
      ADD_FAILURE() << "accepted: " << body;
    } catch (const ir::Error& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("bad.tf:"), std::string::npos) << e.what();
    }
  };
  expect_type_error("    acc = zeros((8,), f32)\n    for i in tile(64, step=8):\n        acc = acc + load_tile(x, i, axis=1)\n"
                    "    return acc\n",
                    "load_tile's axis 1 is out of range for a rank-1 tensor");
  expect_type_error("    acc = zeros((8,), f32)\n    for i in tile(64, step=8):\n        acc = acc + load_tile(3, i)\n"
                    "    return acc\n",
                    "load_tile's x must be a tensor");
}

// SSA shape: a value used once nests; a name bound once and used several
// times is one shared node.
TEST(IrExamples, SingleUseNestsAndMultipleUsesShareOneNode) {
  ir::ModulePtr m = frontend::parse_module(R"(from tilefoundry.dsl import *
@func
def nested(a: Tensor[(4,), f32], b: Tensor[(4,), f32], c: Tensor[(4,), f32]) -> Tensor[(4,), f32]:
    return (a + b) * c

@func
def shared(a: Tensor[(4,), f32], b: Tensor[(4,), f32], d: Tensor[(4,), f32]) -> Tensor[(4,), f32]:
    c = add(a, b)
    return mul(c, c) - (c - d)
)",
                                           "ssa.tf");
  const auto* mul = ir::expr_as<ir::Call>(m->lookup("nested")->body());
  ASSERT_NE(mul, nullptr);
  const auto* add = ir::expr_as<ir::Call>(mul->args()[0]);
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->args()[0], ir::ExprPtr(m->lookup("nested")->params()[0]));
  EXPECT_EQ(add->args()[1], ir::ExprPtr(m->lookup("nested")->params()[1]));
  const auto* sub = ir::expr_as<ir::Call>(m->lookup("shared")->body());
  ASSERT_NE(sub, nullptr);
  const auto* sq = ir::expr_as<ir::Call>(sub->args()[0]);
  const auto* cd = ir::expr_as<ir::Call>(sub->args()[1]);
  ASSERT_TRUE(sq && cd);
  EXPECT_EQ(sq->args()[0], sq->args()[1]) << "mul(c, c) reads one node twice";
  EXPECT_EQ(sq->args()[0], cd->args()[0]) << "every use of c is the same node";
}

// The operator and the subscript are the preferred spellings of the named
// forms; both build the same IR.
TEST(IrExamples, OperatorsAndSubscriptsBuildTheSameIrAsTheNamedForms) {
  auto module = [](const std::string& expr) {
    return frontend::parse_module(
        "from tilefoundry.dsl import *\n@func\ndef f(a: Tensor[(2, 3, 8), f32], b: Tensor[(2, 3, 8), f32]) -> "
        "Tensor[(2, 3, 1), f32]:\n    return " + expr + "\n",
        "spelling.tf");
  };
  auto same = [&](const std::string& x, const std::string& y) {
    EXPECT_TRUE(ir::structural_equal(*module(x), *module(y))) << x << " vs " << y;
  };
  EXPECT_FALSE(ir::structural_equal(*module("(a + b)[:, :, 5:6]"), *module("(a - b)[:, :, 5:6]")))
      << "the comparison tells different programs apart";
  same("(a + b)[:, :, 5:6]", "slice(add(a, b), begin=(0, 0, 5), end=(2, 3, 6), strides=(1, 1, 1))");
  same("(a - b * a / b)[:, :, 7:8]", "slice(sub(a, div(mul(b, a), b)), begin=(0, 0, 7), end=(2, 3, 8), strides=(1, 1, 1))");
  // x[:, :, 3] selects [3, 4) and drops the axis: a Slice then a Reshape.
  ir::ModulePtr m = frontend::parse_module(
      "from tilefoundry.dsl import *\n@func\ndef f(x: Tensor[(2, 3, 8), f32]) -> Tensor[(2, 3), f32]:\n"
      "    return x[:, :, 3]\n",
      "spelling.tf");
  const auto* reshape = ir::expr_as<ir::Call>(m->lookup("f")->body());
  ASSERT_NE(reshape, nullptr);
  EXPECT_NE(dynamic_cast<const ops::Reshape*>(reshape->op().get()), nullptr);
  const auto* slice = ir::expr_as<ir::Call>(reshape->args()[0]);
  ASSERT_NE(slice, nullptr);
  EXPECT_EQ(slice->type()->to_string(), "Tensor[(2, 3, 1), f32]");
}

// The README's kernel module, verbatim.
const char* kReadmeModule = R"(from tilefoundry.dsl import *

N = DimVar("N", 1, 1 << 20)       # name, lo (inclusive), hi (exclusive)
D = 4096

@func
def rmsnorm(x: Tensor[(N, D), f32], w: Tensor[(D,), f32]) -> Tensor[(N, D), f32]:
    return rms_norm(x, w, eps=1e-6)

@func
def swiglu(a: Tensor[(N, D), bf16], b: Tensor[(N, D), bf16]) -> Tensor[(N, D), bf16]:
    return silu(a) * b

@func
def resnorm(x: Tensor[(N, D), f32], r: Tensor[(N, D), f32], w: Tensor[(D,), f32]
            ) -> tuple[Tensor[(N, D), f32], Tensor[(N, D), f32]]:
    h = x + r                            # shared: one Call node, two uses
    return h, rms_norm(h, w, eps=1e-6)   # a TupleType return

@func
def rowsum(x: Tensor[(N, D), f32]) -> Tensor[(N,), f32]:
    acc = zeros((N,), f32, storage="rmem")
    for i in tile(D, step=256):          # tile(stop, step) binds a RangeSlice
        acc = acc + sum(x[:, i], axes=(1,), keepdim=False)
    return acc                           # the GridRegionExpr value

S = DimVar("S", 1, 4096)

@func
def decode(q: Tensor[(S, 128), f32]) -> Tensor[(S, 128), f32]:
    pass                                 # dispatch prototype

@decode.specialize(S=(1, 64))            # DimVarRangePat S in [1, 64)
def decode_small(q: Tensor[(S, 128), f32]) -> Tensor[(S, 128), f32]:
    return softmax(q, axis=-1)

@decode.specialize(S=(64, 4096))
def decode_large(q: Tensor[(S, 128), f32]) -> Tensor[(S, 128), f32]:
    return softmax(q, axis=-1)
)";

TEST(IrExamples, ReadmeModuleTypesAsWritten) {
  ir::ModulePtr m = frontend::parse_module(kReadmeModule, "kernels.py");
  // resnorm: h is one Call node used twice.
  const ir::Function& resnorm = *m->lookup("resnorm");
  const auto* tuple = ir::expr_as<ir::Tuple>(resnorm.body());
  ASSERT_NE(tuple, nullptr);
  const auto* norm = ir::expr_as<ir::Call>(tuple->fields()[1]);
  ASSERT_NE(norm, nullptr);
  EXPECT_EQ(norm->args()[0], tuple->fields()[0]) << "h is shared, not recomputed";
  // rowsum: the loop's value is rmem and is returned by value as gmem.
  const ir::Function& rowsum = *m->lookup("rowsum");
  ASSERT_NE(ir::expr_as<ir::GridRegionExpr>(rowsum.body()), nullptr);
  EXPECT_EQ(rowsum.body()->type()->to_string(), "Tensor[(N,), f32, \"rmem\"]");
  EXPECT_EQ(rowsum.return_type()->to_string(), "Tensor[(N,), f32]");
  // decode: a prototype with two labelled variants that partition [1, 4096).
  const ir::Function& decode = *m->lookup("decode");
  EXPECT_EQ(decode.body(), nullptr);
  ASSERT_EQ(decode.variants().size(), 2u);
  EXPECT_EQ(decode.variants()[0]->label(), "decode_small");
  EXPECT_EQ(decode.variants()[1]->label(), "decode_large");
}

TEST(IrExamples, ReadmeModuleComputesOnBothBackends) {
  ir::ModulePtr m = frontend::parse_module(kReadmeModule, "kernels.py");
  std::mt19937 rng(7);
  const std::vector<std::pair<std::string, std::vector<std::pair<DType, std::vector<int64_t>>>>> cases = {
      {"rmsnorm", {{DType::kF32, {3, 4096}}, {DType::kF32, {4096}}}},
      {"swiglu", {{DType::kBF16, {2, 4096}}, {DType::kBF16, {2, 4096}}}},
      {"resnorm", {{DType::kF32, {2, 4096}}, {DType::kF32, {2, 4096}}, {DType::kF32, {4096}}}},
      {"rowsum", {{DType::kF32, {5, 4096}}}},
  };
  for (const auto& [name, args] : cases) {
    const ir::Function& f = *m->lookup(name);
    auto k = compiler::compile(f);
    std::vector<NDArray> in;
    for (const auto& [d, s] : args) in.push_back(random_array(d, s, rng));
    expect_agree(*k, *m, f, in, name);
  }
  // decode dispatches on S to either variant.
  const ir::Function& decode = *m->lookup("decode");
  auto kd = compiler::compile(decode);
  for (int64_t s : {1, 3, 63, 64, 100}) expect_agree(*kd, *m, decode, {random_array(DType::kF32, {s, 128}, rng)}, "decode");
  // rowsum is the row sum.
  NDArray x = random_array(DType::kF32, {3, 4096}, rng);
  NDArray got = eval::evaluate(*m, *m->lookup("rowsum"), {x})[0];
  for (int64_t r = 0; r < 3; ++r) {
    double want = 0;
    for (int64_t c = 0; c < 4096; ++c) want += element(x, r * 4096 + c);
    EXPECT_NEAR(element(got, r), want, 1e-3) << "row " << r;
  }
}

}  // namespace
}  // namespace tf::comptest
