// The nn family: neural-network value ops following torch.nn.functional.
#pragma once

#include <string>

#include "core/ir/op.h"

namespace tf::ops {

// Batched matrix product a[..., M, K] @ b[..., K, N]; batch dims broadcast.
struct MatMul final : ir::Op {
  std::string_view name() const override { return "MatMul"; }
  std::string surface_name() const override { return "matmul"; }
  std::vector<ir::Attr> attrs() const override { return {}; }
};

struct SoftMax final : ir::Op {
  explicit SoftMax(int64_t a) : axis(a) {}
  int64_t axis = -1;
  std::string_view name() const override { return "SoftMax"; }
  std::string surface_name() const override { return "softmax"; }
  std::vector<ir::Attr> attrs() const override { return {{"axis", axis}}; }
};

// x * sigmoid(x) as one op: the intermediate sigmoid is not rounded.
struct Silu final : ir::Op {
  std::string_view name() const override { return "Silu"; }
  std::string surface_name() const override { return "silu"; }
  std::vector<ir::Attr> attrs() const override { return {}; }
};

// approximate: "tanh" (the DSL default) or "none" (erf form, torch's default).
struct Gelu final : ir::Op {
  explicit Gelu(std::string a) : approximate(std::move(a)) {}
  std::string approximate = "tanh";
  std::string_view name() const override { return "Gelu"; }
  std::string surface_name() const override { return "gelu"; }
  std::vector<ir::Attr> attrs() const override { return {{"approximate", approximate}}; }
};

// x * rsqrt(mean(x^2, last axis) + eps) * weight.
struct RMSNorm final : ir::Op {
  explicit RMSNorm(double e) : eps(e) {}
  double eps = 1e-6;
  std::string_view name() const override { return "RMSNorm"; }
  std::string surface_name() const override { return "rms_norm"; }
  std::vector<ir::Attr> attrs() const override { return {{"eps", eps}}; }
};

// Elementwise activations of the nn family (torch.nn.functional). ReLU also
// exists as Unary kind relu; the surface name `relu` builds the Unary, and
// this op prints as `relu(x)`, which denotes the same values.
#define TF_NN_ACTIVATION(Cls, surface)                                         \
  struct Cls final : ir::Op {                                                  \
    std::string_view name() const override { return #Cls; }                    \
    std::string surface_name() const override { return surface; }             \
    std::vector<ir::Attr> attrs() const override { return {}; }               \
  };
TF_NN_ACTIVATION(ReLU, "relu")
TF_NN_ACTIVATION(Sigmoid, "sigmoid")
TF_NN_ACTIVATION(Tanh, "tanh")
#undef TF_NN_ACTIVATION

// NCHW x OIHW convolution (torch.nn.functional.conv2d). Operands
// (x, weight, bias): bias is a rank-1 [O] tensor or an empty Tuple (no bias).
// stride / padding / dilation are (h, w) pairs.
struct Conv2D final : ir::Op {
  Conv2D(std::vector<int64_t> s, std::vector<int64_t> p, std::vector<int64_t> d, int64_t g)
      : stride(std::move(s)), padding(std::move(p)), dilation(std::move(d)), groups(g) {}
  std::vector<int64_t> stride, padding, dilation;
  int64_t groups = 1;
  std::string_view name() const override { return "Conv2D"; }
  std::string surface_name() const override { return "conv2d"; }
  std::vector<ir::Attr> attrs() const override {
    return {{"stride", stride}, {"padding", padding}, {"dilation", dilation}, {"groups", groups}};
  }
};

// (x - mean) / sqrt(var + eps) * weight + bias over the last axis.
struct LayerNorm final : ir::Op {
  explicit LayerNorm(double e) : eps(e) {}
  double eps = 1e-5;
  std::string_view name() const override { return "LayerNorm"; }
  std::string surface_name() const override { return "layer_norm"; }
  std::vector<ir::Attr> attrs() const override { return {{"eps", eps}}; }
};

// Rotate-half RoPE: q, k [B, S, H, D]; caches [P, D]; pos_ids [B, S] ints.
// Result (q_rot, k_rot); x_rot = x * cos[pos] + rotate_half(x) * sin[pos].
struct RoPE final : ir::Op {
  std::string_view name() const override { return "RoPE"; }
  std::string surface_name() const override { return "rope"; }
  std::vector<ir::Attr> attrs() const override { return {}; }
};

}  // namespace tf::ops
