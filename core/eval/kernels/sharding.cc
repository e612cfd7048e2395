// Kernels of the sharding family on the plain (single-instance) evaluator.
// Reshard keeps the logical value, so it is a copy; Local has a meaning only
// per mesh instance (spmd/virtual_mesh.h).
#include "core/eval/kernel.h"
#include "core/ir/error.h"

namespace tf::eval {
namespace {

runtime::NDArray reshard_kernel(const KernelArgs& a) {
  runtime::NDArray out = runtime::NDArray::empty(a.out_dtype(), a.out_shape());
  a.inputs[0].copy_to(out);
  return out;
}

runtime::NDArray local_kernel(const KernelArgs&) {
  ir::fail(ir::ErrorKind::kUnsupported,
           "local(x) is the view of one mesh instance; evaluate the function with mesh=\"virtual\"");
}

}  // namespace

void register_sharding_kernels(KernelTable& t) {
  t.add("Reshard", reshard_kernel);
  t.add("Local", local_kernel);
}

}  // namespace tf::eval
