// The sharding part of an op's definition (registry.h, OpInfo::shard): what
// the op does with ShardLayout operands (docs/sharding.md). It is data on the
// record, read by the typeinfer driver (shard_rules.h, infer_op_type), so an
// op's sharding behaviour is stated where the op is defined:
//
//  * fail_closed()   — deliberately no rule: any ShardLayout operand is
//                      rejected, with the fix (Reshard to Broadcast, local);
//  * shard_aware()   — the op's own typeinfer reads layouts (Reshard, Local);
//  * elementwise(c)  — the generic rule of a one-input elementwise op: the
//                      result keeps operand 0's layout, other operands must be
//                      replicated, and a Partial survives only when the
//                      function commutes with its reduction (traits c:
//                      linear ops commute with sum, monotone ones with max /
//                      min);
//  * rule(f)         — an op-specific rule function (MatMul, Reshape, ...;
//                      the library of them is shard_rules.h).
//
// A record that says none of these is incomplete (completeness.h); typing
// then fails closed, as for fail_closed().
#pragma once

#include <initializer_list>
#include <map>
#include <string>
#include <string_view>

#include "core/ir/shard.h"
#include "core/ops/type_ctx.h"

namespace tf::ops {

// rule(op, ctx over the real (sharded) operand types, result of the op's own
// typeinfer over the stripped types) -> the result type with its layout.
using ShardRuleFn = ir::TypePtr (*)(const ir::Op& op, const TypeCtx& ctx, const ir::TypePtr& result);

// Which Partial reductions an elementwise function provably commutes with,
// and the fact that says so: a rejection reads "<surface name> <reason>".
struct Commutes {
  bool sum = false, max = false, min = false;
  std::string reason;
  bool with(ir::Reduction r) const;
};

// The facts the built-in ops state. A linear function's note says what the
// general sentence leaves out (negation: "(negation reverses order)").
Commutes monotone();      // max / min: f(max(a, b)) = max(f(a), f(b)) for non-decreasing f
Commutes linear(const std::string& note = "");  // sum
Commutes not_monotone();  // none, known not to
Commutes unproven();      // none, not shown to
Commutes every_reduction();  // an exact conversion commutes with all of them

struct ShardSpec {
  enum class Kind : uint8_t { kUnset, kFailClosed, kShardAware, kElementwise, kRule };

  static ShardSpec fail_closed();
  static ShardSpec shard_aware();
  static ShardSpec elementwise(Commutes c);
  static ShardSpec rule(ShardRuleFn f);

  // A kinded op (Unary: one surface function per kind) states the traits of
  // some kinds apart from the rest, keyed by surface name.
  ShardSpec& except(std::initializer_list<const char*> surfaces, const Commutes& c);
  // The traits of an application spelled `surface`.
  const Commutes& commutes_for(std::string_view surface) const;

  Kind kind = Kind::kUnset;
  Commutes commutes;                                         // kElementwise
  std::map<std::string, Commutes, std::less<>> by_surface;  // kElementwise, kinded ops
  ShardRuleFn rule_fn = nullptr;                             // kRule
};

}  // namespace tf::ops
