// Test helpers of the frontend suite: the round trip every test module goes
// through (print -> parse -> structurally equal -> print) and error-shape
// assertions.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/frontend/parser.h"
#include "core/frontend/printer.h"
#include "core/ir/error.h"
#include "core/ir/structural.h"

namespace tf::frontend::testing {

// print -> parse -> structurally equal -> print again byte-identical.
inline void expect_round_trip(const ir::Module& m) {
  std::string text = print_module(m);
  ir::ModulePtr back;
  try {
    back = parse_module(text, "printed.tf");
  } catch (const ir::Error& e) {
    FAIL() << "printed module does not parse: " << e.what() << "\n--- printed ---\n" << text;
  }
  EXPECT_TRUE(ir::structural_equal(m, *back)) << "not structurally equal after reparse:\n" << text;
  EXPECT_EQ(print_module(*back), text);
}

// Parses source (named "t.tf") and round-trips the result.
inline ir::ModulePtr parse_rt(const std::string& source) {
  ir::ModulePtr m = parse_module(source, "t.tf");
  expect_round_trip(*m);
  return m;
}

// Expects parse_module(source) to throw `kind` with a message that starts at
// t.tf:line:col, shows the source line and a caret under col, and contains
// every string in `words`.
inline void expect_error(const std::string& source, ir::ErrorKind kind, int line, int col,
                         const std::vector<std::string>& words) {
  try {
    parse_module(source, "t.tf");
  } catch (const ir::Error& e) {
    std::string msg = e.what();
    EXPECT_EQ(static_cast<int>(e.kind()), static_cast<int>(kind)) << msg;
    std::string loc = "t.tf:" + std::to_string(line) + ":" + std::to_string(col) + ": error: ";
    EXPECT_EQ(msg.rfind(loc, 0), 0u) << "expected prefix " << loc << " in:\n" << msg;
    // The source line, then a caret under the column.
    size_t start = 0;
    for (int l = 1; l < line; ++l) start = source.find('\n', start) + 1;
    std::string src_line = source.substr(start, source.find('\n', start) - start);
    std::string snippet = "\n    " + src_line + "\n    " + std::string(col - 1, ' ') + "^";
    EXPECT_NE(msg.find(snippet), std::string::npos) << "missing snippet:" << snippet << "\nin:\n" << msg;
    for (const auto& w : words) EXPECT_NE(msg.find(w), std::string::npos) << "missing '" << w << "' in:\n" << msg;
    return;
  }
  ADD_FAILURE() << "expected an error for:\n" << source;
}

inline const char* kHeader =
    "from tilefoundry.dsl import *\n"
    "\n"
    "N = DimVar(\"N\", 1, 1 << 20)\n"
    "D = 4096\n"
    "\n";

}  // namespace tf::frontend::testing
