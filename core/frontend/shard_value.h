// Parse-time values of the sharding surface (docs/sharding.md, The DSL
// surface): a ShardAttr as written (Split(axis=k) is sugar over a tensor
// axis, Split(pos=p) names a layout position) and a layout as written, which
// only becomes an ir::Layout once the tensor shape it annotates is known.
#pragma once

#include <optional>
#include <vector>

#include "core/ir/shard.h"

namespace tf::frontend {

struct ShardAttrSpec {
  ir::ShardAttr attr;
  bool by_axis = false;  // Split(axis=k): attr.pos is a tensor axis
};

// ShardLayout(mesh, attrs[, layout=Layout(...)]) or a plain Layout(...).
struct LayoutSpec {
  ir::MeshPtr mesh;  // null: a plain Layout(positions, strides)
  std::vector<ShardAttrSpec> attrs;
  std::optional<ir::Shape> positions;  // given by layout=Layout(...) (verbose) or a plain Layout
  std::optional<ir::Shape> strides;  // nullopt: the strides=None sugar; dims over DimVars
};

}  // namespace tf::frontend
