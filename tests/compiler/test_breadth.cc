// Compiled vs evaluator beyond the fused patterns: LayerNorm, Zeros, Reduce over the
// last axis (every kind, keepdim or not, f32 / f64 / i32, strided and empty
// rows), integer floor division, and the run-time errors a generated kernel
// reports as a status instead of crashing.
#include "compiler_helpers.h"
#include "core/frontend/parser.h"
#include "core/ir/error.h"

namespace tf::comptest {
namespace {

const char* kSource = R"(from tilefoundry.dsl import *

N = DimVar("N", 1, 1 << 20)
D = DimVar("D", 0, 1 << 16)

@func
def rsum(x: Tensor[(N, D), f32]) -> Tensor[(N,), f32]:
    return sum(x * 2.0, axes=-1, keepdim=False)

@func
def rmean(x: Tensor[(N, D), f64]) -> Tensor[(N, 1), f64]:
    return mean(x, axes=1)

@func
def rmax(x: Tensor[(N, D), f32]) -> Tensor[(N, 1), f32]:
    return amax(x, axes=-1)

@func
def rabsmax(x: Tensor[(N, D), f32]) -> Tensor[(N,), f32]:
    return abs_max(x, axes=-1, keepdim=False)

@func
def isum(x: Tensor[(N, D), i32]) -> Tensor[(N,), i32]:
    return sum(x, axes=-1, keepdim=False)

@func
def imax(x: Tensor[(N, D), i64]) -> Tensor[(N,), i64]:
    return abs_max(x, axes=-1, keepdim=False)

@func
def center(x: Tensor[(N, D), f32]) -> Tensor[(N, D), f32]:
    return x - mean(x, axes=-1)

@func
def zplus(x: Tensor[(N, D), f32]) -> tuple[Tensor[(N, D), f32], Tensor[(3, 2), i32]]:
    return x + zeros((N, D), f32), zeros((3, 2), i32)

@func
def lnorm(x: Tensor[(N, D), f32], r: Tensor[(N, D), f32], w: Tensor[(D,), f32], b: Tensor[(D,), f32]) -> Tensor[(N, D), f32]:
    return layer_norm(x + r, w * 2.0, b, eps=1e-5)

@func
def lnorm64(x: Tensor[(N, D), f64], w: Tensor[(D,), f64], b: Tensor[(D,), f64]) -> Tensor[(N, D), f64]:
    return layer_norm(x, w, b, eps=1e-6)

@func
def split_sign(x: Tensor[(N, D), f32]) -> tuple[Tensor[(N, D), f32], Tensor[(N, D), f32]]:
    return relu(x), relu(-x)

@func
def twice(x: Tensor[(N, D), f32]) -> Tensor[(N, D), f32]:
    return x * 2.0

@func
def calls(x: Tensor[(N, D), f32], y: Tensor[(N, D), f32]) -> Tensor[(N, D), f32]:
    pos, neg = split_sign(x)
    t = split_sign(x=y)
    return twice(pos) + neg + twice(t[0] - t[-1])

@func
def fixed(x: Tensor[(4, 8), f32]) -> Tensor[(4, 8), f32]:
    return softmax(twice(x))

@func
def swiglu16(a: Tensor[(N, D), bf16], b: Tensor[(N, D), bf16]) -> Tensor[(N, D), bf16]:
    return silu(a) * b

@func
def gelu16(x: Tensor[(N, D), f16], s: Tensor[(D,), f16]) -> tuple[Tensor[(N, D), f16], Tensor[(N, D), f32]]:
    y = gelu(x, approximate="tanh") * s + 0.1
    return y, cast(y, f32) * 3.0

@func
def narrowing(x: Tensor[(N, D), f32]) -> tuple[Tensor[(N, D), f16], Tensor[(N, D), bf16]]:
    return cast(x * 100000.0, f16), cast(x * 1e30, bf16)

@func
def idiv(a: Tensor[(N, D), i32], b: Tensor[(N, D), i32]) -> Tensor[(N, D), i32]:
    return a / b

@func
def transcend(x: Tensor[(N, D), f32]) -> tuple[Tensor[(N, D), f32], Tensor[(N, D), f32], Tensor[(N, D), f32]]:
    return exp(x), silu(x), gelu(x, approximate="tanh")

@func
def transcend64(x: Tensor[(N, D), f64]) -> Tensor[(N, D), f64]:
    return gelu(x, approximate="tanh")
)";

class Breadth : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { module_ = frontend::parse_module(kSource, "breadth.tf"); }
  static ir::ModulePtr module_;

