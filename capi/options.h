// tf_compile_options and tf_run_options: reading a caller's options struct
// of any size this library knows (struct_size covers at least the first
// field after it, at most the whole struct), so old callers keep working as
// fields are appended.
#pragma once

#include <cstdint>

#include "tilefoundry/tilefoundry.h"

namespace tf::capi {

// The backend requested by opts (NULL = the defaults: TF_BACKEND_NATIVE).
// Throws ApiError(TF_ERR_INVALID_ARGUMENT) for a struct_size out of range,
// nonzero flags or reserved words, or an unknown backend.
tf_backend requested_backend(const tf_compile_options* opts);

// tf_run_options, checked (struct_size, reserved flags; a stream or a
// workspace for a kernel that does not run on CUDA is
// TF_ERR_INVALID_ARGUMENT). NULL gives the defaults.
struct RunOptions {
  void* stream = nullptr;
  void* workspace = nullptr;
  uint64_t workspace_bytes = 0;
};
RunOptions run_options(const char* fn, const tf_run_options* opts, tf_backend backend);

}  // namespace tf::capi
