// A CUDA device emulated on the CPU, for tests of the CUDA target on
// machines without a GPU. It depends on nothing of TileFoundry, so that the
// emulated driver (emulated_driver.cc, a libcuda stand-in) can carry it.
//
// A module's CUDA C++ source (cuda_codegen.h's translation unit) is compiled
// as C++ by the host compiler after a header that gives CUDA's built-ins
// host meanings: each thread of a block is an OS thread with its own
// threadIdx, blocks run one after another (so a __shared__ array, a
// function-level static there, is the running block's), the block's threads
// run one at a time from the highest index down, switching at
// __syncthreads (so a missing barrier shows as a wrong result, every run
// alike), a warp shuffle exchanges through a table between two barriers (the
// generated code shuffles only where the whole block does), atomics are the
// compiler's. Grid-stride loops, block reductions across warps, kernel
// fission and the checks' early return all run as they would on a device.
//
// What it cannot show: the device's memory model and scheduling, the
// compiler's code for sm_80 / sm_90 (NVRTC compiles that), speed.
#pragma once

#include <string>
#include <vector>

namespace tf::cudaemu {

class EmulatedModule {
 public:
  // Compiles `source` with `cc` and `flags` (cached in `cache_dir` by a
  // hash of all three) and loads it. Throws std::runtime_error with the
  // compiler's diagnostics when it does not compile.
  EmulatedModule(const std::string& source, const std::string& cc, const std::string& flags,
                 const std::string& cache_dir);
  ~EmulatedModule();
  EmulatedModule(const EmulatedModule&) = delete;
  EmulatedModule& operator=(const EmulatedModule&) = delete;

  // The source's kernels (extern "C" __global__ functions), in order.
  const std::vector<std::string>& kernels() const { return kernels_; }
  bool has(const std::string& kernel) const;

  // Runs `kernel` over `grid` blocks of `block_threads` threads; `args`
  // points at its parameter (tf_args). Throws std::runtime_error when a
  // block's barrier is not reached by all its threads (a divergent
  // __syncthreads, which hangs a device).
  void launch(const std::string& kernel, unsigned grid, unsigned block_threads, const void* args) const;

 private:
  std::vector<std::string> kernels_;
  void* lib_ = nullptr;
};

}  // namespace tf::cudaemu
