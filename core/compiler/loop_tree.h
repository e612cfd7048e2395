// The shape of a function with GridRegionExpr loops (docs/ir.md, Loops), as
// both targets run it: host-driven steps over compiled straight-line
// segments. The CPU plan (loop_plan.h) and the CUDA plan
// (cuda/cuda_loop_plan.h) compile the same segments for their target and
// walk the same tree with run_scope; only where arrays live and how a
// segment runs differ (the Exec a walk is given).
//
// A scope (the function body, a loop's init values, a loop's body) is cut at
// its loops: each loop is one step; whatever the scope still has to compute
// after its loops is one segment. A loop step resolves start / extent / step
// on the host (scalars.h: the evaluator's messages, before anything runs),
// computes its init values, then runs its body scope once per iteration
// with the induction variable bound both as an i64 scalar value and as the
// DimVar of the same name (so x[:, i] resolves its window per iteration,
// with the evaluator's error). Carried values live in two loop-carried
// buffers per carry, written alternately (a body segment's outputs are
// disjoint from its inputs), so an iteration allocates no carry and the
// init values, possibly the caller's inputs, are never written. A carry
// yielded by an InsertSlice / CacheUpdate of itself, and read by nothing
// else, has one buffer: the first iteration copies the init value into it,
// later ones write only the window (codegen.h).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "core/compiler/scalars.h"
#include "core/ir/expr.h"
#include "core/runtime/ndarray.h"

namespace tf::compiler::loops {

// A value of a scope: a node, or projection #k of a multi-carry loop (-1: the node itself).
using Reg = std::pair<const ir::Expr*, int64_t>;
using Regs = std::map<Reg, runtime::NDArray>;

// One straight-line piece: `inputs` are given (read from `reads`), `roots`
// are computed, of `types`.
struct Segment {
  size_t id;  // 0, 1, ... in the order the tree was built: the index of its compiled form
  std::vector<ir::ExprPtr> inputs, roots;
  std::vector<Reg> reads;  // one per input
  std::vector<ir::TensorTypePtr> types;
};

struct Scope;

struct Loop {
  const ir::GridRegionExpr* node;
  std::vector<RuntimeScalar> bounds;  // start, extent, step
  std::shared_ptr<Scope> init, body;
  std::vector<ir::TensorTypePtr> carried;
  // Carry k is yielded by an InsertSlice / CacheUpdate of carry k itself,
  // its only reader: one buffer, written in place from the second iteration.
  std::vector<bool> in_place;
};

// Steps in order; `final` computes the roots, unless every root is given
// (then `given` names them and nothing runs).
struct Scope {
  std::vector<Loop> loops;
  std::optional<Segment> final;
  std::vector<Reg> given;
};

struct Tree {
  std::shared_ptr<Scope> top;
  std::vector<const ir::Expr*> params;
  size_t segments = 0;
};

struct TreeOptions {
  // Every loop body ends in a segment that writes the yields into the
  // loop's buffers, even where a yield is a value the body already has (a
  // carry, an inner loop's result, the induction variable): a target whose
  // scopes reuse their memory from one iteration to the next (CUDA's
  // workspace) then never carries a value that the next iteration
  // overwrites.
  bool body_ends_in_segment = false;
};

// Whether e reaches a GridRegionExpr.
bool contains_loop(const ir::ExprPtr& e);

// Throws Error(kUnsupported) for what is not run this way (a prototype, a
// free variable, a non-tensor loop value).
Tree build_tree(const ir::Function& fn, TreeOptions options = {});

// Calls f for every segment of the tree, in id order.
void for_each_segment(const Tree& t, const std::function<void(const Segment&)>& f);

// A walk's target side. Exec provides:
//   std::vector<NDArray> fresh(const void* site, int part, types, bindings)
//     arrays of `types` for a value the walk stores at this place of the
//     tree (a scope's roots: (scope, 0); loop buffers: (loop, 1 / 2));
//   NDArray induction(const Loop&, int64_t value)  the induction variable
//     as a 0-d i64 array, valid until the next iteration;
//   void run(const Segment&, in, out, bindings)
//   void carried_in_place()  a body run wrote a carry in its own buffer.
// Returns the roots' values; the scope's segment writes into *outs when
// given (fresh arrays otherwise).
template <class Exec>
std::vector<runtime::NDArray> run_scope(const Scope& s, Regs regs, const ir::DimBindings& b,
                                        const std::vector<runtime::NDArray>* outs, Exec& x);

// The loop's carries after its last iteration (the init values when it has none).
template <class Exec>
std::vector<runtime::NDArray> run_loop(const Loop& l, const Regs& regs, const ir::DimBindings& b, Exec& x) {
  const auto& f = l.node->fields();
  const int64_t start = resolve_scalar(l.bounds[0], b), stop = resolve_scalar(l.bounds[1], b),
                step = resolve_scalar(l.bounds[2], b);
  std::vector<runtime::NDArray> carry = run_scope(*l.init, regs, b, nullptr, x);
  if (start >= stop) return carry;
  // Iteration n writes buf[n % 2] and reads the other, except that an
  // in-place carry always writes buf[0] (so from the second iteration on
  // it reads and writes the same buffer).
  const std::vector<runtime::NDArray> buf[2] = {x.fresh(&l, 1, l.carried, b), x.fresh(&l, 2, l.carried, b)};
  std::vector<runtime::NDArray> outs;
  ir::DimBindings ib = b;
  Regs body = regs;
  for (int64_t i = start, n = 0; i < stop; i += step, ++n) {
    ib[f.induction_var->name()] = i;
    body[{f.induction_var.get(), -1}] = x.induction(l, i);
    for (size_t k = 0; k < carry.size(); ++k) body[{f.carried_args[k].get(), -1}] = carry[k];
    outs = buf[n % 2];
    for (size_t k = 0; k < carry.size(); ++k) {
      if (!l.in_place[k]) continue;
      outs[k] = buf[0][k];
      if (carry[k].data() == outs[k].data()) x.carried_in_place();
    }
    carry = run_scope(*l.body, body, ib, &outs, x);
  }
  return carry;
}

template <class Exec>
std::vector<runtime::NDArray> run_scope(const Scope& s, Regs regs, const ir::DimBindings& b,
                                        const std::vector<runtime::NDArray>* outs, Exec& x) {
  for (const Loop& l : s.loops) {
    std::vector<runtime::NDArray> c = run_loop(l, regs, b, x);
    if (c.size() == 1) regs[{l.node, -1}] = c[0];
    for (size_t k = 0; k < c.size(); ++k) regs[{l.node, static_cast<int64_t>(k)}] = c[k];
  }
  std::vector<runtime::NDArray> result;
  if (!s.final) {
    for (const Reg& r : s.given) result.push_back(regs.at(r));
    return result;
  }
  result = outs ? *outs : x.fresh(&s, 0, s.final->types, b);
  std::vector<runtime::NDArray> in;
  for (const Reg& r : s.final->reads) in.push_back(regs.at(r));
  x.run(*s.final, in, result, b);
  return result;
}

// Runs the tree's top scope on the function's inputs into its outputs.
template <class Exec>
void run_tree(const Tree& t, const std::vector<runtime::NDArray>& inputs, const std::vector<runtime::NDArray>& outputs,
              const ir::DimBindings& b, Exec& x) {
  Regs regs;
  for (size_t i = 0; i < t.params.size(); ++i) regs[{t.params[i], -1}] = inputs.at(i);
  run_scope(*t.top, regs, b, &outputs, x);
}

}  // namespace tf::compiler::loops
