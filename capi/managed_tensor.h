// Handing an NDArray to the caller as a DLManagedTensor (tf_kernel_call).
// The DLManagedTensor owns the array; its deleter frees both.
#pragma once

#include <dlpack/dlpack.h>

#include <memory>
#include <vector>

#include "core/runtime/ndarray.h"

namespace tf::capi {

struct DLManagedDeleter {
  void operator()(DLManagedTensor* t) const;  // calls t->deleter
};
using ManagedTensorPtr = std::unique_ptr<DLManagedTensor, DLManagedDeleter>;

// A compact (row-major, explicit strides), CPU DLManagedTensor that owns a.
// a must own its storage (not be a borrowed view).
ManagedTensorPtr to_managed(runtime::NDArray a);

// A compact DLManagedTensor of fresh device memory on CUDA device `device`
// (its deleter frees it); *view receives a borrowed view of it.
ManagedTensorPtr new_device_tensor(ir::DType dtype, const std::vector<int64_t>& shape, int device,
                                   runtime::NDArray* view);
// A kDLCUDA DLManagedTensor viewing the caller's device array a (an
// in-place output: its deleter frees the view only).
ManagedTensorPtr device_view(const runtime::NDArray& a, int device);

}  // namespace tf::capi
