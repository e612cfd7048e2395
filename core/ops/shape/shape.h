// The shape family: ops on whole shape values. A shape value is a rank-1 i64
// tensor (what ShapeOf produces); a dim is a rank-0 i64 tensor.
#pragma once

#include "core/ir/op.h"

namespace tf::ops {

// The dim at `index` of a shape value.
struct ShapeExtract final : ir::Op {
  explicit ShapeExtract(int64_t i) : index(i) {}
  int64_t index;
  std::string_view name() const override { return "ShapeExtract"; }
  std::string surface_name() const override { return "shape_extract"; }
  std::vector<ir::Attr> attrs() const override { return {{"index", index}}; }
};

// Operand: a Tuple of dims, assembled in order into a shape value.
struct ShapeCompose final : ir::Op {
  std::string_view name() const override { return "ShapeCompose"; }
  std::string surface_name() const override { return "shape_compose"; }
  std::vector<ir::Attr> attrs() const override { return {}; }
};

}  // namespace tf::ops
