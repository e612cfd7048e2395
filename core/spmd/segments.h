// Native compute segments of a device-sharded function.
//
// Between the points where values cross ranks, a rank computes on its own
// shares alone: that code is an ordinary function over local types (each
// tensor's shape its share's, no layout), which the native compiler builds
// like any other. plan_segments cuts a function's body (and each loop body
// and called function in it) at those points and compiles the pieces; the
// executor (executor.h) runs a segment when one of its values is first
// needed, and the collectives, loops and calls between segments itself.
//
// Where values cross ranks (and so where a segment ends): Reshard, Local,
// a Reduce or Gather over a split axis, an op whose replicated operand
// meets a sharded result (the rank takes its block), a call to another
// function and a loop (both may hold collectives; their bodies have plans
// of their own). Each op node belongs to the segment of its *phase*: the
// number of such crossings on its longest path from the parameters (in a
// loop body: the induction variable and carried values). A segment then
// reads only parameters, crossings and earlier segments, so running it on
// demand never waits on itself.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/compiler/compiler.h"
#include "core/ir/expr.h"

namespace tf::spmd {

struct Segment {
  ir::FunctionPtr local;                    // over local types; returns `outputs` (a tuple when several)
  std::vector<ir::ExprPtr> inputs;          // the original values bound to local's parameters
  std::vector<ir::ExprPtr> outputs;         // the original values local returns
  std::shared_ptr<const compiler::CompiledFunction> code;
};

namespace detail {
class Planner;
}

class SegmentPlan {
 public:
  const std::vector<Segment>& segments() const { return segments_; }
  // The segment that computes e, or -1 when the executor computes e itself.
  int64_t owner(const ir::Expr* e) const {
    auto it = owner_.find(e);
    return it == owner_.end() ? -1 : it->second;
  }
  // The plan of a body this one runs: a loop's (per iteration; keyed by the
  // GridRegionExpr) or a called function's (keyed by the Function, each
  // variant of a dispatch prototype its own); null for none. Valid while
  // the plan plan_segments returned lives.
  const SegmentPlan* nested(const ir::Expr* scope) const;
  // A loop body's plan: the enclosing body's values the body reads, which
  // the executor computes once before the first iteration (not once per
  // iteration, collectives included).
  const std::vector<ir::ExprPtr>& captures() const { return captures_; }
  // Segments the compiler did not take, in this body or any it reaches
  // (their ops run on the evaluator's kernels), each with the reason;
  // empty when all compiled. Set on the plan plan_segments returns.
  const std::string& fallback_reason() const { return fallback_reason_; }

  using Nested = std::unordered_map<const ir::Expr*, std::shared_ptr<const SegmentPlan>>;

 private:
  friend class detail::Planner;
  friend std::shared_ptr<const SegmentPlan> plan_segments(const ir::Function& fn);
  std::vector<Segment> segments_;
  std::unordered_map<const ir::Expr*, int64_t> owner_;
  std::vector<ir::ExprPtr> captures_;
  // Every plan of one function reads one map, which the top-level plan owns
  // (a nested plan owning it too would be a reference cycle).
  std::shared_ptr<Nested> nested_owner_;
  const Nested* nested_ = nullptr;
  std::string fallback_reason_;
};

// The enclosing body's values that the loop's body reads (what a loop
// body's plan lists as captures()), without compiling anything.
std::vector<ir::ExprPtr> loop_captures(const ir::GridRegionExpr& g);

// The compiled segments of fn's body, of every loop body in it and of every
// function it calls. A segment that does not compile (no compiler can be
// run, or the code generator does not take one of its constructs) is left
// to the evaluator and named in fallback_reason().
std::shared_ptr<const SegmentPlan> plan_segments(const ir::Function& fn);

}  // namespace tf::spmd
