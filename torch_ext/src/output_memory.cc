#include "output_memory.h"

#include <ATen/EmptyTensor.h>
#include <c10/core/CPUAllocator.h>
#include <tilefoundry/tilefoundry.h>

namespace tf::torch_ext {

namespace {

void free_buffer(void* ctx) { tf_buffer_free(static_cast<tf_buffer>(ctx)); }

// A pooled block of `bytes`, owned by the returned DataPtr; empty when the
// pool cannot supply it (torch's allocator then tries, and reports OOM).
c10::DataPtr pooled(size_t bytes) {
  tf_buffer b = nullptr;
  void* data = nullptr;
  if (tf_buffer_alloc(bytes, &b, &data) != TF_OK) return {};
  return c10::DataPtr(data, b, &free_buffer, c10::Device(c10::DeviceType::CPU));
}

}  // namespace

at::Tensor empty_output(c10::IntArrayRef shape, at::ScalarType dtype) {
  const size_t bytes = static_cast<size_t>(c10::multiply_integers(shape)) * c10::elementSize(dtype);
  if (bytes >= kMinPooledBytes) {
    if (c10::DataPtr data = pooled(bytes)) {
      c10::Storage storage(c10::Storage::use_byte_size_t(), bytes, std::move(data), c10::GetCPUAllocator(),
                           /*resizable=*/true);
      auto t = at::detail::make_tensor<c10::TensorImpl>(std::move(storage), c10::DispatchKeySet(c10::DispatchKey::CPU),
                                                        c10::scalarTypeToTypeMeta(dtype));
      t.unsafeGetTensorImpl()->set_sizes_contiguous(shape);
      return t;
    }
  }
  return at::detail::empty_cpu(shape, dtype, /*pin_memory=*/false, /*memory_format_opt=*/c10::nullopt);
}

}  // namespace tf::torch_ext
