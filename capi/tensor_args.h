// Checking caller DLTensors at the boundary. A tensor that crosses the C ABI
// must be on the CPU or a CUDA device (the kernel's: require_device), have
// 0 <= ndim <= TF_MAX_NDIM, non-negative extents, a shape array when
// ndim > 0, one lane, and data unless it has no elements; anything else is
// an error naming the tensor, never a crash.
#pragma once

#include <dlpack/dlpack.h>

#include <string>
#include <vector>

#include "core/runtime/ndarray.h"
#include "core/sema/bind.h"

namespace tf::capi {

// Names a tensor in messages ("tf_kernel_run: input #1 (w)"). It holds the
// parts and renders them only when a check fails, so that a call whose
// arguments are valid formats no strings. The pointers must outlive it.
class TensorLabel {
 public:
  // "<fn>: <role> #<index>", then " (<*name>)" when name is not NULL.
  TensorLabel(const char* fn, const char* role, size_t index, const std::string* name = nullptr)
      : fn_(fn), role_(role), index_(index), name_(name) {}
  std::string str() const;

 private:
  const char* fn_;
  const char* role_;
  size_t index_;
  const std::string* name_;
};

// "cpu", "cuda:1".
std::string device_string(const DLDevice& d);

// Requires t to be on `want` (the device of the call to `kernel`): a cuda
// tensor for a CPU kernel is TF_ERR_UNSUPPORTED, any other mismatch (a cpu
// tensor for a CUDA kernel, tensors on two GPUs) TF_ERR_INVALID_ARGUMENT.
void require_device(const DLTensor& t, const DLDevice& want, const std::string& kernel, const TensorLabel& what);

// Whether t is on `want`, the test require_device makes; inline so that a
// call whose tensors are all where they belong builds no label.
inline bool on_device(const DLTensor& t, const DLDevice& want) {
  return t.device.device_type == want.device_type &&
         (want.device_type == kDLCPU || t.device.device_id == want.device_id);
}

// Validates t and returns its dtype and shape. `what` names the tensor in
// messages. need_data: data must be non-NULL
// when the tensor has elements. Throws ApiError / ir::Error:
// TF_ERR_UNSUPPORTED for a device other than cpu and cuda or an unknown dtype,
// TF_ERR_INVALID_ARGUMENT otherwise.
sema::ArgDesc describe_tensor(const DLTensor& t, const TensorLabel& what, bool need_data);
// The same into *out, reusing its shape storage (the hot path of a call).
void describe_tensor(const DLTensor& t, const TensorLabel& what, bool need_data, sema::ArgDesc* out);

// Besides, the descriptor's reach (strides x extents, plus byte_offset, in
// bytes) must fit in int64, and data + byte_offset must be aligned to the
// element size; any strides are accepted otherwise (zero, negative, NULL =
// compact row-major), and so is data == NULL for a tensor with no elements.

// Requires the non-empty tensor t (described by d) to have no two indices
// that share an element: writing it must be well defined. Zero strides on an
// axis of extent > 1 fail, so do strides like (1, 1) for shape (2, 2).
void require_no_self_overlap(const DLTensor& t, const sema::ArgDesc& d, const TensorLabel& what);

// A borrowed view of a tensor describe_tensor accepted (with need_data).
runtime::NDArray view_tensor(const DLTensor& t, const TensorLabel& what);
// The same into *out, reusing its shape / strides storage.
void view_tensor(const DLTensor& t, const TensorLabel& what, runtime::NDArray* out);

// Requires got (describing the tensor called `what`) to equal expected
// exactly; otherwise TF_ERR_INVALID_ARGUMENT naming the dtype, or the rank,
// or the first axis that differs, with the expected and the actual value.
void require_same_desc(const sema::ArgDesc& expected, const sema::ArgDesc& got,
                       const TensorLabel& what);

int64_t num_elements(const std::vector<int64_t>& shape);

// TF_ERR_INVALID_ARGUMENT: "<what>: <why>".
[[noreturn]] void invalid(const TensorLabel& what, const std::string& why);

// True when the byte ranges two arrays' elements can touch intersect. An
// empty array touches nothing; a non-empty one's reach was bounded by
// describe_tensor, so the arithmetic cannot overflow.
bool tensors_overlap(const runtime::NDArray& a, const runtime::NDArray& b);

}  // namespace tf::capi
