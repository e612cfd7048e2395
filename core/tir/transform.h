// Passes over TIR that every target shares.
#pragma once

#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/tir/stmt.h"

namespace tf::tir {

using VarMap = std::unordered_map<const Var*, ExprPtr>;

// s with every use of a key variable replaced by its value, folding what
// becomes constant (op.h's builders).
StmtPtr substitute(const StmtPtr& s, const VarMap& values);
ExprPtr substitute(const ExprPtr& e, const VarMap& values);

// `if (cond) s[values] else s`: a copy of s for the case where cond holds
// and the variables have these values (Halide's specialize), e.g. unit
// inner strides as constants, which a C compiler vectorizes without gathers.
StmtPtr specialize(const StmtPtr& s, const ExprPtr& cond, const VarMap& values);

// Every parallel For with a min_work condition becomes
// `if (min_work && threads > 1) <parallel For> else <the same loop,
// serial>`, `threads` being the team size the call would get. Rationale:
// OpenMP's own `if` clause still builds a team when false, and a team of
// one is built too; either costs more than a small kernel's whole work,
// and the plain branch skips the threading runtime entirely.
StmtPtr split_parallel_threshold(const StmtPtr& s, const ExprPtr& threads);

// Loop unswitching: a parallel For whose body branches on boolean variables
// bound outside it (a stage's unit-stride flag `fast`, its streaming flag
// `nt`) becomes one copy of the loop per value of the first two of them,
// each copy with those branches resolved: `if (fast) <For: the then-cases>
// else <For: the else-cases>`. Rationale: the branches sat inside each row
// (lowering places them at the leaf loops they choose between), and every
// path stayed live in one outlined OpenMP body, so the C compiler kept the
// row's pointers in stack slots; a composed RoPE (two half-row pieces,
// four variants of each) ran 7% slower than the same loops alone. The
// number of innermost loops does not change, only their scaffolding is
// copied.
StmtPtr unswitch_parallel_loops(const StmtPtr& s);

// Hoists out of every vectorized For the subexpressions that do not change
// across its iterations and cost something (they contain a pure call:
// 1 / sqrt(var + eps) in a normalization's store loop): each becomes a
// LetStmt before the loop. Loads stay (the loop may store to memory they
// read), and so do extern calls. Rationale: a C compiler may not hoist a
// libm call that can set errno, and a call it keeps in the loop can stop
// the loop from vectorizing. A hoisted float value then also leaves every
// serial loop around it whose variables it does not read (a streamed
// store's loop over lines), wherever it sits in that loop's body.
StmtPtr hoist_loop_invariants(const StmtPtr& s);

// A pure call computed more than once in one iteration of a vectorized For
// (the exp a softmax pass both stores and sums) is computed once: a
// LetStmt at the top of the body binds it. Only calls whose operands do
// not change within the iteration: no variable the body binds or assigns,
// no load through a buffer the body stores to. Rationale: GCC does not
// merge two inlined copies of a call that moves bits through memcpy (the
// float exp), and the second copy doubled softmax's sum pass.
StmtPtr bind_common_calls(const StmtPtr& s);

// Drops every LetStmt whose variable nothing reads and whose value calls
// no extern routine (repeated: a value read only by a dropped binding goes
// too). Rationale: lowering binds what a stage may need before it knows
// which path reads it (a streaming flag where the store is one whole-row
// routine call); the printed C++ and TIR then say only what runs.
StmtPtr remove_unused_lets(const StmtPtr& s);

// What a statement writes anywhere inside it: the variables it binds (For,
// LetStmt, Allocate) or assigns, and the buffers it stores to.
struct Writes {
  std::unordered_set<const Var*> vars, buffers;
};
Writes writes_of(const StmtPtr& s);

// Whether e reads none of `vars` and loads through none of `stored`: its
// value does not change where those are the variables assigned and the
// buffers written.
bool independent_of(const ExprPtr& e, const std::unordered_set<const Var*>& vars,
                    const std::unordered_set<const Var*>& stored);

}  // namespace tf::tir
