// MatMul, SoftMax, Silu, Gelu and RMSNorm on hand-checked cases.
#include <cmath>

#include "core/ops/nn/nn.h"
#include "eval_helpers.h"

namespace tf::evaltest {
namespace {

ir::VarPtr param_like(const std::string& name, const NDArray& a) {
  return param(name, ir::Shape(a.shape().begin(), a.shape().end()), a.dtype());
}

NDArray matmul(const NDArray& a, const NDArray& b) {
  auto x = param_like("a", a), y = param_like("b", b);
  return program({x, y}, call<ops::MatMul>({x, y})).run({a, b})[0];
}

template <typename OpT, typename... A>
NDArray apply1(const NDArray& a, A&&... op_args) {
  auto x = param_like("x", a);
  return program({x}, call<OpT>({x}, std::forward<A>(op_args)...)).run({a})[0];
}

void expect_near_all(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

TEST(MatMulKernel, TwoByTwo) {
  // [[1, 2], [3, 4]] @ [[5, 6], [7, 8]] = [[19, 22], [43, 50]]
  NDArray out = matmul(f32({2, 2}, {1, 2, 3, 4}), f32({2, 2}, {5, 6, 7, 8}));
  EXPECT_EQ(values<float>(out), (std::vector<double>{19, 22, 43, 50}));
}

TEST(MatMulKernel, BroadcastBatchAndStridedOperand) {
  // a: [2, 1, 2] batch of row vectors; b: [2, 2] shared (given transposed via strides).
  NDArray a = f32({2, 1, 2}, {1, 0, 0, 1});
  NDArray bbuf = f32({2, 2}, {1, 3, 2, 4});
  NDArray b = NDArray::view(bbuf, {2, 2}, {1, 2});  // [[1, 2], [3, 4]]
  NDArray out = matmul(a, b);
  EXPECT_EQ(out.shape(), (std::vector<int64_t>{2, 1, 2}));
  EXPECT_EQ(values<float>(out), (std::vector<double>{1, 2, 3, 4}));
}

TEST(MatMulKernel, EmptyContractionGivesZerosAndEmptyRowsGiveEmpty) {
  EXPECT_EQ(values<float>(matmul(f32({2, 0}, {}), f32({0, 3}, {}))), (std::vector<double>(6, 0.0)));
  EXPECT_EQ(matmul(f32({0, 2}, {}), f32({2, 3}, {1, 2, 3, 4, 5, 6})).numel(), 0);
}

TEST(MatMulKernel, HalfAndDouble) {
  NDArray a = array<runtime::Half>(DType::kF16, {1, 2}, {0.5, 2});
  NDArray b = array<runtime::Half>(DType::kF16, {2, 1}, {3, 0.25});
  EXPECT_EQ(values<runtime::Half>(matmul(a, b)), (std::vector<double>{2}));
  NDArray c = array<double>(DType::kF64, {1, 1}, {0.1});
  EXPECT_EQ(values<double>(matmul(c, c)), (std::vector<double>{0.1 * 0.1}));
}

TEST(SoftMaxKernel, EqualValuesGiveOneOverN) {
  NDArray out = apply1<ops::SoftMax>(f32({2, 4}, {3, 3, 3, 3, -1, -1, -1, -1}), -1);
  for (double v : values<float>(out)) EXPECT_FLOAT_EQ(v, 0.25);
}

TEST(SoftMaxKernel, KnownRatioAlongAxisZero) {
  // softmax([0, ln 3]) = [1/4, 3/4], taken along axis 0 of a [2, 1] tensor.
  NDArray out = apply1<ops::SoftMax>(f32({2, 1}, {0, std::log(3.0)}), 0);
  expect_near_all(values<float>(out), {0.25, 0.75}, 1e-7);
}

TEST(SoftMaxKernel, LargeValuesDoNotOverflow) {
  NDArray out = apply1<ops::SoftMax>(f32({2}, {1000, 1000}), 0);
  EXPECT_EQ(values<float>(out), (std::vector<double>{0.5, 0.5}));
}

TEST(SiluKernel, KnownValues) {
  // silu(0) = 0; silu(x) = x * sigmoid(x); sigmoid(ln 3) = 3/4.
  NDArray out = apply1<ops::Silu>(f32({3}, {0, std::log(3.0), -100}));
  expect_near_all(values<float>(out), {0, std::log(3.0) * 0.75, 0}, 1e-6);
}

TEST(GeluKernel, TanhAndErfForms) {
  const double x = 1.0;
  const double tanh_form = 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  const double erf_form = 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
  expect_near_all(values<float>(apply1<ops::Gelu>(f32({2}, {0, x}), "tanh")), {0, tanh_form}, 1e-6);
  expect_near_all(values<float>(apply1<ops::Gelu>(f32({2}, {0, x}), "none")), {0, erf_form}, 1e-6);
  EXPECT_NE(static_cast<float>(tanh_form), static_cast<float>(erf_form));  // the forms are distinguishable
}

TEST(RMSNormKernel, NormalizesTheLastAxisAndScales) {
  // x = [3, 4]: mean of squares 12.5; w = [1, 2].
  auto x = param("x", {1, 2}, DType::kF32);
  auto w = param("w", {2}, DType::kF32);
  Program p = program({x, w}, call<ops::RMSNorm>({x, w}, 0.0));
  NDArray out = p.run({f32({1, 2}, {3, 4}), f32({2}, {1, 2})})[0];
  const double r = 1 / std::sqrt(12.5);
  expect_near_all(values<float>(out), {3 * r, 8 * r}, 1e-6);
}

TEST(RMSNormKernel, EpsIsAddedToTheMeanSquare) {
  auto x = param("x", {2}, DType::kF32);
  auto w = param("w", {2}, DType::kF32);
  Program p = program({x, w}, call<ops::RMSNorm>({x, w}, 1.0));
  NDArray out = p.run({f32({2}, {0, 0}), f32({2}, {1, 1})})[0];
  EXPECT_EQ(values<float>(out), (std::vector<double>{0, 0}));
  NDArray out2 = p.run({f32({2}, {1, 1}), f32({2}, {1, 1})})[0];
  expect_near_all(values<float>(out2), {1 / std::sqrt(2.0), 1 / std::sqrt(2.0)}, 1e-6);
}

}  // namespace
}  // namespace tf::evaltest
