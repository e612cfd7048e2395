// The emulated CUDA device (cuda_emulation/emulated_module.h) running one
// CudaProgram the way the CUDA target's host side launches it, with a
// chosen block size and grid, for the compiler's differential tests.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/compiler/cuda/cuda_codegen.h"
#include "core/ir/shape.h"
#include "core/runtime/ndarray.h"
#include "cuda_emulation/emulated_module.h"

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
  std::unique_ptr<cudaemu::EmulatedModule> module_;
};

}  // namespace tf::comptest
