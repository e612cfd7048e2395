// Helpers over ShardLayout shared by the sharding rules, the Reshard / Local
// typeinfer, the parser's Split(axis=k) sugar and the virtual-mesh evaluator.
//
// Vocabulary (docs/ir.md, Sharding). A ShardLayout's layout positions map, in
// order, to contiguous runs per tensor axis whose product is the axis
// extent. The *logical* form of a ShardLayout names, per mesh axis, the
// tensor axis a Split partitions (ShardAttr::pos is then a tensor axis, not a
// layout position). It exists only for canonical layouts: each Split-bound
// position is a leading position of its tensor axis's run, in mesh-axis
// order, with extent equal to its mesh axis's extent.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/ir/shard.h"
#include "core/ir/type.h"

namespace tf::ops::shard {

// [begin, end) layout positions per tensor axis; nullopt when the positions
// do not factor the shape (a symbolic extent must be one position equal to it).
std::optional<std::vector<std::pair<size_t, size_t>>> axis_runs(const ir::Shape& shape,
                                                                const ir::Shape& positions);

// The logical form (see above); nullopt for a non-canonical ("composed") layout.
std::optional<std::vector<ir::ShardAttr>> to_logical(const ir::Shape& shape, const ir::ShardLayout& l);

// The same, relaxed to a *block* layout: the last Split-bound position of a
// tensor axis's run may have an extent that is a multiple of its mesh extent
// (a verbose layout, e.g. shape (8, 16) as positions (8, 16) with Split(pos=0)
// on a 4-wide axis: instance c owns rows [2c, 2c + 2)). Every instance's
// shard is then still one contiguous block per tensor axis, of extent
// (axis extent / product of its mesh extents). Canonical layouts are blocks.
std::optional<std::vector<ir::ShardAttr>> to_block_logical(const ir::Shape& shape, const ir::ShardLayout& l);

// The canonical ShardLayout over `shape` for logical attrs (Split(pos=k) names
// tensor axis k): a split axis of extent E over mesh extents m1.. becomes
// positions (m1, .., E // prod(m)); strides are shared-engine C-order over the
// positions (symbolic where the extents are). Throws Error(kType) when a
// static extent is not divisible; a symbolic one is checked at bind time.
ir::ShardLayoutPtr canonical_layout(const ir::MeshPtr& mesh, const std::vector<ir::ShardAttr>& logical,
                                    const ir::Shape& shape);

// Shared-engine C-order strides over the positions: (B, D, 4) -> (D * 4, 4, 1).
ir::Shape c_order(const ir::Shape& positions);

// The per-instance shape: each Split tensor axis divided by its mesh extents
// (F // 2 for a symbolic F). Requires a block layout (above).
ir::Shape local_shape(const ir::Shape& shape, const ir::ShardLayout& l);

// t with its layout replaced.
ir::TypePtr with_layout(const ir::TensorType& t, ir::LayoutPtr layout);

// "mesh axis \"x\"" for messages.
std::string mesh_axis_name(const ir::ShardLayout& l, size_t mesh_axis);

// A fully replicated layout: every attr Broadcast.
bool all_broadcast(const ir::ShardLayout& l);

}  // namespace tf::ops::shard
