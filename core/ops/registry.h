// The op registry: one record (OpInfo) per Op, keyed by the Op's class name.
// The record is the op's whole definition in the ops layer — summary,
// operands, attributes, DSL surface functions, typeinfer and sharding — and
// every lookup reads it: find_surface (surface.h), the typeinfer driver and
// its shard rules (sharding/shard_rules.h). Layers above attach their own
// per-op parts under the same name (the evaluator's kernels, the native
// compiler's lowerings; ops may not depend on them), and the completeness
// check (completeness.h) asserts that every registered op has every part.
//
// The built-in families register from one function each, called explicitly
// the first time the registry is used (static initializers would be dropped
// from a static library). register_op adds an op at run time — a test, an
// embedding application — under the rule "register before use": additions
// are thread-safe with each other and with lookups, and a record, once
// added, never changes or goes away.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "core/ops/sharding/shard_spec.h"
#include "core/ops/surface.h"
#include "core/ops/type_ctx.h"

namespace tf::ops {

using TypeInferFn = ir::TypePtr (*)(const ir::Op& op, TypeCtx& ctx);

struct OpInfo {
  std::string name;                   // Op class name: "RMSNorm"
  std::string summary;                // one line
  std::vector<std::string> operands;  // operand names, in Call argument order
  std::vector<std::string> attrs;     // attribute names, in Op::attrs() order
  // The DSL functions that build this op (the parser resolves calls through
  // them). An op the DSL spells some other way leaves this empty and says
  // how in surface_elsewhere, so a deliberate absence is not a forgotten one.
  std::vector<SurfaceFn> surfaces;
  std::string surface_elsewhere;
  TypeInferFn typeinfer = nullptr;
  ShardSpec shard;
};

using OpList = std::vector<std::reference_wrapper<const OpInfo>>;

// Null when no op has that name.
const OpInfo* find_op(std::string_view name);
// Every registered op, in registration order (built-ins first). A snapshot:
// an op registered later is not in it.
OpList all_ops();
// Adds an op. Error(kInvalidArgument) when its name or one of its surface
// names is taken, or a surface function has no builder; nothing is added then.
void register_op(OpInfo info);

// The table behind the functions above. The built-in families fill the
// process's one instance through add(), as register_op does.
class Registry {
 public:
  void add(OpInfo info);
  const OpInfo* find(std::string_view name) const;
  const SurfaceFn* find_surface(std::string_view name) const;
  OpList ops() const;
  std::vector<std::reference_wrapper<const SurfaceFn>> surfaces() const;

 private:
  // Why a record cannot be added; "" when it can. Called with mu_ held.
  std::string refusal(const OpInfo& info) const;

  mutable std::shared_mutex mu_;
  std::deque<OpInfo> ops_;  // a deque: records never move once added
  std::map<std::string, const OpInfo*, std::less<>> by_name_;
  struct Surface {
    const OpInfo* op;
    const SurfaceFn* fn;
  };
  std::map<std::string, Surface, std::less<>> by_surface_;
};

// The process's registry, with the built-in ops.
Registry& registry();

// One per built-in op family.
void register_math_ops(Registry& r);
void register_tensor_ops(Registry& r);
void register_nn_ops(Registry& r);
void register_shape_ops(Registry& r);
void register_sharding_ops(Registry& r);

}  // namespace tf::ops
