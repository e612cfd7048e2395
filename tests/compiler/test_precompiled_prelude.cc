// The precompiled kernel prelude: a kernel compile includes it when one
// exists for this prelude and toolchain (TF_PCH_DIR here, beside the
// library otherwise) and compiles the prelude's text when it does not or
// when the compiler cannot use it.
#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "core/compiler/library.h"
#include "core/compiler/prelude.h"
#include "core/compiler/toolchain.h"
#include "core/ir/error.h"

namespace {

namespace tc = tf::compiler;

class PrecompiledPrelude : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/tf_pch_test_" + std::to_string(::getpid());
    setenv("TF_PCH_DIR", dir_.c_str(), 1);
  }
  void TearDown() override {
    unsetenv("TF_PCH_DIR");
    for (const std::string& f : files()) std::remove((dir_ + "/" + f).c_str());
    rmdir(dir_.c_str());
  }
  std::vector<std::string> files() const {
    std::vector<std::string> out;
    if (DIR* d = opendir(dir_.c_str())) {
      while (dirent* e = readdir(d))
        if (e->d_name[0] != '.') out.push_back(e->d_name);
      closedir(d);
    }
    return out;
  }
  // The one file of the directory ending in `suffix`.
  std::string file(const std::string& suffix) const {
    std::string found;
    for (const std::string& f : files())
      if (f.size() > suffix.size() && f.compare(f.size() - suffix.size(), suffix.size(), suffix) == 0) {
        EXPECT_TRUE(found.empty()) << "two files end in " << suffix;
        found = dir_ + "/" + f;
      }
    EXPECT_FALSE(found.empty()) << "no file ends in " << suffix;
    return found;
  }
  static void overwrite(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  }
  // A kernel calling a prelude routine, compiled with the prelude as its
  // precompilable prefix; returns what it computes for x.
  static float compile_and_run(float x) {
    const std::string prelude = tc::prelude_source();
    const std::string source = prelude + "extern \"C\" float probe(float x) { return tf_exp(x) + tf_silu<float>(x); }\n";
    const std::string path = ::testing::TempDir() + "/tf_pch_probe_" + std::to_string(::getpid()) + ".so";
    tc::compile_shared(source, path, prelude.size());
    tc::Library lib(path);
    std::remove(path.c_str());
    auto probe = reinterpret_cast<float (*)(float)>(lib.symbol("probe"));
    EXPECT_NE(probe, nullptr);
    return probe ? probe(x) : 0.0f;
  }
  std::string dir_;
};

// With the header's text replaced by an #error, only a compile that reads
// the precompiled form succeeds: the compile uses it, and computes the
// same as the prelude's text (compiled with no header beside it).
TEST_F(PrecompiledPrelude, ACompileReadsThePrecompiledFormOfItsPrelude) {
  const float from_text = compile_and_run(0.75f);
  tc::write_precompiled_header(tc::prelude_source(), dir_);
  overwrite(file(".h"), "#error the text was compiled, not the precompiled header\n");
  EXPECT_EQ(compile_and_run(0.75f), from_text);
}

// A directory named relative to the process's (TF_PCH_DIR here; the
// library's own when it was opened by a relative name) is used as well: the
// #include names the header by its absolute path, since the compiler
// resolves a quoted include against the kernel source's directory.
TEST_F(PrecompiledPrelude, ADirectoryNamedRelativeToTheProcessIsUsed) {
  const float from_text = compile_and_run(0.5f);
  tc::write_precompiled_header(tc::prelude_source(), dir_);
  overwrite(file(".h"), "#error the text was compiled, not the precompiled header\n");
  char* before = getcwd(nullptr, 0);
  ASSERT_NE(before, nullptr);
  // The kernel's source is written elsewhere (the temporary directory).
  ASSERT_EQ(chdir(dir_.c_str()), 0);
  setenv("TF_PCH_DIR", ".", 1);
  float got = 0.0f;
  try {
    got = compile_and_run(0.5f);
  } catch (const tf::ir::Error& e) {
    ADD_FAILURE() << e.what();
  }
  EXPECT_EQ(chdir(before), 0);
  std::free(before);
  EXPECT_EQ(got, from_text);
}

// A precompiled form the compiler cannot use (here: not one at all) leaves
// it to the header's text, which is the prelude.
TEST_F(PrecompiledPrelude, AnUnusablePrecompiledFormFallsBackToTheText) {
  const float from_text = compile_and_run(-1.25f);
  tc::write_precompiled_header(tc::prelude_source(), dir_);
  overwrite(file(".h.gch"), "not a precompiled header");
  EXPECT_EQ(compile_and_run(-1.25f), from_text);
}

// A header of another prelude (an older build's, another toolchain's) has
// another name and is never included (including this one, which defines
// none of the prelude's routines, would fail the compile): the compile
// reads the text.
TEST_F(PrecompiledPrelude, AnotherPreludesHeaderIsNotUsed) {
  const float from_text = compile_and_run(2.0f);
  tc::write_precompiled_header("int tf_another_prelude;\n", dir_);
  EXPECT_EQ(compile_and_run(2.0f), from_text);
}

// Writing a header removes the ones written before it; a compiler failure
// is an error naming the compiler.
TEST_F(PrecompiledPrelude, WritingReplacesOlderHeadersAndReportsFailures) {
  tc::write_precompiled_header("int tf_first_prelude;\n", dir_);
  const std::string first = file(".h");
  tc::write_precompiled_header("int tf_second_prelude;\n", dir_);
  EXPECT_EQ(files().size(), 2u);  // the second's .h and .h.gch
  EXPECT_NE(file(".h"), first);
  try {
    tc::write_precompiled_header("this is not C++\n", dir_);
    ADD_FAILURE() << "a header that does not compile was precompiled";
  } catch (const tf::ir::Error& e) {
    EXPECT_NE(std::string(e.what()).find("precompiling the kernel prelude"), std::string::npos) << e.what();
  }
}

}  // namespace
