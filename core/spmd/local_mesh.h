// A device mesh of ranks that are threads of one process: the communicator
// the virtual mesh runs the SPMD executor over (every sharding test is then
// also a test of the distributed path), and a reference for hosts writing
// their own.
//
// Each collective is a rendezvous of every rank of the mesh (all ranks run
// the same program, so all reach the same collective): each posts what it
// sends, waits for the others, reads its group's posts, and waits again so
// that no buffer is released or reused while another rank still reads it.
// The ranks of a group must agree on the collective, axis, dtype, counts and
// reduction; a disagreement is an error on every rank of the group, not a
// corrupt result.
//
// A rank that fails calls abort(): every rank waiting in a collective, or
// reaching one later, throws instead of waiting for it.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/spmd/communicator.h"

namespace tf::spmd {

class LocalMesh {
 public:
  explicit LocalMesh(std::vector<int64_t> shape);
  size_t size() const { return posts_.size(); }
  const std::vector<int64_t>& shape() const { return shape_; }

  // Rank `rank`'s communicator (rank is row-major over the mesh axes); it
  // refers to this mesh, which must outlive it.
  std::unique_ptr<Communicator> communicator(size_t rank);

  // Wakes every waiting rank with Error(kRuntime) naming `rank` and `why`;
  // the first call wins. Returns whether this call was the first.
  bool abort(size_t rank, const std::string& why);

 private:
  friend class LocalCommunicator;
  enum class Op { kAllReduce, kAllGather, kReduceScatter, kAllToAll };
  struct Post {
    Op op = Op::kAllReduce;
    size_t axis = 0;
    ir::DType dtype = ir::DType::kF32;
    int64_t in_count = 0, out_count = 0;
    ir::Reduction reduction = ir::Reduction::kSum;
    const runtime::NDArray* in = nullptr;
  };
  // The ranks of `rank`'s group on `axis`, in coordinate order.
  std::vector<size_t> group(size_t rank, size_t axis) const;
  // Posts, waits for every rank, checks the group agrees, returns the group's
  // posts in coordinate order. The caller reads them, then calls release().
  std::vector<const Post*> exchange(size_t rank, const Post& p);
  void release(size_t rank);
  // Blocks until every rank has called it (a barrier); throws once aborted.
  void wait_all(std::unique_lock<std::mutex>& lk);

  std::vector<int64_t> shape_;
  std::mutex mu_;
  std::condition_variable cv_;
  size_t arrived_ = 0;
  uint64_t generation_ = 0;
  bool aborted_ = false;
  std::string why_;
  std::vector<Post> posts_;
};

}  // namespace tf::spmd
