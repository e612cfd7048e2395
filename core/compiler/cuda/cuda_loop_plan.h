// Functions with GridRegionExpr loops on a CUDA device: the loop tree
// (loop_tree.h) with each segment a CudaFunction of its own; the host walks
// the tree and launches each segment on the call's stream, asynchronously
// (a segment that can fail reads its error back, as any CUDA call does).
// One compile serves every binding: bounds and windows are run-time values.
//
// Memory: each place of the tree where the walk stores a value (a scope's
// roots, a loop's two carried buffers, its induction variable) has one
// fixed region of the call's workspace, reused each time its scope runs
// again. That is safe because the stream orders every write after the
// reads before it, and no value outlives its place: every loop body ends
// in a segment that writes the yields into the loop's own buffers
// (TreeOptions::body_ends_in_segment), so an iteration never carries a
// value the next one overwrites. The segments' own scratch shares one
// region (they run one after another). Sizes come from the same walk,
// launching nothing, over every iteration: a place gets its largest size.
// Given a workspace of workspace_bytes(), a call allocates nothing, so a
// CUDA graph captures a plan whose segments cannot fail. The induction
// variable reaches a segment as device memory written by two
// cuMemsetD32Async per iteration: stream-ordered, capturable, and no host
// buffer has to outlive the call.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/compiler/cuda/cuda_codegen.h"
#include "core/compiler/cuda/driver.h"
#include "core/ir/module.h"
#include "core/runtime/ndarray.h"

namespace tf::compiler::cuda {

struct CudaLoopPlan;

// The plan's segments' programs, by segment id. Throws Error(kUnsupported)
// naming what a segment does not compile.
std::vector<CudaProgram> generate_cuda_loop_segments(const ir::Function& fn);

// generate_cuda_loop_segments, each a CudaFunction named <fn>.seg<id>.
std::shared_ptr<const CudaLoopPlan> build_cuda_loop_plan(const ir::Function& fn);

// Bytes of device workspace a call with these bindings needs. Throws the
// evaluator's Error(kRuntime) for loop bounds that do not resolve.
uint64_t loop_plan_workspace_bytes(const CudaLoopPlan& plan, const ir::DimBindings& bindings);

// CudaFunction::run's contract (the context is the device's already).
void run_cuda_loop_plan(const CudaLoopPlan& plan, const std::vector<runtime::NDArray>& inputs,
                        const std::vector<runtime::NDArray>& outputs, const ir::DimBindings& bindings, int device,
                        CUstream stream, void* workspace, uint64_t workspace_bytes);

// Loads every segment into `device`.
void prepare_loop_plan(const CudaLoopPlan& plan, int device);

// The segments' keys joined; whether any reports errors / runs a cuBLAS step.
std::string loop_plan_key(const CudaLoopPlan& plan);
bool loop_plan_reports_errors(const CudaLoopPlan& plan);
bool loop_plan_has_gemm(const CudaLoopPlan& plan);

}  // namespace tf::compiler::cuda
