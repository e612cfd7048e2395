// ReLU, Sigmoid, Tanh, Conv2D (im2col + runtime::sgemm / dgemm), LayerNorm, RoPE.
// Each computes in compute_t<T> and rounds once per output element.

#include <cmath>

#include "core/eval/kernel.h"
#include "core/eval/kernels/dispatch.h"
#include "core/ops/nn/nn.h"
#include "core/runtime/dnnl_primitives.h"
#include "core/runtime/gemm.h"
#include "core/runtime/kernel_errors.h"

namespace tf::eval {
namespace {

template <typename F>
NDArray elementwise(const KernelArgs& args, F f) {
  const NDArray& x = args.inputs[0];
  NDArray out = NDArray::empty(x.dtype(), x.shape());
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) TF_CHECK(false, "nn activation on bool passed typeinfer");
    else map_unary<T, T>(x, out, [&f](T v) { return narrow<T>(f(widen(v))); });
  });
  return out;
}

NDArray relu_kernel(const KernelArgs& args) {
  return elementwise(args, [](auto x) { return ::tf_relu(x); });
}

NDArray sigmoid_kernel(const KernelArgs& args) {
  return elementwise(args, [](auto x) {
    using C = decltype(x);
    if constexpr (std::is_floating_point_v<C>) return C(1) / (C(1) + std::exp(-x));
    else return x;  // unreachable: typeinfer requires float
  });
}

NDArray tanh_kernel(const KernelArgs& args) {
  return elementwise(args, [](auto x) {
    if constexpr (std::is_floating_point_v<decltype(x)>) return std::tanh(x);
    else return x;  // unreachable: typeinfer requires float
  });
}

// ---- Conv2D -------------------------------------------------------------------

// The project's GEMM (runtime/gemm.h), as the compiled Conv2D calls it.
void gemm(int m, int n, int k, const float* a, const float* b, float* c) { runtime::sgemm(0, 0, m, n, k, a, k, b, n, c, n); }
void gemm(int m, int n, int k, const double* a, const double* b, double* c) {
  runtime::dgemm(0, 0, m, n, k, a, k, b, n, c, n);
}

