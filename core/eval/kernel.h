// The evaluator's kernel table: one Kernel per registered op name (the
// ops::OpInfo::name, e.g. "Binary"). Each op family registers its kernels
// from one function in eval/kernels/<family>.cc, mirroring ops/registry.h.
#pragma once

#include <string>
#include <vector>

#include "core/ir/expr.h"
#include "core/runtime/ndarray.h"

namespace tf::eval {

// What a kernel sees: the Call (its op carries the attributes, its type the
// result type), the evaluated operands (borrowed, any strides, never written)
// and the DimVar values of the enclosing function's arguments.
struct KernelArgs {
  const ir::Call& call;
  const std::vector<runtime::NDArray>& inputs;
  const ir::DimBindings& bindings;

  template <typename OpT>
  const OpT& op() const { return static_cast<const OpT&>(*call.op()); }
  // The concrete result shape / dtype: the Call's TensorType under bindings.
  std::vector<int64_t> out_shape() const;
  ir::DType out_dtype() const;
  // The same for field i of a TupleType result (TopK, RoPE).
  std::vector<int64_t> out_shape(size_t field) const;
  ir::DType out_dtype(size_t field) const;
};

// Returns a fresh array that no operand aliases.
// A Tuple operand (concat's inputs, insert_slice's offsets) arrives
// flattened: its fields take consecutive places in `inputs`.
using Kernel = runtime::NDArray (*)(const KernelArgs& args);
// A kernel of an op whose result is a TupleType: one fresh array per field.
using TupleKernel = std::vector<runtime::NDArray> (*)(const KernelArgs& args);

class KernelTable {
 public:
  void add(std::string op_name, Kernel k);
  void add_tuple(std::string op_name, TupleKernel k);
  // Null when there is none.
  Kernel find(const std::string& op_name) const;
  TupleKernel find_tuple(const std::string& op_name) const;

 private:
  std::vector<std::pair<std::string, Kernel>> kernels_;
  std::vector<std::pair<std::string, TupleKernel>> tuple_kernels_;
};

const KernelTable& kernel_table();

void register_math_kernels(KernelTable& t);
void register_tensor_kernels(KernelTable& t);
void register_nn_kernels(KernelTable& t);
void register_shape_kernels(KernelTable& t);
void register_sharding_kernels(KernelTable& t);

}  // namespace tf::eval
