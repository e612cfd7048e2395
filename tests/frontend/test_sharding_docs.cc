// Keeps docs/sharding.md honest: every ```python block holding an @func is a
// complete module that must parse and round-trip (like test_docs.cc does for
// docs/dsl.md).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "frontend/round_trip.h"

namespace tf::frontend {
namespace {

std::vector<std::string> python_modules(const std::string& md) {
  std::vector<std::string> out;
  std::istringstream in(md);
  std::string line, cur, tag;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.rfind("```", 0) == 0) {
      if (inside && tag == "python" && cur.find("@func") != std::string::npos) out.push_back(cur);
      inside = !inside;
      tag = line.substr(3);
      cur.clear();
    } else if (inside) {
      cur += line + "\n";
    }
  }
  return out;
}

TEST(ShardingDoc, EveryPythonModuleParsesAndRoundTrips) {
  std::string here = __FILE__;
  std::ifstream f(here.substr(0, here.rfind("/tests/")) + "/docs/sharding.md");
  ASSERT_TRUE(f) << "cannot read docs/sharding.md";
  std::stringstream ss;
  ss << f.rdbuf();
  auto modules = python_modules(ss.str());
  ASSERT_GE(modules.size(), 1u) << "docs/sharding.md has no ```python module";
  for (const auto& text : modules) {
    try {
      ir::ModulePtr m = parse_module(text, "sharding.md");
      EXPECT_FALSE(m->functions().empty());
      testing::expect_round_trip(*m);
    } catch (const ir::Error& e) {
      ADD_FAILURE() << e.what() << "\n--- block ---\n" << text;
    }
  }
}

}  // namespace
}  // namespace tf::frontend