// Per image and group: col[(c, i, j), (oh, ow)] = x[c, oh*s - p + i*d, ...]
// (0 outside), then out_g[O/g, Ho*Wo] = w_g[O/g, C/g*kh*kw] @ col, plus bias.
template <typename T>
void conv2d_typed(const KernelArgs& args, const NDArray& out) {
  using C = compute_t<T>;
  const auto& op = args.op<ops::Conv2D>();
  const NDArray& x = args.inputs[0];
  const NDArray& w = args.inputs[1];
  const NDArray* bias = args.inputs.size() > 2 ? &args.inputs[2] : nullptr;
  const int64_t N = x.shape()[0], Cin = x.shape()[1], H = x.shape()[2], W = x.shape()[3];
  const int64_t O = w.shape()[0], kh = w.shape()[2], kw = w.shape()[3];
  const int64_t Ho = out.shape()[2], Wo = out.shape()[3], G = op.groups;
  const int64_t cg = Cin / G, og = O / G, kk = cg * kh * kw, hw = Ho * Wo;
  if (out.numel() == 0) return;
  const T* px = data_of<T>(x);
  const T* pw = data_of<T>(w);
  T* po = mutable_data_of<T>(out);
  const auto& xs = x.strides();
  const auto& ws = w.strides();
  if constexpr (std::is_same_v<T, float>) {  // oneDNN first, as the compiled Conv2D
    const runtime::Conv2DGeometry geo{N, Cin, H, W, O, kh, kw, Ho, Wo, G, {op.stride[0], op.stride[1]},
                                      {op.padding[0], op.padding[1]}, {op.dilation[0], op.dilation[1]}};
    const int64_t x4[4] = {xs[0], xs[1], xs[2], xs[3]}, w4[4] = {ws[0], ws[1], ws[2], ws[3]};
    if (runtime::conv2d_f32(geo, px, x4, pw, w4, bias ? data_of<float>(*bias) : nullptr,
                            bias ? bias->strides()[0] : 0, po))
      return;
  }
  std::vector<C> col(static_cast<size_t>(kk * hw)), wm(static_cast<size_t>(og * kk)), res(static_cast<size_t>(og * hw));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t g = 0; g < G; ++g) {
      for (int64_t c = 0; c < cg; ++c)
        for (int64_t i = 0; i < kh; ++i)
          for (int64_t j = 0; j < kw; ++j) {
            C* row = &col[static_cast<size_t>(((c * kh + i) * kw + j) * hw)];
            for (int64_t oh = 0; oh < Ho; ++oh) {
              const int64_t ih = oh * op.stride[0] - op.padding[0] + i * op.dilation[0];
              for (int64_t ow = 0; ow < Wo; ++ow) {
                const int64_t iw = ow * op.stride[1] - op.padding[1] + j * op.dilation[1];
                const bool in = ih >= 0 && ih < H && iw >= 0 && iw < W;
                row[oh * Wo + ow] =
                    in ? widen(px[n * xs[0] + (g * cg + c) * xs[1] + ih * xs[2] + iw * xs[3]]) : C(0);
              }
            }
          }
      for (int64_t o = 0; o < og; ++o)
        for (int64_t c = 0; c < cg; ++c)
          for (int64_t i = 0; i < kh; ++i)
            for (int64_t j = 0; j < kw; ++j)
              wm[static_cast<size_t>(o * kk + (c * kh + i) * kw + j)] =
                  widen(pw[(g * og + o) * ws[0] + c * ws[1] + i * ws[2] + j * ws[3]]);
      if (kk == 0) std::fill(res.begin(), res.end(), C(0));
      else gemm(static_cast<int>(og), static_cast<int>(hw), static_cast<int>(kk), wm.data(), col.data(), res.data());
      for (int64_t o = 0; o < og; ++o) {
        const C b = bias ? widen(data_of<T>(*bias)[(g * og + o) * bias->strides()[0]]) : C(0);
        for (int64_t p = 0; p < hw; ++p)
          po[((n * O) + g * og + o) * hw + p] = narrow<T>(res[static_cast<size_t>(o * hw + p)] + b);
      }
    }
}

NDArray conv2d_kernel(const KernelArgs& args) {
  NDArray out = NDArray::empty(args.out_dtype(), args.out_shape());
  dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_float_v<T>) conv2d_typed<T>(args, out);
    else TF_CHECK(false, "Conv2D on a non-float dtype passed typeinfer");
  });
  return out;
}

// ---- LayerNorm and RoPE ---------------------------------------------------------

// Statistics in double (biased variance, as torch), output rounded once.
template <typename T>
void layer_norm_typed(const KernelArgs& args, const NDArray& out) {
  using C = compute_t<T>;
  const NDArray& x = args.inputs[0];
  const NDArray &w = args.inputs[1], &b = args.inputs[2];
  const double eps = args.op<ops::LayerNorm>().eps;
  const size_t axis = x.ndim() - 1;
  const int64_t len = x.shape()[axis];
  std::vector<int64_t> outer = x.shape();
  outer[axis] = 1;
  runtime::StridedCursor c(outer, {x.strides(), out.strides()});
  for (int64_t r = 0, rows = runtime::shape_numel(outer); r < rows; ++r, c.next()) {
    const T* xr = data_of<T>(x) + c.offset(0);
    T* yr = mutable_data_of<T>(out) + c.offset(1);
    const int64_t xs = x.strides()[axis];
    double mean = 0, var = 0;
    for (int64_t i = 0; i < len; ++i) mean += static_cast<double>(widen(xr[i * xs]));
    mean /= static_cast<double>(len);
    for (int64_t i = 0; i < len; ++i) {
      const double d = static_cast<double>(widen(xr[i * xs])) - mean;
      var += d * d;
    }
    var /= static_cast<double>(len);
    const double rstd = 1.0 / std::sqrt(var + eps);
    for (int64_t i = 0; i < len; ++i) {
      const double v = (static_cast<double>(widen(xr[i * xs])) - mean) * rstd *
                           static_cast<double>(widen(data_of<T>(w)[i * w.strides()[0]])) +
                       static_cast<double>(widen(data_of<T>(b)[i * b.strides()[0]]));
      yr[i * out.strides()[axis]] = narrow<T>(static_cast<C>(v));
    }
  }
}

