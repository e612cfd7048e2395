// CUDA code generation: a sealed normal Function -> one CUDA C++ translation
// unit for NVRTC (nvrtc.h), from the same TIR the CPU target prints
// (codegen.h lower_entry, Target::kCuda).
//
// Each stage (and each check that runs before the stages) is split into
// kernels (kernel_split.h), printed by cuda_printer.h and launched in order
// on one stream. Generated ABI, per kernel:
//   extern "C" __global__ void tf_k<i>(const __grid_constant__ tf_args A)
// with tf_args passed by value (no device copy of the call's metadata, and
// a CUDA graph captures it with the launch):
//   struct tf_args {
//     void* B[slots];                    // inputs, outputs, temporaries
//     int64_t SH[sum of ranks], ST[sum of ranks];  // shapes / strides, slot order
//     int64_t RS[run-time scalars];      // resolved by the host per call
//     int* err;     // a stage's run-time error code (device memory, zeroed per call)
//     int* pre;     // a failed check's code: every later kernel returns at once
//     int64_t* info;  // the error's details (codegen.h's kErr* codes and info)
//   };
// Launch: kBlockThreads threads per block; the grid as kernels[i].launch
// says (cuda_printer.h: kOneBlock needs one block, the others any count —
// their loops stride by the grid), no more blocks than have work
// (kernels[i].blocks, grid_size.h). A MatMul stage is no kernel: the host
// calls cuBLAS for it between the kernels (cublas.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/compiler/cuda/cuda_printer.h"
#include "core/compiler/lower_segment.h"
#include "core/tir/expr.h"
#include "core/ir/module.h"

namespace tf::compiler::cuda {

// One step of a call, in launch order: a kernel, or a MatMul stage the
// host runs through cuBLAS (gemm set, name empty).
struct CudaKernel {
  std::string name;
  Launch launch;
  bool precheck;  // a check of parameters that runs before every stage
  std::optional<GemmCall> gemm;
  // The blocks with work, over the call's argument words (grid_size.h);
  // null: the full grid.
  tir::ExprPtr blocks;
};

struct CudaProgram {
  std::vector<Slot> slots;  // inputs, then outputs, then temporaries
  std::vector<RuntimeScalar> scalars;
  std::string source;       // the prelude, tf_args and every kernel
  std::vector<CudaKernel> kernels;  // in launch order
  std::vector<bool> aliased;  // per output: written in place of its input
  bool may_fail = false;    // a stage can record an error after another wrote
  std::string tir;          // the TIR the kernels were printed from
};

// Where tf_args's arrays lie, in 8-byte words from its start: B, SH, ST
// and RS in that order, each at least one word long (a C array has an
// element). Slot k's dims start at dims[k] within SH and within ST.
struct ArgsLayout {
  std::vector<size_t> dims;
  size_t sh = 0, st = 0, rs = 0, end = 0;  // each array's first word; end: err's
};
ArgsLayout args_layout(const LoweredEntry& e);

// Whether p has a MatMul step (cuBLAS).
bool has_gemm(const CudaProgram& p);

// Throws Error(kUnsupported) naming the first construct without a CUDA form.
CudaProgram generate_cuda(const ir::Function& fn);
// One straight-line segment, as codegen.h's generate_segment.
CudaProgram generate_cuda_segment(const std::vector<ir::ExprPtr>& inputs, const std::vector<ir::ExprPtr>& outputs,
                                  const std::vector<bool>& aliased = {});

}  // namespace tf::compiler::cuda
