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

std::vector<int64_t> KernelArgs::out_shape(size_t field) const {
  const ir::TupleType* t = ir::as_tuple(call.type());
  TF_CHECK(t && field < t->fields().size(), "a tuple kernel's Call has a TupleType");
  const ir::TensorType* f = ir::as_tensor(t->fields()[field]);
  TF_CHECK(f, "a tuple kernel's result fields are tensors");
  std::vector<int64_t> shape;
  for (const ir::ShapeDim& d : f->shape()) shape.push_back(d.evaluate(bindings));
  return shape;
}

ir::DType KernelArgs::out_dtype(size_t field) const {
  const ir::TupleType* t = ir::as_tuple(call.type());
  TF_CHECK(t && field < t->fields().size(), "a tuple kernel's Call has a TupleType");
  const ir::TensorType* f = ir::as_tensor(t->fields()[field]);
  TF_CHECK(f, "a tuple kernel's result fields are tensors");
  return f->dtype();
}

void KernelTable::add(std::string op_name, Kernel k) { entries_.add(std::move(op_name), {k, nullptr}); }

void KernelTable::add_tuple(std::string op_name, TupleKernel k) { entries_.add(std::move(op_name), {nullptr, k}); }

Kernel KernelTable::find(std::string_view op_name) const {
  const KernelEntry* e = entries_.find(op_name);
  return e ? e->kernel : nullptr;
}

TupleKernel KernelTable::find_tuple(std::string_view op_name) const {
  const KernelEntry* e = entries_.find(op_name);
  return e ? e->tuple_kernel : nullptr;
}

KernelTable& kernel_table() {
  static KernelTable t;
  static const bool builtins = [] {
    register_math_kernels(t);
    register_tensor_kernels(t);
    register_nn_kernels(t);
    register_shape_kernels(t);
    register_sharding_kernels(t);
    return true;
  }();
  (void)builtins;
  return t;
}

void register_kernel(std::string op_name, Kernel k) { kernel_table().add(std::move(op_name), k); }

void register_tuple_kernel(std::string op_name, TupleKernel k) { kernel_table().add_tuple(std::move(op_name), k); }

ops::OpPart kernel_part() { return kernel_table().part(); }

bool has_kernel(const std::string& op_name) {
  return kernel_table().find(op_name) != nullptr || kernel_table().find_tuple(op_name) != nullptr;
}

}  // namespace tf::eval
