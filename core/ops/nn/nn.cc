#include "core/ops/nn/nn.h"

#include "core/ops/registry.h"

namespace tf::ops {
namespace {

ir::TypePtr infer_matmul(const ir::Op&, TypeCtx& ctx) {
  const ir::TensorType& a = ctx.float_tensor(0);
  const ir::TensorType& b = ctx.float_tensor(1);
  if (a.rank() < 2) ctx.operand_error(0, "of rank >= 2 ([..., M, K])");
  if (b.rank() < 2) ctx.operand_error(1, "of rank >= 2 ([..., K, N])");
  if (a.dtype() != b.dtype())
    ctx.operand_error(1, "of the same dtype as operand #0 (" + std::string(ir::dtype_name(a.dtype())) + ")");
  const ir::ShapeDim& k = a.shape()[a.rank() - 1];
  if (!k.structural_equal(b.shape()[b.rank() - 2]))
    ctx.operand_error(1, "[..., K, N] with K = " + k.to_string() + " (the last axis of operand #0)");
  ir::Shape ba(a.shape().begin(), a.shape().end() - 2), bb(b.shape().begin(), b.shape().end() - 2);
  auto batch = broadcast_shapes(ba, bb);
  if (!batch) ctx.operand_error(1, "batch dims broadcast-compatible with " + ir::shape_to_string(ba));
  batch->push_back(a.shape()[a.rank() - 2]);
  batch->push_back(b.shape()[b.rank() - 1]);
  return ir::TensorType::make(*batch, a.dtype(), nullptr, result_storage({&a, &b}));
}

ir::TypePtr infer_softmax(const ir::Op& op, TypeCtx& ctx) {
  const ir::TensorType& x = ctx.float_tensor(0);
  if (x.rank() == 0) ctx.operand_error(0, "of rank >= 1");
  normalize_axis(ctx, static_cast<const SoftMax&>(op).axis, x.rank());
  return ir::TensorType::make(x.shape(), x.dtype(), x.layout(), x.storage());
}

ir::TypePtr infer_elementwise_float(const ir::Op&, TypeCtx& ctx) {
  const ir::TensorType& x = ctx.float_tensor(0);
  return ir::TensorType::make(x.shape(), x.dtype(), x.layout(), x.storage());
}

ir::TypePtr infer_gelu(const ir::Op& op, TypeCtx& ctx) {
  const std::string& a = static_cast<const Gelu&>(op).approximate;
  if (a != "tanh" && a != "none") ctx.error("approximate must be \"tanh\" or \"none\", but got \"" + a + "\"");
  return infer_elementwise_float(op, ctx);
}

ir::TypePtr infer_rms_norm(const ir::Op& op, TypeCtx& ctx) {
  const ir::TensorType& x = ctx.float_tensor(0);
  const ir::TensorType& w = ctx.float_tensor(1);
  if (x.rank() == 0) ctx.operand_error(0, "of rank >= 1");
  const ir::ShapeDim& last = x.shape().back();
  if (w.rank() != 1 || !w.shape()[0].structural_equal(last))
    ctx.operand_error(1, "rank-1 with the length of x's last axis (" + last.to_string() + ")");
  if (w.dtype() != x.dtype())
    ctx.operand_error(1, "of x's dtype (" + std::string(ir::dtype_name(x.dtype())) + ")");
  if (!(static_cast<const RMSNorm&>(op).eps >= 0)) ctx.error("eps must be non-negative");
  return ir::TensorType::make(x.shape(), x.dtype(), x.layout(), result_storage({&x, &w}));
}

ir::TypePtr infer_relu(const ir::Op&, TypeCtx& ctx) {
  const ir::TensorType& x = ctx.tensor(0);
  if (ir::is_bool(x.dtype())) ctx.operand_error(0, "a numeric (non-bool) tensor");
  return ir::TensorType::make(x.shape(), x.dtype(), x.layout(), x.storage());
}

}  // namespace

void register_conv_norm_ops(Registry& r);  // conv_norm.cc

void register_nn_ops(Registry& r) {
  r.add({"MatMul", "Batched matrix product with broadcast batch dims", {"a", "b"}, infer_matmul});
  r.add({"SoftMax", "Softmax along one axis", {"x"}, infer_softmax});
  r.add({"Silu", "x * sigmoid(x), fused", {"x"}, infer_elementwise_float});
  r.add({"Gelu", "Gaussian error linear unit (tanh or erf form)", {"x"}, infer_gelu});
  r.add({"RMSNorm", "Root-mean-square norm over the last axis, scaled by weight", {"x", "weight"},
         infer_rms_norm});
  r.add({"ReLU", "max(x, 0)", {"x"}, infer_relu});
  r.add({"Sigmoid", "1 / (1 + exp(-x))", {"x"}, infer_elementwise_float});
  r.add({"Tanh", "Hyperbolic tangent", {"x"}, infer_elementwise_float});
  register_conv_norm_ops(r);
}

}  // namespace tf::ops
