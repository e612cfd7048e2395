#include "kernel_schema.h"

#include <algorithm>
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

// "(T0, T1)" or "T0" for one.
std::string tuple_of(const std::vector<std::string>& items) {
  if (items.size() == 1) return items[0];
  std::string r = "(";
  for (size_t i = 0; i < items.size(); ++i) r += (i ? ", " : "") + items[i];
  return r + ")";
}

// Names for the out= arguments that no input already uses: torch's own
// spelling ("out"; "out0", "out1", ... for several), with '_' appended until
// they are free.
std::vector<std::string> out_names(size_t n_out, const std::vector<std::string>& inputs) {
  std::vector<std::string> names;
  std::string suffix;
  for (;;) {
    names.clear();
    for (size_t i = 0; i < n_out; ++i) names.push_back("out" + (n_out == 1 ? "" : std::to_string(i)) + suffix);
    const bool clash = std::any_of(names.begin(), names.end(), [&](const std::string& n) {
      return std::find(inputs.begin(), inputs.end(), n) != inputs.end();
    });
    if (!clash) return names;
    suffix += "_";
  }
}

// The alias set of output i: a, b, ..., z, a1, b1, ...
std::string alias_set(size_t i) {
  std::string s(1, static_cast<char>('a' + i % 26));
  return i < 26 ? s : s + std::to_string(i / 26);
}

}  // namespace

tf_status derive_schemas(tf_kernel k, const std::string& op_name, KernelSchemas* out,
                         std::string* why) {
  size_t n_in = 0, n_out = 0;
  if (tf_status s = tf_kernel_num_inputs(k, &n_in); s != TF_OK) return s;
  if (tf_status s = tf_kernel_num_outputs(k, &n_out); s != TF_OK) return s;
  if (n_out == 0) {
    *why = "kernel has no outputs; a torch operator must return a tensor";
    return TF_ERR_INVALID_ARGUMENT;
  }
  std::vector<std::string> inputs;
  for (size_t i = 0; i < n_in; ++i) {
    const char* name = nullptr;
    if (tf_status s = tf_kernel_input_name(k, i, &name); s != TF_OK) return s;
    if (!is_identifier(name)) {
      *why = "input " + std::to_string(i) + " has name '" + name +
             "', which is not a valid torch argument name";
      return TF_ERR_INVALID_ARGUMENT;
    }
    inputs.push_back(name);
  }
  // The inputs written in place, each in an alias set of its own.
  std::vector<std::string> input_type(n_in, "Tensor");
  std::vector<std::string> fresh;
  size_t sets = 0;
  for (size_t i = 0; i < n_out; ++i) {
    int64_t a = -1;
    if (tf_status s = tf_kernel_output_alias(k, i, &a); s != TF_OK) return s;
    if (a < 0) fresh.push_back("Tensor");
    else input_type[static_cast<size_t>(a)] = "Tensor(" + alias_set(sets++) + "!)";
  }
  std::string params;
  for (size_t i = 0; i < n_in; ++i) params += (i ? ", " : "") + input_type[i] + " " + inputs[i];
  if (sets != 0) {
    out->functional = "tilefoundry::" + op_name + "(" + params + ") -> " + (fresh.empty() ? "()" : tuple_of(fresh));
    out->out.clear();
    out->out_names.clear();
    return TF_OK;
  }
  out->out_names = out_names(n_out, inputs);
  std::vector<std::string> plain(n_out, "Tensor"), aliased, out_params;
  for (size_t i = 0; i < n_out; ++i) {
    aliased.push_back("Tensor(" + alias_set(i) + "!)");
    out_params.push_back(aliased.back() + " " + out->out_names[i]);
  }
  std::string out_args;
  for (const std::string& p : out_params) out_args += ", " + p;
  out->functional = "tilefoundry::" + op_name + "(" + params + ") -> " + tuple_of(plain);
  out->out = "tilefoundry::" + op_name + ".out(" + params + (params.empty() ? "*" : ", *") + out_args +
             ") -> " + tuple_of(aliased);
  return TF_OK;
}

}  // namespace tf::torch_ext
