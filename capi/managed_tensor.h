// Handing an NDArray to the caller as a DLManagedTensor (tf_kernel_call).
// The DLManagedTensor owns the array; its deleter frees both.
#pragma once

#include <dlpack/dlpack.h>

#include <memory>

#include "core/runtime/ndarray.h"

namespace tf::capi {

struct DLManagedDeleter {
  void operator()(DLManagedTensor* t) const;  // calls t->deleter
};
using ManagedTensorPtr = std::unique_ptr<DLManagedTensor, DLManagedDeleter>;

// A compact (row-major, explicit strides), CPU DLManagedTensor that owns a.
// a must own its storage (not be a borrowed view).
ManagedTensorPtr to_managed(runtime::NDArray a);

}  // namespace tf::capi
