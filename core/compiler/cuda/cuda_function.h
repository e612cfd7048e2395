// A function compiled for CUDA devices: its program (cuda_codegen.h),
// compiled by NVRTC for each device architecture it runs on, loaded through
// the driver (driver.h) into each device, launched on the caller's stream.
//
// Images: a CUBIN for the device's own sm_<cc>, compiled once per machine:
// cached on disk beside the CPU kernels (TF_CACHE_DIR) under a hash of the
// source, the architecture and NVRTC's version, written atomically like
// them (safe across processes), and in process per architecture. When
// TF_DUMP_DIR is set, each compile also writes <function>.<key>.cu (the
// source), .ptx (its PTX for that architecture) and .tir there.
//
// A call: arguments are device arrays (data pointers are device addresses)
// on one device; the kernels run in order on `stream`, asynchronously to
// the host. Scratch (materialized intermediates and the error words) comes
// from the caller's workspace, or, without one, from the driver's
// stream-ordered allocator on the same stream. A program that can report a
// run-time error (reports_errors()) reads its error words back, which
// synchronizes the stream; so that no output is written when it fails, such
// a program computes into scratch and copies into the outputs only after
// the error words say it succeeded. Nothing in a call allocates outside
// the workspace when one is given, and a program that cannot fail never
// synchronizes: a CUDA graph can capture it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/compiler/cuda/cuda_codegen.h"
#include "core/compiler/cuda/driver.h"
#include "core/ir/module.h"
#include "core/runtime/ndarray.h"

namespace tf::compiler::cuda {

struct CudaLoopPlan;

// Throws Error(kUnsupported) saying why unless this process can compile and
// run CUDA kernels: a driver with a device, and NVRTC (unless the driver
// takes source).
void require_available();

class CudaFunction {
 public:
  // Compiles fn (a normal function, one with loops: cuda_loop_plan.h, or a
  // dispatch prototype, each variant on its own). Throws Error(kUnsupported) for what the CUDA target does not
  // compile (the message names it) or when neither NVRTC nor a driver that
  // takes source is there.
  static std::shared_ptr<const CudaFunction> compile(const ir::Function& fn);

  // Loads the code into `device` now (compiling for its architecture when
  // no image is cached), so that the first call does not.
  void prepare(int device) const;

  // Bytes of device workspace a call with these bindings needs.
  uint64_t workspace_bytes(const ir::DimBindings& bindings) const;

  // Runs on device `device` and `stream`. Inputs may be strided; outputs
  // are C-contiguous, shaped as sema::output_descs says, disjoint from the
  // inputs except an in-place output, which is its input's own array.
  // `workspace` (device memory of workspace_bytes() or more) may be null.
  // Throws the evaluator's Error(kRuntime) for a run-time error (outputs
  // untouched), Error(kUnsupported) when a program that reads its errors
  // back is called on a stream being captured.
  void run(const std::vector<runtime::NDArray>& inputs, const std::vector<runtime::NDArray>& outputs,
           const ir::DimBindings& bindings, int device, CUstream stream, void* workspace,
           uint64_t workspace_bytes) const;

  // Whether a call can report a run-time error (and so synchronizes).
  bool reports_errors() const { return reports_errors_; }
  // Whether a call runs a MatMul through cuBLAS.
  bool has_gemm() const { return has_gemm_; }
  // The source's content hash (the variants' joined for a prototype).
  const std::string& key() const { return key_; }
  // The program (null for a dispatch prototype or a function with loops).
  const CudaProgram* program() const { return variants_.empty() && !plan_ ? &program_ : nullptr; }

  CudaFunction(CudaProgram p, std::string name);
  CudaFunction(ir::FunctionPtr base, std::vector<std::shared_ptr<const CudaFunction>> variants);
  CudaFunction(std::shared_ptr<const CudaLoopPlan> plan, std::string name);
  ~CudaFunction();

 private:
  struct Loaded {
    CUmodule module = nullptr;
    std::vector<CUfunction> kernels;  // parallel to program_.kernels
    int grid = 1;                     // blocks of a kBlocks / kThreads launch
  };
  const CudaFunction& variant(const ir::DimBindings& bindings) const;
  const Loaded& loaded(int device) const;

  CudaProgram program_;
  std::string name_;
  std::string key_;
  ir::FunctionPtr base_;  // dispatch prototype (then variants_ run)
  std::vector<std::shared_ptr<const CudaFunction>> variants_;
  std::shared_ptr<const CudaLoopPlan> plan_;  // a function with loops (then its segments run)
  // Derived once (a call reads them): any variant's or segment's, for a
  // prototype or a plan.
  bool reports_errors_ = false;
  bool has_checks_ = false;  // a check of the parameters runs before the stages
  bool has_gemm_ = false;
  mutable std::mutex mu_;
  mutable std::map<int, Loaded> loaded_;  // by device
};

// The code a driver loads for `p` on a device of compute capability `arch`:
// cubin_image, or the source for a driver that takes source.
std::string module_image(const CudaProgram& p, const std::string& name, int arch);
// p's CUBIN for sm_<arch>, compiled by NVRTC once per machine (cached in
// process and on disk as the header says; TF_DUMP_DIR gets the .cu, .ptx
// and .tir). Throws Error(kUnsupported) without NVRTC.
std::string cubin_image(const CudaProgram& p, const std::string& name, int arch);

// tf_args (cuda_codegen.h) as 8-byte words, in the layout a kernel reads
// its parameter: `arrays` are the program's slots in order.
std::vector<int64_t> pack_kernel_args(const std::vector<runtime::NDArray>& arrays,
                                      const std::vector<int64_t>& scalars, void* err, void* pre, void* info);

}  // namespace tf::compiler::cuda
