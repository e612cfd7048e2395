// Code generation: a sealed normal Function -> the C++ text of one kernel.
//
// The body's Call DAG is cut into stages. A value is materialized (gets a
// buffer slot) when it is a parameter, an output, read more than once and
// not cheap to recompute, the result of a non-elementwise op (a Reduce that
// is not fused, MatMul, data ops, a view a stage could not read in place:
// lower_stages.h), or an operand such an op reads from memory; every other
// elementwise value (any op with a scalar form: scalar_lowering.h) and
// view is inlined into the loop of the stage that reads it, and so is a
// last-axis Reduce read back along its row (lower_loop_nest.h). The
// built-in row ops (RMSNorm, LayerNorm, SoftMax) are their decompositions
// (decompose.h) by then. So x + r feeding RMSNorm, silu(a) * b, or
// x * rsqrt(mean(x * x) + eps) * w is one pass over memory; and a row
// stage's input that must also be stored (residual + RMSNorm's sum) is
// computed and stored by the row stage itself. Every stage is built as TIR
// (lower_loop_nest.h, lower_stages.h) and printed by the CPU printer;
// Program::tir keeps its text.
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
// are null: the kernel allocates them); SH / ST hold every slot's shape and
// strides (in elements), concatenated in slot order. Extents are run-time
// values, so one compiled kernel serves every DimVar binding. Outputs and
// temporaries are C-contiguous; inputs may have any strides. SH continues
// with Program::scalars, resolved by the host (RS in the entry).
#pragma once

#include <string>
#include <vector>

#include "core/compiler/scalars.h"
#include "core/ir/expr.h"

namespace tf::compiler {

struct Slot {
  enum Kind { kInput, kOutput, kTemp };
  Kind kind;
  size_t index;                 // parameter / output / temporary number
  ir::TensorTypePtr type;       // shape under the DimVar bindings gives extents
};

struct Program {
  std::vector<Slot> slots;  // inputs, then outputs, then temporaries
  std::string body;         // defines extern "C" int TF_ENTRY(...)
  bool may_fail = false;    // the entry can return a nonzero code after writing an output
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
Program generate_segment(const std::vector<ir::ExprPtr>& inputs, const std::vector<ir::ExprPtr>& outputs);

}  // namespace tf::compiler
