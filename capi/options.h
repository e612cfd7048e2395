// tf_compile_options: reading a caller's options struct of any size this
// library knows (struct_size covers at least `backend`, at most the whole
// struct), so old callers keep working as fields are appended.
#pragma once

#include "tilefoundry/tilefoundry.h"

namespace tf::capi {

// The backend requested by opts (NULL = the defaults: TF_BACKEND_NATIVE).
// Throws ApiError(TF_ERR_INVALID_ARGUMENT) for a struct_size out of range,
// nonzero flags or reserved words, or an unknown backend.
tf_backend requested_backend(const tf_compile_options* opts);

}  // namespace tf::capi
