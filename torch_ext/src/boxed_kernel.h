// The boxed CPU kernel behind every tilefoundry::<op> and its .out overload:
// views the input tensors zero-copy as DLTensors on the stack, takes the
// outputs (fresh ones, from the output pool, for <op>; the caller's, checked
// against the expected dtype and shape, for <op>.out), calls tf_kernel_run
// and pushes the outputs. The output descriptions are remembered per thread
// for the last input dtypes and shapes seen (tf_kernel_run re-checks them).
// Before each call the kernels' thread count is set to torch's intra-op
// count (at::get_num_threads). Failures throw c10::Error (RuntimeError in
// Python) naming the op and the argument.
#pragma once

#include <string>
#include <vector>

#include <ATen/core/boxing/KernelFunction.h>
#include <ATen/core/stack.h>
#include <tilefoundry/tilefoundry.h>

namespace tf::torch_ext {

class BoxedKernel final : public c10::OperatorKernel {
 public:
  enum class Mode { kFunctional, kOut };
  // Takes its own reference on k (tf_kernel_retain); the caller keeps its own.
  // Throws c10::Error when the retain fails. `out_names` name the out=
  // arguments (kOut only), for messages.
  BoxedKernel(tf_kernel k, std::string op_name, Mode mode = Mode::kFunctional,
              std::vector<std::string> out_names = {});
  ~BoxedKernel() override;
  BoxedKernel(const BoxedKernel&) = delete;
  BoxedKernel& operator=(const BoxedKernel&) = delete;

  void operator()(const c10::OperatorHandle& op, c10::DispatchKeySet keys,
                  torch::jit::Stack* stack);

 private:
  void run_functional(torch::jit::Stack* stack);
  void run_out(torch::jit::Stack* stack);

  tf_kernel kernel_;
  std::string op_name_;  // "tilefoundry::<name>" or "tilefoundry::<name>.out", for messages
  Mode mode_;
  std::vector<std::string> out_names_;
  size_t n_in_ = 0;
  size_t n_out_ = 0;
  uint64_t id_;  // unique for the process's life: the key of the per-thread output memo
};

}  // namespace tf::torch_ext
