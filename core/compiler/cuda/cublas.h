// cuBLAS, loaded with dlopen on first use (TF_CUBLAS_LIBRARY, else the
// first of the sonames of CUDA 13, 12 and 11 that is not newer than the
// driver: pick_for_driver), for the MatMul stages of CUDA programs:
// one strided-batched GEMM per call of cublasGemmStridedBatchedEx (the
// leading batch axes looped on the host), on the caller's stream, with
// the call's workspace as cuBLAS's (so a CUDA graph captures it), float
// accumulation for the half types and no TF32 (the evaluator's numbers).
#pragma once

#include <cstdint>
#include <string>

#include "core/compiler/cuda/driver.h"
#include "core/runtime/ndarray.h"

namespace tf::compiler::cuda {

// Workspace a call hands cuBLAS when it has a MatMul stage.
inline constexpr uint64_t kCublasWorkspaceBytes = uint64_t{4} << 20;

// y = a @ b over the trailing two axes, batch axes broadcast (an operand's
// missing or extent-1 batch axis repeats), on device memory of the current
// context, queued on `stream`. y is C-contiguous; a and b need a unit
// stride in one of their last two axes (any other layout is
// Error(kUnsupported), as is a machine without cuBLAS, with the reason).
void gemm(const runtime::NDArray& a, const runtime::NDArray& b, const runtime::NDArray& y, int device,
          CUstream stream, void* workspace, uint64_t workspace_bytes);

}  // namespace tf::compiler::cuda
