#include "core/compiler/lower_segment.h"

#include <deque>
#include <map>
#include <unordered_map>
#include <utility>

#include "core/compiler/emit_util.h"
#include "core/compiler/entry_vars.h"
#include "core/compiler/fusion_plan.h"
#include "core/compiler/lower_loop_nest.h"
#include "core/compiler/stage_lowering.h"
#include "core/ir/error.h"
#include "core/ops/tensor/tensor.h"
#include "core/tir/op.h"
#include "core/tir/printer.h"
#include "core/tir/transform.h"
#include "core/tir/verifier.h"

namespace tf::compiler {
namespace {

using ir::DType;
using ir::Expr;
using ir::ExprPtr;

bool operator==(const RuntimeScalar& a, const RuntimeScalar& b) {
  return a.kind == b.kind && a.value == b.value && a.end == b.end && a.stride == b.stride && a.dim == b.dim &&
         a.typed == b.typed && a.axis == b.axis && a.where == b.where;
}

class SegmentLowering {
 public:
  SegmentLowering(const std::vector<ExprPtr>& inputs, const std::vector<ExprPtr>& outputs,
                  const std::unordered_set<const Expr*>& copied, const DecompositionNotes& notes,
                  const std::vector<bool>& aliased, Target target)
      : plan_(inputs, outputs, copied), notes_(notes), aliased_(aliased), target_(target) {
    out_.err = tir::Var::make("err", tir::Type::pointer(DType::kI32));
    out_.rt = tir::Var::make("rt", tir::Type::opaque_handle());
    out_.info = tir::Var::make("info", tir::Type::pointer(DType::kI64));
    out_.scalars = tir::Var::make("RS", tir::Type::pointer(DType::kI64));
    for (size_t i = 0; i < inputs.size(); ++i) slot_of_[inputs[i].get()] = add_slot(Slot::kInput, i, inputs[i]);
  }

  LoweredEntry run() && {
    // Each output gets its slot; one that is not computed here (a
    // parameter, a constant, a value already stored) is copied into it.
    std::vector<std::pair<size_t, ExprPtr>> copies;
    for (size_t i = 0; i < plan_.outputs().size(); ++i) {
      const ExprPtr& o = plan_.outputs()[i];
      const size_t s = add_slot(Slot::kOutput, i, o);
      const bool computed = o->kind() == ir::ExprKind::kCall || o->kind() == ir::ExprKind::kTupleGetItem;
      if (computed && !slot_of_.count(o.get())) slot_of_[o.get()] = s;
      else copies.emplace_back(s, o);
    }
    for (const ExprPtr& o : plan_.outputs()) lower(o);
    for (auto& [s, e] : copies) lower_fused(s, e, "copy");
    out_.may_fail = out_.may_fail || plan_.may_fail();
    out_.slot_vars.assign(slot_vars_.begin(), slot_vars_.end());  // the copies' slots too
    return std::move(out_);
  }

 private:
  size_t add_slot(Slot::Kind k, size_t index, const ExprPtr& e) {
    return add_slot(k, index, std::static_pointer_cast<const ir::TensorType>(e->type()));
  }
  size_t add_slot(Slot::Kind k, size_t index, ir::TensorTypePtr t) {
    ctype(t->dtype());
    const size_t n = out_.slots.size();
    const DType d = t->dtype();
    slot_vars_.push_back(SlotVars{tir::Var::make("B" + S(n), tir::Type::pointer(d)),
                                  tir::Var::make("sh" + S(n), tir::Type::pointer(DType::kI64)),
                                  tir::Var::make("st" + S(n), tir::Type::pointer(DType::kI64)), t.get()});
    out_.slots.push_back(Slot{k, index, std::move(t)});
    if (k == Slot::kTemp) ++num_temps_;
    return n;
  }
  // The slot of value e: its own, or a new temporary.
  size_t slot_for(const ExprPtr& e) {
    auto it = slot_of_.find(e.get());
    if (it != slot_of_.end()) return it->second;
    const size_t s = add_slot(Slot::kTemp, num_temps_, e);
    slot_of_[e.get()] = s;
    return s;
  }

  // An in-place insert's dst has its result's slot (lower_in_place).
  bool materialized(const ir::Call& c) const { return slot_of_.count(&c) || plan_.materialized(c); }

