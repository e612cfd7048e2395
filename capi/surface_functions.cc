// tf_surface_function_*: the DSL's callable names, read from the op registry
// and the frontend, so a language binding does not keep its own list.
#include <string>
#include <vector>

#include "capi/checks.h"
#include "capi/error.h"
#include "core/frontend/syntax_functions.h"
#include "core/ops/surface.h"

using tf::capi::require_non_null;

namespace {

// The frontend's own calls first, then the surface functions in op
// registration order: an op registered later only appends, so an index a
// caller has seen keeps its name. Every pointer is to a string that lives as
// long as the process (the registry never drops a record).
std::vector<const char*> surface_function_names() {
  std::vector<const char*> names;
  for (const std::string& n : tf::frontend::syntax_function_names()) names.push_back(n.c_str());
  for (const tf::ops::SurfaceFn& fn : tf::ops::all_surfaces()) names.push_back(fn.name.c_str());
  return names;
}

}  // namespace

tf_status tf_surface_function_count(size_t* out) {
  TF_C_API_BEGIN
  require_non_null(out, "tf_surface_function_count", "out");
  *out = surface_function_names().size();
  TF_C_API_END
}

tf_status tf_surface_function_name(size_t i, const char** out) {
  TF_C_API_BEGIN
  require_non_null(out, "tf_surface_function_name", "out");
  std::vector<const char*> names = surface_function_names();
  if (i >= names.size())
    tf::capi::fail(TF_ERR_INVALID_ARGUMENT, "tf_surface_function_name: index " + std::to_string(i) +
                                                " out of range (there are " + std::to_string(names.size()) +
                                                " surface functions)");
  *out = names[i];
  TF_C_API_END
}
