// The boxed CPU kernel behind every tilefoundry::<op>: pops the input
// tensors, views them zero-copy as DLTensors on the stack, allocates the
// outputs from tf_kernel_output_desc, calls tf_kernel_run and pushes the
// outputs. The output descriptions are remembered per thread for the last
// input dtypes and shapes seen (tf_kernel_run re-checks them). Failures throw c10::Error (RuntimeError in Python) carrying the
// status name and tf_last_error().
#pragma once

#include <string>

#include <ATen/core/boxing/KernelFunction.h>
#include <ATen/core/stack.h>
#include <tilefoundry/tilefoundry.h>

namespace tf::torch_ext {

class BoxedKernel final : public c10::OperatorKernel {
 public:
  // Takes its own reference on k (tf_kernel_retain); the caller keeps its own.
  // Throws c10::Error when the retain fails.
  BoxedKernel(tf_kernel k, std::string op_name);
  ~BoxedKernel() override;
  BoxedKernel(const BoxedKernel&) = delete;
  BoxedKernel& operator=(const BoxedKernel&) = delete;

  void operator()(const c10::OperatorHandle& op, c10::DispatchKeySet keys,
                  torch::jit::Stack* stack);

 private:
  tf_kernel kernel_;
  std::string op_name_;  // "tilefoundry::<name>", for messages
  size_t n_in_ = 0;
  size_t n_out_ = 0;
  uint64_t id_;  // unique for the process's life: the key of the per-thread output memo
};

}  // namespace tf::torch_ext