  // Post-order: every stored value is computed before its readers.
  void lower(const ExprPtr& e) {
    // A value a row stage produces is lowered with that stage.
    if (ExprPtr root = plan_.producer_of(e.get()); root && !done_.count(e.get()) && !done_.count(root.get()))
      return lower(root);
    if (!done_.insert(e.get()).second || plan_.is_input(e.get())) return;
    if (auto* g = ir::expr_as<ir::TupleGetItem>(e)) return lower(g->tuple());
    auto* c = ir::expr_as<ir::Call>(e);
    if (!c) return;
    const StageLowering* own = find_stage_lowering(c->op()->name());
    if (own && own->in_place) return lower_in_place(e, *c, *own);
    ExprPtr produced = plan_.produced_by(c);
    if (produced && done_.count(produced.get())) produced = nullptr;
    if (produced) lower_producer_operands(produced);
    for (const ExprPtr& a : flat_operands(*c)) lower(a);
    if (e->type()->kind() == ir::TypeKind::kTuple) return lower_tuple_stage(e, *c);
    if (!materialized(*c)) return;
    const size_t s = slot_for(e);
    if (own && !plan_.inline_view(*c)) return lower_own_stage(*own, *c, {s});
    lower_fused(s, e, std::string(c->op()->name()), /*root_inline=*/true, produced);
  }

  // Gives the produced value its slot and lowers what it reads; the row
  // stage lowered next computes it (fusion_plan.h).
  void lower_producer_operands(const ExprPtr& x) {
    done_.insert(x.get());
    slot_for(x);
    for (const ExprPtr& a : flat_operands(static_cast<const ir::Call&>(*x))) lower(a);
  }

  // The result gets its slot first; a dst computed here and read by nothing
  // else is then computed straight into that slot, so the insert writes its
  // window in place (no copy). A dst given as an input (the caller's, or a
  // loop carry) is copied unless the host passes the result buffer itself
  // (loop_plan.h: an in-place carry), which the stage checks.
  void lower_in_place(const ExprPtr& e, const ir::Call& c, const StageLowering& l) {
    const size_t s = slot_for(e);
    const ExprPtr& dst = c.args()[0];
    auto* dc = ir::expr_as<ir::Call>(dst);
    if (dc && dc->op() && !plan_.is_input(dst.get()) && !slot_of_.count(dst.get()) && !done_.count(dst.get()) &&
        plan_.uses(dst.get()) == 1)
      slot_of_[dst.get()] = s;
    for (const ExprPtr& a : flat_operands(c)) lower(a);
    lower_own_stage(l, c, {s});
  }

  // A tuple-valued op (RoPE, TopK): its stage writes every projection, each
  // into its output slot or a temporary.
  void lower_tuple_stage(const ExprPtr& e, const ir::Call& c) {
    const StageLowering* l = find_stage_lowering(c.op()->name());
    if (!l) unsupported("op " + std::string(c.op()->name()) + " with a tuple value");
    const auto& tt = static_cast<const ir::TupleType&>(*e->type());
    std::vector<size_t> results;
    for (size_t i = 0; i < tt.fields().size(); ++i) {
      const Expr* p = plan_.projection(e.get(), static_cast<int64_t>(i));
      if (p && slot_of_.count(p)) {
        results.push_back(slot_of_.at(p));
        continue;
      }
      const size_t s = add_slot(Slot::kTemp, num_temps_, std::static_pointer_cast<const ir::TensorType>(tt.fields()[i]));
      if (p) slot_of_[p] = s;
      results.push_back(s);
    }
    lower_own_stage(*l, c, std::move(results));
  }

