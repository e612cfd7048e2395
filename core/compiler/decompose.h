// Decompositions: built-in ops the native compiler lowers as the
// composition of elementary ops that computes them, with the built-in's
// rounding points written as casts. RMSNorm, LayerNorm and SoftMax over the
// last axis become reductions read back along their rows, elementwise ops
// and views, so a built-in and a user's composition of the same math go
// through one code path (lower_loop_nest.h) and run at one speed.
//
// The ops keep their place everywhere else (typing, sharding rules, the
// evaluator): a decomposition is the compiler's part of an op's
// definition, registered per op name like a scalar lowering.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <unordered_set>

#include "core/ir/expr.h"
#include "core/ops/completeness.h"

namespace tf::compiler {

// What a decomposition says about the nodes it builds, where the built-in's
// behaviour differs from the elementary op's.
struct DecompositionNotes {
  // Run-time checks that are not the built-in's: a mean over an empty row
  // (RMSNorm of a zero-length row is an empty result, not an error) and a
  // slice window (LayerNorm's shift, the row's first element).
  std::unordered_set<const ir::Expr*> unchecked;
  // Sums that accumulate in their compute type, as the built-in (SoftMax's
  // sum of exponentials in float, as torch's CPU kernel), not in double.
  std::unordered_set<const ir::Expr*> compute_type_sums;
  // Values that are never infinite or NaN (a shift the compiler chose for a
  // row's moments): a row sum of e beside a sum of e minus such a value is
  // derived from it (lower_loop_nest.h).
  std::unordered_set<const ir::Expr*> finite;
};

// The composition computing call c (its operands already decomposed),
// noting what it must about the nodes it builds. Returns null when it does
// not apply (the op is then compiled as it is).
using Decomposition = std::function<ir::ExprPtr(const ir::Call& c, DecompositionNotes* notes)>;

// Null when the op has none.
const Decomposition* find_decomposition(std::string_view op_name);
void register_decomposition(std::string op_name, Decomposition d);
// The table as a part of the ops' completeness check (completeness.h).
ops::OpPart decomposition_part();

// `body` with every call that has a decomposition replaced by it, up to the
// nodes of `stop` (values given to a segment: kept as they are).
ir::ExprPtr decompose(const ir::ExprPtr& body, const std::unordered_set<const ir::Expr*>& stop,
                      DecompositionNotes* notes);

}  // namespace tf::compiler
