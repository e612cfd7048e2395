#include "core/ops/shape/shape.h"

#include "core/ops/registry.h"

namespace tf::ops {
namespace {

bool is_dim(const ir::TensorType& t) { return t.dtype() == ir::DType::kI64 && t.rank() == 0; }

ir::TypePtr infer_shape_extract(const ir::Op& op, TypeCtx& ctx) {
  const ir::TensorType& s = ctx.tensor(0);
  if (s.dtype() != ir::DType::kI64 || s.rank() != 1) ctx.operand_error(0, "a shape value (a rank-1 i64 tensor)");
  const ir::ShapeDim& n = s.shape()[0];
  const int64_t index = static_cast<const ShapeExtract&>(op).index;
  if (n.is_static()) normalize_axis(ctx, index, static_cast<size_t>(n.value()), "index");
  else if (index < 0) ctx.error("index must be non-negative for a shape value of symbolic length " + n.to_string());
  return ir::TensorType::make({}, ir::DType::kI64);
}

ir::TypePtr infer_shape_compose(const ir::Op&, TypeCtx& ctx) {
  std::vector<const ir::TensorType*> dims = ctx.tensors(0);
  for (const auto* d : dims)
    if (!is_dim(*d)) ctx.operand_error(0, "a tuple of dims (rank-0 i64 tensors)");
  return ir::TensorType::make({static_cast<int64_t>(dims.size())}, ir::DType::kI64);
}

}  // namespace

namespace {

using Attrs = std::vector<ir::AttrValue>;

OpInfo shape_extract_def() {
  OpInfo d;
  d.name = "ShapeExtract";
  d.summary = "One dim of a shape value";
  d.operands = {"shape"};
  d.attrs = {"index"};
  d.surfaces = {{"shape_extract", {tensor_param("shape"), attr_param("index", AttrType::kInt)},
                 [](const Attrs& a) -> ir::OpPtr { return std::make_shared<ShapeExtract>(attr_arg<int64_t>(a, 0)); }}};
  d.typeinfer = infer_shape_extract;
  d.shard = ShardSpec::fail_closed();
  return d;
}

OpInfo shape_compose_def() {
  OpInfo d;
  d.name = "ShapeCompose";
  d.summary = "A shape value from a tuple of dims";
  d.operands = {"dims"};
  d.surfaces = {{"shape_compose", {tuple_param("dims")},
                 [](const Attrs&) -> ir::OpPtr { return std::make_shared<ShapeCompose>(); }}};
  d.typeinfer = infer_shape_compose;
  d.shard = ShardSpec::fail_closed();
  return d;
}

}  // namespace

void register_shape_ops(Registry& r) {
  r.add(shape_extract_def());
  r.add(shape_compose_def());
}

}  // namespace tf::ops
