// AOT export (compiler::export_library) through the kernel cache: the same
// module exported again is a copy of the library compiled the first time,
// a change of toolchain compiles anew, and an export needs no cache
// directory to succeed.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "compiler_helpers.h"
#include "core/compiler/toolchain.h"
#include "core/frontend/parser.h"
#include "scoped_env.h"

namespace tf::comptest {
namespace {

constexpr const char* kSource = R"(from tilefoundry.dsl import *
N = DimVar("N", 1, 1 << 20)
D = DimVar("D", 1, 1 << 20)
@func
def scale(x: Tensor[(N, D), f32], w: Tensor[(D,), f32]) -> Tensor[(N, D), f32]:
    return x * w + 0.5
)";

class ExportLibrary : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/tf_export_" + std::to_string(::getpid()) + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    ASSERT_EQ(std::system(("rm -rf '" + dir_ + "' && mkdir -p '" + dir_ + "'").c_str()), 0);
    module_ = frontend::parse_module(kSource, "export.tf");
  }
  void TearDown() override { std::system(("rm -rf '" + dir_ + "'").c_str()); }

  // Exports the module to dir_/<name> and returns that path.
  std::string export_to(const std::string& name) {
    const std::string path = dir_ + "/" + name;
    EXPECT_EQ(compiler::export_library({module_->lookup("scale")}, "", path), std::vector<std::string>{"scale"});
    return path;
  }

  // The library at path computes `scale` as the evaluator does.
  void expect_runs(const std::string& path) {
    std::string text;
    auto lib = compiler::open_library(path, &text);
    const ir::FunctionPtr fn = module_->lookup("scale");
    auto k = compiler::bind_library_function(lib, *fn);
    ASSERT_NE(k, nullptr) << path << " has no code for scale";
    std::mt19937 rng(7);
    expect_agree(*k, *module_, *fn, {random_array(DType::kF32, {3, 17}, rng), random_array(DType::kF32, {17}, rng)},
                 path);
  }

  std::string dir_;
  ir::ModulePtr module_;
};

std::string bytes_of(const std::string& path) {
  std::string b;
  EXPECT_TRUE(compiler::read_file(path, &b)) << path;
  return b;
}

// The permission bits of path's mode.
unsigned mode_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(stat(path.c_str(), &st), 0) << path;
  return static_cast<unsigned>(st.st_mode & 07777);
}

TEST_F(ExportLibrary, TheSameModuleExportedAgainIsACopyOfTheCachedLibrary) {
  ScopedEnv cache("TF_CACHE_DIR", dir_ + "/cache");
  const int64_t before = compiler::compiler_invocations();
  const std::string first = export_to("first.so");
  EXPECT_EQ(compiler::compiler_invocations(), before + 1);
  const std::string second = export_to("second.so");
  EXPECT_EQ(compiler::compiler_invocations(), before + 1) << "the second export ran the compiler";
  EXPECT_EQ(bytes_of(second), bytes_of(first));
  EXPECT_EQ(mode_of(second), mode_of(first)) << "the copy's mode is not the linker's";
  expect_runs(first);
  expect_runs(second);

  // Another compiler command is another toolchain: compiled anew.
  ScopedEnv cc("TF_CC", "c++ -DTF_ANOTHER_TOOLCHAIN");
  const std::string third = export_to("third.so");
  EXPECT_EQ(compiler::compiler_invocations(), before + 2) << "a change of toolchain reused the cached library";
  expect_runs(third);
}

TEST_F(ExportLibrary, AnExportNeedsNoCacheDirectory) {
  // A cache directory under a regular file cannot be created.
  const std::string file = dir_ + "/not-a-directory";
  std::ofstream(file) << "x";
  ScopedEnv cache("TF_CACHE_DIR", file + "/cache");
  const int64_t before = compiler::compiler_invocations();
  expect_runs(export_to("a.so"));
  expect_runs(export_to("b.so"));
  EXPECT_EQ(compiler::compiler_invocations(), before + 2) << "without a cache each export compiles";
}

}  // namespace
}  // namespace tf::comptest
