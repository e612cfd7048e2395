// Functions with GridRegionExpr loops on the CPU: the loop tree
// (loop_tree.h) with each segment compiled to native code
// (codegen.h generate_segment), run on host memory.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/compiler/codegen.h"
#include "core/compiler/compiler.h"
#include "core/compiler/loop_tree.h"

namespace tf::compiler {

struct LoopPlan;

// Compiles one segment (the caller caches it like a function).
using SegmentCompiler = std::function<std::shared_ptr<const CompiledFunction>(const Program&, const std::string&)>;

using loops::contains_loop;

// Throws Error(kUnsupported) when a segment is not compiled.
std::shared_ptr<const LoopPlan> build_loop_plan(const ir::Function& fn, const SegmentCompiler& compile_segment);

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
