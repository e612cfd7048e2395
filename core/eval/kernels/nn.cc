// Neural-network kernels: MatMul, SoftMax, Silu, Gelu, RMSNorm. Each computes
// in compute_t<T> (float for f16 / bf16 / f32, double for f64) and rounds to
// the dtype once per output element, except where the torch reference rounds
// an intermediate (RMSNorm, documented there).

#include <cmath>

#include "core/eval/kernel.h"
#include "core/eval/kernels/dispatch.h"
#include "core/ops/nn/nn.h"
#include "core/runtime/dnnl_primitives.h"
#include "core/runtime/gemm.h"

namespace tf::eval {
namespace {

// ---- MatMul -----------------------------------------------------------------

// Copies the rows x cols matrix at `base` (strides rs, cs) into dst as
// row-major compute values.
template <typename T>
void gather_matrix(const T* base, int64_t rows, int64_t cols, int64_t rs, int64_t cs,
                   compute_t<T>* dst) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) dst[r * cols + c] = widen(base[r * rs + c * cs]);
}

// The project's GEMM (runtime/gemm.h): the native backend computes the same products the same way.
void gemm(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c) {
  runtime::sgemm(0, 0, m, n, k, a, k, b, n, c, n);
}
void gemm(int64_t m, int64_t n, int64_t k, const double* a, const double* b, double* c) {
  runtime::dgemm(0, 0, m, n, k, a, k, b, n, c, n);
}

// Batched a[..., M, K] @ b[..., K, N] with broadcast batch dims. f32 / f64 go
// through runtime::sgemm / dgemm; bf16 through oneDNN's bf16 MatMul where it
// takes the operands (runtime/dnnl_primitives.h); otherwise f16 / bf16 are
// widened to float, multiplied with sgemm and rounded once (torch computes
// them with float accumulation).
template <typename T>
void matmul_typed(const NDArray& a, const NDArray& b, const NDArray& out) {
  using C = compute_t<T>;
  const std::vector<int64_t>& os = out.shape();
  const size_t r = os.size();
  const int64_t m = os[r - 2], n = os[r - 1], k = a.shape()[a.ndim() - 1];
  std::vector<int64_t> batch(os.begin(), os.end() - 2);
  // Batch strides of a and b aligned to the output's batch shape.
  NDArray a_batch = NDArray::view(a, std::vector<int64_t>(a.shape().begin(), a.shape().end() - 2),
                                  std::vector<int64_t>(a.strides().begin(), a.strides().end() - 2));
  NDArray b_batch = NDArray::view(b, std::vector<int64_t>(b.shape().begin(), b.shape().end() - 2),
                                  std::vector<int64_t>(b.strides().begin(), b.strides().end() - 2));
  runtime::StridedCursor cur(batch, {broadcast_strides(a_batch, batch), broadcast_strides(b_batch, batch)});
  std::vector<C> am(static_cast<size_t>(m * k)), bm(static_cast<size_t>(k * n)), cm(static_cast<size_t>(m * n));
  const T* pa = data_of<T>(a);
  const T* pb = data_of<T>(b);
  T* po = mutable_data_of<T>(out);
  const int64_t as0 = a.strides()[a.ndim() - 2], as1 = a.strides()[a.ndim() - 1];
  const int64_t bs0 = b.strides()[b.ndim() - 2], bs1 = b.strides()[b.ndim() - 1];
  const int64_t batches = runtime::shape_numel(batch);
  if (m == 0 || n == 0) return;
  for (int64_t i = 0; i < batches; ++i, cur.next()) {
    if constexpr (std::is_same_v<T, BFloat16>) {  // oneDNN first, as the compiled MatMul
      if (runtime::matmul_bf16(m, n, k, &pa[cur.offset(0)].bits, as0, as1, &pb[cur.offset(1)].bits, bs0, bs1,
                               &po[i * m * n].bits))
        continue;
    }
    gather_matrix(pa + cur.offset(0), m, k, as0, as1, am.data());
    gather_matrix(pb + cur.offset(1), k, n, bs0, bs1, bm.data());
    if (k == 0) std::fill(cm.begin(), cm.end(), C(0));
    else gemm(m, n, k, am.data(), bm.data(), cm.data());
    for (int64_t j = 0; j < m * n; ++j) po[i * m * n + j] = narrow<T>(cm[static_cast<size_t>(j)]);
  }
}

NDArray matmul_kernel(const KernelArgs& args) {
  NDArray out = NDArray::empty(args.out_dtype(), args.out_shape());
  dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_float_v<T>) matmul_typed<T>(args.inputs[0], args.inputs[1], out);
    else TF_CHECK(false, "MatMul on a non-float dtype passed typeinfer");
  });
  return out;
}

// ---- Row-wise ops -----------------------------------------------------------

// Calls f(x_row, out_row, x_stride, out_stride, length) for every 1-D line of
// x along `axis`; out is contiguous with x's shape.
template <typename T, typename F>
void for_each_line(const NDArray& x, const NDArray& out, size_t axis, F f) {
  std::vector<int64_t> outer = x.shape();
  const int64_t len = outer[axis];
  outer[axis] = 1;
  std::vector<int64_t> xs = x.strides(), os = out.strides();
  runtime::StridedCursor c(outer, {xs, os});
  for (int64_t i = 0, n = runtime::shape_numel(outer); i < n; ++i, c.next())
    f(data_of<T>(x) + c.offset(0), mutable_data_of<T>(out) + c.offset(1), xs[axis], os[axis], len);
}

