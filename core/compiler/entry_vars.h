// What the lowering of one stage sees of the generated entry (codegen.h's
// ABI) as TIR variables, what it hands back, and the index arithmetic the
// stage lowerings share (lower_*.h).
//
// Every slot is a typed data pointer plus pointers to its shape and strides
// (in elements); outputs and temporaries are C-contiguous, inputs may have
// any strides. A lowering builds TIR only: lower_segment.h verifies and
// collects it, a target's printer spells it (cpu/entry_printer.h).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/compiler/lower_loop_nest.h"
#include "core/compiler/scalars.h"
#include "core/compiler/target.h"
#include "core/tir/op.h"
#include "core/tir/stmt.h"

namespace tf::compiler {

struct EntryVars {
  std::function<const SlotVars&(size_t)> slot;
  // Whether slot k holds a parameter: a check of it alone can run before
  // any stage writes (a precheck), so the kernel need not count as one that
  // fails after writing.
  std::function<bool(size_t)> is_input;
  tir::VarPtr err;      // int*: the entry's error flag (tf_fail)
  tir::VarPtr info;     // i64*: rt->info, the details of a run-time error
  tir::VarPtr rt;       // the runtime table (opaque): the GEMM entry points
  tir::VarPtr scalars;  // i64*: RS, the values the host resolves per call
  // Registers a value for the host to resolve; returns its index in RS.
  std::function<size_t(const RuntimeScalar&)> add_scalar;
  // The schedule's target: only the CPU streams stores past its cache.
  Target target = Target::kCpu;
};

struct LoweredStage {
  tir::StmtPtr stage;
  // A check of parameters and shapes alone, run by the entry before any
  // stage and returning an error code (null when none).
  tir::StmtPtr precheck;
  // The stage can record a run-time error after other stages wrote.
  bool may_fail = false;
};

// A stage that is one MatMul of slots (y = a @ b, batch axes broadcast): a
// target with a GEMM library of its own (CUDA: cuBLAS) calls it for the
// stage instead of printing the stage's TIR.
struct GemmCall {
  size_t out, a, b;  // slots
};

// An op lowered for such a target as stages around one GEMM of scratch
// slots (StageLowering::as_gemm): Conv2D as im2col, the GEMM, the bias.
struct GemmStages {
  std::vector<LoweredStage> before;
  GemmCall gemm;
  std::vector<LoweredStage> after;
};

// sh<k>[axis] and st<k>[axis].
tir::ExprPtr extent(const SlotVars& s, size_t axis);
tir::ExprPtr stride(const SlotVars& s, size_t axis);
// An operand as a stage reads it: its slot, or a Transpose of it that the
// stage reads in place (MatMul's `w.T`, StageNeeds::transposed_in_place;
// a Reduce's operand, FusionPlan), whose axis i is the slot's axes[i].
struct SlotView {
  const SlotVars& slot;
  const std::vector<int64_t>& axes;  // empty: the slot as stored
  size_t rank() const { return slot.type->rank(); }
  size_t axis(size_t i) const {
    if (axes.empty()) return i;
    const int64_t a = axes.at(i);
    return static_cast<size_t>(a < 0 ? a + static_cast<int64_t>(rank()) : a);
  }
  tir::ExprPtr extent_at(size_t i) const { return extent(slot, axis(i)); }
  tir::ExprPtr stride_at(size_t i) const { return stride(slot, axis(i)); }
};
// The product of a slot's extents over [first, last) (1 when empty).
tir::ExprPtr extents_product(const SlotVars& s, size_t first, size_t last);
// The element count of a slot.
tir::ExprPtr element_count(const SlotVars& s);
// The scalar a rank-0 slot holds (an InsertSlice offset, a CacheUpdate
// position), as i64.
tir::ExprPtr scalar_value(const SlotVars& s);

// Bindings in order, each visible to the later ones and to the body.
class Lets {
 public:
  tir::VarPtr bind(const std::string& name, tir::ExprPtr value);
  // A pointer into a buffer; `no_alias` as LetStmt's.
  tir::VarPtr bind_pointer(const std::string& name, tir::ExprPtr address, bool no_alias);
  tir::StmtPtr wrap(tir::StmtPtr body) const;

 private:
  struct Binding {
    tir::VarPtr var;
    tir::ExprPtr value;
    bool no_alias;
  };
  std::vector<Binding> list_;
};

// The offset of row-major flat index `flat` over `extents` (outermost
// first) in each of `strides` (one list per operand, parallel to extents):
// sum over axes of flat's digit * stride. The digits are bound in `lets`
// (named `<name><axis>`); the outermost digit is what remains of flat,
// which the caller keeps below the extents' product.
std::vector<tir::ExprPtr> row_major_offsets(const tir::ExprPtr& flat, const std::vector<tir::ExprPtr>& extents,
                                            const std::vector<std::vector<tir::ExprPtr>>& strides, Lets& lets,
                                            const std::string& name = "q");

// Records run-time error `code` with `details` in rt->info (codegen.h's
// error codes): inside a stage, tf_fail(err, code); in a precheck, the
// caller returns the code itself.
tir::StmtPtr record_error(const EntryVars& e, int code, const std::vector<tir::ExprPtr>& details);
tir::StmtPtr store_info(const EntryVars& e, const std::vector<tir::ExprPtr>& details);

// The C++ comment heading a stage: "stage: <what> -> slot <s>".
tir::StmtPtr stage_comment(const std::string& what, size_t s);

}  // namespace tf::compiler
