#include "core/spmd/local_mesh.h"

#include <cstring>

#include "core/ir/error.h"
#include "core/spmd/blocks.h"

namespace tf::spmd {

using runtime::NDArray;

namespace {

const char* op_name(int op) {
  static const char* const names[] = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all"};
  return names[op];
}

int64_t elem_bytes(const NDArray& a) { return ir::dtype_bytes(a.dtype()); }

// Elements [i * n, (i + 1) * n) of a contiguous array, as a 1-D array.
NDArray block(const NDArray& a, int64_t i, int64_t n) { return NDArray::view(a, {n}, {1}, i * n); }

void check_contiguous(const NDArray& a, const char* what) {
  if (!a.is_contiguous()) ir::fail(ir::ErrorKind::kInternal, std::string("spmd: ") + what + " is not contiguous");
}

}  // namespace

class LocalCommunicator final : public Communicator {
 public:
  LocalCommunicator(LocalMesh& mesh, size_t rank) : mesh_(mesh), rank_(rank), coords_(coords_of(mesh.shape(), rank)) {}
  const std::vector<int64_t>& mesh_shape() const override { return mesh_.shape(); }
  const std::vector<int64_t>& coords() const override { return coords_; }

  void all_reduce(size_t axis, const NDArray& buf, ir::Reduction r) override {
    check_contiguous(buf, "an all_reduce buffer");
    auto posts = mesh_.exchange(rank_, post(LocalMesh::Op::kAllReduce, axis, buf, buf.numel(), r, &buf));
    NDArray acc = copy_of(*posts[0]->in);
    for (size_t i = 1; i < posts.size(); ++i) combine(acc, *posts[i]->in, r);
    mesh_.release(rank_);  // every rank has read `buf`: now it may change
    acc.copy_to(buf);
  }

  void all_gather(size_t axis, const NDArray& in, const NDArray& out) override {
    check_contiguous(in, "an all_gather input");
    check_contiguous(out, "an all_gather output");
    auto posts = mesh_.exchange(rank_, post(LocalMesh::Op::kAllGather, axis, in, out.numel(), ir::Reduction::kSum, &in));
    check_count(out.numel(), in.numel() * static_cast<int64_t>(posts.size()), "all_gather");
    for (size_t i = 0; i < posts.size(); ++i)
      std::memcpy(static_cast<char*>(out.data()) + static_cast<int64_t>(i) * in.numel() * elem_bytes(in),
                  posts[i]->in->data(), static_cast<size_t>(in.numel() * elem_bytes(in)));
    mesh_.release(rank_);
  }

  void reduce_scatter(size_t axis, const NDArray& in, const NDArray& out, ir::Reduction r) override {
    check_contiguous(in, "a reduce_scatter input");
    check_contiguous(out, "a reduce_scatter output");
    auto posts = mesh_.exchange(rank_, post(LocalMesh::Op::kReduceScatter, axis, in, out.numel(), r, &in));
    check_count(in.numel(), out.numel() * static_cast<int64_t>(posts.size()), "reduce_scatter");
    const int64_t n = out.numel(), j = coords_[axis];
    NDArray acc = copy_of(block(*posts[0]->in, j, n));
    for (size_t i = 1; i < posts.size(); ++i) combine(acc, block(*posts[i]->in, j, n), r);
    mesh_.release(rank_);
    acc.copy_to(NDArray::view(out, {n}, {1}, 0));
  }

  void all_to_all(size_t axis, const NDArray& in, const NDArray& out) override {
    check_contiguous(in, "an all_to_all input");
    check_contiguous(out, "an all_to_all output");
    auto posts = mesh_.exchange(rank_, post(LocalMesh::Op::kAllToAll, axis, in, out.numel(), ir::Reduction::kSum, &in));
    check_count(in.numel(), out.numel(), "all_to_all");
    const int64_t g = static_cast<int64_t>(posts.size());
    if (in.numel() % g != 0) ir::fail(ir::ErrorKind::kRuntime, "spmd: all_to_all of " + std::to_string(in.numel()) +
                                                                  " elements over a group of " + std::to_string(g));
    const int64_t n = in.numel() / g, j = coords_[axis];
    for (int64_t i = 0; i < g; ++i) block(*posts[static_cast<size_t>(i)]->in, j, n).copy_to(block(out, i, n));
    mesh_.release(rank_);
  }

