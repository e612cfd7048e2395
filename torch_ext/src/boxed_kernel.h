// The boxed CPU kernel behind every tilefoundry::<op> and its .out overload:
// views the input tensors zero-copy as DLTensors on the stack, takes the
// outputs (fresh ones, from the output pool, for <op>; the caller's, checked
// against the expected dtype and shape, for <op>.out), calls tf_kernel_run
// and pushes the outputs. The output descriptions are remembered per thread
// for the last input dtypes and shapes seen (tf_kernel_run re-checks them).
// Before each call the kernels' thread count is set to torch's intra-op
// count (at::get_num_threads). Failures throw c10::Error (RuntimeError in
// Python) naming the op and the argument. An in-place output is written into
// its input's own tensor, whose version counter the kernel then bumps. The
// same class serves the op's CUDA dispatch key (Device::kCuda).
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include <ATen/core/boxing/KernelFunction.h>
#include <ATen/core/stack.h>
#include <c10/util/SmallVector.h>
#include <tilefoundry/tilefoundry.h>

namespace tf::torch_ext {

// A call's tensors as DLPack views, on the stack for up to 8 of them.
using DLTensors = c10::SmallVector<DLTensor, 8>;

// The kernel a registration runs, with what each call needs of it. A
// registration's kernel is replaced as a whole (BoxedKernel::replace): a
// call loads the current one once, and a replaced one stays alive for the
// process, since a call on another thread may still be running it.
struct KernelRef {
  tf_kernel kernel;
  size_t n_in, n_out;
  uint64_t id;  // unique for the process's life: the key of the per-thread output memo
  // The signature's dtypes: a uint8 tensor crosses as an 8-bit float where
  // one is declared that torch has no dtype for (dtype_map.h).
  std::vector<DLDataType> in_dtypes, out_dtypes;
  // Per output, the input it is written in place of, or -1 (then it is
  // fresh, and pushed as a result).
  std::vector<int64_t> alias;
};

class BoxedKernel final : public c10::OperatorKernel {
 public:
  enum class Mode { kFunctional, kOut };
  // kCuda: the kernel behind the op's CUDA dispatch key (k compiled with
  // TF_BACKEND_CUDA): CUDA tensors of one device, outputs and workspace from
  // torch's CUDA caching allocator, launched on torch's current stream of
  // that device. Nothing is allocated outside torch's allocator and nothing
  // synchronizes (unless the function can fail at run time), so a CUDA
  // graph captures the call.
  enum class Device { kCpu, kCuda };
  // Takes its own reference on k (tf_kernel_retain); the caller keeps its own.
  // Throws c10::Error when the retain fails. `out_names` name the out=
  // arguments (kOut only), for messages.
  BoxedKernel(tf_kernel k, std::string op_name, Mode mode = Mode::kFunctional,
              std::vector<std::string> out_names = {}, Device device = Device::kCpu);
  ~BoxedKernel() override;
  BoxedKernel(const BoxedKernel&) = delete;
  BoxedKernel& operator=(const BoxedKernel&) = delete;

  void operator()(const c10::OperatorHandle& op, c10::DispatchKeySet keys,
                  torch::jit::Stack* stack);

  // Later calls run k (same numbers of inputs and outputs as the current
  // kernel: the schema is the same; the caller checks it). Takes its own
  // reference on k. Throws c10::Error when k cannot be described.
  void replace(tf_kernel k);

 private:
  void run_functional(const KernelRef& r, torch::jit::Stack* stack);
  void run_out(const KernelRef& r, torch::jit::Stack* stack);
  // tf_kernel_run, or on CUDA tf_kernel_run_with_options on the current
  // stream with a workspace from torch's allocator.
  void run(const KernelRef& r, const DLTensors& in, DLTensors& out);

  std::atomic<const KernelRef*> ref_;
  std::string op_name_;  // "tilefoundry::<name>" or "tilefoundry::<name>.out", for messages
  Mode mode_;
  std::vector<std::string> out_names_;
  Device device_;
};

}  // namespace tf::torch_ext
