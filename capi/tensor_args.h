// Checking caller DLTensors at the boundary. A tensor that crosses the C ABI
// must be on the CPU, have 0 <= ndim <= TF_MAX_NDIM, non-negative extents, a
// shape array when ndim > 0, one lane, and data unless it has no elements;
// anything else is an error naming the tensor, never a crash.
#pragma once

#include <dlpack/dlpack.h>

#include <string>
#include <vector>

#include "core/runtime/ndarray.h"
#include "core/sema/bind.h"

namespace tf::capi {

// Validates t and returns its dtype and shape. `what` names the tensor in
// messages ("tf_kernel_run: input #1 (w)"). need_data: data must be non-NULL
// when the tensor has elements. Throws ApiError / ir::Error:
// TF_ERR_UNSUPPORTED for a non-CPU device or an unknown dtype,
// TF_ERR_INVALID_ARGUMENT otherwise.
sema::ArgDesc describe_tensor(const DLTensor& t, const std::string& what, bool need_data);

// A borrowed view of a tensor describe_tensor accepted (with need_data).
runtime::NDArray view_tensor(const DLTensor& t, const std::string& what);

// Requires got (describing the tensor called `what`) to equal expected
// exactly; otherwise TF_ERR_INVALID_ARGUMENT naming the dtype, or the rank,
// or the first axis that differs, with the expected and the actual value.
void require_same_desc(const sema::ArgDesc& expected, const sema::ArgDesc& got,
                       const std::string& what);

int64_t num_elements(const std::vector<int64_t>& shape);

}  // namespace tf::capi
