#include "capi/managed_tensor.h"

#include <vector>

#include "core/compiler/cuda/driver.h"
#include "core/ir/error.h"
#include "core/runtime/strided.h"

namespace tf::capi {
namespace {

// The storage behind one handed-out tensor: the DLManagedTensor's
// manager_ctx points here, and dl_tensor.shape / strides point into it.
struct Owned {
  DLManagedTensor managed{};
  runtime::NDArray array;
  std::vector<int64_t> shape, strides;
  void* device_memory = nullptr;  // freed with the tensor (a CUDA output)
  int device = 0;
};

void delete_owned(DLManagedTensor* t) {
  if (t == nullptr) return;
  auto* o = static_cast<Owned*>(t->manager_ctx);
  compiler::cuda::device_free(o->device, o->device_memory);
  delete o;
}

// The DLManagedTensor of o's array, on `device`.
ManagedTensorPtr hand_out(std::unique_ptr<Owned> o, DLDevice device) {
  o->shape = o->array.shape();
  o->strides = o->array.strides();
  DLTensor& t = o->managed.dl_tensor;
  t.data = o->array.data();
  t.device = device;
  t.ndim = static_cast<int32_t>(o->shape.size());
  t.dtype = runtime::dtype_to_dl(o->array.dtype());
  t.shape = o->shape.empty() ? nullptr : o->shape.data();
  t.strides = o->strides.empty() ? nullptr : o->strides.data();
  t.byte_offset = 0;
  o->managed.manager_ctx = o.get();
  o->managed.deleter = delete_owned;
  return ManagedTensorPtr(&o.release()->managed);
}

}  // namespace

void DLManagedDeleter::operator()(DLManagedTensor* t) const {
  if (t != nullptr && t->deleter != nullptr) t->deleter(t);
}

ManagedTensorPtr to_managed(runtime::NDArray a) {
  TF_CHECK(a.is_contiguous(), "tf_kernel_call outputs must be contiguous");
  auto o = std::make_unique<Owned>();
  o->array = std::move(a);
  return hand_out(std::move(o), DLDevice{kDLCPU, 0});
}

ManagedTensorPtr new_device_tensor(ir::DType dtype, const std::vector<int64_t>& shape, int device,
                                   runtime::NDArray* view) {
  auto o = std::make_unique<Owned>();
  const size_t bytes = static_cast<size_t>(runtime::shape_numel(shape)) * static_cast<size_t>(ir::dtype_bytes(dtype));
  o->device = device;
  o->device_memory = compiler::cuda::device_alloc(device, bytes);
  o->array = runtime::NDArray::borrow(dtype, o->device_memory, shape, runtime::contiguous_strides(shape));
  *view = o->array;
  return hand_out(std::move(o), DLDevice{kDLCUDA, device});
}

ManagedTensorPtr device_view(const runtime::NDArray& a, int device) {
  auto o = std::make_unique<Owned>();
  o->array = a;
  return hand_out(std::move(o), DLDevice{kDLCUDA, device});
}

}  // namespace tf::capi
