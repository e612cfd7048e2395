// Kernel: one function of a sealed Module, bound to the backend that runs it.
// Immutable after compile, so any number of threads may describe and run one
// Kernel at once. It holds its Module, so releasing the module handle does
// not invalidate it.
//
// Backend selection: TF_BACKEND_NATIVE compiles through core/compiler; when
// the code generator does not handle the function (or no C++ compiler can be
// run) the Kernel runs on the reference evaluator and backend() says so;
// fallback_reason() says why. TF_BACKEND_CUDA compiles through
// core/compiler/cuda and never falls back: what the CUDA target does not
// compile, or a machine without the driver, fails the compile.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/compiler/compiler.h"
#include "core/compiler/cuda/cuda_function.h"
#include "core/ir/module.h"
#include "core/ir/shard.h"
#include "core/runtime/ndarray.h"
#include "core/sema/bind.h"
#include "core/spmd/segments.h"
#include "tilefoundry/tilefoundry.h"

namespace tf::capi {

// m's function `fn`; a kNotFound error naming it (and the nearest name in
// the module, when one is near) otherwise.
ir::FunctionPtr find_function(const ir::Module& m, const std::string& fn);

class Kernel;

// Which of a kernel's tensors an entry point names.
enum class Side { kInput, kOutput };
const char* side_name(Side side);  // "input" / "output"

// The type of tensor i of `side`; TF_ERR_INVALID_ARGUMENT ("<fn>: input
// index 4 out of range ('f' has 4 inputs)") when there is none.
const ir::TensorType& checked_tensor(const char* fn, const Kernel& k, Side side, size_t i);

class Kernel {
 public:
  // Throws Error(kNotFound) when m has no function fn, Error(kUnsupported)
  // when a parameter is not a tensor or a tensor's rank exceeds TF_MAX_NDIM.
  static std::shared_ptr<const Kernel> compile(ir::ModulePtr m, const std::string& fn,
                                               tf_backend requested);

  const std::string& name() const { return fn_->name(); }
  tf_backend backend() const { return backend_; }
  size_t num_inputs() const { return inputs_.size(); }
  size_t num_outputs() const { return outputs_.size(); }
  const std::string& input_name(size_t i) const { return fn_->params().at(i)->name(); }
  const ir::TensorType& input_type(size_t i) const { return *inputs_.at(i); }
  const ir::TensorType& output_type(size_t i) const { return *outputs_.at(i); }
  const ir::Function& function() const { return *fn_; }
  const ir::Module& module() const { return *module_; }
  // The device mesh of the function's types (spmd::function_mesh), found
  // once at compile; null for an unsharded function.
  const ir::MeshPtr& mesh() const { return mesh_; }
  // The compiled segments its ranks run between collectives (a device-mesh
  // kernel compiled for native code); null otherwise.
  const spmd::SegmentPlan* segments() const { return segments_.get(); }
  // The input whose buffer receives output i (an in-place result), or -1.
  int64_t output_alias(size_t i) const { return fn_->inplace_param(i); }
  bool has_aliases() const { return !fn_->inplace().empty(); }

  // Binds concrete inputs against the signature (count, dtype, rank, static
  // extents, DimVar ranges) and returns the outputs' concrete descriptions.
  // Throws Error(kInvalidArgument) naming the argument and axis. The result
  // is this thread's memo: valid until the thread binds other inputs.
  const std::vector<sema::ArgDesc>& output_descs(const std::vector<sema::ArgDesc>& inputs) const;

  // Computes the outputs into freshly allocated arrays; inputs are borrowed
  // and never written.
  std::vector<runtime::NDArray> run(const std::vector<runtime::NDArray>& inputs) const;

  // Computes straight into the caller's outputs when the kernel is native,
  // cannot fail at run time, every output is C-contiguous and none overlaps
  // an input (other than the one an in-place output is written in place of)
  // or another output, and native code writes every in-place output in
  // place (compiler/in_place.h); returns false (writing nothing) otherwise. `outputs` match output_descs already;
  // input_descs describe `inputs` (as passed to output_descs), so that the
  // hot path does not describe them again.
  bool run_into(const std::vector<sema::ArgDesc>& input_descs,
                const std::vector<runtime::NDArray>& inputs,
                const std::vector<runtime::NDArray>& outputs) const;

  // A TF_BACKEND_CUDA kernel's code; null for the other backends.
  const compiler::cuda::CudaFunction* cuda() const { return cuda_.get(); }
  // Runs a CUDA kernel: `inputs` and `outputs` are views of device memory
  // on `device`, checked like run_into's (outputs C-contiguous, disjoint
  // from the inputs but for an in-place output, which is its input).
  void run_cuda(const std::vector<sema::ArgDesc>& input_descs, const std::vector<runtime::NDArray>& inputs,
                const std::vector<runtime::NDArray>& outputs, int device, void* stream, void* workspace,
                uint64_t workspace_bytes) const;
  // Device workspace a CUDA run on these inputs needs; 0 on other backends.
  uint64_t workspace_bytes(const std::vector<sema::ArgDesc>& input_descs) const;

  // Why a native request runs on the evaluator; empty when it does not.
  const std::string& fallback_reason() const { return fallback_reason_; }

  // Binds precompiled code (AOT) instead of compiling; null native runs the
  // evaluator.
  static std::shared_ptr<const Kernel> with_native(ir::ModulePtr m, const std::string& fn,
                                                   std::shared_ptr<const compiler::CompiledFunction> native);

  Kernel(ir::ModulePtr m, ir::FunctionPtr fn, tf_backend backend,
         std::vector<ir::TensorTypePtr> inputs, std::vector<ir::TensorTypePtr> outputs)
      : id_(next_id()),
        module_(std::move(m)),
        fn_(std::move(fn)),
        backend_(backend),
        inputs_(std::move(inputs)),
        outputs_(std::move(outputs)) {}

 private:
  // The binding of the last inputs this thread bound on this kernel: one call
  // binds its inputs for output_desc, run and run_into alike (the torch op
  // calls all three), so the hot path binds once.
  struct Bound {
    uint64_t kernel_id = 0;
    std::vector<sema::ArgDesc> inputs;
    ir::DimBindings bindings;
    std::vector<sema::ArgDesc> outputs;
  };
  const Bound& bind(const std::vector<sema::ArgDesc>& inputs) const;
  static std::shared_ptr<const Kernel> compile_cuda(ir::ModulePtr m, ir::FunctionPtr f);
  static uint64_t next_id();

  uint64_t id_;  // unique for the process's life (a memo key that is never reused)
  ir::ModulePtr module_;
  ir::MeshPtr mesh_;
  ir::FunctionPtr fn_;
  tf_backend backend_;
  std::vector<ir::TensorTypePtr> inputs_;   // parameter types, in order
  std::vector<ir::TensorTypePtr> outputs_;  // tensor leaves of the return type
  std::shared_ptr<const compiler::CompiledFunction> native_;  // null: evaluator
  bool native_in_place_ = false;  // native_ writes every in-place output in place
  std::shared_ptr<const spmd::SegmentPlan> segments_;
  std::shared_ptr<const compiler::cuda::CudaFunction> cuda_;
  std::string fallback_reason_;
};

}  // namespace tf::capi