  // A stage lowered by the part its op registered (stage_lowering.h) into
  // `results`.
  void lower_own_stage(const StageLowering& l, const ir::Call& c, std::vector<size_t> results) {
    StageCall call{c, flat_operands(c), {}, {}, std::nullopt, std::move(results),
                   [this](const ExprPtr& a) { return int_operand(a); }};
    const bool library_gemm = target_ == Target::kCuda && l.as_gemm;
    for (const ExprPtr& a : call.operands) {
      if (a->kind() == ir::ExprKind::kConstant) continue;
      auto it = slot_of_.find(a.get());
      if (it != slot_of_.end()) {
        call.slots.push_back(it->second);
        call.axes.emplace_back();
        continue;
      }
      // An operand the stage computes where it reads it (a Reduce's
      // elementwise operand, or a Transpose of one: FusionPlan), unless
      // it was given a slot after all.
      const auto* t = ir::expr_as<ir::Call>(a);
      const bool transposed_slot =
          t && t->op() && t->op()->name() == "Transpose" && slot_of_.count(t->args().at(0).get());
      if (plan_.computes_operand(c) && !transposed_slot) {
        TF_CHECK(!call.inlined, "lower_segment: two operands computed inline");
        call.inlined = lower_inline_operand(stage_env(), a);
        continue;
      }
      // A Transpose the stage reads in place (StageNeeds::transposed_in_place),
      // not stored. A library GEMM's stages read their operands as stored,
      // so there the Transpose is copied after all.
      TF_CHECK(t && t->op() && t->op()->name() == "Transpose",
               "lower_segment: an operand without a slot that is not a Transpose read in place");
      if (library_gemm) {
        const size_t s = slot_for(a);
        lower_fused(s, a, std::string(t->op()->name()), /*root_inline=*/true, nullptr);
        call.slots.push_back(s);
        call.axes.emplace_back();
        continue;
      }
      call.slots.push_back(slot_of_.at(t->args().at(0).get()));
      call.axes.push_back(static_cast<const ops::Transpose&>(*t->op()).axes);
    }
    if (library_gemm) return lower_as_gemm(l, call);
    add_stage(l.lower(entry_vars(), call));
  }

  // The op as stages around one GEMM of scratch temporaries (a target
  // whose GEMM is a library call); the GEMM's own stage is a comment in
  // the TIR, the target calls the library there.
  void lower_as_gemm(const StageLowering& l, const StageCall& call) {
    const GemmStages g = l.as_gemm(entry_vars(), call, [this](ir::TensorTypePtr t) {
      return add_slot(Slot::kTemp, num_temps_, std::move(t));
    });
    for (const LoweredStage& s : g.before) add_stage(s);
    const std::string what = "gemm: slot " + S(g.gemm.a) + " @ slot " + S(g.gemm.b) + " -> slot " + S(g.gemm.out) +
                             " (" + std::string(call.call.op()->name()) + ", a library call)";
    add_stage(LoweredStage{tir::Comment::make(what), nullptr, false}, g.gemm);
    for (const LoweredStage& s : g.after) add_stage(s);
  }

  // An integer scalar operand (an insert's offset, a composed dim) as an
  // i64 value: a Constant is a literal.
  tir::ExprPtr int_operand(const ExprPtr& a) {
    if (auto* k = ir::expr_as<ir::Constant>(a)) return tir::i64(k->int_value());
    return scalar_value(slot_vars_.at(slot_of_.at(a.get())));
  }

  // The loop nest storing e into slot s, its inlined producers fused
  // (lower_loop_nest.h).
  void lower_fused(size_t s, const ExprPtr& e, const std::string& what, bool root_inline = false,
                   ExprPtr produced = nullptr) {
    const StageEnv env = stage_env(std::move(produced), may_alias(s));
    LoweredStage l;
    l.stage = tir::bind_common_calls(
        tir::hoist_loop_invariants(lower_stage(env, s, e, what, root_inline, &l.may_fail, &l.precheck)));
    add_stage(l);
  }

  // What a fused stage sees of the segment (lower_loop_nest.h).
  StageEnv stage_env(ExprPtr produced = nullptr, bool out_may_alias = false) {
    return StageEnv{[this](const Expr* x) -> long {
                   auto it = slot_of_.find(x);
                   return it == slot_of_.end() ? -1 : static_cast<long>(it->second);
                 },
                 [this](size_t k) -> const SlotVars& { return slot_vars_.at(k); },
                 [this](const ir::Call& c) { return plan_.fused(c); },
                 out_.err,
                 [this](const ir::ShapeDim& d) { return extent_value(d); },
                 [this](const ir::Call& c, size_t axis) { return slice_begin(c, axis); },
                 [this](const ir::Call& c) { return !notes_.unchecked.count(&c); },
                 [this](const ir::Call& c) { return notes_.compute_type_sums.count(&c) > 0; },
                 [this](const ir::Expr& x) { return notes_.finite.count(&x) > 0; },
                 std::move(produced), out_may_alias, target_};
  }

  // Slot s is an output an input's buffer may be given for (aliased_).
  bool may_alias(size_t s) const {
    const Slot& slot = out_.slots.at(s);
    return slot.kind == Slot::kOutput && slot.index < aliased_.size() && aliased_[slot.index];
  }

  tir::ExprPtr extent_value(const ir::ShapeDim& d) {
    if (d.is_static()) return tir::i64(d.value());
    return run_time_scalar(RuntimeScalar{RuntimeScalar::kExtent, d, 0, 1, 0, 0, 0, ""});
  }

