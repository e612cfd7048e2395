// tf_module_*: parsing, printing and describing a Module.
#include <string>

#include "capi/checks.h"
#include "capi/error.h"
#include "capi/handles.h"
#include "capi/kernel.h"
#include "capi/strings.h"
#include "core/frontend/parser.h"
#include "core/frontend/printer.h"
#include "core/ir/error.h"

using tf::capi::require_non_null;

extern "C" {

tf_status tf_module_parse(const char* src, size_t len, const char* filename, tf_module* out) {
  TF_C_API_BEGIN
  require_non_null(src, "tf_module_parse", "src");
  require_non_null(out, "tf_module_parse", "out");
  tf::ir::ModulePtr m = tf::frontend::parse_module(std::string_view(src, len),
                                                   filename != nullptr ? filename : "<string>");
  *out = tf::capi::new_module_handle(std::move(m));
  TF_C_API_END
}

tf_status tf_module_print(tf_module m, char** out_text) {
  TF_C_API_BEGIN
  tf::ir::ModulePtr mod = tf::capi::module_of(m);
  require_non_null(out_text, "tf_module_print", "out_text");
  *out_text = tf::capi::to_c_string(tf::frontend::print_module(*mod));
  TF_C_API_END
}

tf_status tf_module_num_functions(tf_module m, size_t* out) {
  TF_C_API_BEGIN
  tf::ir::ModulePtr mod = tf::capi::module_of(m);
  require_non_null(out, "tf_module_num_functions", "out");
  *out = mod->functions().size();
  TF_C_API_END
}

tf_status tf_module_function_name(tf_module m, size_t i, const char** out) {
  TF_C_API_BEGIN
  tf::ir::ModulePtr mod = tf::capi::module_of(m);
  require_non_null(out, "tf_module_function_name", "out");
  const auto& fns = mod->functions();
  if (i >= fns.size()) {
    tf::capi::fail(TF_ERR_INVALID_ARGUMENT, "tf_module_function_name: index " + std::to_string(i) +
                                                " out of range (the module has " +
                                                std::to_string(fns.size()) + " functions)");
  }
  *out = fns[i]->name().c_str();  // the Module is immutable and outlives m
  TF_C_API_END
}

tf_status tf_module_signature(tf_module m, const char* fn, char** out_text) {
  TF_C_API_BEGIN
  tf::ir::ModulePtr mod = tf::capi::module_of(m);
  require_non_null(fn, "tf_module_signature", "fn");
  require_non_null(out_text, "tf_module_signature", "out_text");
  *out_text = tf::capi::to_c_string(tf::frontend::print_signature(*tf::capi::find_function(*mod, fn)));
  TF_C_API_END
}

void tf_module_release(tf_module m) { tf::capi::release_module_handle(m); }

}  // extern "C"
