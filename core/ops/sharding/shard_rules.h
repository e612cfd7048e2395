// Sharding rules (docs/sharding.md): the driver that applies an op's
// sharding statement (its record's ShardSpec, sharding/shard_spec.h), and the
// library of op-specific rules the built-in records name — when a
// Partial(reduction) operand commutes with the op, and the Reduce / Reshape /
// Gather / TopK layout rules.
//
// Contract with the typeinfer driver (sema::make_op_call): when some operand
// carries a ShardLayout, the op's own typeinfer runs on the operand types with
// their ShardLayouts stripped (so it types the logical values), and the op's
// sharding statement then decides the result layout from the real operand
// types — or rejects. An op with no rule (ShardSpec::fail_closed, or nothing
// stated) rejects every ShardLayout operand (fail closed), naming the operand
// and suggesting an explicit Reshard to Broadcast. The sharding ops
// themselves (Reshard, Local) are shard-aware: their typeinfer sees the real
// types and no rule applies.
#pragma once

#include <vector>

#include "core/ops/registry.h"

namespace tf::ops {

// The op-specific rules, as values a record names (ShardSpec::rule).
namespace shard_rules {
extern const ShardRuleFn binary;        // Binary: per-kind Partial algebra, Split alignment
extern const ShardRuleFn where;         // Where: Binary's alignment over three operands, no Partial
extern const ShardRuleFn cast;          // Cast: the Partials its conversion commutes with
extern const ShardRuleFn reduce;        // Reduce over Split / Partial axes
extern const ShardRuleFn matmul;        // MatMul: M / N / K splits, Partial(sum)
extern const ShardRuleFn normalize;     // SoftMax / LayerNorm / RMSNorm: no Partial, no Split on the axis
extern const ShardRuleFn gather;
extern const ShardRuleFn topk;
extern const ShardRuleFn reshape;       // a view over the layout positions, or one Split-divide
extern const ShardRuleFn insert_slice;
extern const ShardRuleFn cache_update;
extern const ShardRuleFn cache_scatter;
extern const ShardRuleFn rope;
extern const ShardRuleFn conv2d;
}  // namespace shard_rules

// Whether an op's replicated operands (unsharded, or Broadcast on every
// mesh axis) broadcast against its result, aligned on trailing axes, as in
// elementwise ops, Binary, Where and the normalizations' weights: an
// instance computing its block of a sharded result then reads the same
// block of them. (MatMul, RoPE, Gather ... read their replicated operands
// whole.)
bool aligns_replicated_operands(const ShardSpec& spec);

// The driver's entry: types one op application, applying the contract above.
ir::TypePtr infer_op_type(const OpInfo& info, const ir::Op& op, std::vector<ir::TypePtr> types,
                          const ir::Span& span);

}  // namespace tf::ops
