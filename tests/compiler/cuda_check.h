// The CUDA compile check the compiler suites share: a function's CUDA
// program, compiled by NVRTC for every architecture the backend targets and
// assembled by ptxas, each kernel within the limits of its launch. Without
// NVRTC the check skips (GTEST_SKIP: never counted as passing).
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "core/compiler/compiler.h"
#include "core/compiler/cuda/cuda_codegen.h"
#include "core/compiler/cuda/cuda_loop_plan.h"
#include "core/compiler/loop_tree.h"
#include "core/compiler/cuda/nvrtc.h"
#include "core/compiler/cuda/prelude.h"
#include "core/ir/error.h"
#include "core/runtime/sanitizers.h"

namespace tf::comptest {

// The architectures CI assembles for: Ampere (A100) and Hopper (H100/H200).
inline constexpr int kCudaArchs[] = {80, 90};

// What a kernel may use at kBlockThreads threads per block: registers fit
// the SM's 64K register file for one block, static shared memory the 48 KiB
// a kernel gets without opting in.
inline void expect_fits(const compiler::cuda::KernelResources& k, const std::string& what) {
  EXPECT_GT(k.registers, 0) << what << ": " << k.kernel;
  EXPECT_LE(k.registers * compiler::cuda::kBlockThreads, 65536) << what << ": " << k.kernel << " " << k.arch;
  EXPECT_LE(k.shared_bytes, 48 * 1024) << what << ": " << k.kernel << " " << k.arch;
}

inline void expect_program_compiles(const compiler::cuda::CudaProgram& p, const std::string& what) {
  for (int arch : kCudaArchs) {
    const compiler::cuda::NvrtcOutput out = compiler::cuda::nvrtc_compile(p.source, what + ".cu", arch, true);
    ASSERT_TRUE(out.ok) << what << " for sm_" << arch << ":\n" << out.log << "\n--- source:\n" << p.source;
    EXPECT_FALSE(out.cubin.empty()) << what;
    const auto resources = compiler::cuda::parse_ptxas_info(out.log);
    size_t kernels = 0;  // a MatMul step is cuBLAS's, not a kernel of the source
    for (const auto& k : p.kernels) kernels += k.gemm ? 0 : 1;
    EXPECT_EQ(resources.size(), kernels) << what << ": ptxas reported\n" << out.log;
    for (const auto& k : resources) expect_fits(k, what);
  }
}

// The same check from the differential suites: each distinct program once
// per process (its source is the key). Every function the CPU compiles
// has a CUDA program: one that does not fails the test.
//
// `emulate`, when given, also runs each program on the emulated device
// (cuda_emulator.h); the differential suites pass it with TF_CUDA_EMULATE=1.
// The sanitizer builds leave this per-program check to the plain build:
// NVRTC is not instrumented, and under ASan it doubles the random-program
// test's time.
inline void check_cuda_program(const ir::Function& fn, const std::string& what,
                               const std::function<void(compiler::cuda::CudaProgram)>& emulate = nullptr) {
#if defined(TF_UNDER_ASAN) || defined(TF_UNDER_TSAN)
  if (!emulate) return;
#endif
  if (!compiler::cuda::nvrtc_status().available) return;  // expect_cuda_compiles reports it
  std::vector<const ir::Function*> fns{&fn};
  if (fn.is_prototype()) {
    fns.clear();
    for (const ir::FunctionPtr& v : fn.variants()) fns.push_back(v.get());
  }
  static std::set<size_t> done;
  auto check = [&](const std::function<std::vector<compiler::cuda::CudaProgram>()>& generate) {
    std::vector<compiler::cuda::CudaProgram> programs;
    try {
      programs = generate();
    } catch (const ir::Error& e) {
      ADD_FAILURE() << what << ": no CUDA program: " << e.what();
      return;
    }
    for (compiler::cuda::CudaProgram& p : programs) {
      if (!done.insert(std::hash<std::string>()(p.source)).second) continue;
      expect_program_compiles(p, what);
      if (emulate) emulate(std::move(p));
    }
  };
  for (const ir::Function* f : fns) {
    // A function with loops runs as host-driven segments
    // (cuda_loop_plan.h): each segment is a program of its own.
    if (f->body() && compiler::loops::contains_loop(f->body()))
      check([&] { return compiler::cuda::generate_cuda_loop_segments(*f); });
    else
      check([&] { return std::vector<compiler::cuda::CudaProgram>{compiler::cuda::generate_cuda(*f)}; });
  }
}

inline void expect_cuda_compiles(const ir::Function& fn, const std::string& what) {
  const compiler::cuda::NvrtcStatus& st = compiler::cuda::nvrtc_status();
  if (!st.available) GTEST_SKIP() << "no NVRTC, CUDA kernels not compiled: " << st.why;
  if (fn.is_prototype()) {  // each variant is a program of its own
    for (const ir::FunctionPtr& v : fn.variants()) expect_cuda_compiles(*v, what + " / " + v->label());
    return;
  }
  compiler::cuda::CudaProgram p;
  try {
    p = compiler::cuda::generate_cuda(fn);
  } catch (const ir::Error& e) {
    ADD_FAILURE() << what << ": no CUDA program: " << e.what();
    return;
  }
  expect_program_compiles(p, what);
}

}  // namespace tf::comptest
