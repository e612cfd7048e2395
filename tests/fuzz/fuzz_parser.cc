// Fuzzes the DSL parser and the printer round trip through the C ABI.
// Invariants checked on every input (a violation aborts, so libFuzzer keeps
// the input as a crash):
//   - tf_module_parse returns a status, never TF_ERR_INTERNAL;
//   - a module that parses prints; its print parses again and prints
//     byte-identically (the printer's output is canonical).
#include <tilefoundry/tilefoundry.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz_parser: %s: %s\n", what, tf_last_error());
  std::abort();
}

std::string print(tf_module m) {
  char* text = nullptr;
  require(tf_module_print(m, &text) == TF_OK, "a parsed module must print");
  std::string s(text);
  tf_string_free(text);
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tf_module m = nullptr;
  tf_status s = tf_module_parse(reinterpret_cast<const char*>(data), size, "fuzz.tf", &m);
  require(s != TF_ERR_INTERNAL, "parse reported an internal error");
  if (s != TF_OK) return 0;
  std::string first = print(m);
  tf_module again = nullptr;
  require(tf_module_parse(first.data(), first.size(), "printed.tf", &again) == TF_OK,
          "the printed module must parse");
  require(print(again) == first, "print(parse(print(m))) must equal print(m)");
  tf_module_release(again);
  tf_module_release(m);
  return 0;
}
