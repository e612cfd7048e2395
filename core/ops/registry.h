// The op registry: one OpInfo per Op, keyed by the Op's class name.
// Each op family (math/, tensor/, nn/, ...) registers its ops from one
// function called below, explicitly — static initializers would be dropped
// from a static library. The evaluator keeps its kernels in its own table
// keyed by the same names (eval may not be a dependency of ops), and a test
// asserts the two tables cover each other.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/ops/type_ctx.h"

namespace tf::ops {

using TypeInferFn = ir::TypePtr (*)(const ir::Op& op, TypeCtx& ctx);

struct OpInfo {
  std::string name;                   // Op class name: "RMSNorm"
  std::string summary;                // one line
  std::vector<std::string> operands;  // operand names, in Call argument order
  TypeInferFn typeinfer;
};

// Null when no op has that name.
const OpInfo* find_op(std::string_view name);
// Every registered op, in registration order.
const std::vector<OpInfo>& all_ops();

class Registry {
 public:
  void add(OpInfo info) { ops_.push_back(std::move(info)); }
  const std::vector<OpInfo>& ops() const { return ops_; }

 private:
  std::vector<OpInfo> ops_;
};

// One per op family.
void register_math_ops(Registry& r);
void register_tensor_ops(Registry& r);
void register_nn_ops(Registry& r);
void register_shape_ops(Registry& r);
void register_sharding_ops(Registry& r);

}  // namespace tf::ops
