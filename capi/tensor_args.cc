#include "capi/tensor_args.h"

#include <algorithm>
#include <array>
#include <cstdint>

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


void check_device(const DLTensor& t, const TensorLabel& what) {
  if (t.device.device_type == kDLCPU || t.device.device_type == kDLCUDA) return;
  fail(TF_ERR_UNSUPPORTED, what.str() + ": device " + device_name(t.device.device_type) + " (type " +
                               std::to_string(t.device.device_type) +
                               ") is not supported; only cpu and cuda tensors are accepted");
}

void checked_shape(const DLTensor& t, const TensorLabel& what, std::vector<int64_t>* shape) {
  if (t.ndim < 0 || t.ndim > TF_MAX_NDIM) {
    invalid(what, "ndim " + std::to_string(t.ndim) + " is outside [0, " +
                      std::to_string(TF_MAX_NDIM) + "]");
  }
  if (t.ndim > 0 && t.shape == nullptr)
    invalid(what, "shape is NULL but ndim is " + std::to_string(t.ndim));
  shape->assign(t.shape, t.shape + t.ndim);
  for (size_t a = 0; a < shape->size(); ++a) {
    if ((*shape)[a] < 0)
      invalid(what,
              "axis " + std::to_string(a) + " has negative extent " + std::to_string((*shape)[a]));
  }
}

ir::DType checked_dtype(const DLTensor& t, const TensorLabel& what) {
  if (t.dtype.lanes != 1)
    invalid(what,
            "vector dtypes (lanes = " + std::to_string(t.dtype.lanes) + ") are not supported");
  try {
    return runtime::dtype_from_dl(t.dtype);
  } catch (const ir::Error& e) {
    throw ir::Error(e.kind(), what.str() + ": " + e.what());
  }
}

// The element strides of t: its own, or compact row-major when NULL.
// shape.size() <= TF_MAX_NDIM (checked_shape); no heap on the hot path.
using Strides = std::array<int64_t, TF_MAX_NDIM>;
Strides strides_of(const DLTensor& t, const std::vector<int64_t>& shape) {
  Strides s{};
  if (t.strides != nullptr) {
    std::copy(t.strides, t.strides + shape.size(), s.begin());
    return s;
  }
  int64_t step = 1;
  for (size_t a = shape.size(); a-- > 0;) {
    s[a] = step;
    step *= shape[a] > 0 ? shape[a] : 1;  // no overflow: num_elements checked the product
  }
  return s;
}

// Rationale: the kernels form element addresses from strides and extents;
// a descriptor whose reach does not fit in int64 bytes would overflow that
// arithmetic, so it is rejected here rather than trusted.
void check_reach(const DLTensor& t, const sema::ArgDesc& d, const TensorLabel& what) {
  if (num_elements(d.shape) == 0) return;
  Strides strides = strides_of(t, d.shape);
  int64_t reach = 0;
  for (size_t a = 0; a < d.shape.size(); ++a) {
    int64_t s = strides[a], r = 0;
    bool overflow = s == INT64_MIN || __builtin_mul_overflow(s < 0 ? -s : s, d.shape[a] - 1, &r) ||
                    __builtin_add_overflow(reach, r, &reach);
    if (overflow) invalid(what, "stride " + std::to_string(s) + " of axis " + std::to_string(a) +
                                    " reaches beyond 2^63 elements");
  }
  int64_t count = 0, bytes = 0;  // reach + 1 elements: the +1 overflows too when reach is INT64_MAX
  if (__builtin_add_overflow(reach, int64_t(1), &count) ||
      __builtin_mul_overflow(count, int64_t(ir::dtype_bytes(d.dtype)), &bytes) ||
      t.byte_offset > uint64_t(INT64_MAX - bytes))
    invalid(what, "strides and byte_offset reach beyond 2^63 bytes");
}

void check_alignment(const DLTensor& t, const sema::ArgDesc& d, const TensorLabel& what) {
  if (t.data == nullptr || num_elements(d.shape) == 0) return;
  uint64_t size = ir::dtype_bytes(d.dtype);
  uint64_t addr = uint64_t(reinterpret_cast<uintptr_t>(t.data)) + t.byte_offset;
  if (addr % size != 0)
    invalid(what, "data + byte_offset is not aligned to the " + std::to_string(size) +
                      "-byte element size");
}

}  // namespace

std::string TensorLabel::str() const {
  std::string s = std::string(fn_) + ": " + role_ + " #" + std::to_string(index_);
  if (name_ != nullptr) s += " (" + *name_ + ")";
  return s;
}

int64_t num_elements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t e : shape) {
    if (__builtin_mul_overflow(n, e, &n))
      fail(TF_ERR_INVALID_ARGUMENT, "tensor has more than 2^63 elements");
  }
  return n;
}

void describe_tensor(const DLTensor& t, const TensorLabel& what, bool need_data, sema::ArgDesc* out) {
  check_device(t, what);
  sema::ArgDesc& d = *out;
  d.dtype = checked_dtype(t, what);
  checked_shape(t, what, &d.shape);
  if (need_data && t.data == nullptr && num_elements(d.shape) != 0) invalid(what, "data is NULL");
  check_reach(t, d, what);
  check_alignment(t, d, what);
}

