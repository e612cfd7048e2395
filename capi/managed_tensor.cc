#include "capi/managed_tensor.h"

#include <vector>

#include "core/ir/error.h"

namespace tf::capi {
namespace {

// The storage behind one handed-out tensor: the DLManagedTensor's
// manager_ctx points here, and dl_tensor.shape / strides point into it.
struct Owned {
  DLManagedTensor managed{};
  runtime::NDArray array;
  std::vector<int64_t> shape, strides;
};

void delete_owned(DLManagedTensor* t) {
  if (t != nullptr) delete static_cast<Owned*>(t->manager_ctx);
}

}  // namespace

void DLManagedDeleter::operator()(DLManagedTensor* t) const {
  if (t != nullptr && t->deleter != nullptr) t->deleter(t);
}

ManagedTensorPtr to_managed(runtime::NDArray a) {
  TF_CHECK(a.is_contiguous(), "tf_kernel_call outputs must be contiguous");
  auto o = std::make_unique<Owned>();
  o->shape = a.shape();
  o->strides = a.strides();
  o->array = std::move(a);
  DLTensor& t = o->managed.dl_tensor;
  t.data = o->array.data();
  t.device = DLDevice{kDLCPU, 0};
  t.ndim = static_cast<int32_t>(o->shape.size());
  t.dtype = runtime::dtype_to_dl(o->array.dtype());
  t.shape = o->shape.empty() ? nullptr : o->shape.data();
  t.strides = o->strides.empty() ? nullptr : o->strides.data();
  t.byte_offset = 0;
  o->managed.manager_ctx = o.get();
  o->managed.deleter = delete_owned;
  return ManagedTensorPtr(&o.release()->managed);
}

}  // namespace tf::capi
