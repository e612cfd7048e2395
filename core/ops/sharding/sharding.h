// The sharding family: Reshard and Local. ShardLayout
// and Mesh are type-system constructs (core/ir/shard.h), not operands.
#pragma once

#include <optional>

#include "core/ir/shard.h"
#include "core/ir/type.h"
#include "core/ir/op.h"

namespace tf::ops {

// reshard(x, layout=..., storage=...): converts x to a target layout and/or
// storage. `layout` is a ShardLayout whose strides may be absent (the sugar,
// resolved by typeinfer per the (layout, storage) table, docs/sharding.md).
struct Reshard final : ir::Op {
  Reshard(ir::ShardLayoutPtr l, std::optional<ir::StorageKind> s) : layout(std::move(l)), storage(s) {}
  ir::ShardLayoutPtr layout;                  // null: keep x.layout
  std::optional<ir::StorageKind> storage;     // nullopt: keep x.storage
  std::string_view name() const override { return "Reshard"; }
  std::string surface_name() const override { return "reshard"; }
  // The layout is a LayoutPtr attribute: equality / hashing (generic over
  // attrs) compare it structurally; it prints as its DSL text.
  std::vector<ir::Attr> attrs() const override;
};

// local(x): the current instance's view of a sharded x.
struct Local final : ir::Op {
  std::string_view name() const override { return "Local"; }
  std::string surface_name() const override { return "local"; }
  std::vector<ir::Attr> attrs() const override { return {}; }
};

// True when lowering a Reshard from `from` to `to` must emit a grid barrier
// first (the cross-CTA fence rule): a gmem shard produced under one CTA
// ownership is read under another across a "cta" mesh.
bool reshard_needs_grid_barrier(const ir::TensorType& from, const ir::TensorType& to);

// The per-instance form of strides over positions: Split-bound positions
// take stride 0; the others C-order over the local extents, size-1 -> 0.
ir::Shape per_instance_strides(const ir::ShardLayout& l);

}  // namespace tf::ops