sema::ArgDesc describe_tensor(const DLTensor& t, const TensorLabel& what, bool need_data) {
  sema::ArgDesc d;
  describe_tensor(t, what, need_data, &d);
  return d;
}

void require_no_self_overlap(const DLTensor& t, const sema::ArgDesc& d, const TensorLabel& what) {
  if (num_elements(d.shape) == 0) return;
  Strides strides = strides_of(t, d.shape);
  std::array<std::pair<int64_t, int64_t>, TF_MAX_NDIM> axes;  // (|stride|, extent), extent > 1
  size_t n = 0;
  for (size_t a = 0; a < d.shape.size(); ++a)
    if (d.shape[a] > 1) axes[n++] = {strides[a] < 0 ? -strides[a] : strides[a], d.shape[a]};
  // Insertion sort: n <= TF_MAX_NDIM (and std::sort on a fixed array trips
  // GCC 12's -Warray-bounds).
  for (size_t i = 1; i < n; ++i)
    for (size_t j = i; j > 0 && axes[j] < axes[j - 1]; --j) std::swap(axes[j], axes[j - 1]);
  // Sorted by |stride|, each axis must step past everything the smaller ones
  // reach; otherwise two indices share an element. check_reach bounds the sums.
  int64_t reach = 0;
  for (size_t i = 0; i < n; ++i) {
    const auto& [stride, extent] = axes[i];
    if (stride <= reach)
      invalid(what, "strides make elements overlap (a stride of " + std::to_string(stride) +
                        " on an axis of extent " + std::to_string(extent) +
                        "); an output must not alias itself");
    reach += stride * (extent - 1);
  }
}

void view_tensor(const DLTensor& t, const TensorLabel& what, runtime::NDArray* out) {
  // Rationale: an empty tensor may legally carry data == NULL and any
  // byte_offset (nothing is addressed); give its view a harmless address and
  // no offset, so that from_dlpack need not special-case it and no pointer
  // arithmetic wraps (fuzz finding, tests/fuzz/regressions/kernel_run).
  static char empty_storage;
  DLTensor v = t;
  // A device tensor's view only carries its address to the device's code:
  // the caller has checked that the kernel runs there (require_device).
  if (v.device.device_type == kDLCUDA) v.device = DLDevice{kDLCPU, 0};
  bool empty = v.ndim > 0 && v.shape != nullptr &&
               std::any_of(v.shape, v.shape + v.ndim, [](int64_t e) { return e == 0; });
  if (v.data == nullptr || empty) {
    v.data = &empty_storage;
    v.byte_offset = 0;
  }
  try {
    out->assign_dlpack(v);
  } catch (const ir::Error& e) {
    throw ir::Error(e.kind(), what.str() + ": " + e.what());
  }
}

runtime::NDArray view_tensor(const DLTensor& t, const TensorLabel& what) {
  runtime::NDArray a;
  view_tensor(t, what, &a);
  return a;
}

void require_same_desc(const sema::ArgDesc& expected, const sema::ArgDesc& got,
                       const TensorLabel& what) {
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

// [first, last) bytes an array's elements can touch. No overflow: a
// non-empty tensor's reach was bounded by describe_tensor; an empty one, whose
// strides may be anything, touches nothing (fuzz finding: tested first).
static std::pair<const char*, const char*> byte_span(const runtime::NDArray& a) {
  const char* base = static_cast<const char*>(a.data());
  if (a.numel() == 0) return {base, base};
  int64_t lo = 0, hi = 0, compact = 1;
  for (size_t d = a.ndim(); d-- > 0;) {
    int64_t stride = d < a.strides().size() ? a.strides()[d] : compact;
    compact *= a.shape()[d];
    int64_t reach = (a.shape()[d] - 1) * stride;
    (reach < 0 ? lo : hi) += reach;
  }
  int64_t bytes = ir::dtype_bytes(a.dtype());
  return {base + lo * bytes, base + (hi + 1) * bytes};
}

bool tensors_overlap(const runtime::NDArray& a, const runtime::NDArray& b) {
  auto sa = byte_span(a), sb = byte_span(b);
  return sa.first < sb.second && sb.first < sa.second;
}

std::string device_string(const DLDevice& d) {
  std::string s = device_name(d.device_type);
  return d.device_type == kDLCPU ? s : s + ":" + std::to_string(d.device_id);
}

void require_device(const DLTensor& t, const DLDevice& want, const std::string& kernel,
                    const TensorLabel& what) {
  if (on_device(t, want)) return;
  const std::string runs_on = "'" + kernel + "'";
  if (want.device_type == kDLCPU)
    fail(TF_ERR_UNSUPPORTED, what.str() + ": a " + device_string(t.device) + " tensor, but " + runs_on +
                                 " runs on the cpu (compile it with TF_BACKEND_CUDA to run it on a GPU)");
  if (t.device.device_type != kDLCUDA || t.device.device_id < 0)
    invalid(what, "a " + device_string(t.device) + " tensor, but " + runs_on + " runs on " + device_string(want));
  invalid(what, "on " + device_string(t.device) + ", but " + runs_on + " runs on " + device_string(want) +
                    ", where the call's first tensor is; every tensor of a call must be on one device");
}

void invalid(const TensorLabel& what, const std::string& why) {
  fail(TF_ERR_INVALID_ARGUMENT, what.str() + ": " + why);
}

}  // namespace tf::capi
