// Running a function through the CUDA backend's host side
// (compiler/cuda/cuda_function.h) on a device behind the driver API: a GPU,
// or in CI the emulated device (tests/cuda_emulation), which the compiler
// tests load as the driver unless TF_CUDA_DRIVER_LIBRARY names another.
//
// The differential suites run every function this way too when
// TF_CUDA_DEVICE=1 (`make test-cuda` on a GPU).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/compiler/cuda/cuda_function.h"
#include "core/compiler/cuda/driver.h"
#include "core/ir/dtype.h"
#include "core/runtime/ndarray.h"
#include "core/sema/bind.h"

namespace tf::comptest {

// Device memory freed with the object.
class DeviceArrays {
 public:
  explicit DeviceArrays(int device) : device_(device) {}
  ~DeviceArrays() {
    for (void* p : buffers_) compiler::cuda::device_free(device_, p);
  }
  DeviceArrays(const DeviceArrays&) = delete;
  DeviceArrays& operator=(const DeviceArrays&) = delete;

  // a on the device with a's strides: the span of memory its elements
  // reach is copied, so strided, reversed and broadcast views stay so.
  runtime::NDArray upload(const runtime::NDArray& a) {
    int64_t lo = 0, hi = 0;
    for (size_t d = 0; d < a.ndim(); ++d) {
      if (a.shape()[d] == 0) return runtime::NDArray::borrow(a.dtype(), alloc(1), a.shape(), a.strides());
      const int64_t reach = (a.shape()[d] - 1) * a.strides()[d];
      (reach < 0 ? lo : hi) += reach;
    }
    const int64_t esize = ir::dtype_bytes(a.dtype());
    const size_t bytes = static_cast<size_t>((hi - lo + 1) * esize);
    char* buf = static_cast<char*>(alloc(bytes));
    compiler::cuda::copy_to_device(device_, buf, static_cast<const char*>(a.data()) + lo * esize, bytes);
    return runtime::NDArray::borrow(a.dtype(), buf - lo * esize, a.shape(), a.strides());
  }
  // Fresh C-contiguous device memory for an output.
  runtime::NDArray output(ir::DType dtype, const std::vector<int64_t>& shape) {
    const size_t bytes = static_cast<size_t>(numel(shape) * ir::dtype_bytes(dtype));
    std::vector<int64_t> strides(shape.size(), 1);
    for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
    return runtime::NDArray::borrow(dtype, alloc(bytes), shape, strides);
  }
  // A contiguous device array's elements, on the host.
  runtime::NDArray download(const runtime::NDArray& d) {
    runtime::NDArray h = runtime::NDArray::empty(d.dtype(), d.shape());
    compiler::cuda::copy_to_host(device_, h.data(), d.data(),
                                 static_cast<size_t>(d.numel() * ir::dtype_bytes(d.dtype())));
    return h;
  }

 private:
  static int64_t numel(const std::vector<int64_t>& shape) {
    int64_t n = 1;
    for (int64_t e : shape) n *= e;
    return n;
  }
  void* alloc(size_t bytes) {
    buffers_.push_back(compiler::cuda::device_alloc(device_, bytes));
    return buffers_.back();
  }
  int device_;
  std::vector<void*> buffers_;
};

// fn's outputs for `inputs`, computed by `f` on device 0 on the default
// stream, back on the host. Throws what the run throws.
inline std::vector<runtime::NDArray> run_on_device(const compiler::cuda::CudaFunction& f, const ir::Function& fn,
                                                   const std::vector<runtime::NDArray>& inputs) {
  std::vector<sema::ArgDesc> descs;
  for (const runtime::NDArray& a : inputs) descs.push_back({a.dtype(), a.shape()});
  const ir::DimBindings b = sema::bind_arguments(fn, descs);
  DeviceArrays mem(0);
  std::vector<runtime::NDArray> din, dout;
  for (const runtime::NDArray& a : inputs) din.push_back(mem.upload(a));
  for (const sema::ArgDesc& d : sema::output_descs(fn, b)) dout.push_back(mem.output(d.dtype, d.shape));
  // An in-place output is its input's own array.
  for (size_t j = 0; j < dout.size(); ++j)
    if (const int64_t i = fn.inplace_param(j); i >= 0) dout[j] = din[static_cast<size_t>(i)];
  f.run(din, dout, b, 0, nullptr, nullptr, 0);
  std::vector<runtime::NDArray> out;
  for (const runtime::NDArray& d : dout) out.push_back(mem.download(d));
  return out;
}

inline bool device_runs_requested() {
  const char* e = std::getenv("TF_CUDA_DEVICE");
  return e && std::string(e) == "1";
}

}  // namespace tf::comptest
