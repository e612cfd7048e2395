// tf_kernel_mesh_* / tf_kernel_*_shard / tf_kernel_call_rank: describing a
// sharded kernel's mesh and running one rank of it over the host's
// collectives (the tf_communicator the caller fills in).
#include <cstddef>
#include <string>
#include <vector>

#include "capi/checks.h"
#include "capi/error.h"
#include "capi/handles.h"
#include "capi/kernel.h"
#include "capi/managed_tensor.h"
#include "capi/tensor_args.h"
#include "core/ir/error.h"
#include "core/spmd/blocks.h"
#include "core/spmd/executor.h"

namespace tf::capi {
namespace {

int32_t reduction_code(ir::Reduction r) {
  switch (r) {
    case ir::Reduction::kSum: return TF_REDUCTION_SUM;
    case ir::Reduction::kMax: return TF_REDUCTION_MAX;
    case ir::Reduction::kMin: return TF_REDUCTION_MIN;
  }
  return -1;
}

// The host's collectives behind the executor's interface: a nonzero return
// becomes Error(kRuntime) with the host's message.
class HostCommunicator final : public spmd::Communicator {
 public:
  explicit HostCommunicator(const tf_communicator& c)
      : c_(c), shape_(c.axis_size, c.axis_size + c.num_axes), coords_(c.axis_coord, c.axis_coord + c.num_axes) {}

  const std::vector<int64_t>& mesh_shape() const override { return shape_; }
  const std::vector<int64_t>& coords() const override { return coords_; }

  void all_reduce(size_t axis, const runtime::NDArray& buf, ir::Reduction r) override {
    DLTensor t = buf.to_dltensor();
    Message err;
    check(c_.all_reduce(c_.ctx, static_cast<int32_t>(axis), &t, reduction_code(r), err.buf, sizeof err.buf),
          "all_reduce", err);
  }
  void all_gather(size_t axis, const runtime::NDArray& in, const runtime::NDArray& out) override {
    DLTensor i = in.to_dltensor(), o = out.to_dltensor();
    Message err;
    check(c_.all_gather(c_.ctx, static_cast<int32_t>(axis), &i, &o, err.buf, sizeof err.buf), "all_gather", err);
  }
  void reduce_scatter(size_t axis, const runtime::NDArray& in, const runtime::NDArray& out,
                      ir::Reduction r) override {
    DLTensor i = in.to_dltensor(), o = out.to_dltensor();
    Message err;
    check(c_.reduce_scatter(c_.ctx, static_cast<int32_t>(axis), &i, &o, reduction_code(r), err.buf, sizeof err.buf),
          "reduce_scatter", err);
  }
  void all_to_all(size_t axis, const runtime::NDArray& in, const runtime::NDArray& out) override {
    DLTensor i = in.to_dltensor(), o = out.to_dltensor();
    Message err;
    check(c_.all_to_all(c_.ctx, static_cast<int32_t>(axis), &i, &o, err.buf, sizeof err.buf), "all_to_all", err);
  }

 private:
  struct Message {
    char buf[1024] = {};
  };
  static void check(int32_t rc, const char* what, Message& err) {
    if (rc == 0) return;
    err.buf[sizeof err.buf - 1] = '\0';
    ir::fail(ir::ErrorKind::kRuntime, std::string("the communicator's ") + what + " failed: " +
                                          (err.buf[0] ? err.buf : "(no message)"));
  }

