// The compiler's part of an elementwise op's definition: how one element
// of its result is computed, as a TIR scalar expression over its operands'
// elements. Registered per op name (the registry's key), like the
// evaluator's kernels; the loop-nest lowering calls it for every inlined
// elementwise value, so a new elementwise op needs only its entry here.
//
// Numerics follow the evaluator: operands arrive in their compute type
// (f32 for f16 / bf16 / fp8 storage), the op computes in the compute type
// of its operands, and a half-precision result is rounded to its storage
// precision after every op (rounding twice is rounding once, so the final
// store's rounding is free to repeat it).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/expr.h"
#include "core/ops/completeness.h"
#include "core/tir/expr.h"

namespace tf::compiler {

struct ScalarArgs {
  const ir::Call& call;
  std::vector<tir::ExprPtr> args;  // the operands' values, in their compute types
  ir::DType out;                   // the result's dtype
  tir::VarPtr err;                 // the entry's error flag (int*), for ops that can fail
  // Computes fn(buffer, n, extra...) over a chunk of `arg` values at once
  // (a prelude routine updating an L1 buffer in place; `extra` are values
  // of the whole chunk) and returns the element's result; null outside
  // loops that run in chunks.
  std::function<tir::ExprPtr(const std::string& fn, const tir::ExprPtr& arg, const std::vector<tir::ExprPtr>& extra)>
      stage;
  // Whether v has one value over the whole chunk (a row's reduction result,
  // a constant): it may be an `extra` of a staged routine.
  std::function<bool(const tir::ExprPtr& v)> invariant;
  // Whether v is an element the stage already keeps in a row at the
  // chunk's index (a value the reduction passes cached), so a staged
  // routine can update it there without a copy through a buffer.
  std::function<bool(const tir::ExprPtr& v)> in_row;
};

struct ScalarLowering {
  tir::ExprPtr (*lower)(const ScalarArgs& a);
  // Costs an exp-like call per element (decides streaming: can_stream).
  bool (*transcendental)(const ir::Op& op);
  // A run-time error is possible (a zero integer divisor).
  bool (*may_fail)(const ir::Call& c);
};

// Null when the op has no scalar form (it is not elementwise).
const ScalarLowering* find_scalar_lowering(std::string_view op_name);
void register_scalar_lowering(std::string op_name, ScalarLowering l);
// The table as a part of the ops' completeness check (completeness.h).
ops::OpPart scalar_lowering_part();

// The compute dtype of values stored as d (f32 for the storage types).
ir::DType compute_dtype(ir::DType d);
// v (in compute_dtype(d)) rounded to d's precision; v itself for a compute d.
tir::ExprPtr round_to(ir::DType d, tir::ExprPtr v);
// A scalar constant's value as an element of an inlined tree: its literal,
// in its compute type, rounded to its dtype.
tir::ExprPtr constant_value(const ir::Constant& k);

}  // namespace tf::compiler
