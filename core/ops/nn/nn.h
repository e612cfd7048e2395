// ir/hir/nn: neural-network value ops following torch.nn.functional.
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

// approximate: "tanh" (the spec default) or "none" (erf form, torch's default).
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

}  // namespace tf::ops
