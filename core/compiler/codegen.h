// Code generation: a sealed normal Function -> the C++ text of one kernel.
//
// The pipeline of one straight-line segment: built-in ops with a
// decomposition become their composition (decompose.h); the fusion plan
// decides which values are stored and which are fused into the stages that
// read them (fusion_plan.h: so x + r feeding RMSNorm, silu(a) * b, or
// x * rsqrt(mean(x * x) + eps) * w is one pass over memory); every stored
// value is lowered to a stage of TIR (lower_segment.h, over
// lower_loop_nest.h and the ops' stage lowerings, stage_lowering.h); the
// CPU printer spells the entry (cpu/entry_printer.h). Program::tir keeps
// the TIR's text.
//
// Generated ABI (one extern "C" function named by the caller):
//   int ENTRY(void* const* P, const int64_t* SH, const int64_t* ST, const tf_rt* rt)
// returning 0, or a run-time error code (kErrDivByZero, kErrEmptyMean,
// kErrRopePosition, ...) after
// every stage ran (outputs then hold unspecified values; a failing
// InsertSlice / CacheUpdate writes nothing of its own result). Checks of
// parameters alone (RoPE's positions) run first and return before anything
// is allocated or written; they do not make Program::may_fail true.
// P holds one pointer per slot (inputs, then outputs, then temporaries, which
// the host allocates per call from a pool); SH / ST hold every slot's shape and
// strides (in elements), concatenated in slot order. Extents are run-time
// values, so one compiled kernel serves every DimVar binding. Outputs and
// temporaries are C-contiguous; inputs may have any strides. SH continues
// with Program::scalars, resolved by the host (RS in the entry).
#pragma once

#include <string>
#include <vector>

#include "core/compiler/lower_segment.h"
#include "core/compiler/scalars.h"
#include "core/ir/expr.h"

namespace tf::compiler {

struct Program {
  std::vector<Slot> slots;  // inputs, then outputs, then temporaries
  std::string body;         // defines extern "C" int TF_ENTRY(...)
  bool may_fail = false;    // the entry can return a nonzero code after writing an output
  bool prechecks = false;   // the entry can return a nonzero code before writing anything
  // Resolved by the host per call and appended to SH after every slot's
  // shape; the entry reads them as RS[i] (scalars.h).
  std::vector<RuntimeScalar> scalars;
  // The TIR of the stages lowered through it, as text (TF_DUMP_DIR's .tir).
  std::string tir;
};

// Error codes of a generated entry.
constexpr int kErrDivByZero = 1;
constexpr int kErrEmptyMean = 2;
// RoPE: a pos_ids value outside [0, P); rt->info = {value, P}.
constexpr int kErrRopePosition = 3;
// InsertSlice: a window outside dst; rt->info = {offset, offset + extent, axis, dst extent}.
constexpr int kErrInsertWindow = 4;
// CacheUpdate, in the evaluator's order: rt->info = {cur_pos}; {new.len, s};
// {cur_pos, s, cache.len}.
constexpr int kErrCachePos = 5;
constexpr int kErrCacheCount = 6;
constexpr int kErrCacheEnd = 7;
// Gather: an index outside [0, extent); rt->info = {index, axis, extent}.
constexpr int kErrGatherIndex = 8;
// TopK: k outside [0, len]; rt->info = {k, len, axis}.
constexpr int kErrTopKCount = 9;
// ShapeExtract: index outside the shape value; rt->info = {index, length}.
constexpr int kErrShapeIndex = 10;
// CacheScatter: a batch row's window outside the cache; rt->info = {b, pos, n, len}.
constexpr int kErrScatterWindow = 11;
// rt->info holds this many values.
constexpr int kInfoSize = 4;

// Throws Error(kUnsupported) naming the first construct the code generator
// does not handle (the caller then runs the evaluator).
Program generate(const ir::Function& fn);

// One straight-line piece of a function with loops (loop_plan.h): `inputs`
// are nodes whose values are given (slot i = inputs[i], any node kind,
// including a loop's result or its projection), `outputs` the tensor nodes
// to compute (already inlined and canonical: inline.h). Nothing below an
// input is computed.
// `aliased`: as lower_segment's (lower_segment.h).
Program generate_segment(const std::vector<ir::ExprPtr>& inputs, const std::vector<ir::ExprPtr>& outputs,
                         const std::vector<bool>& aliased = {});

// What both targets print from: a segment decomposed (decompose.h) and
// lowered to TIR for `target`, each view a stage refuses copied instead
// (lowering is retried, once per such view).
LoweredEntry lower_entry(const std::vector<ir::ExprPtr>& inputs, const std::vector<ir::ExprPtr>& outputs,
                         const std::vector<bool>& aliased, Target target);

// The segment of a whole function: its parameters in, its body inlined
// (calls) and split (tuple calls); `aliased` from its in-place results.
// Throws Error(kUnsupported) for a dispatch prototype.
struct FunctionSegment {
  std::vector<ir::ExprPtr> inputs, outputs;
  std::vector<bool> aliased;
};
FunctionSegment function_segment(const ir::Function& fn);

}  // namespace tf::compiler