  const ir::Function& fn(const std::string& name) {
    ir::FunctionPtr f = module_->lookup(name);
    EXPECT_TRUE(f) << name;
    return *f;
  }
  void check(const std::string& name, const std::vector<std::vector<int64_t>>& shapes) {
    const ir::Function& f = fn(name);
    auto k = compiler::compile(f);
    std::mt19937 rng(11);
    std::vector<NDArray> in;
    for (size_t i = 0; i < shapes.size(); ++i)
      in.push_back(random_array(std::static_pointer_cast<const ir::TensorType>(f.params()[i]->type())->dtype(),
                                shapes[i], rng));
    expect_agree(*k, *module_, f, in, name);
  }
};
ir::ModulePtr Breadth::module_;

TEST_F(Breadth, SumOfAnInlinedProduct) {
  check("rsum", {{3, 5}});
  check("rsum", {{40, 3000}});
}
TEST_F(Breadth, MeanKeepdimF64) { check("rmean", {{7, 33}}); }
TEST_F(Breadth, Max) { check("rmax", {{6, 17}}); }
TEST_F(Breadth, AbsMax) { check("rabsmax", {{6, 1000}}); }
TEST_F(Breadth, IntegerSumAndAbsMax) {
  check("isum", {{4, 9}});
  check("imax", {{4, 9}});
}
TEST_F(Breadth, MeanFeedsAnElementwiseStage) { check("center", {{5, 64}}); }
TEST_F(Breadth, LayerNormOfAResidualSum) {
  check("lnorm", {{3, 7}, {3, 7}, {7}, {7}});
  check("lnorm", {{33, 4096}, {33, 4096}, {4096}, {4096}});
}
// Rows whose spread is a few ulps of a large mean: the compiled one-pass
// moments must not cancel (they shift by the row's first element).
TEST_F(Breadth, LayerNormOfRowsWithATinySpread) {
  std::mt19937 rng(3);
  const int64_t n = 6, d = 257;
  NDArray x = NDArray::empty(DType::kF32, {n, d}), r = NDArray::empty(DType::kF32, {n, d});
  std::uniform_int_distribution<int> ulps(-4, 4);
  for (int64_t i = 0; i < n * d; ++i) {
    const float base = 1000.0f * static_cast<float>(1 + i / d);
    static_cast<float*>(x.data())[i] = base + static_cast<float>(ulps(rng)) * (base * 1.2e-7f);
    static_cast<float*>(r.data())[i] = 0.0f;
  }
  NDArray w = random_array(DType::kF32, {d}, rng), b = random_array(DType::kF32, {d}, rng);
  expect_agree(*compiler::compile(fn("lnorm")), *module_, fn("lnorm"), {x, r, w, b}, "layer_norm, tiny spread");
}

TEST_F(Breadth, LayerNormF64) { check("lnorm64", {{5, 129}, {129}, {129}}); }
// Calls are inlined: both sites of a callee get their own arguments, tuple
// results are taken apart, and a callee elaborated at static extents works.
TEST_F(Breadth, CallsAreInlined) {
  check("calls", {{3, 5}, {3, 5}});
  check("fixed", {{4, 8}});
}
// f16 / bf16 compute in float, each op rounding to the storage type.
TEST_F(Breadth, HalfPrecisionElementwise) {
  check("swiglu16", {{3, 5}, {3, 5}});
  check("swiglu16", {{17, 3000}, {17, 3000}});
  check("gelu16", {{4, 33}, {33}});
  check("narrowing", {{6, 7}});  // overflow to inf in f16, rounding in bf16
}
TEST_F(Breadth, ZerosInlineAndAsAnOutput) { check("zplus", {{2, 3}}); }

TEST_F(Breadth, ReduceOfStridedRows) {
  auto k = compiler::compile(fn("rabsmax"));
  std::mt19937 rng(5);
  NDArray big = random_array(DType::kF32, {6, 40}, rng);
  expect_agree(*k, *module_, fn("rabsmax"), {NDArray::view(big, {6, 20}, {40, 2})}, "strided abs_max");
  expect_agree(*k, *module_, fn("rabsmax"), {NDArray::view(big, {20, 6}, {2, 40})}, "transposed abs_max");
}

TEST_F(Breadth, MaxPropagatesNaN) {
  auto k = compiler::compile(fn("rmax"));
  std::mt19937 rng(5);
  NDArray x = random_array(DType::kF32, {3, 4}, rng);
  static_cast<float*>(x.data())[5] = std::numeric_limits<float>::quiet_NaN();
  auto got = run_native(*k, fn("rmax"), {x});
  EXPECT_TRUE(std::isnan(static_cast<const float*>(got[0].data())[1]));
  expect_agree(*k, *module_, fn("rmax"), {x}, "max with NaN");
}

