// One-pass variance. A LayerNorm written from means computes the variance
// as the mean of squared deviations from the row's mean,
//
//     d = x - mean(x, axes=-1)
//     v = mean(d * d, axes=-1)          (or d ** 2, square(d))
//
// which, taken literally, needs the row's mean before its first square: one
// pass over the row more than the built-in LayerNorm, whose moments come
// from one pass. Over f32 rows (their means accumulate in double) the
// compiler computes v the built-in's way, from the row's moments about its
// first element k = x[0] (0 when x[0] is infinite or NaN), in double, in
// the pass that computes the mean:
//
//     M1 = E[x - k],  M2 = E[(x - k)^2]
//     E[(x - m)^2] = M2 - 2 (m - k) M1 + (m - k)^2      for any m,
//
// with m the user's mean as computed (its f32 value, the one d subtracts).
// The mean's own double sum is then derived from the shifted one,
// sum(x) = sum(x - k) + n k (lower_loop_nest.cc: a sum with a shifted
// twin), so the pass accumulates what the built-in's does and no more.
// The identity is exact; in double its cancellation is bounded because k is
// one of the row's elements ((m - k)^2 <= n E[(x - m)^2] for a row of n), so
// the result is within n 2^-52 of the exact mean of squares, rounded once
// to f32. The literal form rounds every d and every d * d to f32 before its
// double sum; the two differ by about an ulp of the result, the one-pass
// form being the nearer to the exact value. NaN and infinities propagate as
// in the literal form; a mean over an empty row fails as before (the user's
// inner mean is still there and checked).
#pragma once

#include <unordered_set>
#include <vector>

#include "core/compiler/decompose.h"
#include "core/ir/expr.h"

namespace tf::compiler {

// `outputs` with every such mean of squared deviations over the last axis of
// an f32 value replaced by its one-pass form, up to the nodes of `stop`
// (values given to a segment, kept as they are); the nodes it builds that
// must not add run-time checks are noted in notes->unchecked.
std::vector<ir::ExprPtr> one_pass_variances(const std::vector<ir::ExprPtr>& outputs,
                                            const std::unordered_set<const ir::Expr*>& stop,
                                            DecompositionNotes* notes);

}  // namespace tf::compiler
