#include "capi/tensor_args.h"

#include "capi/error.h"
#include "core/ir/error.h"
#include "tilefoundry/tilefoundry.h"

namespace tf::capi {
namespace {

const char* device_name(int32_t type) {
  switch (type) {
    case kDLCPU: return "cpu";
    case kDLCUDA: return "cuda";
    case kDLCUDAHost: return "cuda_host";
    case kDLOpenCL: return "opencl";
    case kDLVulkan: return "vulkan";
    case kDLMetal: return "metal";
    case kDLVPI: return "vpi";
    case kDLROCM: return "rocm";
    case kDLROCMHost: return "rocm_host";
    case kDLExtDev: return "ext_dev";
    case kDLCUDAManaged: return "cuda_managed";
    default: return "unknown";
  }
}

[[noreturn]] void invalid(const std::string& what, const std::string& why) {
  fail(TF_ERR_INVALID_ARGUMENT, what + ": " + why);
}

void check_device(const DLTensor& t, const std::string& what) {
  if (t.device.device_type == kDLCPU) return;
  fail(TF_ERR_UNSUPPORTED, what + ": device " + device_name(t.device.device_type) + " (type " +
                               std::to_string(t.device.device_type) +
                               ") is not supported; only cpu tensors are accepted");
}

std::vector<int64_t> checked_shape(const DLTensor& t, const std::string& what) {
  if (t.ndim < 0 || t.ndim > TF_MAX_NDIM) {
    invalid(what, "ndim " + std::to_string(t.ndim) + " is outside [0, " +
                      std::to_string(TF_MAX_NDIM) + "]");
  }
  if (t.ndim > 0 && t.shape == nullptr)
    invalid(what, "shape is NULL but ndim is " + std::to_string(t.ndim));
  std::vector<int64_t> shape(t.shape, t.shape + t.ndim);
  for (size_t a = 0; a < shape.size(); ++a) {
    if (shape[a] < 0)
      invalid(what,
              "axis " + std::to_string(a) + " has negative extent " + std::to_string(shape[a]));
  }
  return shape;
}

ir::DType checked_dtype(const DLTensor& t, const std::string& what) {
  if (t.dtype.lanes != 1)
    invalid(what,
            "vector dtypes (lanes = " + std::to_string(t.dtype.lanes) + ") are not supported");
  try {
    return runtime::dtype_from_dl(t.dtype);
  } catch (const ir::Error& e) {
    throw ir::Error(e.kind(), what + ": " + e.what());
  }
}

}  // namespace

int64_t num_elements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t e : shape) {
    if (__builtin_mul_overflow(n, e, &n))
      fail(TF_ERR_INVALID_ARGUMENT, "tensor has more than 2^63 elements");
  }
  return n;
}

sema::ArgDesc describe_tensor(const DLTensor& t, const std::string& what, bool need_data) {
  check_device(t, what);
  sema::ArgDesc d{checked_dtype(t, what), checked_shape(t, what)};
  if (need_data && t.data == nullptr && num_elements(d.shape) != 0) invalid(what, "data is NULL");
  return d;
}

runtime::NDArray view_tensor(const DLTensor& t, const std::string& what) {
  // Rationale: an empty tensor may legally carry data == NULL; give the view
  // a harmless address so that from_dlpack need not special-case it.
  static char empty_storage;
  DLTensor v = t;
  if (v.data == nullptr) v.data = &empty_storage;
  try {
    return runtime::NDArray::from_dlpack(v);
  } catch (const ir::Error& e) {
    throw ir::Error(e.kind(), what + ": " + e.what());
  }
}

void require_same_desc(const sema::ArgDesc& expected, const sema::ArgDesc& got,
                       const std::string& what) {
  if (got.dtype != expected.dtype) {
    invalid(what, "dtype must be " + std::string(ir::dtype_name(expected.dtype)) + ", but got " +
                      std::string(ir::dtype_name(got.dtype)));
  }
  if (got.shape.size() != expected.shape.size()) {
    invalid(what, "rank must be " + std::to_string(expected.shape.size()) + ", but got " +
                      std::to_string(got.shape.size()));
  }
  for (size_t a = 0; a < got.shape.size(); ++a) {
    if (got.shape[a] != expected.shape[a]) {
      invalid(what, "axis " + std::to_string(a) + " must be " + std::to_string(expected.shape[a]) +
                        ", but got " + std::to_string(got.shape[a]));
    }
  }
}

}  // namespace tf::capi
