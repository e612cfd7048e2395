#include "core/eval/kernel.h"

#include "core/eval/evaluator.h"
#include "core/ir/error.h"

namespace tf::eval {

std::vector<int64_t> KernelArgs::out_shape() const {
  const ir::TensorType* t = ir::as_tensor(call.type());
  TF_CHECK(t, "an op Call evaluated by a kernel has a TensorType");
  std::vector<int64_t> shape;
  for (const ir::ShapeDim& d : t->shape()) shape.push_back(d.evaluate(bindings));
  return shape;
}

ir::DType KernelArgs::out_dtype() const {
  const ir::TensorType* t = ir::as_tensor(call.type());
  TF_CHECK(t, "an op Call evaluated by a kernel has a TensorType");
  return t->dtype();
}

void KernelTable::add(std::string op_name, Kernel k) { kernels_.emplace_back(std::move(op_name), k); }

Kernel KernelTable::find(const std::string& op_name) const {
  for (const auto& [name, k] : kernels_)
    if (name == op_name) return k;
  return nullptr;
}

const KernelTable& kernel_table() {
  static const KernelTable table = [] {
    KernelTable t;
    register_math_kernels(t);
    register_tensor_kernels(t);
    register_nn_kernels(t);
    return t;
  }();
  return table;
}

bool has_kernel(const std::string& op_name) { return kernel_table().find(op_name) != nullptr; }

}  // namespace tf::eval
