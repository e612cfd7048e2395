// The collectives a device-sharded function needs from its host, as one
// rank sees them. The executor (executor.h) calls them where a value moves
// between ranks: a Reshard over a device mesh axis, a reduction over a
// split axis. Hosts implement the interface over their own engine — an
// in-process mesh of threads (local_mesh.h), torch.distributed's process
// groups, MPI — so the executor knows none of them.
//
// Conventions, NCCL's and torch.distributed's "into tensor" forms:
// * the group of mesh axis m is the ranks whose coordinates equal this
//   rank's on every other axis, ordered by their coordinate on m;
// * every array is contiguous, and the ranks of a group pass the same dtype
//   and element counts (an implementation that can check this throws rather
//   than hang or corrupt);
// * a failure throws ir::Error (kRuntime): a collective that cannot
//   complete must not return as if it had.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/ir/shard.h"
#include "core/runtime/ndarray.h"

namespace tf::spmd {

class Communicator {
 public:
  virtual ~Communicator() = default;

  // Ranks per mesh axis, and this rank's coordinate on each.
  virtual const std::vector<int64_t>& mesh_shape() const = 0;
  virtual const std::vector<int64_t>& coords() const = 0;

  // buf <- the reduction of the group's bufs, in place; every rank of the
  // group ends with the same bits (the reduction runs in coordinate order).
  virtual void all_reduce(size_t axis, const runtime::NDArray& buf, ir::Reduction r) = 0;
  // out (group x n) <- the group's `in` (n each), one after another.
  virtual void all_gather(size_t axis, const runtime::NDArray& in, const runtime::NDArray& out) = 0;
  // in (group x n): block j, reduced over the group, lands in the out (n)
  // of the rank with coordinate j.
  virtual void reduce_scatter(size_t axis, const runtime::NDArray& in, const runtime::NDArray& out,
                              ir::Reduction r) = 0;
  // in (group x n): block j goes to the rank with coordinate j; block i of
  // out (group x n) comes from the rank with coordinate i.
  virtual void all_to_all(size_t axis, const runtime::NDArray& in, const runtime::NDArray& out) = 0;
};

}  // namespace tf::spmd
