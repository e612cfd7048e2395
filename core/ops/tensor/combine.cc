// Typeinfer of Concat, Stack, ShapeOf and Rank. Concat / Stack take their
// inputs as one Tuple operand (a Call has a fixed operand count per op).
#include "core/ops/registry.h"
#include "core/ops/tensor/tensor.h"

namespace tf::ops {
namespace {

std::string str(size_t v) { return std::to_string(v); }

// The inputs of a Concat / Stack: at least one, same dtype and rank, unsharded.
std::vector<const ir::TensorType*> joined_inputs(const TypeCtx& ctx) {
  std::vector<const ir::TensorType*> ts = ctx.tensors(0);
  if (ts.empty()) ctx.operand_error(0, "a tuple of at least one tensor");
  for (size_t i = 0; i < ts.size(); ++i) {
    if (ts[i]->layout()) ctx.operand_error(0, "a tuple of unsharded tensors (sharding is not supported yet)");
    if (ts[i]->dtype() != ts[0]->dtype())
      ctx.operand_error(0, "a tuple of tensors of one dtype; input " + str(i) + " is " +
                               std::string(ir::dtype_name(ts[i]->dtype())) + ", input 0 is " +
                               std::string(ir::dtype_name(ts[0]->dtype())));
    if (ts[i]->rank() != ts[0]->rank())
      ctx.operand_error(0, "a tuple of tensors of one rank; input " + str(i) + " has rank " + str(ts[i]->rank()) +
                               ", input 0 has rank " + str(ts[0]->rank()));
  }
  return ts;
}

ir::TypePtr infer_concat(const ir::Op& op, TypeCtx& ctx) {
  auto ts = joined_inputs(ctx);
  if (ts[0]->rank() == 0) ctx.operand_error(0, "a tuple of tensors of rank >= 1");
  const int64_t axis = normalize_axis(ctx, static_cast<const Concat&>(op).axis, ts[0]->rank());
  ir::Shape out = ts[0]->shape();
  for (size_t i = 1; i < ts.size(); ++i) {
    for (size_t a = 0; a < out.size(); ++a) {
      if (static_cast<int64_t>(a) == axis) continue;
      if (!ts[i]->shape()[a].structural_equal(out[a]))
        ctx.operand_error(0, "a tuple of tensors equal off the concat axis; input " + str(i) + " has " +
                                 ts[i]->shape()[a].to_string() + " on axis " + str(a) + ", input 0 has " +
                                 out[a].to_string());
    }
    out[axis] = out[axis] + ts[i]->shape()[axis];
  }
  std::vector<const ir::TensorType*> all(ts.begin(), ts.end());
  return ir::TensorType::make(out, ts[0]->dtype(), nullptr, result_storage(all));
}

ir::TypePtr infer_stack(const ir::Op& op, TypeCtx& ctx) {
  auto ts = joined_inputs(ctx);
  for (size_t i = 1; i < ts.size(); ++i)
    if (!ir::shape_equal(ts[i]->shape(), ts[0]->shape()))
      ctx.operand_error(0, "a tuple of tensors of one shape; input " + str(i) + " is " +
                               ir::shape_to_string(ts[i]->shape()) + ", input 0 is " +
                               ir::shape_to_string(ts[0]->shape()));
  const int64_t axis = normalize_axis(ctx, static_cast<const Stack&>(op).axis, ts[0]->rank() + 1);
  ir::Shape out = ts[0]->shape();
  out.insert(out.begin() + axis, ir::ShapeDim(static_cast<int64_t>(ts.size())));
  std::vector<const ir::TensorType*> all(ts.begin(), ts.end());
  return ir::TensorType::make(out, ts[0]->dtype(), nullptr, result_storage(all));
}

ir::TypePtr infer_shape_of(const ir::Op&, TypeCtx& ctx) {
  const ir::TensorType& x = ctx.tensor(0);
  return ir::TensorType::make({static_cast<int64_t>(x.rank())}, ir::DType::kI64);
}

ir::TypePtr infer_rank(const ir::Op&, TypeCtx& ctx) {
  ctx.tensor(0);
  return ir::TensorType::make({}, ir::DType::kI64);
}

}  // namespace

namespace {

using Attrs = std::vector<ir::AttrValue>;

// Concat and Stack take the same surface: a tuple of inputs and an axis.
template <typename OpT>
SurfaceFn join_surface(const char* name) {
  return {name, {tuple_param("inputs"), attr_param("axis", AttrType::kInt, int64_t{0})},
          [](const Attrs& a) -> ir::OpPtr { return std::make_shared<OpT>(attr_arg<int64_t>(a, 0)); }};
}

OpInfo concat_def() {
  OpInfo d;
  d.name = "Concat";
  d.summary = "Join a tuple of tensors along an existing axis";
  d.operands = {"inputs"};
  d.attrs = {"axis"};
  d.surfaces = {join_surface<Concat>("concat")};
  d.typeinfer = infer_concat;
  d.shard = ShardSpec::fail_closed();
  return d;
}

OpInfo stack_def() {
  OpInfo d;
  d.name = "Stack";
  d.summary = "Join a tuple of equal-shape tensors along a new axis";
  d.operands = {"inputs"};
  d.attrs = {"axis"};
  d.surfaces = {join_surface<Stack>("stack")};
  d.typeinfer = infer_stack;
  d.shard = ShardSpec::fail_closed();
  return d;
}

OpInfo shape_of_def() {
  OpInfo d;
  d.name = "ShapeOf";
  d.summary = "x's shape as an i64 tensor of length rank(x)";
  d.operands = {"x"};
  d.surfaces = {{"shape_of", {tensor_param("x")},
                 [](const Attrs&) -> ir::OpPtr { return std::make_shared<ShapeOf>(); }}};
  d.typeinfer = infer_shape_of;
  d.shard = ShardSpec::fail_closed();
  return d;
}

OpInfo rank_def() {
  OpInfo d;
  d.name = "Rank";
  d.summary = "rank(x) as a rank-0 i64 tensor";
  d.operands = {"x"};
  d.surfaces = {{"rank", {tensor_param("x")}, [](const Attrs&) -> ir::OpPtr { return std::make_shared<Rank>(); }}};
  d.typeinfer = infer_rank;
  d.shard = ShardSpec::fail_closed();
  return d;
}

}  // namespace

void register_combine_ops(Registry& r) {
  r.add(concat_def());
  r.add(stack_def());
  r.add(shape_of_def());
  r.add(rank_def());
}

}  // namespace tf::ops
