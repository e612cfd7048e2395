#include "core/ops/nn/nn.h"

#include "core/ops/registry.h"
#include "core/ops/sharding/shard_rules.h"

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

using Attrs = std::vector<ir::AttrValue>;

// The common shape of a record; the caller adds surfaces and attributes.
OpInfo record(const char* name, const char* summary, std::vector<std::string> operands, TypeInferFn infer,
              ShardSpec shard) {
  OpInfo d;
  d.name = name;
  d.summary = summary;
  d.operands = std::move(operands);
  d.typeinfer = infer;
  d.shard = std::move(shard);
  return d;
}

// An attribute-free op whose one surface function takes just x.
template <typename OpT>
SurfaceFn unary_surface(const char* name) {
  return {name, {tensor_param("x")}, [](const Attrs&) -> ir::OpPtr { return std::make_shared<OpT>(); }};
}

OpInfo matmul_def() {
  OpInfo d = record("MatMul", "Batched matrix product with broadcast batch dims", {"a", "b"}, infer_matmul,
                    ShardSpec::rule(shard_rules::matmul));
  d.surfaces = {{"matmul", {tensor_param("a"), tensor_param("b")},
                 [](const Attrs&) -> ir::OpPtr { return std::make_shared<MatMul>(); }}};
  return d;
}

OpInfo softmax_def() {
  OpInfo d = record("SoftMax", "Softmax along one axis", {"x"}, infer_softmax, ShardSpec::rule(shard_rules::normalize));
  d.attrs = {"axis"};
  d.surfaces = {{"softmax", {tensor_param("x"), attr_param("axis", AttrType::kInt, int64_t{-1})},
                 [](const Attrs& a) -> ir::OpPtr { return std::make_shared<SoftMax>(attr_arg<int64_t>(a, 0)); }}};
  return d;
}

OpInfo silu_def() {
  OpInfo d = record("Silu", "x * sigmoid(x), fused", {"x"}, infer_elementwise_float,
                    ShardSpec::elementwise(not_monotone()));
  d.surfaces = {unary_surface<Silu>("silu")};
  return d;
}

OpInfo gelu_def() {
  OpInfo d = record("Gelu", "Gaussian error linear unit (tanh or erf form)", {"x"}, infer_gelu,
                    ShardSpec::elementwise(not_monotone()));
  d.attrs = {"approximate"};
  d.surfaces = {{"gelu", {tensor_param("x"), attr_param("approximate", AttrType::kString, std::string("tanh"))},
                 [](const Attrs& a) -> ir::OpPtr { return std::make_shared<Gelu>(attr_arg<std::string>(a, 0)); }}};
  return d;
}

OpInfo rms_norm_def() {
  OpInfo d = record("RMSNorm", "Root-mean-square norm over the last axis, scaled by weight", {"x", "weight"},
                    infer_rms_norm, ShardSpec::rule(shard_rules::normalize));
  d.attrs = {"eps"};
  d.surfaces = {{"rms_norm", {tensor_param("x"), tensor_param("weight"), attr_param("eps", AttrType::kFloat, 1e-6)},
                 [](const Attrs& a) -> ir::OpPtr { return std::make_shared<RMSNorm>(attr_arg<double>(a, 0)); }}};
  return d;
}

OpInfo relu_def() {
  OpInfo d = record("ReLU", "max(x, 0)", {"x"}, infer_relu, ShardSpec::elementwise(monotone()));
  d.surface_elsewhere = "relu(x) builds Unary(relu), which denotes the same values; ReLU prints as relu(x)";
  return d;
}

OpInfo sigmoid_def() {
  OpInfo d = record("Sigmoid", "1 / (1 + exp(-x))", {"x"}, infer_elementwise_float, ShardSpec::elementwise(monotone()));
  d.surfaces = {unary_surface<Sigmoid>("sigmoid")};
  return d;
}

OpInfo tanh_def() {
  OpInfo d = record("Tanh", "Hyperbolic tangent", {"x"}, infer_elementwise_float, ShardSpec::elementwise(monotone()));
  d.surfaces = {unary_surface<Tanh>("tanh")};
  return d;
}

}  // namespace

void register_conv_norm_ops(Registry& r);  // conv_norm.cc

void register_nn_ops(Registry& r) {
  r.add(matmul_def());
  r.add(softmax_def());
  r.add(silu_def());
  r.add(gelu_def());
  r.add(rms_norm_def());
  r.add(relu_def());
  r.add(sigmoid_def());
  r.add(tanh_def());
  register_conv_norm_ops(r);
}

}  // namespace tf::ops
