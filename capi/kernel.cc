#include "capi/kernel.h"

#include "core/eval/evaluator.h"
#include "core/ir/error.h"

namespace tf::capi {
namespace {

using ir::ErrorKind;

void check_rank(const ir::TensorType& t, const std::string& what) {
  if (t.rank() > TF_MAX_NDIM) {
    ir::fail(ErrorKind::kUnsupported, what + " has rank " + std::to_string(t.rank()) +
                                          ", above TF_MAX_NDIM (" + std::to_string(TF_MAX_NDIM) +
                                          ")");
  }
}

std::vector<ir::TensorTypePtr> param_types(const ir::Function& fn) {
  std::vector<ir::TensorTypePtr> out;
  for (size_t i = 0; i < fn.params().size(); ++i) {
    const ir::VarPtr& p = fn.params()[i];
    auto t = std::dynamic_pointer_cast<const ir::TensorType>(p->type());
    std::string what =
        "parameter #" + std::to_string(i) + " (" + p->name() + ") of '" + fn.name() + "'";
    if (!t) ir::fail(ErrorKind::kUnsupported, what + " is not a tensor; kernels take tensors only");
    check_rank(*t, what);
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<ir::TensorTypePtr> result_types(const ir::Function& fn) {
  std::vector<ir::TensorTypePtr> out = ir::flatten_tensor_types(fn.return_type());
  for (size_t i = 0; i < out.size(); ++i) {
    check_rank(*out[i], "output #" + std::to_string(i) + " of '" + fn.name() + "'");
  }
  return out;
}

}  // namespace

std::shared_ptr<const Kernel> Kernel::compile(ir::ModulePtr m, const std::string& fn,
                                              tf_backend requested) {
  ir::FunctionPtr f = m->lookup(fn);
  if (!f) ir::fail(ErrorKind::kNotFound, "no function named '" + fn + "' in the module");
  (void)requested;  // no native compiler yet: every request runs on the evaluator
  return std::make_shared<const Kernel>(std::move(m), f, TF_BACKEND_EVALUATOR, param_types(*f),
                                        result_types(*f));
}

std::vector<sema::ArgDesc> Kernel::output_descs(const std::vector<sema::ArgDesc>& inputs) const {
  ir::DimBindings b = sema::bind_arguments(*fn_, inputs);
  std::vector<sema::ArgDesc> out = sema::output_descs(*fn_, b);
  TF_CHECK(out.size() == outputs_.size(), "output_descs disagrees with the return type");
  return out;
}

std::vector<runtime::NDArray> Kernel::run(const std::vector<runtime::NDArray>& inputs) const {
  std::vector<runtime::NDArray> out = eval::evaluate(*module_, *fn_, inputs);
  TF_CHECK(out.size() == outputs_.size(), "evaluator returned the wrong number of outputs");
  return out;
}

}  // namespace tf::capi