  // The normalized begin of a Slice's axis; a decomposition's slices with
  // static bounds need no check (decompose.h).
  tir::ExprPtr slice_begin(const ir::Call& c, size_t axis) {
    const auto& sl = static_cast<const ops::Slice&>(*c.op());
    if (notes_.unchecked.count(&c) && sl.begin.at(axis).is_static()) return tir::i64(sl.begin[axis].value());
    return run_time_scalar(RuntimeScalar{RuntimeScalar::kSliceBegin, sl.begin.at(axis), sl.end.at(axis),
                                         sl.strides.at(axis), tensor_type(*c.args()[0]).shape()[axis],
                                         tensor_type(c).shape()[axis], axis, ""});
  }

  // Registers a value for the host to resolve (one index per distinct
  // value) and returns its index in RS.
  size_t add_run_time_scalar(const RuntimeScalar& r) {
    std::vector<RuntimeScalar>& all = out_.run_time_scalars;
    for (size_t i = 0; i < all.size(); ++i)
      if (all[i] == r) return i;
    all.push_back(r);
    return all.size() - 1;
  }
  tir::ExprPtr run_time_scalar(const RuntimeScalar& r) {
    return tir::load(out_.scalars, tir::i64(static_cast<int64_t>(add_run_time_scalar(r))));
  }

  // What a stage lowering sees of the entry (entry_vars.h).
  EntryVars entry_vars() {
    return EntryVars{[this](size_t k) -> const SlotVars& { return slot_vars_.at(k); },
                     [this](size_t k) { return out_.slots.at(k).kind == Slot::kInput; },
                     out_.err,
                     out_.info,
                     out_.rt,
                     out_.scalars,
                     [this](const RuntimeScalar& r) { return add_run_time_scalar(r); },
                     target_};
  }

  // Verifies a lowered stage and records it: its precheck among the
  // entry's checks that run before any stage, the stage itself in order.
  // Parallel loops get their serial twin here (run below the threshold or
  // with a team of one thread), and their copies per branch flag
  // (unswitching; both on the CPU only: a CUDA grid has no fork to save,
  // and a kernel's size is its own cost there).
  void add_stage(const LoweredStage& l, std::optional<GemmCall> gemm = std::nullopt) {
    const tir::StmtPtr stage =
        tir::remove_unused_lets(target_ == Target::kCpu
                                    ? tir::unswitch_parallel_loops(tir::split_parallel_threshold(l.stage, team_size()))
                                    : l.stage);
    out_.may_fail = out_.may_fail || l.may_fail;
    out_.slot_vars.assign(slot_vars_.begin(), slot_vars_.end());
    const std::vector<tir::VarPtr> params = out_.params();
    if (l.precheck) {
      tir::verify(tir::Function{"precheck", params, l.precheck});
      out_.prechecks.push_back(l.precheck);
    }
    tir::verify(tir::Function{"stage", params, stage});
    out_.stages.push_back(stage);
    out_.stage_gemms.push_back(gemm);
  }

  FusionPlan plan_;
  const DecompositionNotes& notes_;  // what the decompositions said of the nodes they built
  std::vector<bool> aliased_;        // per output: may be given an input's buffer
  Target target_;
  LoweredEntry out_;
  std::deque<SlotVars> slot_vars_;  // stable references for the stage lowerings
  size_t num_temps_ = 0;
  std::unordered_map<const Expr*, size_t> slot_of_;
  std::unordered_set<const Expr*> done_;  // values lowered (or being lowered)
};

}  // namespace

std::vector<tir::VarPtr> LoweredEntry::params() const {
  std::vector<tir::VarPtr> out{err, rt, info, scalars};
  for (const SlotVars& v : slot_vars)
    for (const tir::VarPtr& p : {v.data, v.shape, v.strides}) out.push_back(p);
  return out;
}

LoweredEntry lower_segment(const std::vector<ExprPtr>& inputs, const std::vector<ExprPtr>& outputs,
                           const std::unordered_set<const Expr*>& copied, const DecompositionNotes& notes,
                           const std::vector<bool>& aliased, Target target) {
  return SegmentLowering(inputs, outputs, copied, notes, aliased, target).run();
}

std::string to_string(const LoweredEntry& e) {
  std::string out;
  for (const tir::StmtPtr& s : e.prechecks) out += tir::to_string(s);
  for (const tir::StmtPtr& s : e.stages) out += tir::to_string(s);
  return out;
}

}  // namespace tf::compiler
