// Generated kernels and the evaluator share one copy of the scalar numerics:
// the prelude starts with the text of core/runtime/scalar_numerics.h as the
// build embedded it, and defines none of its functions again.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "core/compiler/prelude.h"

namespace {

// Located from this file's path: <repo>/tests/compiler/... -> <repo>/core/...
std::string read_source(const std::string& name) {
  const std::string here = __FILE__;
  std::ifstream in(here.substr(0, here.rfind("/tests/")) + "/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(PreludeNumerics, EmbedsTheSharedHeaderAsBuilt) {
  const std::string header = read_source("core/runtime/scalar_numerics.h");
  ASSERT_FALSE(header.empty());
  EXPECT_EQ(std::string(tf::compiler::scalar_numerics_source()), header)
      << "the embedded text is stale: rebuild (cmake/embed_text.cmake)";
  EXPECT_NE(std::string(tf::compiler::prelude_source()).find(header), std::string::npos);
}

TEST(PreludeNumerics, DefinesNoSharedFunctionAgain) {
  const std::string prelude = tf::compiler::prelude_source();
  for (const char* definition :
       {"tf_f16 tf_to_f16(float", "tf_bf16 tf_to_bf16(float", "tf_fp8e4m3 tf_to_fp8e4m3(float",
        "tf_f8e8m0 tf_to_f8e8m0(float", "float tf_widen(tf_f16", "float tf_rf16(float", "float tf_rbf16(float",
        "T tf_narrow(C", "C tf_min(C", "C tf_max(C", "T tf_wadd(T", "T tf_wsub(T", "T tf_wmul(T", "C tf_relu(C",
        "T tf_floordiv(T", "D tf_f2i(F", "bool tf_topk_greater(C", "C tf_gelu_erf(C", "struct tf_f16 {",
        "struct tf_fp8e4m3 {", "void tf_fail(int*"})
    EXPECT_EQ(count(prelude, definition), 1u) << definition;
}

}  // namespace
