#include "core/ops/sharding/sharding.h"

#include <set>

#include "core/ops/registry.h"
#include "core/ops/sharding/shard_util.h"

namespace tf::ops {
namespace {

std::set<int64_t> split_positions(const ir::ShardLayout& l) {
  std::set<int64_t> s;
  for (const auto& a : l.attrs())
    if (a.is_split()) s.insert(a.pos);
  return s;
}

// A source already in per-instance form: every Split-bound position has stride 0.
bool split_axes_zero(const ir::ShardLayout& l) {
  if (!l.strides()) return false;
  for (int64_t p : split_positions(l))
    if ((*l.strides())[p] != ir::ShapeDim(0)) return false;
  return !split_positions(l).empty();
}

// The per-instance form over an instance's extents: C-order, with the
// stride of every size-1 position 0.
ir::Shape per_instance_c_order(const ir::Shape& ext) {
  ir::Shape s = shard::c_order(ext);
  for (size_t p = 0; p < s.size(); ++p)
    if (ext[p] == ir::ShapeDim(1)) s[p] = ir::ShapeDim(0);
  return s;
}

// The Reshard stride-resolution rule: dispatch on (layout, storage).
ir::TypePtr infer_reshard(const ir::Op& op, TypeCtx& ctx) {
  const auto& r = static_cast<const Reshard&>(op);
  const ir::TensorType& x = ctx.tensor(0);
  ir::StorageKind to = r.storage.value_or(x.storage());
  if (to == ir::StorageKind::kUnmaterialized)
    ctx.error("destination storage must be concrete (rmem, smem or gmem), not \"unmaterialized\"");
  if (!r.layout) {
    if (to != x.storage())
      ctx.error("changes storage from \"" + std::string(ir::storage_name(x.storage())) + "\" to \"" +
                std::string(ir::storage_name(to)) + "\" without a layout: a storage change MUST carry an explicit "
                "layout=");
    return ctx.type(0);
  }
  const ir::ShardLayout& l = *r.layout;
  if (!shard::axis_runs(x.shape(), l.shape()))
    ctx.operand_error(0, "a tensor whose shape the target layout positions " + ir::shape_to_string(l.shape()) +
                             " factor (Reshard preserves the logical shape)");
  ir::Shape strides;
  const ir::ShardLayout* src = ir::as_shard_layout(x.layout());
  if (l.strides()) {
    strides = *l.strides();  // verbose: verbatim, never rewritten
  } else if (to == x.storage()) {
    strides = src && split_axes_zero(*src) ? per_instance_strides(l) : shard::c_order(l.shape());
  } else if (static_cast<int>(to) > static_cast<int>(x.storage()) ||
             x.storage() == ir::StorageKind::kUnmaterialized) {
    strides = shard::c_order(l.shape());  // low -> high: shared-engine C-order
  } else {
    strides = per_instance_strides(l);  // high -> low: per-instance form
  }
  auto out = ir::ShardLayout::make(l.mesh(), l.attrs(), l.shape(), std::move(strides));
  return ir::TensorType::make(x.shape(), x.dtype(), out, to);
}

// Local: contracts each Split axis by its mesh extent; strips the shard
// wrapper, leaving the local (per-instance) Layout.
ir::TypePtr infer_local(const ir::Op&, TypeCtx& ctx) {
  const ir::TensorType& x = ctx.tensor(0);
  const ir::ShardLayout* l = ir::as_shard_layout(x.layout());
  if (!l) ctx.operand_error(0, "a tensor with a ShardLayout");
  auto runs = shard::axis_runs(x.shape(), l->shape());
  if (!runs) ctx.operand_error(0, "a ShardLayout whose positions factor its shape");
  // A Split-bound position holds its mesh extent's worth of blocks: locally
  // it is position / mesh extent (1 in canonical form, more in a verbose
  // layout such as (8S, 16) on a 4-wide axis).
  ir::Shape local_pos = l->shape(), shape;
  for (size_t m = 0; m < l->attrs().size(); ++m) {
    const ir::ShardAttr& a = l->attrs()[m];
    if (!a.is_split()) continue;
    int64_t mesh_ext = l->mesh()->shape[m];
    const ir::ShapeDim& d = local_pos[a.pos];
    if (!d.is_static() || d.value() % mesh_ext != 0)
      ctx.operand_error(0, "a ShardLayout whose Split-bound position " + std::to_string(a.pos) + " (" +
                               d.to_string() + ") is a multiple of its mesh extent " + std::to_string(mesh_ext));
    local_pos[a.pos] = ir::ShapeDim(d.value() / mesh_ext);
  }
  for (auto [b, e] : *runs) {
    bool all_static = true;
    int64_t n = 1;
    for (size_t p = b; p < e; ++p) {
      if (!local_pos[p].is_static()) all_static = false;
      else n *= local_pos[p].value();
    }
    shape.push_back(all_static ? ir::ShapeDim(n) : x.shape()[shape.size()]);  // symbolic sizes pass through
  }
  auto layout = std::make_shared<const ir::Layout>(local_pos, per_instance_c_order(local_pos));
  return ir::TensorType::make(shape, x.dtype(), layout, x.storage());
}

}  // namespace

std::vector<ir::Attr> Reshard::attrs() const {
  std::vector<ir::Attr> a;
  if (layout) a.push_back({"layout", ir::LayoutPtr(layout)});
  if (storage) a.push_back({"storage", *storage});
  return a;
}

ir::Shape per_instance_strides(const ir::ShardLayout& l) {
  std::set<int64_t> split = split_positions(l);
  ir::Shape ext;
  for (size_t p = 0; p < l.shape().size(); ++p)
    ext.push_back(split.count(static_cast<int64_t>(p)) ? ir::ShapeDim(1) : l.shape()[p]);
  return per_instance_c_order(ext);
}

bool reshard_needs_grid_barrier(const ir::TensorType& from, const ir::TensorType& to) {
  const ir::ShardLayout* a = ir::as_shard_layout(from.layout());
  const ir::ShardLayout* b = ir::as_shard_layout(to.layout());
  const ir::ShardLayout* cta = a && a->mesh()->level == "cta" ? a : b && b->mesh()->level == "cta" ? b : nullptr;
  if (!cta || from.storage() != ir::StorageKind::kGmem) return false;
  if (!a || !b) return true;  // ownership appears or disappears
  if (!a->mesh()->structural_equal(*b->mesh())) return true;
  auto la = shard::to_logical(from.shape(), *a), lb = shard::to_logical(to.shape(), *b);
  if (!la || !lb) return true;
  for (size_t m = 0; m < la->size(); ++m)
    if (!((*la)[m] == (*lb)[m])) return true;
  return false;
}

namespace {

// reshard / local are frontend syntax (core/frontend/parse_shard.cc): a
// layout argument is a parse-time value, not an attribute literal the
// surface table could coerce.
OpInfo reshard_def() {
  OpInfo d;
  d.name = "Reshard";
  d.summary = "convert x to a target ShardLayout and/or storage";
  d.operands = {"x"};
  d.attrs = {"layout", "storage"};
  d.surface_elsewhere = "reshard(x, layout=..., storage=...): frontend syntax, its layout a parse-time value";
  d.typeinfer = infer_reshard;
  d.shard = ShardSpec::shard_aware();
  return d;
}

OpInfo local_def() {
  OpInfo d;
  d.name = "Local";
  d.summary = "the current instance's local view of a sharded tensor";
  d.operands = {"x"};
  d.surface_elsewhere = "local(x): frontend syntax, beside reshard";
  d.typeinfer = infer_local;
  d.shard = ShardSpec::shard_aware();
  return d;
}

}  // namespace

void register_sharding_ops(Registry& r) {
  r.add(reshard_def());
  r.add(local_def());
}

}  // namespace tf::ops
