// Functions with GridRegionExpr loops (docs/ir.md, Loops): a host-driven plan of
// compiled straight-line segments (codegen.h generate_segment) and loops.
//
// A scope (the function body, a loop's init values, a loop's body) is cut at
// its loops: each loop is one step; whatever the scope still has to compute
// after its loops is one compiled segment. A loop step resolves start /
// extent / step on the host (scalars.h: the evaluator's messages, before
// anything runs), computes its init values, then runs its body scope once
// per iteration with the induction variable bound both as an i64 scalar
// value and as the DimVar of the same name (so x[:, i] resolves its window
// per iteration, with the evaluator's error). Carried values live in two
// loop-carried buffers per carry, written alternately (a body segment's
// outputs are disjoint from its inputs), so an iteration allocates no carry
// and the init values, possibly the caller's inputs, are never written. A
// carry yielded by an InsertSlice / CacheUpdate of itself, and read by
// nothing else, has one buffer: the first iteration copies the init value
// into it, later ones write only the window (codegen.h).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/compiler/codegen.h"
#include "core/compiler/compiler.h"

namespace tf::compiler {

struct LoopPlan;

// Compiles one segment (the caller caches it like a function).
using SegmentCompiler = std::function<std::shared_ptr<const CompiledFunction>(const Program&, const std::string&)>;

// Whether e reaches a GridRegionExpr.
bool contains_loop(const ir::ExprPtr& e);

// Sees each segment's given nodes and roots before it is generated: another
// target's code generator (the CUDA compile check) lowers the same pieces.
using SegmentObserver =
    std::function<void(const std::vector<ir::ExprPtr>& inputs, const std::vector<ir::ExprPtr>& roots)>;

// Throws Error(kUnsupported) when a segment is not compiled.
std::shared_ptr<const LoopPlan> build_loop_plan(const ir::Function& fn, const SegmentCompiler& compile_segment,
                                                const SegmentObserver& observe = nullptr);

// CompiledFunction::run's contract.
void run_loop_plan(const LoopPlan& plan, const std::vector<runtime::NDArray>& inputs,
                   const std::vector<runtime::NDArray>& outputs, const ir::DimBindings& bindings);

// How many body runs in this process wrote a loop carry in place (the
// segment's input and output buffer for it were the same); tests use it.
int64_t loop_carry_in_place_runs();

// The plan's segments' keys joined, and whether any can fail.
std::string loop_plan_key(const LoopPlan& plan);
bool loop_plan_may_fail(const LoopPlan& plan);

}  // namespace tf::compiler