// Max-subtracted softmax in the compute type; the sum accumulates in the
// compute type too (float for half types and f32, as torch's CPU kernel).
template <typename T>
void softmax_line(const T* x, T* y, int64_t xs, int64_t ys, int64_t len) {
  using C = compute_t<T>;
  if (len == 0) return;
  C m = widen(x[0]);
  for (int64_t i = 1; i < len; ++i) m = std::max(m, widen(x[i * xs]));
  std::vector<C> e(static_cast<size_t>(len));
  C sum = 0;
  for (int64_t i = 0; i < len; ++i) sum += e[static_cast<size_t>(i)] = std::exp(widen(x[i * xs]) - m);
  for (int64_t i = 0; i < len; ++i) y[i * ys] = narrow<T>(e[static_cast<size_t>(i)] / sum);
}

NDArray softmax_kernel(const KernelArgs& args) {
  const NDArray& x = args.inputs[0];
  int64_t axis = args.op<ops::SoftMax>().axis;
  if (axis < 0) axis += static_cast<int64_t>(x.ndim());
  NDArray out = NDArray::empty(x.dtype(), x.shape());
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_float_v<T>) for_each_line<T>(x, out, static_cast<size_t>(axis), softmax_line<T>);
    else TF_CHECK(false, "SoftMax on a non-float dtype passed typeinfer");
  });
  return out;
}

// Applies a float-only elementwise function computed in compute_t<T>.
template <typename F>
NDArray float_elementwise(const KernelArgs& args, F f) {
  const NDArray& x = args.inputs[0];
  NDArray out = NDArray::empty(x.dtype(), x.shape());
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_float_v<T>) map_unary<T, T>(x, out, [&f](T v) { return narrow<T>(f(widen(v))); });
    else TF_CHECK(false, "float activation on a non-float dtype passed typeinfer");
  });
  return out;
}

// torch's CPU silu: x / (1 + exp(-x)), the sigmoid never rounded to the dtype
// (the shared form, with libm's exp).
NDArray silu_kernel(const KernelArgs& args) {
  return float_elementwise(args, [](auto x) { return ::tf_silu_of(x, std::exp(-x)); });
}

// torch's GeluKernel: tanh form 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)));
// "none" is the erf form x * 0.5 * (1 + erf(x / sqrt(2))). The shared forms,
// with libm's tanh.
NDArray gelu_kernel(const KernelArgs& args) {
  if (args.op<ops::Gelu>().approximate == "tanh")
    return float_elementwise(args, [](auto x) { return ::tf_gelu_tanh_of(x, std::tanh(::tf_gelu_tanh_arg(x))); });
  return float_elementwise(args, [](auto x) { return ::tf_gelu_erf(x); });
}

// The reference is HF LlamaRMSNorm (torch 1.13 has no rms_norm), with float
// read as compute_t<T> (so f64 stays f64):
//   h = x.float(); var = h.pow(2).mean(-1, keepdim=True)
//   y = weight * (h * torch.rsqrt(var + eps)).to(x.dtype)
// Rounding order, exactly: each square rounds to C; the mean is a sum
// (accumulated in double) rounded to C, then divided by the length in C;
// var + eps and 1/sqrt round in C; h * r rounds to T; the weight product is a
// T * T multiply (computed in C, rounded to T).
template <typename T>
void rms_norm_typed(const NDArray& x, const NDArray& w, const NDArray& out, double eps) {
  using C = compute_t<T>;
  const T* pw = data_of<T>(w);
  const int64_t ws = w.strides()[0];
  for_each_line<T>(x, out, x.ndim() - 1, [&](const T* xr, T* yr, int64_t xs, int64_t ys, int64_t len) {
    if (len == 0) return;
    double acc = 0;
    for (int64_t i = 0; i < len; ++i) {
      C h = widen(xr[i * xs]);
      acc += static_cast<double>(static_cast<C>(h * h));
    }
    C var = static_cast<C>(acc) / static_cast<C>(len);
    C r = C(1) / std::sqrt(var + static_cast<C>(eps));
    for (int64_t i = 0; i < len; ++i) {
      T normed = narrow<T>(static_cast<C>(widen(xr[i * xs]) * r));
      yr[i * ys] = narrow<T>(widen(pw[i * ws]) * widen(normed));
    }
  });
}

NDArray rms_norm_kernel(const KernelArgs& args) {
  const NDArray& x = args.inputs[0];
  NDArray out = NDArray::empty(x.dtype(), x.shape());
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_float_v<T>) rms_norm_typed<T>(x, args.inputs[1], out, args.op<ops::RMSNorm>().eps);
    else TF_CHECK(false, "RMSNorm on a non-float dtype passed typeinfer");
  });
  return out;
}

}  // namespace

void register_conv_norm_kernels(KernelTable& t);  // conv_norm.cc

void register_nn_kernels(KernelTable& t) {
  t.add("MatMul", matmul_kernel);
  t.add("SoftMax", softmax_kernel);
  t.add("Silu", silu_kernel);
  t.add("Gelu", gelu_kernel);
  t.add("RMSNorm", rms_norm_kernel);
  register_conv_norm_kernels(t);
}

}  // namespace tf::eval
