// The calls the parser spells itself (syntax_functions.h) are what the C ABI
// lists beside the surface functions: each is a call the parser handles in a
// @func body, and none shadows or is shadowed by an op's surface function.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "core/frontend/parser.h"
#include "core/frontend/syntax_functions.h"
#include "core/ir/error.h"
#include "core/ops/surface.h"

namespace tf::frontend {
namespace {

// A body using each name where it belongs.
const std::map<std::string, std::string>& uses() {
  static const std::map<std::string, std::string> u = {
      {"reshard", "    return reshard(x)\n"},
      {"local", "    return local(x)\n"},
      {"tile", "    acc = x\n    for i in tile(8, step=4):\n        acc = acc + 1.0\n    return acc\n"},
      {"load_tile", "    return load_tile(x, 0)\n"},
  };
  return u;
}

TEST(SyntaxFunctions, EachIsACallTheParserHandles) {
  ASSERT_EQ(syntax_function_names().size(), uses().size()) << "give each name a use in uses()";
  for (const std::string& name : syntax_function_names()) {
    ASSERT_TRUE(uses().count(name)) << name;
    std::string src = "from tilefoundry.dsl import *\n\n@func\ndef f(x: Tensor[(8,), f32]) -> Tensor[(8,), f32]:\n" +
                      uses().at(name);
    try {
      parse_module(src, "k.py");
    } catch (const ir::Error& e) {  // a type error is fine; an unknown name is not
      EXPECT_EQ(std::string(e.what()).find("unknown function"), std::string::npos) << name << ": " << e.what();
    }
  }
}

TEST(SyntaxFunctions, NoneIsAlsoASurfaceFunction) {
  for (const std::string& name : syntax_function_names()) EXPECT_EQ(ops::find_surface(name), nullptr) << name;
}

}  // namespace
}  // namespace tf::frontend