 private:
  LocalMesh::Post post(LocalMesh::Op op, size_t axis, const NDArray& in, int64_t out_count, ir::Reduction r,
                       const NDArray* data) const {
    if (axis >= mesh_.shape().size())
      ir::fail(ir::ErrorKind::kInternal, "spmd: a collective over mesh axis " + std::to_string(axis) + " of " +
                                             std::to_string(mesh_.shape().size()));
    LocalMesh::Post p;
    p.op = op;
    p.axis = axis;
    p.dtype = in.dtype();
    p.in_count = in.numel();
    p.out_count = out_count;
    p.reduction = r;
    p.in = data;
    return p;
  }

  void check_count(int64_t got, int64_t want, const char* what) {
    if (got != want) {
      ir::fail(ir::ErrorKind::kInternal, std::string("spmd: ") + what + " with " + std::to_string(got) +
                                             " elements where the group needs " + std::to_string(want));
    }
  }

  LocalMesh& mesh_;
  size_t rank_;
  std::vector<int64_t> coords_;
};

LocalMesh::LocalMesh(std::vector<int64_t> shape) : shape_(std::move(shape)) {
  int64_t n = 1;
  for (int64_t e : shape_) {
    if (e <= 0) ir::fail(ir::ErrorKind::kInvalidArgument, "spmd: a mesh axis of extent " + std::to_string(e));
    n *= e;
  }
  posts_.resize(static_cast<size_t>(n));
}

std::unique_ptr<Communicator> LocalMesh::communicator(size_t rank) {
  if (rank >= size())
    ir::fail(ir::ErrorKind::kInvalidArgument,
             "spmd: rank " + std::to_string(rank) + " of a mesh of " + std::to_string(size()));
  return std::make_unique<LocalCommunicator>(*this, rank);
}

bool LocalMesh::abort(size_t rank, const std::string& why) {
  std::lock_guard<std::mutex> lk(mu_);
  const bool first = !aborted_;
  if (first) {
    aborted_ = true;
    why_ = "rank " + std::to_string(rank) + " failed: " + why;
  }
  cv_.notify_all();
  return first;
}

std::vector<size_t> LocalMesh::group(size_t rank, size_t axis) const {
  auto c = coords_of(shape_, rank);
  std::vector<size_t> out;
  for (int64_t i = 0; i < shape_[axis]; ++i) {
    c[axis] = i;
    out.push_back(rank_of(shape_, c));
  }
  return out;
}

void LocalMesh::wait_all(std::unique_lock<std::mutex>& lk) {
  if (aborted_) ir::fail(ir::ErrorKind::kRuntime, "spmd: " + why_);
  const uint64_t gen = generation_;
  if (++arrived_ == size()) {
    arrived_ = 0;
    ++generation_;
    cv_.notify_all();
    return;
  }
  cv_.wait(lk, [&] { return generation_ != gen || aborted_; });
  if (generation_ == gen) ir::fail(ir::ErrorKind::kRuntime, "spmd: " + why_);
}

std::vector<const LocalMesh::Post*> LocalMesh::exchange(size_t rank, const Post& p) {
  std::unique_lock<std::mutex> lk(mu_);
  posts_[rank] = p;
  wait_all(lk);
  std::vector<const Post*> out;
  for (size_t r : group(rank, p.axis)) out.push_back(&posts_[r]);
  for (size_t i = 0; i < out.size(); ++i) {
    const Post& q = *out[i];
    if (q.op != p.op || q.axis != p.axis || q.dtype != p.dtype || q.in_count != p.in_count ||
        q.out_count != p.out_count || q.reduction != p.reduction) {
      auto say = [](const Post& x) {
        return std::string(op_name(static_cast<int>(x.op))) + " over mesh axis " + std::to_string(x.axis) + " of " +
               std::to_string(x.in_count) + " " + std::string(ir::dtype_name(x.dtype)) + " -> " +
               std::to_string(x.out_count) + " (" + std::string(ir::reduction_name(x.reduction)) + ")";
      };
      ir::fail(ir::ErrorKind::kRuntime, "spmd: the ranks of a group disagree at a collective: this rank " + say(p) +
                                            ", the rank with coordinate " + std::to_string(i) + " " + say(q));
    }
  }
  return out;
}

void LocalMesh::release(size_t rank) {
  std::unique_lock<std::mutex> lk(mu_);
  wait_all(lk);
}

}  // namespace tf::spmd