  const tf_communicator& c_;
  std::vector<int64_t> shape_, coords_;
};

void check_axis(const char* fn, const Kernel& k, int32_t axis) {
  const int32_t rank = k.mesh() ? static_cast<int32_t>(k.mesh()->shape.size()) : 0;
  if (axis < 0 || axis >= rank)
    fail(TF_ERR_INVALID_ARGUMENT, std::string(fn) + ": mesh axis " + std::to_string(axis) + " out of range ('" +
                                      k.name() + "' has " + std::to_string(rank) + " mesh axes)");
}

tf_shard_attr shard_attr(const ir::TensorType& t, int32_t axis) {
  tf_shard_attr out{TF_SHARD_BROADCAST, -1, -1};
  auto attrs = spmd::block_attrs(t);
  if (!attrs) return out;
  const ir::ShardAttr& a = (*attrs)[static_cast<size_t>(axis)];
  if (a.is_split()) out = {TF_SHARD_SPLIT, static_cast<int32_t>(a.pos), -1};
  if (a.is_partial()) out = {TF_SHARD_PARTIAL, -1, reduction_code(a.reduction)};
  return out;
}

// comm->flags, 0 for a host built against a header without the field.
uint32_t comm_flags(const tf_communicator& c) {
  return c.struct_size >= offsetof(tf_communicator, flags) + sizeof c.flags ? c.flags : 0u;
}

// The communicator must describe k's mesh and have every function.
void check_communicator(const char* fn, const Kernel& k, const tf_communicator* c) {
  require_non_null(c, fn, "comm");
  if (c->struct_size < offsetof(tf_communicator, all_to_all) + sizeof c->all_to_all)
    fail(TF_ERR_INVALID_ARGUMENT, std::string(fn) + ": comm->struct_size is " + std::to_string(c->struct_size) +
                                      "; set it to sizeof(tf_communicator)");
  const ir::MeshPtr& mesh = k.mesh();
  const std::vector<int64_t> shape = mesh ? mesh->shape : std::vector<int64_t>{};
  if (c->num_axes != static_cast<int32_t>(shape.size()))
    fail(TF_ERR_INVALID_ARGUMENT, std::string(fn) + ": comm->num_axes is " + std::to_string(c->num_axes) + ", but '" +
                                      k.name() + "' runs on a mesh of " + std::to_string(shape.size()) + " axes");
  if (!shape.empty()) {
    require_non_null(c->axis_size, fn, "comm->axis_size");
    require_non_null(c->axis_coord, fn, "comm->axis_coord");
  }
  for (size_t m = 0; m < shape.size(); ++m) {
    const std::string axis = "mesh axis " + std::to_string(m) + " (\"" + mesh->axes.at(m) + "\")";
    if (c->axis_size[m] != shape[m])
      fail(TF_ERR_INVALID_ARGUMENT, std::string(fn) + ": comm->axis_size[" + std::to_string(m) + "] is " +
                                        std::to_string(c->axis_size[m]) + ", but " + axis + " of '" + k.name() +
                                        "' has " + std::to_string(shape[m]) + " ranks");
    if (c->axis_coord[m] < 0 || c->axis_coord[m] >= shape[m])
      fail(TF_ERR_INVALID_ARGUMENT, std::string(fn) + ": comm->axis_coord[" + std::to_string(m) + "] is " +
                                        std::to_string(c->axis_coord[m]) + ", outside " + axis + "'s [0, " +
                                        std::to_string(shape[m]) + ")");
  }
  require_non_null(reinterpret_cast<const void*>(c->all_reduce), fn, "comm->all_reduce");
  require_non_null(reinterpret_cast<const void*>(c->all_gather), fn, "comm->all_gather");
  require_non_null(reinterpret_cast<const void*>(c->reduce_scatter), fn, "comm->reduce_scatter");
  require_non_null(reinterpret_cast<const void*>(c->all_to_all), fn, "comm->all_to_all");
  if (comm_flags(*c) & ~TF_COMM_TRUSTED_CALLS)
    fail(TF_ERR_INVALID_ARGUMENT, std::string(fn) + ": comm->flags has unknown bits (" +
                                      std::to_string(comm_flags(*c)) + "); the known one is TF_COMM_TRUSTED_CALLS");
}

}  // namespace
}  // namespace tf::capi

using tf::capi::kernel_of;
using tf::capi::require_non_null;

