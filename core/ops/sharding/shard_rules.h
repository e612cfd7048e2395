// Per-op sharding rules (docs/sharding.md): when a Partial(reduction) operand
// commutes with the op, and the Reduce / Reshape / Gather / TopK layout
// rules. One table keyed by the op registry name.
//
// Contract with the typeinfer driver (sema::make_op_call): when some operand
// carries a ShardLayout, the op's own typeinfer runs on the operand types with
// their ShardLayouts stripped (so it types the logical values), and the op's
// shard rule then decides the result layout from the real operand types — or
// rejects. An op with no rule rejects every ShardLayout operand (fail closed),
// naming the operand and suggesting an explicit Reshard to Broadcast. The
// sharding ops themselves (Reshard, Local) are shard-aware: their typeinfer
// sees the real types and no rule applies.
#pragma once

#include <string_view>
#include <vector>

#include "core/ops/registry.h"

namespace tf::ops {

// rule(op, ctx over the real (sharded) operand types, result of the op's own
// typeinfer over the stripped types) -> the result type with its layout.
using ShardRuleFn = ir::TypePtr (*)(const ir::Op& op, const TypeCtx& ctx, const ir::TypePtr& result);

// Null when the op has no rule.
ShardRuleFn find_shard_rule(std::string_view op_name);
// True for the ops whose own typeinfer handles ShardLayouts (Reshard, Local).
bool is_shard_aware(std::string_view op_name);

// The driver's entry: types one op application, applying the contract above.
ir::TypePtr infer_op_type(const OpInfo& info, const ir::Op& op, std::vector<ir::TypePtr> types,
                          const ir::Span& span);

}  // namespace tf::ops
