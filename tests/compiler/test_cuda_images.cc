// CUBINs: NVRTC compiles a program for an architecture once per machine —
// cached in process, and on disk for every other process (a second process
// reads the file and compiles nothing) — and TF_DUMP_DIR receives the
// .cu, the .ptx and the .tir; the NVRTC that compiles them is one whose
// CUBINs the driver loads.
#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "core/compiler/cuda/cuda_codegen.h"
#include "core/compiler/cuda/cuda_function.h"
#include "core/compiler/cuda/driver.h"
#include "core/compiler/cuda/nvrtc.h"
#include "core/compiler/toolchain.h"
#include "core/frontend/parser.h"
#include "scoped_env.h"

namespace tf::comptest {
namespace {

std::vector<std::string> files_ending(const std::string& dir, const std::string& suffix) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string n = e->d_name;
      if (n.size() >= suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0)
        out.push_back(n);
    }
    closedir(d);
  }
  return out;
}

// A program of its own for this run: `scale` differs between runs.
compiler::cuda::CudaProgram program(const std::string& scale) {
  const std::string src = "from tilefoundry.dsl import *\nN = DimVar(\"N\", 1, 1024)\n\n@func\n"
                          "def f(x: Tensor[(N, 16), f32]) -> Tensor[(N, 16), f32]:\n    return softmax(x * " +
                          scale + ")\n";
  return compiler::cuda::generate_cuda(*frontend::parse_module(src, "images.tf")->lookup("f"));
}

// Of the NVRTCs (and cuBLASes) found, the first the driver can run: a
// driver runs code of its own CUDA major version or older, so a CUDA 13
// toolkit on a 12.x driver must not shadow the NVRTC a pip-installed torch
// brings.
TEST(CudaImages, TheNvrtcAndCublasTakenAreOnesTheDriverRuns) {
  using compiler::cuda::pick_for_driver;
  EXPECT_EQ(pick_for_driver({13, 12}, 12040), 1);
  EXPECT_EQ(pick_for_driver({13, 12}, 13000), 0);
  EXPECT_EQ(pick_for_driver({12, 13}, 13010), 0);
  EXPECT_EQ(pick_for_driver({13, 13, 12, 11}, 12080), 2);
  EXPECT_EQ(pick_for_driver({13, 12}, 11080), 0) << "none the driver runs: the first, whose failure says why";
  EXPECT_EQ(pick_for_driver({13, 12}, 0), 0) << "no driver (compiling only): the first";
  EXPECT_EQ(pick_for_driver({}, 12040), -1);
}

// The loaders open candidates in order and stop at the one pick_for_driver
// takes: here three system libraries stand in for NVRTCs, their versions
// made up around this process's driver (the emulated one, or a GPU's).
TEST(CudaImages, CandidatesAreOpenedUntilOneTheDriverRuns) {
  const compiler::cuda::DriverStatus& driver = compiler::cuda::driver_status();
  ASSERT_TRUE(driver.available) << driver.why;
  const int major = driver.version / 1000;
  const std::vector<std::string> candidates = {"libtf-no-such-library.so", "libm.so.6", "libc.so.6",
                                               "libdl.so.2"};
  std::vector<int> probed;  // the versions answered, in order
  const std::vector<int> versions = {major + 1, major, major - 1};
  std::string tried;
  const compiler::cuda::OpenedLibrary l = compiler::cuda::open_for_driver(
      candidates,
      [&](void*, std::string*) {
        probed.push_back(versions.at(probed.size()));
        return probed.back();
      },
      &tried);
  EXPECT_EQ(l.path, "libc.so.6") << "the first not newer than driver " << driver.version;
  EXPECT_NE(l.lib, nullptr);
  EXPECT_EQ(probed, (std::vector<int>{major + 1, major})) << "libdl was opened after the pick was known";
  EXPECT_NE(tried.find("libtf-no-such-library.so"), std::string::npos) << tried;

  // A candidate whose probe fails is skipped, with its reason; none the
  // driver runs: the first that answered.
  tried.clear();
  int calls = 0;
  const compiler::cuda::OpenedLibrary first = compiler::cuda::open_for_driver(
      {"libm.so.6", "libc.so.6", "libdl.so.2"},
      [&](void*, std::string* why) {
        if (calls++ == 0) {
          *why = "not this one";
          return -1;
        }
        return major + 1;
      },
      &tried);
  EXPECT_EQ(first.path, "libc.so.6");
  EXPECT_NE(tried.find("libm.so.6: not this one"), std::string::npos) << tried;
}

TEST(CudaImages, CompiledOncePerMachineAndDumped) {
  const compiler::cuda::NvrtcStatus& nv = compiler::cuda::nvrtc_status();
  if (!nv.available) GTEST_SKIP() << "no NVRTC, no CUBIN: " << nv.why;
  // The second process: the same program, read from the disk cache.
  if (const char* scale = std::getenv("TF_TEST_CUBIN_SCALE")) {
    const int64_t before = compiler::cuda::nvrtc_compiles();
    EXPECT_FALSE(compiler::cuda::cubin_image(program(scale), "f", 80).empty());
    EXPECT_EQ(compiler::cuda::nvrtc_compiles(), before) << "the second process compiled again";
    return;
  }
  char dir_template[] = "/tmp/tf-cubin-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template, dump = dir + "/dump";
  const std::string scale = std::to_string(1.0 + (getpid() % 1000) / 1000.0);
  {
    ScopedEnv cache("TF_CACHE_DIR", dir), dumps("TF_DUMP_DIR", dump);
    const compiler::cuda::CudaProgram p = program(scale);
    const int64_t before = compiler::cuda::nvrtc_compiles();
    const std::string image = compiler::cuda::cubin_image(p, "f", 80);
    EXPECT_FALSE(image.empty());
    EXPECT_EQ(compiler::cuda::nvrtc_compiles(), before + 1);
    EXPECT_EQ(compiler::cuda::cubin_image(p, "f", 80), image);  // in process: no compile
    EXPECT_EQ(compiler::cuda::nvrtc_compiles(), before + 1);
    // On disk, by content hash and architecture.
    const std::vector<std::string> cached = files_ending(dir, ".sm_80.cubin");
    ASSERT_EQ(cached.size(), 1u);
    std::string on_disk;
    ASSERT_TRUE(compiler::read_file(dir + "/" + cached[0], &on_disk));
    EXPECT_EQ(on_disk, image);
    // Dumped for reading.
    for (const char* ext : {".cu", ".ptx", ".tir"}) EXPECT_EQ(files_ending(dump, ext).size(), 1u) << ext;
    std::string ptx;
    ASSERT_TRUE(compiler::read_file(dump + "/" + files_ending(dump, ".ptx")[0], &ptx));
    EXPECT_NE(ptx.find(".entry tf_k0"), std::string::npos);
    // Another architecture is another image.
    EXPECT_NE(compiler::cuda::cubin_image(p, "f", 90), image);
    EXPECT_EQ(compiler::cuda::nvrtc_compiles(), before + 2);

    // A second process reads the cached file.
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      setenv("TF_TEST_CUBIN_SCALE", scale.c_str(), 1);
      execl("/proc/self/exe", "tf_compiler_tests", "--gtest_filter=CudaImages.CompiledOncePerMachineAndDumped",
            static_cast<char*>(nullptr));
      _exit(127);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the second process failed";
  }
  std::system(("rm -rf " + dir).c_str());
}

}  // namespace
}  // namespace tf::comptest
