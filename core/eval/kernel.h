// The evaluator's kernel table: one Kernel per registered op name (the
// ops::OpInfo::name, e.g. "Binary") — the evaluator's part of an op's
// definition, attached the way every layer above ops attaches its part
// (ops::OpPartTable, core/ops/part_table.h). The built-in families register
// from one function each in eval/kernels/<family>.cc, mirroring
// ops/registry.h; register_kernel adds one at run time (an op defined
// outside core: a test, an embedding application), under the rule
// "register before use".
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/ir/expr.h"
#include "core/ops/part_table.h"
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

// A kernel is one of the two forms.
struct KernelEntry {
  Kernel kernel = nullptr;
  TupleKernel tuple_kernel = nullptr;
};

class KernelTable {
 public:
  // Error(kInvalidArgument) when op_name already has a kernel (of either form).
  void add(std::string op_name, Kernel k);
  void add_tuple(std::string op_name, TupleKernel k);
  // Null when there is none.
  Kernel find(std::string_view op_name) const;
  TupleKernel find_tuple(std::string_view op_name) const;
  // This table as a part of the completeness check (ops/completeness.h).
  ops::OpPart part() const { return entries_.part(); }

 private:
  ops::OpPartTable<KernelEntry> entries_{"an evaluator kernel"};
};

// The process's table, with the built-in kernels.
KernelTable& kernel_table();

// Attach the evaluator kernel of an op registered outside core.
void register_kernel(std::string op_name, Kernel k);
void register_tuple_kernel(std::string op_name, TupleKernel k);
// The evaluator's part, for ops::missing_parts.
ops::OpPart kernel_part();

void register_math_kernels(KernelTable& t);
void register_tensor_kernels(KernelTable& t);
void register_nn_kernels(KernelTable& t);
void register_shape_kernels(KernelTable& t);
void register_sharding_kernels(KernelTable& t);

}  // namespace tf::eval
