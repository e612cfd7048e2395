// Layout (CuTe-style) and StorageKind (docs/ir.md, Types). ShardLayout, Mesh
// and ShardAttr (core/ir/shard.h) extend this file's concepts.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/shape.h"

namespace tf::ir {

// X(enumerator, DSL spelling). Order is the addressability order
// rmem < smem < gmem; unmaterialized is "not yet placed".
#define TF_STORAGE_LIST(X) \
  X(kRmem, "rmem")         \
  X(kSmem, "smem")         \
  X(kGmem, "gmem")         \
  X(kUnmaterialized, "unmaterialized")

enum class StorageKind : uint8_t {
#define TF_X(e, s) e,
  TF_STORAGE_LIST(TF_X)
#undef TF_X
};

std::string_view storage_name(StorageKind s);
std::optional<StorageKind> storage_from_name(std::string_view name);

// Layout(shape, strides): shape is a tuple of layout positions; strides (in
// elements) has one entry per position, or is absent — the parser's sugar,
// materialized to C-order at signature binding. A stride is a ShapeDim: over
// symbolic positions (Tensor[(B, D), ...]) C-order strides are symbolic too
// (D, 1), and resolve with the extents when a call binds its DimVars.
// A ShardLayout (core/ir/shard.h) is a Layout that also says how the
// positions are distributed over a Mesh; is_shard() tells them apart.
class Layout {
 public:
  Layout(Shape shape, std::optional<Shape> strides)
      : shape_(std::move(shape)), strides_(std::move(strides)) {}
  virtual ~Layout() = default;
  const Shape& shape() const { return shape_; }
  const std::optional<Shape>& strides() const { return strides_; }
  virtual bool is_shard() const { return false; }
  virtual bool structural_equal(const Layout& o) const;
  virtual size_t structural_hash() const;
  virtual std::string to_string() const;  // Layout((4, 8), strides=(8, 1))

 private:
  Shape shape_;
  std::optional<Shape> strides_;
};
using LayoutPtr = std::shared_ptr<const Layout>;

// C-order strides over a static shape, size-1 positions included as-is.
std::vector<int64_t> c_order_strides(const std::vector<int64_t>& shape);
// Both absent, or structurally equal entry by entry.
bool strides_equal(const std::optional<Shape>& a, const std::optional<Shape>& b);

}  // namespace tf::ir
