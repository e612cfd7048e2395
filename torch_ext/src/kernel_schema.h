// The torch schema of a TileFoundry kernel, derived from its signature:
//   tilefoundry::<op>(Tensor <in0>, Tensor <in1>, ...) -> Tensor
//   tilefoundry::<op>(...) -> (Tensor, Tensor)        for several outputs
#pragma once

#include <string>

#include <tilefoundry/tilefoundry.h>

namespace tf::torch_ext {

// True for a torch/Python identifier: [A-Za-z_][A-Za-z0-9_]*.
bool is_identifier(const std::string& s);

// Fills *out with the full schema ("tilefoundry::<op_name>(...) -> ...").
// On failure returns the tf_status of the failing tf_* call (its message is
// then in tf_last_error()), or TF_ERR_INVALID_ARGUMENT with *why set.
tf_status derive_schema(tf_kernel k, const std::string& op_name, std::string* out,
                        std::string* why);

}  // namespace tf::torch_ext
