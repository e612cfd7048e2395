// Kernel: one function of a sealed Module, bound to the backend that runs it.
// Immutable after compile, so any number of threads may describe and run one
// Kernel at once. It holds its Module, so releasing the module handle does
// not invalidate it.
//
// Rationale: the native compiler does not exist yet, so every Kernel runs on
// the reference evaluator, and backend() says so even when the native
// backend was requested (ARCHITECTURE §7: "falls back ... and says so").
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/ir/module.h"
#include "core/runtime/ndarray.h"
#include "core/sema/bind.h"
#include "tilefoundry/tilefoundry.h"

namespace tf::capi {

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

  // Binds concrete inputs against the signature (count, dtype, rank, static
  // extents, DimVar ranges) and returns the outputs' concrete descriptions.
  // Throws Error(kInvalidArgument) naming the argument and axis.
  std::vector<sema::ArgDesc> output_descs(const std::vector<sema::ArgDesc>& inputs) const;

  // Computes the outputs into freshly allocated arrays; inputs are borrowed
  // and never written.
  std::vector<runtime::NDArray> run(const std::vector<runtime::NDArray>& inputs) const;

  Kernel(ir::ModulePtr m, ir::FunctionPtr fn, tf_backend backend,
         std::vector<ir::TensorTypePtr> inputs, std::vector<ir::TensorTypePtr> outputs)
      : module_(std::move(m)),
        fn_(std::move(fn)),
        backend_(backend),
        inputs_(std::move(inputs)),
        outputs_(std::move(outputs)) {}

 private:
  ir::ModulePtr module_;
  ir::FunctionPtr fn_;
  tf_backend backend_;
  std::vector<ir::TensorTypePtr> inputs_;   // parameter types, in order
  std::vector<ir::TensorTypePtr> outputs_;  // tensor leaves of the return type
};

}  // namespace tf::capi
