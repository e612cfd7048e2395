// A CUDA device emulated on the CPU, for differential tests of the CUDA
// target on machines without a GPU.
//
// The generated translation unit (cuda_codegen.h) is compiled as C++ by the
// host compiler after a header that gives CUDA's built-ins host meanings:
// each thread of a block is an OS thread with its own threadIdx, blocks run
// one after another (so a __shared__ array, a function-level static there,
// is the running block's), the block's threads run one at a time from the
// highest index down, switching at __syncthreads (so a missing barrier shows
// as a wrong result, every run alike), a warp shuffle exchanges through a
// table between two barriers
// (the generated code shuffles only where the whole block does), atomics are
// the compiler's. Kernels are launched in order with the program's launch
// kinds, blocks of `block_threads` threads and grids of several blocks, so
// grid-stride loops, block reductions across warps, kernel fission and the
// checks' early return all run as they would on a device.
//
// What it cannot show: the device's memory model and scheduling, the
// compiler's code for sm_80 / sm_90 (nvrtc.h compiles that), speed.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/compiler/cuda/cuda_codegen.h"
#include "core/ir/shape.h"
#include "core/runtime/ndarray.h"

namespace tf::comptest {

class EmulatedCudaProgram {
 public:
  // Compiles the program for the host (cached on disk like a CPU kernel).
  explicit EmulatedCudaProgram(compiler::cuda::CudaProgram p);
  ~EmulatedCudaProgram();
  EmulatedCudaProgram(const EmulatedCudaProgram&) = delete;
  EmulatedCudaProgram& operator=(const EmulatedCudaProgram&) = delete;

  // CompiledFunction::run's contract: outputs preallocated, contiguous;
  // a kernel's error is raised as the evaluator's Error. Throws when a
  // block's barrier is not reached by all its threads (a divergent
  // __syncthreads, which hangs a device).
  void run(const std::vector<runtime::NDArray>& inputs, const std::vector<runtime::NDArray>& outputs,
           const ir::DimBindings& bindings, int block_threads = 64, int grid_blocks = 3) const;

  const compiler::cuda::CudaProgram& program() const { return p_; }

 private:
  compiler::cuda::CudaProgram p_;
  void* lib_ = nullptr;
};

}  // namespace tf::comptest
