#include "kernel_schema.h"

#include <cctype>

namespace tf::torch_ext {

bool is_identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

namespace {

std::string returns_clause(size_t n_out) {
  if (n_out == 1) return "Tensor";
  std::string r = "(";
  for (size_t i = 0; i < n_out; ++i) r += i ? ", Tensor" : "Tensor";
  return r + ")";
}

}  // namespace

tf_status derive_schema(tf_kernel k, const std::string& op_name, std::string* out,
                        std::string* why) {
  size_t n_in = 0, n_out = 0;
  if (tf_status s = tf_kernel_num_inputs(k, &n_in); s != TF_OK) return s;
  if (tf_status s = tf_kernel_num_outputs(k, &n_out); s != TF_OK) return s;
  if (n_out == 0) {
    *why = "kernel has no outputs; a torch operator must return a tensor";
    return TF_ERR_INVALID_ARGUMENT;
  }
  std::string schema = "tilefoundry::" + op_name + "(";
  for (size_t i = 0; i < n_in; ++i) {
    const char* name = nullptr;
    if (tf_status s = tf_kernel_input_name(k, i, &name); s != TF_OK) return s;
    if (!is_identifier(name)) {
      *why = "input " + std::to_string(i) + " has name '" + name +
             "', which is not a valid torch argument name";
      return TF_ERR_INVALID_ARGUMENT;
    }
    schema += (i ? ", Tensor " : "Tensor ") + std::string(name);
  }
  *out = schema + ") -> " + returns_clause(n_out);
  return TF_OK;
}

}  // namespace tf::torch_ext