// The compiled exp (prelude: no explicit special cases) and the gelu / silu
// built on it, at the edges of float's range: NaN, +-inf, overflow just past
// exp's largest finite input, inputs whose exp is subnormal, and the region
// where gelu's tanh form cancels.
TEST_F(Breadth, TranscendentalsAtSpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> v = {std::numeric_limits<float>::quiet_NaN(), inf, -inf, 88.0f, 88.3f, 88.5f, 88.8f,
                                100.0f, -87.0f, -87.5f, -90.0f, -104.0f, -200.0f, -3.0f, -5.0f, -9.5f, 0.0f, -0.0f,
                                1e-30f, 3.0f, 15.0f, -15.0f};
  NDArray x = NDArray::empty(DType::kF32, {2, static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < 2 * v.size(); ++i) static_cast<float*>(x.data())[i] = v[i % v.size()];
  auto k = compiler::compile(fn("transcend"));
  auto got = run_native(*k, fn("transcend"), {x});
  const float* e = static_cast<const float*>(got[0].data());
  EXPECT_TRUE(std::isnan(e[0]));
  EXPECT_EQ(e[1], inf);
  EXPECT_EQ(e[2], 0.0f);
  EXPECT_EQ(e[7], inf);  // past the largest finite exp
  EXPECT_TRUE(std::isfinite(e[3]));
  expect_agree(*k, *module_, fn("transcend"), {x}, "exp / silu / gelu at special values");
  NDArray x64 = NDArray::empty(DType::kF64, {1, static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) static_cast<double*>(x64.data())[i] = v[i];
  expect_agree(*compiler::compile(fn("transcend64")), *module_, fn("transcend64"), {x64}, "f64 gelu at special values");
}

TEST_F(Breadth, EmptyRows) {
  check("rsum", {{3, 0}});
  check("rmax", {{3, 0}});  // -inf, as the evaluator
}

TEST_F(Breadth, IntegerFloorDivision) {
  const ir::Function& f = fn("idiv");
  auto k = compiler::compile(f);
  NDArray a = NDArray::empty(DType::kI32, {2, 4}), b = NDArray::empty(DType::kI32, {2, 4});
  const int32_t av[] = {7, -7, 7, -7, INT32_MIN, 0, 5, -1};
  const int32_t bv[] = {2, 2, -2, -2, -1, 3, 5, 7};
  std::memcpy(a.data(), av, sizeof av);
  std::memcpy(b.data(), bv, sizeof bv);
  expect_agree(*k, *module_, f, {a, b}, "floor div");
  auto got = run_native(*k, f, {a, b});
  EXPECT_EQ(static_cast<const int32_t*>(got[0].data())[1], -4);  // floor(-3.5), not truncation
  EXPECT_TRUE(k->may_fail());
}

TEST_F(Breadth, ZeroDivisorIsAnErrorNotACrash) {
  const ir::Function& f = fn("idiv");
  auto k = compiler::compile(f);
  std::mt19937 rng(2);
  NDArray a = random_array(DType::kI32, {64, 1024}, rng), b = random_array(DType::kI32, {64, 1024}, rng);
  for (int64_t i = 0; i < b.numel(); ++i)
    if (static_cast<int32_t*>(b.data())[i] == 0) static_cast<int32_t*>(b.data())[i] = 3;
  static_cast<int32_t*>(b.data())[b.numel() - 1] = 0;  // one zero, in the last parallel block
  expect_runtime_error([&] { run_native(*k, f, {a, b}); }, "integer division by zero");
  expect_runtime_error([&] { eval::evaluate(*module_, f, {a, b}); }, "integer division by zero");
}

TEST_F(Breadth, MeanOverAnEmptyAxisIsAnError) {
  auto k = compiler::compile(fn("rmean"));
  EXPECT_TRUE(k->may_fail());
  expect_runtime_error([&] { run_native(*k, fn("rmean"), {NDArray::empty(DType::kF64, {2, 0})}); },
                       "mean over an empty axis");
}

TEST(BreadthReduce, SumOverANonLastAxisAgreesWithTheEvaluator) {
  ir::ModulePtr m = frontend::parse_module(R"(from tilefoundry.dsl import *
@func
def s0(x: Tensor[(3, 4), f32]) -> Tensor[(4,), f32]:
    return sum(x, axes=0, keepdim=False)
)", "s0.tf");
  const ir::Function& f = *m->lookup("s0");
  std::mt19937 rng(9);
  expect_agree(*compiler::compile(f), *m, f, {random_array(DType::kF32, {3, 4}, rng)}, "s0");
}

}  // namespace
}  // namespace tf::comptest
