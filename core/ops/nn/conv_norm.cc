// Conv2D, LayerNorm and RoPE: typeinfer and definitions.
#include "core/ops/nn/nn.h"
#include "core/ops/registry.h"
#include "core/ops/sharding/shard_rules.h"

namespace tf::ops {
namespace {

std::string str(int64_t v) { return std::to_string(v); }

void require_same_dtype(const TypeCtx& ctx, size_t i, const ir::TensorType& t, const ir::TensorType& x) {
  if (t.dtype() != x.dtype()) ctx.operand_error(i, "of x's dtype (" + std::string(ir::dtype_name(x.dtype())) + ")");
}

// Output extent of one spatial axis, folded when static:
// (in + 2p - d * (k - 1) - 1) // s + 1.
ir::ShapeDim conv_extent(const TypeCtx& ctx, const ir::ShapeDim& in, const ir::ShapeDim& k, int64_t s, int64_t p,
                         int64_t d, const char* axis) {
  ir::ShapeDim span = in + ir::ShapeDim(2 * p) - ir::ShapeDim(d) * (k - ir::ShapeDim(1)) - ir::ShapeDim(1);
  if (span.is_static() && span.value() < 0)
    ctx.error(std::string("the dilated kernel is larger than the padded input on axis ") + axis + " (input " +
              in.to_string() + ", padding " + str(p) + ", kernel " + k.to_string() + ", dilation " + str(d) + ")");
  return dim_floordiv(span, ir::ShapeDim(s)) + ir::ShapeDim(1);
}

ir::TypePtr infer_conv2d(const ir::Op& op, TypeCtx& ctx) {
  auto& c = static_cast<const Conv2D&>(op);
  const ir::TensorType& x = ctx.float_tensor(0);
  const ir::TensorType& w = ctx.float_tensor(1);
  if (x.rank() != 4) ctx.operand_error(0, "rank-4 NCHW");
  if (w.rank() != 4) ctx.operand_error(1, "rank-4 OIHW");
  require_same_dtype(ctx, 1, w, x);
  if (x.layout() || w.layout()) ctx.error("does not support sharded operands yet");
  auto pair_ok = [](const std::vector<int64_t>& v) { return v.size() == 2; };
  if (!pair_ok(c.stride) || !pair_ok(c.padding) || !pair_ok(c.dilation))
    ctx.error("stride, padding and dilation must be an int or an (h, w) pair");
  for (int i = 0; i < 2; ++i) {
    if (c.stride[i] <= 0) ctx.error("stride must be positive, but got " + str(c.stride[i]));
    if (c.dilation[i] <= 0) ctx.error("dilation must be positive, but got " + str(c.dilation[i]));
    if (c.padding[i] < 0) ctx.error("padding must be non-negative, but got " + str(c.padding[i]));
  }
  if (c.groups <= 0) ctx.error("groups must be positive, but got " + str(c.groups));
  const ir::ShapeDim &cin = x.shape()[1], &o = w.shape()[0], &wc = w.shape()[1];
  if (cin.is_static() && cin.value() % c.groups != 0)
    ctx.operand_error(0, "with channels (" + cin.to_string() + ") divisible by groups (" + str(c.groups) + ")");
  if (o.is_static() && o.value() % c.groups != 0)
    ctx.operand_error(1, "with out-channels (" + o.to_string() + ") divisible by groups (" + str(c.groups) + ")");
  if (!(wc * ir::ShapeDim(c.groups)).structural_equal(cin))
    ctx.operand_error(1, "[O, C / groups, kh, kw] with C / groups = " + cin.to_string() + " / " + str(c.groups));
  std::vector<const ir::TensorType*> bias = ctx.tensors(2, /*allow_bare=*/true);
  if (bias.size() > 1) ctx.operand_error(2, "a rank-1 [O] tensor or () for no bias");
  if (bias.size() == 1) {
    if (bias[0]->rank() != 1 || !bias[0]->shape()[0].structural_equal(o))
      ctx.operand_error(2, "rank-1 with the out-channels of weight (" + o.to_string() + ")");
    require_same_dtype(ctx, 2, *bias[0], x);
  }
  ir::Shape out{x.shape()[0], o,
                conv_extent(ctx, x.shape()[2], w.shape()[2], c.stride[0], c.padding[0], c.dilation[0], "H"),
                conv_extent(ctx, x.shape()[3], w.shape()[3], c.stride[1], c.padding[1], c.dilation[1], "W")};
  return ir::TensorType::make(out, x.dtype(), nullptr, result_storage({&x, &w}));
}

// A rank-1 affine parameter of the length of x's last axis and x's dtype.
void check_affine(const TypeCtx& ctx, size_t i, const ir::TensorType& x) {
  const ir::TensorType& t = ctx.float_tensor(i);
  const ir::ShapeDim& last = x.shape().back();
  if (t.rank() != 1 || !t.shape()[0].structural_equal(last))
    ctx.operand_error(i, "rank-1 with the length of x's last axis (" + last.to_string() + ")");
  require_same_dtype(ctx, i, t, x);
}

ir::TypePtr infer_layer_norm(const ir::Op& op, TypeCtx& ctx) {
  const ir::TensorType& x = ctx.float_tensor(0);
  if (x.rank() == 0) ctx.operand_error(0, "of rank >= 1");
  check_affine(ctx, 1, x);
  check_affine(ctx, 2, x);
  if (!(static_cast<const LayerNorm&>(op).eps >= 0)) ctx.error("eps must be non-negative");
  return ir::TensorType::make(x.shape(), x.dtype(), x.layout(), result_storage({&x, &ctx.tensor(1)}));
}

ir::TypePtr infer_rope(const ir::Op&, TypeCtx& ctx) {
  const ir::TensorType& q = ctx.float_tensor(0);
  const ir::TensorType& k = ctx.float_tensor(1);
  const ir::TensorType& cos = ctx.float_tensor(2);
  const ir::TensorType& sin = ctx.float_tensor(3);
  const ir::TensorType& pos = ctx.tensor(4);
  if (q.rank() != 4) ctx.operand_error(0, "rank-4 [B, S, H, D]");
  if (k.rank() != 4) ctx.operand_error(1, "rank-4 [B, S, H, D]");
  const ir::ShapeDim& d = q.shape()[3];
  if (d.is_static() && d.value() % 2 != 0) ctx.operand_error(0, "of even head dim D (rotate-half splits it)");
  for (size_t a : {0u, 1u, 3u})
    if (!k.shape()[a].structural_equal(q.shape()[a]))
      ctx.operand_error(1, "equal to q on axis " + str(static_cast<int64_t>(a)) + " (" + q.shape()[a].to_string() + ")");
  require_same_dtype(ctx, 1, k, q);
  for (size_t i : {2u, 3u}) {
    const ir::TensorType& c = i == 2 ? cos : sin;
    if (c.rank() != 2 || !c.shape()[1].structural_equal(d))
      ctx.operand_error(i, "rank-2 [P, D] with D = " + d.to_string());
    require_same_dtype(ctx, i, c, q);
  }
  if (!sin.shape()[0].structural_equal(cos.shape()[0]))
    ctx.operand_error(3, "of cos_cache's length P (" + cos.shape()[0].to_string() + ")");
  if (pos.dtype() != ir::DType::kI32 && pos.dtype() != ir::DType::kI64)
    ctx.operand_error(4, "an i32 or i64 tensor");
  if (pos.rank() != 2 || !pos.shape()[0].structural_equal(q.shape()[0]) ||
      !pos.shape()[1].structural_equal(q.shape()[1]))
    ctx.operand_error(4, "rank-2 [B, S] = " + ir::shape_to_string({q.shape()[0], q.shape()[1]}));
  for (size_t i = 0; i < 5; ++i)
    if (ctx.tensor(i).layout()) ctx.operand_error(i, "an unsharded tensor (sharded RoPE is not supported yet)");
  return ir::TupleType::make({ir::TensorType::make(q.shape(), q.dtype(), nullptr, q.storage()),
                              ir::TensorType::make(k.shape(), k.dtype(), nullptr, k.storage())});
}

}  // namespace

namespace {

using Attrs = std::vector<ir::AttrValue>;

// An int or an (h, w) pair, as a pair.
std::vector<int64_t> pair_of(const std::vector<int64_t>& v) {
  return v.size() == 1 ? std::vector<int64_t>{v[0], v[0]} : v;
}

OpInfo conv2d_def() {
  OpInfo d;
  d.name = "Conv2D";
  d.summary = "NCHW x OIHW 2-D convolution with stride, padding, dilation, groups, bias";
  d.operands = {"x", "weight", "bias"};
  d.attrs = {"stride", "padding", "dilation", "groups"};
  SurfaceParam bias = tuple_param("bias");
  bias.optional = true;
  d.surfaces = {{"conv2d",
                 {tensor_param("x"), tensor_param("weight"), bias,
                  attr_param("stride", AttrType::kAxes, std::vector<int64_t>{1}),
                  attr_param("padding", AttrType::kAxes, std::vector<int64_t>{0}),
                  attr_param("dilation", AttrType::kAxes, std::vector<int64_t>{1}),
                  attr_param("groups", AttrType::kInt, int64_t{1})},
                 [](const Attrs& a) -> ir::OpPtr {
                   return std::make_shared<Conv2D>(pair_of(attr_arg<std::vector<int64_t>>(a, 0)),
                                                   pair_of(attr_arg<std::vector<int64_t>>(a, 1)),
                                                   pair_of(attr_arg<std::vector<int64_t>>(a, 2)),
                                                   attr_arg<int64_t>(a, 3));
                 }}};
  d.typeinfer = infer_conv2d;
  d.shard = ShardSpec::rule(shard_rules::conv2d);
  return d;
}

OpInfo layer_norm_def() {
  OpInfo d;
  d.name = "LayerNorm";
  d.summary = "Layer normalization over the last axis";
  d.operands = {"x", "weight", "bias"};
  d.attrs = {"eps"};
  d.surfaces = {{"layer_norm",
                 {tensor_param("x"), tensor_param("weight"), tensor_param("bias"),
                  attr_param("eps", AttrType::kFloat, 1e-5)},
                 [](const Attrs& a) -> ir::OpPtr { return std::make_shared<LayerNorm>(attr_arg<double>(a, 0)); }}};
  d.typeinfer = infer_layer_norm;
  d.shard = ShardSpec::rule(shard_rules::normalize);
  return d;
}

OpInfo rope_def() {
  OpInfo d;
  d.name = "RoPE";
  d.summary = "Rotate-half rotary position embedding of q and k";
  d.operands = {"q", "k", "cos_cache", "sin_cache", "pos_ids"};
  d.surfaces = {{"rope",
                 {tensor_param("q"), tensor_param("k"), tensor_param("cos_cache"), tensor_param("sin_cache"),
                  tensor_param("pos_ids")},
                 [](const Attrs&) -> ir::OpPtr { return std::make_shared<RoPE>(); }}};
  d.typeinfer = infer_rope;
  d.shard = ShardSpec::rule(shard_rules::rope);
  return d;
}

}  // namespace

void register_conv_norm_ops(Registry& r) {
  r.add(conv2d_def());
  r.add(layer_norm_def());
  r.add(rope_def());
}

}  // namespace tf::ops