NDArray layer_norm_kernel(const KernelArgs& args) {
  NDArray out = NDArray::empty(args.out_dtype(), args.out_shape());
  dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (is_float_v<T>) layer_norm_typed<T>(args, out);
    else TF_CHECK(false, "LayerNorm on a non-float dtype passed typeinfer");
  });
  return out;
}

int64_t pos_at(const NDArray& pos, int64_t b, int64_t s) {
  const int64_t off = b * pos.strides()[0] + s * pos.strides()[1];
  return pos.dtype() == ir::DType::kI32 ? data_of<int32_t>(pos)[off] : data_of<int64_t>(pos)[off];
}

// x_rot[i] = x[i] * cos[p, i] + rot[i] * sin[p, i], rot = (-x[D/2:], x[:D/2]).
template <typename T>
NDArray rope_one(const NDArray& x, const NDArray& cos, const NDArray& sin, const NDArray& pos) {
  using C = compute_t<T>;
  NDArray out = NDArray::empty(x.dtype(), x.shape());
  const int64_t B = x.shape()[0], S = x.shape()[1], H = x.shape()[2], D = x.shape()[3], half = D / 2;
  const int64_t P = cos.shape()[0];
  const auto& xs = x.strides();
  T* po = mutable_data_of<T>(out);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S; ++s) {
      const int64_t p = pos_at(pos, b, s);
      if (p < 0 || p >= P)
        ir::fail(ir::ErrorKind::kRuntime, runtime::rope_position_message(p, P));
      for (int64_t h = 0; h < H; ++h) {
        const T* xr = data_of<T>(x) + b * xs[0] + s * xs[1] + h * xs[2];
        for (int64_t i = 0; i < D; ++i) {
          const C v = widen(xr[i * xs[3]]);
          const C rot = i < half ? -widen(xr[(i + half) * xs[3]]) : widen(xr[(i - half) * xs[3]]);
          const C c = widen(data_of<T>(cos)[p * cos.strides()[0] + i * cos.strides()[1]]);
          const C sn = widen(data_of<T>(sin)[p * sin.strides()[0] + i * sin.strides()[1]]);
          po[((b * S + s) * H + h) * D + i] = narrow<T>(v * c + rot * sn);
        }
      }
    }
  return out;
}

std::vector<NDArray> rope_kernel(const KernelArgs& args) {
  const auto& in = args.inputs;
  return dispatch_dtype(in[0].dtype(), [&](auto tag) -> std::vector<NDArray> {
    using T = decltype(tag);
    if constexpr (is_float_v<T>)
      return {rope_one<T>(in[0], in[2], in[3], in[4]), rope_one<T>(in[1], in[2], in[3], in[4])};
    else TF_CHECK(false, "RoPE on a non-float dtype passed typeinfer");
  });
}

}  // namespace

void register_conv_norm_kernels(KernelTable& t) {
  t.add("ReLU", relu_kernel);
  t.add("Sigmoid", sigmoid_kernel);
  t.add("Tanh", tanh_kernel);
  t.add("Conv2D", conv2d_kernel);
  t.add("LayerNorm", layer_norm_kernel);
  t.add_tuple("RoPE", rope_kernel);
}

}  // namespace tf::eval
