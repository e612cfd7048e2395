// Lowering of one straight-line segment of a function, HIR -> TIR: the
// fusion plan (fusion_plan.h) says which values are stored; this walks the
// segment's values in dependence order and lowers each stored one to a
// stage — a fused loop nest (lower_loop_nest.h), a stage its op registered
// (stage_lowering.h), or a copy — into the slots of one entry. Passes run
// per stage (hoisting, common calls, the parallel threshold) and every
// stage is verified. What comes out is TIR only; a target's printer spells
// it (cpu/entry_printer.h).
#pragma once

#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/compiler/decompose.h"
#include "core/compiler/entry_vars.h"
#include "core/compiler/lower_loop_nest.h"
#include "core/compiler/scalars.h"
#include "core/compiler/target.h"
#include "core/ir/expr.h"
#include "core/tir/stmt.h"

namespace tf::compiler {

// A buffer of the entry: a parameter, an output or a temporary.
struct Slot {
  enum Kind { kInput, kOutput, kTemp };
  Kind kind;
  size_t index;            // parameter / output / temporary number
  ir::TensorTypePtr type;  // shape under the DimVar bindings gives extents
};

// One segment's entry as TIR.
struct LoweredEntry {
  std::vector<Slot> slots;           // inputs, then outputs, then temporaries
  std::vector<SlotVars> slot_vars;   // parallel to slots
  tir::VarPtr err;                   // int*: the error flag stages record into
  tir::VarPtr rt;                    // the runtime table (opaque)
  tir::VarPtr info;                  // i64*: the details of a run-time error
  tir::VarPtr scalars;               // i64*: run_time_scalars, resolved by the host
  std::vector<RuntimeScalar> run_time_scalars;
  // Checks of parameters and shapes alone, run before any stage; each may
  // return an error code.
  std::vector<tir::StmtPtr> prechecks;
  std::vector<tir::StmtPtr> stages;  // in order
  std::vector<std::optional<GemmCall>> stage_gemms;  // parallel to stages: a stage that is one GEMM
  bool may_fail = false;             // a stage can record an error after another wrote

  // Every variable the stages may read unbound: the entry's parameters.
  std::vector<tir::VarPtr> params() const;
};

// `inputs`: nodes whose values are given (slot i = inputs[i]); `outputs`:
// the values to compute, decomposed (decompose.h, whose notes say what the
// decompositions built); `copied`: views stored instead of read in place.
// Throws ViewRefused for a view a stage cannot read in place, Error
// (kUnsupported) for what is not compiled. `aliased[i]`: output i may be
// given an input's buffer (an in-place result, in_place.h), so the stage
// writing it does not declare its pointer __restrict. `target` (target.h)
// decides what differs by target.
LoweredEntry lower_segment(const std::vector<ir::ExprPtr>& inputs, const std::vector<ir::ExprPtr>& outputs,
                           const std::unordered_set<const ir::Expr*>& copied, const DecompositionNotes& notes,
                           const std::vector<bool>& aliased = {}, Target target = Target::kCpu);

// The TIR text of the entry's prechecks and stages (TF_DUMP_DIR's .tir).
std::string to_string(const LoweredEntry& e);

}  // namespace tf::compiler