extern "C" {

tf_status tf_kernel_mesh_rank(tf_kernel k, int32_t* num_axes) {
  TF_C_API_BEGIN
  auto kernel = kernel_of(k);
  require_non_null(num_axes, "tf_kernel_mesh_rank", "num_axes");
  *num_axes = kernel->mesh() ? static_cast<int32_t>(kernel->mesh()->shape.size()) : 0;
  TF_C_API_END
}

tf_status tf_kernel_mesh_axis(tf_kernel k, int32_t axis, int64_t* extent, const char** name) {
  TF_C_API_BEGIN
  const char* fn = "tf_kernel_mesh_axis";
  auto kernel = kernel_of(k);
  require_non_null(extent, fn, "extent");
  require_non_null(name, fn, "name");
  tf::capi::check_axis(fn, *kernel, axis);
  const tf::ir::Mesh& mesh = *kernel->mesh();
  *extent = mesh.shape[static_cast<size_t>(axis)];
  *name = mesh.axes.at(static_cast<size_t>(axis)).c_str();  // the Mesh lives in the kernel's module
  TF_C_API_END
}

tf_status tf_kernel_input_shard(tf_kernel k, size_t i, int32_t axis, tf_shard_attr* out) {
  TF_C_API_BEGIN
  const char* fn = "tf_kernel_input_shard";
  auto kernel = kernel_of(k);
  require_non_null(out, fn, "out");
  const tf::ir::TensorType& t = tf::capi::checked_tensor(fn, *kernel, tf::capi::Side::kInput, i);
  tf::capi::check_axis(fn, *kernel, axis);
  *out = tf::capi::shard_attr(t, axis);
  TF_C_API_END
}

tf_status tf_kernel_output_shard(tf_kernel k, size_t i, int32_t axis, tf_shard_attr* out) {
  TF_C_API_BEGIN
  const char* fn = "tf_kernel_output_shard";
  auto kernel = kernel_of(k);
  require_non_null(out, fn, "out");
  const tf::ir::TensorType& t = tf::capi::checked_tensor(fn, *kernel, tf::capi::Side::kOutput, i);
  tf::capi::check_axis(fn, *kernel, axis);
  *out = tf::capi::shard_attr(t, axis);
  TF_C_API_END
}

tf_status tf_kernel_call_rank(tf_kernel k, const DLTensor* in, size_t n_in, DLManagedTensor** out, size_t n_out,
                              const tf_communicator* comm) {
  TF_C_API_BEGIN
  const char* fn = "tf_kernel_call_rank";
  auto kernel = kernel_of(k);
  if (n_in != 0) require_non_null(in, fn, "in");
  if (n_out != 0) require_non_null(out, fn, "out");
  if (n_in != kernel->num_inputs() || n_out != kernel->num_outputs())
    tf::capi::fail(TF_ERR_INVALID_ARGUMENT, std::string(fn) + ": '" + kernel->name() + "' takes " +
                                                std::to_string(kernel->num_inputs()) + " inputs and " +
                                                std::to_string(kernel->num_outputs()) + " outputs, but got " +
                                                std::to_string(n_in) + " and " + std::to_string(n_out));
  if (kernel->has_aliases())
    tf::capi::fail(TF_ERR_UNSUPPORTED, std::string(fn) + ": '" + kernel->name() +
                                           "' writes a result in place, which a rank's run does not do yet");
  tf::capi::check_communicator(fn, *kernel, comm);
  std::vector<tf::runtime::NDArray> shares;
  for (size_t i = 0; i < n_in; ++i) {
    const tf::capi::TensorLabel what(fn, "input", i, &kernel->input_name(i));
    tf::capi::require_device(in[i], DLDevice{kDLCPU, 0}, kernel->name(), what);
    shares.push_back(tf::capi::view_tensor(in[i], what));
  }
  tf::capi::HostCommunicator host(*comm);
  std::vector<tf::runtime::NDArray> results = tf::spmd::run_rank(kernel->module(), kernel->function(), shares, host,
                                                                         (tf::capi::comm_flags(*comm) & TF_COMM_TRUSTED_CALLS)
                                                                             ? tf::spmd::Agreement::kTrusted
                                                                             : tf::spmd::Agreement::kCheck,
                                                                         kernel->segments());
  std::vector<tf::capi::ManagedTensorPtr> managed;
  for (auto& r : results) managed.push_back(tf::capi::to_managed(std::move(r)));
  for (size_t j = 0; j < managed.size(); ++j) out[j] = managed[j].release();
  TF_C_API_END
}

}  // extern "C"
