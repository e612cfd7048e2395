// Where each rank's share of a sharded tensor lies, and how shares combine:
// the geometry the executor, the in-process mesh and the virtual mesh share.
//
// A rank's local value of a logical tensor of type t (a ShardLayout over a
// device mesh): for each tensor axis, the block of the Split mesh axes that
// partition it (row-major over those axes, in mesh order); the whole axis
// where none does; on a Partial mesh axis a share that reduces back to the
// logical value. Every ShardLayout must be a block layout
// (ops::shard::to_block_logical), so a share is one contiguous block per
// tensor axis and all ranks' shares have the same shape.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/ir/shard.h"
#include "core/ir/type.h"
#include "core/runtime/ndarray.h"

namespace tf::spmd {

// Error(kUnsupported) "spmd: <what>".
[[noreturn]] void unsupported(const std::string& what);

// The extents of `s` under `b`; Error(kUnsupported) when one does not resolve.
std::vector<int64_t> concrete_shape(const ir::Shape& s, const ir::DimBindings& b = {});

// A rank's coordinates on a mesh of `shape`, ranks row-major over the axes;
// and back.
std::vector<int64_t> coords_of(const std::vector<int64_t>& shape, size_t rank);
size_t rank_of(const std::vector<int64_t>& shape, const std::vector<int64_t>& coords);

// The ranks of one mesh, row-major over its axes (a null mesh: one rank).
struct Grid {
  ir::MeshPtr mesh;
  size_t size() const { return mesh ? static_cast<size_t>(mesh->size()) : 1; }
  std::vector<int64_t> coords(size_t rank) const;
  size_t rank_of(const std::vector<int64_t>& coords) const;
};

// A rank's share of a tensor: per-axis offset and extent.
struct Block {
  std::vector<int64_t> offset, extent;
};

// The block of `rank` in a tensor of type t (its shape resolved under b).
Block block_of(const ir::TensorType& t, const Grid& g, size_t rank, const ir::DimBindings& b = {});
runtime::NDArray view_of(const runtime::NDArray& a, const Block& blk);
runtime::NDArray copy_of(const runtime::NDArray& a);

// The logical form of t's ShardLayout as a block layout; nullopt for a
// tensor without one. Error(kUnsupported) for a composed layout.
std::optional<std::vector<ir::ShardAttr>> block_attrs(const ir::TensorType& t, const ir::DimBindings& b = {});

// The single reduction of t's Partial mesh axes; nullopt when none is
// Partial. Error(kUnsupported) when two axes reduce differently.
std::optional<ir::Reduction> partial_reduction(const ir::ShardLayout& l);

// Every element of a set to the reduction's identity.
void fill_identity(const runtime::NDArray& a, ir::Reduction r);
// acc <- acc (r) x elementwise; both contiguous, same dtype and size.
void combine(const runtime::NDArray& acc, const runtime::NDArray& x, ir::Reduction r);

// The local type of a value: each tensor's shape as its share's, no layout.
ir::TypePtr local_type(const ir::TypePtr& t);
// True when t's layout splits one of the tensor axes `axes`.
bool splits_axis(const ir::TensorType& t, const std::vector<int64_t>& axes);

// `rank`'s share of the logical tensor `global`: its block, and on Partial
// axes the whole value at share 0 and the reduction's identity elsewhere.
runtime::NDArray localize(const runtime::NDArray& global, const ir::TensorType& t, const Grid& g, size_t rank,
                          const ir::DimBindings& b = {});
// The index of `rank`'s share among the shares of t's Partial axes (row-
// major over them), and how many there are.
std::pair<size_t, size_t> partial_share(const ir::ShardLayout& l, const Grid& g, size_t rank);

// The logical tensor from every rank's share (locals[rank]).
runtime::NDArray assemble(const std::vector<const runtime::NDArray*>& locals, const ir::TensorType& t,
                          const Grid& g, const ir::DimBindings& b = {});

}  // namespace tf::spmd
