// Binary, Unary, Where, Clamp and Bitcast kernels on small hand-checked cases.
#include <cmath>
#include <cstring>
#include <limits>

#include "core/ops/math/math.h"
#include "core/ops/tensor/tensor.h"
#include "eval_helpers.h"

namespace tf::evaltest {
namespace {

using ops::Binary;
using ops::BinaryKind;
using ops::Unary;
using ops::UnaryKind;

// Evaluates kind(a, b) for arrays of the given shapes and dtype.
NDArray binary(BinaryKind kind, const NDArray& a, const NDArray& b) {
  std::vector<int64_t> sa = a.shape(), sb = b.shape();
  auto x = param("a", ir::Shape(sa.begin(), sa.end()), a.dtype());
  auto y = param("b", ir::Shape(sb.begin(), sb.end()), b.dtype());
  return program({x, y}, call<Binary>({x, y}, kind)).run({a, b})[0];
}

NDArray unary(UnaryKind kind, const NDArray& a) {
  std::vector<int64_t> sa = a.shape();
  auto x = param("x", ir::Shape(sa.begin(), sa.end()), a.dtype());
  return program({x}, call<Unary>({x}, kind)).run({a})[0];
}

TEST(BinaryKernel, ArithmeticOnF32) {
  NDArray a = f32({4}, {1, 2, -3, 8}), b = f32({4}, {2, 2, 2, -4});
  EXPECT_EQ(values<float>(binary(BinaryKind::kAdd, a, b)), (std::vector<double>{3, 4, -1, 4}));
  EXPECT_EQ(values<float>(binary(BinaryKind::kSub, a, b)), (std::vector<double>{-1, 0, -5, 12}));
  EXPECT_EQ(values<float>(binary(BinaryKind::kMul, a, b)), (std::vector<double>{2, 4, -6, -32}));
  EXPECT_EQ(values<float>(binary(BinaryKind::kDiv, a, b)), (std::vector<double>{0.5, 1, -1.5, -2}));
  EXPECT_EQ(values<float>(binary(BinaryKind::kMinimum, a, b)), (std::vector<double>{1, 2, -3, -4}));
  EXPECT_EQ(values<float>(binary(BinaryKind::kMaximum, a, b)), (std::vector<double>{2, 2, 2, 8}));
}

TEST(BinaryKernel, MinimumAndMaximumPropagateNaN) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  NDArray a = f32({2}, {nan, 1}), b = f32({2}, {1, nan});
  for (double v : values<float>(binary(BinaryKind::kMinimum, a, b))) EXPECT_TRUE(std::isnan(v));
  for (double v : values<float>(binary(BinaryKind::kMaximum, a, b))) EXPECT_TRUE(std::isnan(v));
}

TEST(BinaryKernel, BroadcastsLikeNumpy) {
  NDArray col = f32({2, 1}, {10, 20}), row = f32({3}, {1, 2, 3});
  NDArray out = binary(BinaryKind::kAdd, col, row);
  EXPECT_EQ(out.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values<float>(out), (std::vector<double>{11, 12, 13, 21, 22, 23}));
}

TEST(BinaryKernel, ReadsStridedAndOffsetInputs) {
  // A transposed 2x3 view (strides {1, 2}) of a 3x2 buffer, with a byte offset.
  std::vector<float> buf = {99, 1, 2, 3, 4, 5, 6};
  int64_t shape[] = {2, 3};
  int64_t strides[] = {1, 2};
  DLTensor t{};
  t.data = buf.data();
  t.device = {kDLCPU, 0};
  t.ndim = 2;
  t.dtype = {kDLFloat, 32, 1};
  t.shape = shape;
  t.strides = strides;
  t.byte_offset = sizeof(float);
  NDArray a = NDArray::from_dlpack(t);  // [[1, 3, 5], [2, 4, 6]]
  NDArray out = binary(BinaryKind::kMul, a, f32({3}, {1, 10, 100}));
  EXPECT_EQ(values<float>(out), (std::vector<double>{1, 30, 500, 2, 40, 600}));
}

TEST(BinaryKernel, SizeZeroOperands) {
  NDArray out = binary(BinaryKind::kAdd, f32({0, 3}, {}), f32({3}, {1, 2, 3}));
  EXPECT_EQ(out.shape(), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(out.numel(), 0);
}

TEST(BinaryKernel, IntegerDivIsFloorDivision) {
  NDArray a = i32({6}, {7, -7, 7, -7, 6, 0}), b = i32({6}, {2, 2, -2, -2, 3, 5});
  EXPECT_EQ(values<int32_t>(binary(BinaryKind::kDiv, a, b)), (std::vector<double>{3, -4, -4, 3, 2, 0}));
}

TEST(BinaryKernel, IntegerDivByZeroIsARuntimeError) {
  expect_error([] { binary(BinaryKind::kDiv, i32({2}, {1, 2}), i32({2}, {1, 0})); },
               ir::ErrorKind::kRuntime, "division by zero");
}

TEST(BinaryKernel, IntegerArithmeticWraps) {
  NDArray a = array<int8_t>(DType::kI8, {3}, {127, -128, -128});
  NDArray b = array<int8_t>(DType::kI8, {3}, {1, -1, -1});
  EXPECT_EQ(values<int8_t>(binary(BinaryKind::kAdd, a, b)), (std::vector<double>{-128, 127, 127}));
  EXPECT_EQ(values<int8_t>(binary(BinaryKind::kDiv, a, b)), (std::vector<double>{127, -128, -128}));
  EXPECT_EQ(values<int8_t>(binary(BinaryKind::kMul, a, a)), (std::vector<double>{1, 0, 0}));
}

TEST(BinaryKernel, ComparisonsProduceBool) {
  NDArray a = f32({3}, {1, 2, 3}), b = f32({3}, {2, 2, 2});
  NDArray lt = binary(BinaryKind::kLt, a, b);
  EXPECT_EQ(lt.dtype(), DType::kBool);
  EXPECT_EQ(values<bool>(lt), (std::vector<double>{1, 0, 0}));
  EXPECT_EQ(values<bool>(binary(BinaryKind::kLe, a, b)), (std::vector<double>{1, 1, 0}));
  EXPECT_EQ(values<bool>(binary(BinaryKind::kGt, a, b)), (std::vector<double>{0, 0, 1}));
  EXPECT_EQ(values<bool>(binary(BinaryKind::kGe, a, b)), (std::vector<double>{0, 1, 1}));
  EXPECT_EQ(values<bool>(binary(BinaryKind::kEq, a, b)), (std::vector<double>{0, 1, 0}));
  EXPECT_EQ(values<bool>(binary(BinaryKind::kNe, a, b)), (std::vector<double>{1, 0, 1}));
}

TEST(BinaryKernel, LogicalKindsReadTruthValues) {
  NDArray a = array<bool>(DType::kBool, {4}, {0, 0, 1, 1}), b = array<bool>(DType::kBool, {4}, {0, 1, 0, 1});
  EXPECT_EQ(values<bool>(binary(BinaryKind::kLogicalAnd, a, b)), (std::vector<double>{0, 0, 0, 1}));
  EXPECT_EQ(values<bool>(binary(BinaryKind::kLogicalOr, a, b)), (std::vector<double>{0, 1, 1, 1}));
  EXPECT_EQ(values<bool>(binary(BinaryKind::kLogicalXor, a, b)), (std::vector<double>{0, 1, 1, 0}));
  NDArray fa = f32({3}, {0, -2, 0.5}), fb = f32({3}, {1, 3, 0});
  EXPECT_EQ(values<bool>(binary(BinaryKind::kLogicalAnd, fa, fb)), (std::vector<double>{0, 1, 0}));
}

TEST(BinaryKernel, HalfTypesRoundOnce) {
  // 1 + 2^-11 is not representable in f16 and ties to even: 1.
  NDArray a = array<runtime::Half>(DType::kF16, {2}, {1, 1});
  NDArray b = array<runtime::Half>(DType::kF16, {2}, {std::ldexp(1.0, -11), std::ldexp(3.0, -11)});
  EXPECT_EQ(values<runtime::Half>(binary(BinaryKind::kAdd, a, b)),
            (std::vector<double>{1.0, 1.0 + std::ldexp(1.0, -9)}));
  NDArray c = array<runtime::BFloat16>(DType::kBF16, {1}, {3});
  NDArray d = array<runtime::BFloat16>(DType::kBF16, {1}, {7});
  // 3/7 = 0.428571..., bf16 nearest is 0.427734375 (0x3EDB).
  EXPECT_EQ(values<runtime::BFloat16>(binary(BinaryKind::kDiv, c, d)), (std::vector<double>{0.427734375}));
}

TEST(UnaryKernel, RoundIsHalfToEven) {
  NDArray out = unary(UnaryKind::kRound, f32({6}, {0.5, 1.5, 2.5, -0.5, -1.5, 2.6}));
  EXPECT_EQ(values<float>(out), (std::vector<double>{0, 2, 2, -0.0, -2, 3}));
}

TEST(UnaryKernel, FloatFunctions) {
  NDArray x = f32({2}, {4, 0.25});
  EXPECT_EQ(values<float>(unary(UnaryKind::kRsqrt, x)), (std::vector<double>{0.5, 2}));
  EXPECT_EQ(values<float>(unary(UnaryKind::kSqrt, x)), (std::vector<double>{2, 0.5}));
  EXPECT_EQ(values<float>(unary(UnaryKind::kLog2, x)), (std::vector<double>{2, -2}));
  EXPECT_EQ(values<float>(unary(UnaryKind::kExp2, f32({2}, {3, -1}))), (std::vector<double>{8, 0.5}));
  EXPECT_EQ(values<float>(unary(UnaryKind::kExp, f32({1}, {0}))), (std::vector<double>{1}));
  EXPECT_EQ(values<float>(unary(UnaryKind::kLog, f32({1}, {1}))), (std::vector<double>{0}));
  EXPECT_EQ(values<float>(unary(UnaryKind::kSin, f32({1}, {0}))), (std::vector<double>{0}));
  EXPECT_EQ(values<float>(unary(UnaryKind::kCos, f32({1}, {0}))), (std::vector<double>{1}));
  EXPECT_EQ(values<float>(unary(UnaryKind::kCeil, f32({2}, {1.2, -1.2}))), (std::vector<double>{2, -1}));
  EXPECT_EQ(values<float>(unary(UnaryKind::kFloor, f32({2}, {1.2, -1.2}))), (std::vector<double>{1, -2}));
  EXPECT_EQ(values<float>(unary(UnaryKind::kSquare, f32({1}, {-3}))), (std::vector<double>{9}));
  EXPECT_EQ(values<float>(unary(UnaryKind::kRelu, f32({2}, {-3, 3}))), (std::vector<double>{0, 3}));
  EXPECT_EQ(values<float>(unary(UnaryKind::kAbs, f32({1}, {-3}))), (std::vector<double>{3}));
  EXPECT_EQ(values<float>(unary(UnaryKind::kNeg, f32({1}, {-3}))), (std::vector<double>{3}));
}

TEST(UnaryKernel, IntegerKinds) {
  NDArray x = i32({3}, {-5, 0, 7});
  EXPECT_EQ(values<int32_t>(unary(UnaryKind::kNeg, x)), (std::vector<double>{5, 0, -7}));
  EXPECT_EQ(values<int32_t>(unary(UnaryKind::kAbs, x)), (std::vector<double>{5, 0, 7}));
  EXPECT_EQ(values<int32_t>(unary(UnaryKind::kRelu, x)), (std::vector<double>{0, 0, 7}));
  EXPECT_EQ(values<int32_t>(unary(UnaryKind::kSquare, x)), (std::vector<double>{25, 0, 49}));
  EXPECT_EQ(values<int32_t>(unary(UnaryKind::kRound, x)), (std::vector<double>{-5, 0, 7}));
  NDArray m = array<int8_t>(DType::kI8, {1}, {-128});
  EXPECT_EQ(values<int8_t>(unary(UnaryKind::kNeg, m)), (std::vector<double>{-128}));
}

TEST(UnaryKernel, LogicalNotOnAnyDtype) {
  EXPECT_EQ(values<bool>(unary(UnaryKind::kLogicalNot, f32({3}, {0, 2, -0.0}))), (std::vector<double>{1, 0, 1}));
  EXPECT_EQ(values<bool>(unary(UnaryKind::kLogicalNot, array<bool>(DType::kBool, {2}, {0, 1}))),
            (std::vector<double>{1, 0}));
}

TEST(ClampKernel, NanStaysAndMinAboveMaxGivesMax) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  auto x = param("x", ir::Shape{4}, DType::kF32);
  auto run = [&](double lo, double hi) {
    return values<float>(program({x}, call<ops::Clamp>({x}, lo, hi)).run({f32({4}, {-5, 0.5, nan, 9})})[0]);
  };
  std::vector<double> v = run(0, 6);
  EXPECT_EQ(v[0], 0);
  EXPECT_EQ(v[1], 0.5);
  EXPECT_TRUE(std::isnan(v[2]));
  EXPECT_EQ(v[3], 6);
  v = run(-inf, 1);  // one side
  EXPECT_EQ(v[0], -5);
  EXPECT_EQ(v[3], 1);
  v = run(3, 1);  // min > max: max everywhere but NaN
  EXPECT_EQ(v[0], 1);
  EXPECT_EQ(v[1], 1);
  EXPECT_EQ(v[3], 1);
}

TEST(ClampKernel, IntegerBoundPastTheRangeSaturates) {
  auto x = param("x", ir::Shape{3}, DType::kI32);
  NDArray r = program({x}, call<ops::Clamp>({x}, -1e12, 1e12)).run({i32({3}, {-7, 0, 2147483647})})[0];
  EXPECT_EQ(values<int32_t>(r), (std::vector<double>{-7, 0, 2147483647}));
}

TEST(BitcastKernel, KeepsEveryBitNanPayloadsIncluded) {
  NDArray bits = i32({3}, {0x7FC00001, -1, 0x3F800000});  // a NaN with a payload, all-ones (a NaN), 1.0f
  auto x = param("x", ir::Shape{3}, DType::kI32);
  NDArray f = program({x}, call<ops::Bitcast>({x}, DType::kF32)).run({bits})[0];
  EXPECT_EQ(f.dtype(), DType::kF32);
  EXPECT_EQ(std::memcmp(f.data(), bits.data(), 12), 0);
  EXPECT_EQ(values<float>(f)[2], 1.0);
}

TEST(WhereKernel, SelectsAndBroadcastsEachOperand) {
  auto c = param("c", ir::Shape{2, 1}, DType::kBool), a = param("a", ir::Shape{2, 3}, DType::kF32),
       b = param("b", ir::Shape{3}, DType::kF32);
  NDArray cond = NDArray::empty(DType::kBool, {2, 1});
  static_cast<bool*>(cond.data())[0] = true;
  NDArray r = program({c, a, b}, call<ops::Where>({c, a, b})).run({cond, f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({3}, {-1, -2, -3})})[0];
  EXPECT_EQ(values<float>(r), (std::vector<double>{1, 2, 3, -1, -2, -3}));
}

}  // namespace
}  // namespace tf::evaltest
