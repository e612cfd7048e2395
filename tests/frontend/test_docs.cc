// Keeps docs/dsl.md honest. Every ```python block that holds an @func is a
// complete module: it must parse and round-trip (the same holds for the
// other documents that show modules: README.md, docs/ir.md, docs/sharding.md). A ```python block right
// after a line ending in "prints as:" must be the exact printed form of the
// block before it, and a ```text error message right after "is rejected
// with:" must be exactly what the parser throws for the ```text source
// before it. The surface-function and dtype tables must name every entry of
// the closed sets they document.
#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/ir/dtype.h"
#include "core/ops/surface.h"
#include "frontend/round_trip.h"

namespace tf::frontend {
namespace {

using testing::expect_round_trip;

// One fenced block: its info string ("python", "text"), the 1-based line of
// its opening fence, its body, and the last non-blank line before the fence.
struct Block {
  std::string tag;
  int line = 0;
  std::string text;
  std::string intro;
};

// Located from this file's path so the test does not depend on the working
// directory: <repo>/tests/frontend/test_docs.cc -> <repo>/docs/dsl.md.
std::string doc_path(const std::string& name = "docs/dsl.md") {
  std::string here = __FILE__;
  return here.substr(0, here.rfind("/tests/")) + "/" + name;
}

std::string read_doc(const std::string& name = "docs/dsl.md") {
  std::ifstream in(doc_path(name));
  if (!in) return "";
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Splits markdown into its fenced blocks. A fence is a line starting with
// ``` ; an unclosed block is reported as a failure and dropped.
std::vector<Block> fenced_blocks(const std::string& md) {
  std::vector<Block> blocks;
  std::istringstream in(md);
  std::string line, last_text;
  Block cur;
  bool inside = false;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.rfind("```", 0) == 0) {
      if (inside) {
        blocks.push_back(cur);
        inside = false;
        last_text.clear();
      } else {
        cur = Block{line.substr(3), n, "", last_text};
        inside = true;
      }
      continue;
    }
    if (inside) cur.text += line + "\n";
    else if (line.find_first_not_of(' ') != std::string::npos) last_text = line;
  }
  if (inside) ADD_FAILURE() << "the block opened at line " << cur.line << " is never closed";
  return blocks;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::vector<Block> module_blocks(const std::vector<Block>& all) {
  std::vector<Block> out;
  for (const auto& b : all)
    if (b.tag == "python" && b.text.find("@func") != std::string::npos) out.push_back(b);
  return out;
}

class DslDoc : public ::testing::Test {
 protected:
  void SetUp() override {
    doc_ = read_doc();
    ASSERT_FALSE(doc_.empty()) << "cannot read " << doc_path();
    blocks_ = fenced_blocks(doc_);
  }
  std::string doc_;
  std::vector<Block> blocks_;
};

TEST(DslDocExtraction, KeepsTagsLinesAndIntroLines) {
  std::string md =
      "Intro.\n\n```python\n@func\nx\n```\nis rejected with:\n\n```text\nboom\n```\n";
  auto blocks = fenced_blocks(md);
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_EQ(blocks[0].tag, "python");
  EXPECT_EQ(blocks[0].line, 3);
  EXPECT_EQ(blocks[0].text, "@func\nx\n");
  EXPECT_EQ(blocks[0].intro, "Intro.");
  EXPECT_EQ(blocks[1].tag, "text");
  EXPECT_EQ(blocks[1].intro, "is rejected with:");
  EXPECT_EQ(module_blocks(blocks).size(), 1u);  // the text block is not a module
}

TEST_F(DslDoc, HasPythonModuleExamples) {
  EXPECT_GE(module_blocks(blocks_).size(), 1u) << "docs/dsl.md has no ```python block with an @func";
}

TEST_F(DslDoc, EveryPythonModuleParsesAndRoundTrips) {
  for (const auto& b : module_blocks(blocks_)) {
    SCOPED_TRACE("docs/dsl.md block at line " + std::to_string(b.line));
    ir::ModulePtr m;
    try {
      m = parse_module(b.text, "dsl.md");
    } catch (const ir::Error& e) {
      ADD_FAILURE() << "does not parse:\n" << e.what() << "\n--- block ---\n" << b.text;
      continue;
    }
    ASSERT_NE(m, nullptr);
    EXPECT_FALSE(m->functions().empty());
    expect_round_trip(*m);
  }
}

// The other documents' module examples: each parses and round-trips.
class DocModules : public ::testing::TestWithParam<std::string> {};

TEST_P(DocModules, EveryPythonModuleParsesAndRoundTrips) {
  std::string md = read_doc(GetParam());
  ASSERT_FALSE(md.empty()) << "cannot read " << doc_path(GetParam());
  auto modules = module_blocks(fenced_blocks(md));
  EXPECT_GE(modules.size(), 1u) << GetParam() << " has no ```python block with an @func";
  for (const auto& b : modules) {
    SCOPED_TRACE(GetParam() + " block at line " + std::to_string(b.line));
    try {
      ir::ModulePtr m = parse_module(b.text, GetParam());
      EXPECT_FALSE(m->functions().empty());
      expect_round_trip(*m);
    } catch (const ir::Error& e) {
      ADD_FAILURE() << "does not parse:\n" << e.what() << "\n--- block ---\n" << b.text;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Docs, DocModules,
                         ::testing::Values("README.md", "docs/ir.md", "docs/sharding.md"),
                         [](const ::testing::TestParamInfo<std::string>& p) {
                           std::string n;
                           for (char c : p.param) n += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return n;
                         });

// The canonical-form example shows real printer output.
TEST_F(DslDoc, PrintedFormExamplesMatchThePrinter) {
  int pairs = 0;
  for (size_t i = 1; i < blocks_.size(); ++i) {
    const Block& printed = blocks_[i];
    if (printed.tag != "python" || !ends_with(printed.intro, "prints as:")) continue;
    const Block& source = blocks_[i - 1];
    SCOPED_TRACE("docs/dsl.md block at line " + std::to_string(printed.line));
    ASSERT_EQ(source.tag, "python");
    ++pairs;
    try {
      EXPECT_EQ(print_module(*parse_module(source.text, "dsl.md")), printed.text);
    } catch (const ir::Error& e) {
      ADD_FAILURE() << e.what();
    }
  }
  EXPECT_GE(pairs, 1) << "no ```python block introduced by 'prints as:'";
}

// The error examples are the parser's real messages for a file named kernel.py.
TEST_F(DslDoc, ErrorExamplesMatchTheParser) {
  int pairs = 0;
  for (size_t i = 1; i < blocks_.size(); ++i) {
    const Block& message = blocks_[i];
    if (message.tag != "text" || !ends_with(message.intro, "is rejected with:")) continue;
    const Block& source = blocks_[i - 1];
    SCOPED_TRACE("docs/dsl.md block at line " + std::to_string(message.line));
    ASSERT_EQ(source.tag, "text") << "error sources use ```text so they are not parsed as examples";
    ++pairs;
    try {
      parse_module(source.text, "kernel.py");
      ADD_FAILURE() << "expected an error for:\n" << source.text;
    } catch (const ir::Error& e) {
      EXPECT_EQ(std::string(e.what()) + "\n", message.text);
    }
  }
  EXPECT_GE(pairs, 2) << "expected a parse-error and a type-error example";
}

TEST_F(DslDoc, ListsEverySurfaceFunction) {
  for (const ops::SurfaceFn& fn : ops::all_surfaces())
    EXPECT_NE(doc_.find("`" + fn.name + "("), std::string::npos)
        << "docs/dsl.md does not document `" << fn.name << "(...)`";
}

TEST_F(DslDoc, ListsEveryDtype) {
  const char* const names[] = {
#define TF_X(e, name, bits, cat) name,
      TF_DTYPE_LIST(TF_X)
#undef TF_X
  };
  for (const char* n : names)
    EXPECT_NE(doc_.find(std::string("| `") + n + "` |"), std::string::npos)
        << "docs/dsl.md's dtype table has no row for " << n;
}

}  // namespace
}  // namespace tf::frontend
