// The torch schemas of a TileFoundry kernel, derived from its signature:
//   tilefoundry::<op>(Tensor <in0>, Tensor <in1>, ...) -> Tensor
//   tilefoundry::<op>(...) -> (Tensor, Tensor)        for several outputs
// and its out= overload in PyTorch's convention (the outputs are keyword-only
// arguments the op writes and returns; alias annotations tell torch so):
//   tilefoundry::<op>.out(Tensor <in0>, ..., *, Tensor(a!) out) -> Tensor(a!)
//   tilefoundry::<op>.out(..., *, Tensor(a!) out0, Tensor(b!) out1)
//       -> (Tensor(a!), Tensor(b!))
// A kernel with in-place outputs (@func(inplace=...)) mutates those inputs
// and returns only its other outputs, as torch.library custom ops that
// mutate do (torch.compile functionalizes such an op; it cannot an op that
// returns an alias of an input), and has no out= overload:
//   tilefoundry::<op>(Tensor(a!) cache, Tensor new, Tensor pos) -> ()
#pragma once

#include <string>
#include <vector>

#include <tilefoundry/tilefoundry.h>

namespace tf::torch_ext {

// True for a torch/Python identifier: [A-Za-z_][A-Za-z0-9_]*.
bool is_identifier(const std::string& s);

struct KernelSchemas {
  std::string functional;             // "tilefoundry::<op>(...) -> ..."
  std::string out;                    // "tilefoundry::<op>.out(...) -> ...", "" when none
  std::vector<std::string> out_names;  // "out" or "out0", "out1", ...
};

// Fills *out. On failure returns the tf_status of the failing tf_* call (its
// message is then in tf_last_error()), or TF_ERR_INVALID_ARGUMENT with *why
// set.
tf_status derive_schemas(tf_kernel k, const std::string& op_name, KernelSchemas* out,
                         std::string* why);

}  // namespace tf::torch_ext
