// Cast, Reduce, Reshape, Transpose, Slice and Zeros on hand-checked cases.
#include <cmath>
#include <limits>

#include "core/frontend/parser.h"
#include "core/ops/tensor/tensor.h"
#include "eval_helpers.h"

namespace tf::evaltest {
namespace {

using ops::ReduceKind;

ir::VarPtr param_like(const std::string& name, const NDArray& a) {
  return param(name, ir::Shape(a.shape().begin(), a.shape().end()), a.dtype());
}

NDArray cast(const NDArray& a, DType to) {
  auto x = param_like("x", a);
  return program({x}, call<ops::Cast>({x}, to)).run({a})[0];
}

NDArray reduce(const NDArray& a, std::vector<int64_t> axes, bool keepdim, ReduceKind kind) {
  auto x = param_like("x", a);
  return program({x}, call<ops::Reduce>({x}, std::move(axes), keepdim, kind)).run({a})[0];
}

TEST(CastKernel, FloatToIntTruncatesTowardZero) {
  NDArray out = cast(f32({4}, {-1.7, 2.9, -0.5, 100.0}), DType::kI32);
  EXPECT_EQ(out.dtype(), DType::kI32);
  EXPECT_EQ(values<int32_t>(out), (std::vector<double>{-1, 2, 0, 100}));
}

TEST(CastKernel, BoolConversions) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(values<bool>(cast(f32({4}, {0, -0.0, 0.1, nan}), DType::kBool)), (std::vector<double>{0, 0, 1, 1}));
  EXPECT_EQ(values<float>(cast(array<bool>(DType::kBool, {2}, {1, 0}), DType::kF32)), (std::vector<double>{1, 0}));
  EXPECT_EQ(values<int64_t>(cast(array<bool>(DType::kBool, {2}, {1, 0}), DType::kI64)), (std::vector<double>{1, 0}));
}

TEST(CastKernel, ToHalfRoundsToNearestEven) {
  // 1 + 2^-11 ties to 1 in f16; 1 + 2^-8 ties to 1 in bf16.
  NDArray x = array<double>(DType::kF64, {2}, {1 + std::ldexp(1.0, -11), 1 + std::ldexp(1.0, -8)});
  EXPECT_EQ(values<runtime::Half>(cast(x, DType::kF16)), (std::vector<double>{1, 1 + std::ldexp(1.0, -8)}));
  EXPECT_EQ(values<runtime::BFloat16>(cast(x, DType::kBF16)), (std::vector<double>{1, 1}));
}

TEST(CastKernel, IntNarrowingWraps) {
  EXPECT_EQ(values<int8_t>(cast(i32({3}, {127, 128, -129}), DType::kI8)), (std::vector<double>{127, -128, 127}));
}

TEST(CastKernel, UnsupportedDtypeIsRejected) {
  expect_error([] { cast(f32({1}, {1}), DType::kF4E2M1); }, ir::ErrorKind::kUnsupported,
               "unsupported dtype");
}

TEST(ReduceKernel, SumMeanMaxAbsMax) {
  NDArray x = f32({2, 3}, {1, -5, 3, 4, 5, -6});
  EXPECT_EQ(values<float>(reduce(x, {1}, false, ReduceKind::kSum)), (std::vector<double>{-1, 3}));
  EXPECT_EQ(values<float>(reduce(x, {0}, false, ReduceKind::kSum)), (std::vector<double>{5, 0, -3}));
  EXPECT_EQ(values<float>(reduce(x, {1}, false, ReduceKind::kMean)), (std::vector<double>{static_cast<float>(-1.0 / 3), 1}));
  EXPECT_EQ(values<float>(reduce(x, {1}, false, ReduceKind::kMax)), (std::vector<double>{3, 5}));
  EXPECT_EQ(values<float>(reduce(x, {1}, false, ReduceKind::kAbsMax)), (std::vector<double>{5, 6}));
  NDArray all = reduce(x, {0, -1}, false, ReduceKind::kSum);
  EXPECT_EQ(all.ndim(), 0u);
  EXPECT_EQ(values<float>(all), (std::vector<double>{2}));
}

TEST(ReduceKernel, KeepdimKeepsSizeOneAxes) {
  NDArray out = reduce(f32({2, 3}, {1, 2, 3, 4, 5, 6}), {1}, true, ReduceKind::kMax);
  EXPECT_EQ(out.shape(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(values<float>(out), (std::vector<double>{3, 6}));
}

TEST(ReduceKernel, IntegerAndBoolReductions) {
  EXPECT_EQ(values<int32_t>(reduce(i32({4}, {1, -2, 30, 4}), {0}, false, ReduceKind::kSum)),
            (std::vector<double>{33}));
  EXPECT_EQ(values<int32_t>(reduce(i32({3}, {-7, 2, 5}), {0}, false, ReduceKind::kAbsMax)),
            (std::vector<double>{7}));
  EXPECT_EQ(values<bool>(reduce(array<bool>(DType::kBool, {2, 2}, {0, 1, 0, 0}), {1}, false, ReduceKind::kMax)),
            (std::vector<double>{1, 0}));
}

TEST(ReduceKernel, MaxPropagatesNaN) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(std::isnan(values<float>(reduce(f32({3}, {1, nan, 2}), {0}, false, ReduceKind::kMax))[0]));
}

// Reduce: an empty axis returns the kind's identity; mean has none.
TEST(ReduceKernel, EmptyAxisReturnsTheIdentity) {
  NDArray e = f32({2, 0}, {});
  EXPECT_EQ(values<float>(reduce(e, {1}, false, ReduceKind::kSum)), (std::vector<double>{0, 0}));
  EXPECT_EQ(values<float>(reduce(e, {1}, false, ReduceKind::kAbsMax)), (std::vector<double>{0, 0}));
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(values<float>(reduce(e, {1}, false, ReduceKind::kMax)), (std::vector<double>{-inf, -inf}));
  EXPECT_EQ(values<int32_t>(reduce(i32({1, 0}, {}), {1}, false, ReduceKind::kMax)),
            (std::vector<double>{double(std::numeric_limits<int32_t>::min())}));
  EXPECT_EQ(values<bool>(reduce(array<bool>(DType::kBool, {1, 0}, {}), {1}, false, ReduceKind::kMax)),
            (std::vector<double>{0}));
  EXPECT_EQ(values<runtime::BFloat16>(reduce(array<runtime::BFloat16>(DType::kBF16, {1, 0}, {}), {1}, false,
                                              ReduceKind::kMax)),
            (std::vector<double>{-inf}));
}

TEST(ReduceKernel, MeanOverAnEmptyAxisIsAnError) {
  expect_error([] { reduce(f32({2, 0}, {}), {1}, false, ReduceKind::kMean); }, ir::ErrorKind::kRuntime,
               "mean over an empty axis");
}

TEST(ReshapeKernel, KeepsRowMajorOrderOfAStridedInput) {
  NDArray base = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  NDArray t = NDArray::view(base, {3, 2}, {1, 3});  // transposed: [[1, 4], [2, 5], [3, 6]]
  auto x = param("x", {3, 2}, DType::kF32);
  NDArray out = program({x}, call<ops::Reshape>({x}, ir::Shape{6})).run({t})[0];
  EXPECT_EQ(values<float>(out), (std::vector<double>{1, 4, 2, 5, 3, 6}));
}

TEST(TransposeKernel, PermutesAxes) {
  auto x = param("x", {2, 1, 3}, DType::kF32);
  NDArray out = program({x}, call<ops::Transpose>({x}, std::vector<int64_t>{2, 0, -2}))
                    .run({f32({2, 1, 3}, {1, 2, 3, 4, 5, 6})})[0];
  EXPECT_EQ(out.shape(), (std::vector<int64_t>{3, 2, 1}));
  EXPECT_EQ(values<float>(out), (std::vector<double>{1, 4, 2, 5, 3, 6}));
}

TEST(SliceKernel, StepNegativeBoundsAndClamping) {
  auto x = param("x", {2, 6}, DType::kF32);
  // x[0:2, 1:-1:2] and an end past the extent clamps.
  auto body = call<ops::Slice>({x}, ir::Shape{0, 1}, ir::Shape{100, -1}, std::vector<int64_t>{1, 2});
  NDArray out = program({x}, body).run({f32({2, 6}, {0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15})})[0];
  EXPECT_EQ(out.shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(values<float>(out), (std::vector<double>{1, 3, 11, 13}));
}

TEST(SliceKernel, SymbolicBoundsResolveWithBindings) {
  ir::ShapeDim n = ir::ShapeDim::var("N", 1, 64);
  auto x = param("x", {n}, DType::kI32);
  // x[1:N-1]
  auto body = call<ops::Slice>({x}, ir::Shape{1}, ir::Shape{n - 1}, std::vector<int64_t>{1});
  NDArray out = program({x}, body).run({i32({5}, {1, 2, 3, 4, 5})})[0];
  EXPECT_EQ(values<int32_t>(out), (std::vector<double>{2, 3, 4}));
}

TEST(SliceKernel, EmptyWindow) {
  auto x = param("x", {4}, DType::kF32);
  auto body = call<ops::Slice>({x}, ir::Shape{3}, ir::Shape{1}, std::vector<int64_t>{1});
  EXPECT_EQ(program({x}, body).run({f32({4}, {1, 2, 3, 4})})[0].numel(), 0);
}

TEST(ZerosKernel, AllocatesZerosOfTheDtype) {
  auto body = call<ops::Zeros>({}, ir::Shape{2, 2}, DType::kBF16, ir::StorageKind::kGmem);
  NDArray out = program({}, body).run({})[0];
  EXPECT_EQ(out.dtype(), DType::kBF16);
  EXPECT_EQ(values<runtime::BFloat16>(out), (std::vector<double>{0, 0, 0, 0}));
}

}  // namespace
}  // namespace tf::evaltest

namespace tf::evaltest {
namespace {

// Regression (fuzz finding): x[:, 1:3] on an axis of symbolic length M is
// typed 2 wide; an M < 3 argument must be a runtime error naming the slice,
// not an internal type mismatch.
TEST(SliceKernel, StaticWindowOnASymbolicAxisTooShortIsARuntimeError) {
  ir::ModulePtr m = frontend::parse_module(R"(
M = DimVar("M", 1, 64)

@func
def f(x: Tensor[(4, M), f32]) -> Tensor[(4, 2), f32]:
    return x[:, 1:3]
)", "t.tf");
  const ir::Function& fn = *m->lookup("f");
  NDArray ok = NDArray::empty(ir::DType::kF32, {4, 5});
  EXPECT_EQ(eval::evaluate(*m, fn, {ok})[0].shape(), (std::vector<int64_t>{4, 2}));
  NDArray shorter = NDArray::empty(ir::DType::kF32, {4, 2});
  try {
    eval::evaluate(*m, fn, {shorter});
    FAIL() << "expected a runtime error";
  } catch (const ir::Error& e) {
    EXPECT_EQ(e.kind(), ir::ErrorKind::kRuntime) << e.what();
    EXPECT_NE(std::string(e.what()).find("'slice' axis 1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tf::evaltest
