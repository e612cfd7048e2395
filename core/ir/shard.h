// Sharding types (docs/ir.md, Sharding; docs/sharding.md): Mesh, ShardAttr and
// ShardLayout. A Mesh is a lexical binding over one Topology level of the
// Module's Target, reshaped into named axes; a ShardLayout says, per mesh
// axis, whether that axis splits a layout position, replicates the value, or
// holds per-instance partial values of a pending reduction.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/layout.h"

namespace tf::ir {

// A mesh binding: `with Mesh(topology="cta", shape=(2, 4), axes=("x", "y")) as cta:`.
// `name` is the binding's DSL name; it is display only (equality is level,
// shape and axes).
struct Mesh {
  std::string name;
  std::string level;
  std::vector<int64_t> shape;
  std::vector<std::string> axes;
  int64_t size() const;
  bool structural_equal(const Mesh& o) const { return level == o.level && shape == o.shape && axes == o.axes; }
  size_t structural_hash() const;
  std::string to_string() const;  // Mesh(topology="cta", shape=(2, 4), axes=("x", "y"))
};
using MeshPtr = std::shared_ptr<const Mesh>;

// X(enumerator, name) for Partial reductions.
#define TF_REDUCTION_LIST(X) \
  X(kSum, "sum")             \
  X(kMax, "max")             \
  X(kMin, "min")

enum class Reduction : uint8_t {
#define TF_X(e, s) e,
  TF_REDUCTION_LIST(TF_X)
#undef TF_X
};
std::string_view reduction_name(Reduction r);
std::optional<Reduction> reduction_from_name(std::string_view name);

// The state of one mesh axis in a ShardLayout.
struct ShardAttr {
  enum class Kind : uint8_t { kSplit, kBroadcast, kPartial };
  Kind kind = Kind::kBroadcast;
  int64_t pos = 0;                       // kSplit: the layout position it partitions
  Reduction reduction = Reduction::kSum;  // kPartial

  static ShardAttr split(int64_t pos) { return {Kind::kSplit, pos, Reduction::kSum}; }
  static ShardAttr broadcast() { return {Kind::kBroadcast, 0, Reduction::kSum}; }
  static ShardAttr partial(Reduction r) { return {Kind::kPartial, 0, r}; }
  bool is_split() const { return kind == Kind::kSplit; }
  bool is_partial() const { return kind == Kind::kPartial; }
  bool operator==(const ShardAttr& o) const;
  std::string to_string() const;  // Split(pos=0), Broadcast(), Partial("sum")
};

// ShardLayout(mesh, attrs, layout): one attr per mesh axis over the layout
// positions of `layout` (shape() / strides() are that layout's).
class ShardLayout final : public Layout {
 public:
  // Checks one attr per mesh axis and Split positions in range.
  static std::shared_ptr<const ShardLayout> make(MeshPtr mesh, std::vector<ShardAttr> attrs,
                                                 Shape positions, std::optional<Shape> strides);
  const MeshPtr& mesh() const { return mesh_; }
  const std::vector<ShardAttr>& attrs() const { return attrs_; }
  bool is_shard() const override { return true; }
  // True when some mesh axis carries a Partial.
  bool has_partial() const;
  bool structural_equal(const Layout& o) const override;
  size_t structural_hash() const override;
  std::string to_string() const override;

  ShardLayout(MeshPtr mesh, std::vector<ShardAttr> attrs, Shape positions, std::optional<Shape> strides)
      : Layout(std::move(positions), std::move(strides)), mesh_(std::move(mesh)), attrs_(std::move(attrs)) {}

 private:
  MeshPtr mesh_;
  std::vector<ShardAttr> attrs_;
};
using ShardLayoutPtr = std::shared_ptr<const ShardLayout>;

// Null unless the layout is a ShardLayout.
const ShardLayout* as_shard_layout(const LayoutPtr& l);

}  // namespace tf::ir
