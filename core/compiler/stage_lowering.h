// The compiler's part of a non-elementwise op's definition: how its stage
// is lowered to TIR (lower_stages.h). Registered per op name (the registry's
// key) in an ops::OpPartTable, as ScalarLowering is for elementwise ops
// (scalar_lowering.h): the code generator finds an op's stage by its name,
// and an op defined outside core adds its own with register_stage_lowering.
//
// What a stage lowering gets: the call, the slots of its tensor operands and
// of its results, and a way to read an integer scalar operand (an offset, a
// position, a composed dim) as an i64 value. Operands are the call's
// arguments with Tuple arguments flattened (InsertSlice's offsets, Concat's
// inputs); a Constant operand has no slot (its value is a literal).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/compiler/entry_vars.h"
#include "core/compiler/inline_operand.h"
#include "core/ir/expr.h"
#include "core/ops/completeness.h"

namespace tf::compiler {

struct StageCall {
  const ir::Call& call;
  std::vector<ir::ExprPtr> operands;  // arguments, Tuples flattened
  std::vector<size_t> slots;          // the operands' slots, Constants skipped
  // Parallel to slots: for an operand read in place through a Transpose
  // (StageNeeds::transposed_in_place), that Transpose's axes (the operand's
  // axis i is the slot's axis axes[i]); empty for a slot read as it is.
  std::vector<std::vector<int64_t>> axes;
  // An operand the stage computes where it reads it (a Reduce's elementwise
  // operand: FusionPlan::computes_operand); it has no slot. Empty if none.
  std::optional<InlineOperand> inlined;
  // The result's slot, or one per projection of a tuple-valued op.
  std::vector<size_t> results;
  // An integer scalar operand as i64: a Constant's literal, or the value a
  // rank-0 slot holds.
  std::function<tir::ExprPtr(const ir::ExprPtr&)> int_value;
};

// What a stage needs of its call, known before the kernel is planned.
struct StageNeeds {
  std::vector<bool> in_memory;  // per operand: read from its slot (a Constant never is)
  bool may_fail = false;        // a run-time check that can fail after other stages wrote
  // Per operand (or empty: none): a Transpose the stage reads in place,
  // from the slot of the Transpose's own operand with the axes permuted,
  // so that the transposed copy is not stored (MatMul's `x @ w.T`).
  std::vector<bool> transposed_in_place;
};

struct StageLowering {
  LoweredStage (*lower)(const EntryVars& e, const StageCall& c);
  // Throws Error(kUnsupported) for a form of the call the stage does not
  // compile (a dtype, a Constant operand); says which operands it reads
  // from memory (operands as StageCall's: Tuples flattened).
  StageNeeds (*needs)(const ir::Call& c, const std::vector<ir::ExprPtr>& operands);
  // The stage may write its result into its first operand's buffer (an
  // insert into a dst nothing else reads: no copy of dst).
  bool in_place = false;
  // For a target with a GEMM library (CUDA: cuBLAS): the op as stages
  // around one GEMM the target calls (MatMul: the GEMM alone), over scratch
  // slots it adds to the entry with `scratch` (a temporary of that type;
  // returns its slot). Null: `lower` serves every target.
  GemmStages (*as_gemm)(const EntryVars& e, const StageCall& c,
                        const std::function<size_t(ir::TensorTypePtr)>& scratch) = nullptr;
};

// Null when the op has none (an elementwise op, a built-in row op, or an op
// not compiled: the caller then reports it unsupported).
const StageLowering* find_stage_lowering(std::string_view op_name);

// The Transpose that `operand` is, where a stage can read it in place from
// its own operand's slot through its axes (that operand is not a
// Constant): MatMul's `w.T`, a Reduce stage's operand. Null otherwise.
const ir::Call* transpose_read_in_place(const ir::ExprPtr& operand);
void register_stage_lowering(std::string op_name, StageLowering l);
// The table as a part of the ops' completeness check (completeness.h).
ops::OpPart stage_lowering_part();
// The compiler's whole part of an op, for the completeness check: a scalar
// lowering (elementwise), a stage lowering or a decomposition (decompose.h).
ops::OpPart native_lowering_part();

}  // namespace tf::compiler
