#include "core/compiler/codegen.h"

#include <deque>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "core/compiler/cpu/cpp_printer.h"
#include "core/compiler/decompose.h"
#include "core/compiler/emit_util.h"
#include "core/compiler/inline.h"
#include "core/compiler/lower_loop_nest.h"
#include "core/compiler/scalar_lowering.h"
#include "core/compiler/stage_lowering.h"
#include "core/ir/error.h"
#include "core/ops/math/math.h"
#include "core/ops/nn/nn.h"
#include "core/ops/shape/shape.h"
#include "core/ops/sharding/sharding.h"
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
using ops::BinaryKind;
using ops::UnaryKind;

class Generator {
 public:
  // `copied`: views a fused stage could not read in place (ViewRefused),
  // computed as copies instead.
  Generator(const std::vector<ExprPtr>& inputs, const std::vector<ExprPtr>& outputs,
            const std::unordered_set<const Expr*>& copied, const DecompositionNotes& notes)
      : seg_inputs_(inputs), seg_outputs_(outputs), copied_(copied), notes_(notes) {}

  Program run() {
    for (size_t i = 0; i < seg_inputs_.size(); ++i) add_input(i, seg_inputs_[i]);
    for (const ExprPtr& o : seg_outputs_) collect_outputs(o);
    for (const ExprPtr& o : outputs_) count_uses(o);
    decide_fusion();
    std::vector<std::pair<size_t, ExprPtr>> copies;
    for (size_t i = 0; i < outputs_.size(); ++i) {
      const ExprPtr& o = outputs_[i];
      size_t s = add_slot(Slot::kOutput, i, o);
      const bool computed = o->kind() == ir::ExprKind::kCall || o->kind() == ir::ExprKind::kTupleGetItem;
      if (computed && !slot_of_.count(o.get())) slot_of_[o.get()] = s;
      else copies.emplace_back(s, o);
    }
    choose_producers();
    for (const ExprPtr& o : outputs_) plan(o);
    for (auto& [s, e] : copies) emit_elementwise(s, e, "copy");
    return Program{slots_, assemble(), may_fail_, scalars_, tir_.str()};
  }

 private:
  void add_input(size_t i, const ExprPtr& e) {
    add_slot(Slot::kInput, i, e);
    slot_of_[e.get()] = i;
    inputs_.insert(e.get());
  }

  size_t add_slot(Slot::Kind k, size_t index, const ExprPtr& e) {
    tensor_type(*e);
    return add_slot(k, index, std::static_pointer_cast<const ir::TensorType>(e->type()));
  }
  size_t add_slot(Slot::Kind k, size_t index, ir::TensorTypePtr t) {
    ctype(t->dtype());
    slots_.push_back(Slot{k, index, std::move(t)});
    if (k == Slot::kTemp) ++num_temps_;
    return slots_.size() - 1;
  }

  void collect_outputs(const ExprPtr& e) {
    if (auto* t = ir::expr_as<ir::Tuple>(e)) {
      for (const ExprPtr& f : t->fields()) collect_outputs(f);
      return;
    }
    if (auto* g = ir::expr_as<ir::TupleGetItem>(e)) {
      if (auto* t = ir::expr_as<ir::Tuple>(g->tuple())) return collect_outputs(t->fields().at(g->index()));
    }
    outputs_.push_back(e);
  }

  // Counts uses, checks that every reachable node is compiled, and marks the
  // operands that must live in memory (MatMul reads whole matrices).
  void count_uses(const ExprPtr& e) {
    if (++uses_[e.get()] > 1 || inputs_.count(e.get())) return;
    switch (e->kind()) {
      case ir::ExprKind::kVar:
        if (!slot_of_.count(e.get())) unsupported("a free variable");
        return;
      case ir::ExprKind::kConstant: ctype(tensor_type(*e).dtype()); return;
      case ir::ExprKind::kCall: break;
      case ir::ExprKind::kTupleGetItem: {
        // A canonical projection (split_tuple_calls) of a multi-output op.
        const ExprPtr& t = static_cast<const ir::TupleGetItem&>(*e).tuple();
        if (t->kind() != ir::ExprKind::kCall) unsupported("TupleGetItem of a computed tuple");
        projections_[{t.get(), static_cast<const ir::TupleGetItem&>(*e).index()}] = e.get();
        count_uses(t);
        return;
      }
      case ir::ExprKind::kGridRegion: unsupported("a GridRegionExpr loop");
      default: unsupported("a tuple value inside the body");
    }
    const auto& c = static_cast<const ir::Call&>(*e);
    if (!c.op()) unsupported("a call of function '" + c.callee()->name() + "'");
    // Every reader of a value is recorded (decide_fusion asks who reads a
    // reduction), whichever kind of stage it is.
    auto read_operands = [&](const std::vector<ExprPtr>& ops) {
      for (const ExprPtr& a : ops) {
        users_[a.get()].push_back(&c);
        count_uses(a);
      }
    };
    if (inline_view(c)) {
      for (const ExprPtr& a : operands(c)) {
        if (a->kind() == ir::ExprKind::kConstant || a->kind() == ir::ExprKind::kTuple)
          unsupported(std::string(c.op()->name()) + " of a constant or a nested tuple");
        ctype(tensor_type(*a).dtype());
      }
      ctype(tensor_type(c).dtype());
      return read_operands(operands(c));
    }
    if (const StageLowering* l = find_stage_lowering(c.op()->name())) {
      // A stage of its own: what it reads from memory, whether it can fail.
      const std::vector<ExprPtr> ops = operands(c);
      if (c.type()->kind() == ir::TypeKind::kTensor) ctype(tensor_type(c).dtype());
      for (const ExprPtr& a : ops) {
        if (a->kind() == ir::ExprKind::kTuple) unsupported("a nested tuple operand");
        ctype(tensor_type(*a).dtype());
      }
      const StageNeeds needs = l->needs(c, ops);
      for (size_t i = 0; i < ops.size(); ++i)
        if (needs.in_memory.at(i)) force_.insert(ops[i].get());
      may_fail_ = may_fail_ || needs.may_fail;
      // A reduction is fused into its readers or a stage of its own:
      // decide_fusion forces its operand to memory when it is not fused.
      if (is_reduce(c)) reduces_.push_back(&c);
      return read_operands(ops);
    }
    check_elementwise(c);
    read_operands(c.args());
  }

  // An elementwise op: its scalar form (scalar_lowering.h) lowers it, and
  // says itself whether it can fail. 8-bit floats are converted and moved,
  // not computed on (emit_util.h).
  void check_elementwise(const ir::Call& c) {
    const ir::Op& op = *c.op();
    if (!is_scalar_op(op)) unsupported("op " + std::string(op.name()));
    bool fp8 = is_fp8(ctype_checked(c));
    for (const ExprPtr& a : c.args()) fp8 = fp8 || is_fp8(tensor_type(*a).dtype());
    if (fp8 && op.name() != "Cast") unsupported("fp8 " + std::string(op.name()));
  }
  DType ctype_checked(const ir::Call& c) {
    const DType d = tensor_type(c).dtype();
    ctype(d);
    return d;
  }

  static bool is_reduce(const ir::Call& c) { return c.op() && c.op()->name() == "Reduce"; }

  // Ops with a scalar form (scalar_lowering.h): inlined into the loop nest
  // of the stage that reads them, whichever op it is.
  static bool is_scalar_op(const ir::Op& op) { return find_scalar_lowering(op.name()) != nullptr; }

  // A call's operands with InsertSlice's offsets tuple flattened.
  static std::vector<ExprPtr> operands(const ir::Call& c) {
    std::vector<ExprPtr> out;
    for (const ExprPtr& a : c.args()) {
      if (auto* t = ir::expr_as<ir::Tuple>(a)) out.insert(out.end(), t->fields().begin(), t->fields().end());
      else out.push_back(a);
    }
    return out;
  }

  // A stage lowered by the part its op registered (stage_lowering.h) into
  // `results`: the call's slot, or one per projection of a tuple value.
  void emit_stage(const StageLowering& l, const ir::Call& c, std::vector<size_t> results) {
    StageCall call{c, operands(c), {}, std::move(results), [this](const ExprPtr& a) { return int_operand(a); }};
    for (const ExprPtr& a : call.operands)
      if (a->kind() != ir::ExprKind::kConstant) call.slots.push_back(slot_of_.at(a.get()));
    emit_lowered(l.lower(entry_vars(), call));
  }

  // A tuple-valued op (RoPE, TopK): its stage writes every projection.
  void emit_tuple_stage(const ExprPtr& e, const ir::Call& c, size_t fields) {
    const StageLowering* l = find_stage_lowering(c.op()->name());
    if (!l) unsupported("op " + std::string(c.op()->name()) + " with a tuple value");
    std::vector<size_t> results;
    for (size_t i = 0; i < fields; ++i) results.push_back(projection_slot(e, static_cast<int64_t>(i)));
    emit_stage(*l, c, std::move(results));
  }

  // A value computed by a stage of its own (stage_lowering.h): always in memory.
  static bool has_own_stage(const ir::Call& c) { return find_stage_lowering(c.op()->name()) != nullptr; }

  bool materialized(const ir::Call& c) const {
    if (slot_of_.count(&c) || force_.count(&c)) return true;
    if (fused_.count(&c)) return false;
    auto it = uses_.find(&c);
    const bool shared = it != uses_.end() && it->second > 1 && !recomputed_.count(&c);
    if (inline_view(c)) return shared;
    return has_own_stage(c) || shared;
  }

  // A view (lower_loop_nest.h) read in place by the stages that read it,
  // unless a stage could not (copied_).
  bool inline_view(const ir::Call& c) const { return c.op() && is_view(*c.op()) && !copied_.count(&c); }

  // ---- fusion decisions --------------------------------------------------------
  //
  // Row reductions (lower_loop_nest.h) are computed inside the stages that
  // read them when every reader is an elementwise value of the reduction's
  // operand shape whose own readers stay in that shape until something
  // stores it (so the reduction's rows are the stage's rows). An elementwise
  // value read more than once is recomputed by each reader rather than
  // stored and read back when that is cheap (a few arithmetic ops, no
  // exp-like call) or when a fused reduction reads it (softmax's exp(x - m),
  // read by its sum and by the division). Whatever does not qualify is
  // materialized as before, and a reduction that is not fused reads its
  // operand from memory.
  void decide_fusion() {
    std::unordered_set<const Expr*> is_output;
    for (const ExprPtr& o : outputs_) is_output.insert(o.get());
    for (const ir::Call* r : reduces_)
      if (is_row_reduce(*r) && !is_output.count(r) && !force_.count(r)) fused_.insert(r);
    for (bool changed = true; changed;) {
      changed = false;
      choose_recomputed(is_output);
      for (auto it = fused_.begin(); it != fused_.end();) {
        const ir::TensorType& shape = tensor_type(*static_cast<const ir::Call*>(*it)->args()[0]);
        bool ok = true;
        for (const ir::Call* u : users_[*it]) ok = ok && row_closed(*u, shape);
        if (ok) {
          ++it;
        } else {
          it = fused_.erase(it);
          changed = true;
        }
      }
    }
    choose_recomputed(is_output);
    for (const ir::Call* r : reduces_) {
      if (fused_.count(r)) continue;  // its stage checks empty rows first (a precheck)
      force_.insert(r->args()[0].get());
      // A reduce stage records a mean over an empty axis where it runs.
      if (static_cast<const ops::Reduce&>(*r->op()).kind == ops::ReduceKind::kMean) may_fail_ = true;
    }
  }

  bool is_elementwise_call(const ir::Call& c) const {
    return c.op() && find_scalar_lowering(c.op()->name()) != nullptr;
  }

  // Computed inside the stages that read it: an elementwise op or a view.
  bool is_inlinable(const ir::Call& c) const { return is_elementwise_call(c) || inline_view(c); }
  bool is_transcendental_call(const ir::Call& c) const {
    const ScalarLowering* l = c.op() ? find_scalar_lowering(c.op()->name()) : nullptr;
    return l && l->transcendental(*c.op());
  }

  // Whether value u of a row stage keeps the rows of `shape` until stored:
  // u has that shape (and may be stored: its stage iterates over those
  // rows), or is a scalar of the row (the shape with its last extent 1, as
  // mean(x) + eps) that is only read inline.
  bool row_closed(const ir::Call& u, const ir::TensorType& shape) const {
    if (!is_elementwise_call(u)) return false;
    const ir::TensorType& t = tensor_type(u);
    const bool full = t.shape() == shape.shape();
    bool scalar = t.rank() == shape.rank() && is_static_one(t.shape().back());
    for (size_t a = 0; scalar && a + 1 < t.rank(); ++a) scalar = t.shape()[a] == shape.shape()[a];
    if (!full && !scalar) return false;
    if (materialized(u)) return full;
    auto it = users_.find(&u);
    if (it == users_.end()) return true;
    for (const ir::Call* v : it->second)
      if (!fused_.count(v) && !row_closed(*v, shape)) return false;
    return true;
  }

  void choose_recomputed(const std::unordered_set<const Expr*>& is_output) {
    recomputed_.clear();
    for (const auto& [e, n] : uses_) {
      auto* c = e->kind() == ir::ExprKind::kCall ? static_cast<const ir::Call*>(e) : nullptr;
      if (n < 2 || !c || !is_inlinable(*c) || is_output.count(e) || force_.count(e)) continue;
      bool read_by_fused = false;
      if (auto it = users_.find(e); it != users_.end())
        for (const ir::Call* u : it->second) read_by_fused = read_by_fused || fused_.count(u);
      if (read_by_fused || cheap(*c)) recomputed_.insert(e);
    }
  }

  // A few arithmetic ops over materialized values: no exp-like call, at
  // most 8 nodes inlined (views cost nothing: they are addresses).
  bool cheap(const ir::Call& c) const {
    int budget = 8;
    std::function<bool(const ir::Call&)> walk = [&](const ir::Call& k) {
      if (!is_inlinable(k) || is_transcendental_call(k)) return false;
      if (&k != &c && !inline_view(k) && --budget < 0) return false;
      for (const ExprPtr& a : operands(k)) {
        auto* ak = ir::expr_as<ir::Call>(a);
        if (ak && !inputs_.count(ak) && !fused_.count(ak) && !walk(*ak)) return false;
      }
      return true;
    };
    return walk(c);
  }

  // ---- values a row stage produces --------------------------------------------
  //
  // A row stage (one whose value reads fused reductions) that reads a
  // materialized elementwise value h of its own shape computes h in its
  // first pass and stores it (StageEnv::produced), when h's own value reads
  // no fused reduction and nothing else the stage reads depends on h: one
  // pass over h's operands instead of a stage writing h and this one
  // reading it back from memory (residual + RMSNorm returning both).
  void choose_producers() {
    std::unordered_set<const Expr*> seen;
    std::function<void(const ExprPtr&)> visit = [&](const ExprPtr& e) {
      if (!seen.insert(e.get()).second || inputs_.count(e.get())) return;
      auto* c = ir::expr_as<ir::Call>(e);
      if (auto* g = ir::expr_as<ir::TupleGetItem>(e)) return visit(g->tuple());
      if (!c || !c->op()) return;
      for (const ExprPtr& a : operands(*c)) visit(a);
      if (materialized(*c) && is_elementwise_call(*c)) choose_producer(e);
    };
    for (const ExprPtr& o : outputs_) visit(o);
  }

  void choose_producer(const ExprPtr& root) {
    std::vector<ExprPtr> frontier;  // the materialized values the stage reads
    bool row = false;
    std::unordered_set<const Expr*> seen;
    std::function<void(const ExprPtr&)> walk = [&](const ExprPtr& e) {
      auto* c = ir::expr_as<ir::Call>(e);
      if (!c || !c->op() || inputs_.count(c) || !seen.insert(c).second) return;
      if (c != root.get() && materialized(*c)) return frontier.push_back(e);
      row = row || fused_.count(c) > 0;
      for (const ExprPtr& a : operands(*c)) walk(a);
    };
    walk(root);
    if (!row) return;
    const ir::TensorType& t = tensor_type(*root);
    for (const ExprPtr& h : frontier) {
      const auto& hc = static_cast<const ir::Call&>(*h);
      const ir::TensorType& ht = tensor_type(hc);
      if (!is_elementwise_call(hc) || producer_of_.count(h.get()) || !(ht.shape() == t.shape()) ||
          !(ht.dtype() == DType::kF32 || ht.dtype() == DType::kF64))
        continue;
      std::unordered_set<const Expr*> searched;
      bool independent = true;
      for (const ExprPtr& a : hc.args()) independent = independent && !reaches_fused(a, searched);
      for (const ExprPtr& f : frontier) {
        std::unordered_set<const Expr*> s;
        independent = independent && (f == h || !reads(f, h.get(), s));
      }
      if (!independent) continue;
      producer_of_[h.get()] = root;
      producer_for_[root.get()] = h;
      return;
    }
  }

  // Post-order: every materialized value is computed before its readers.
  void plan(const ExprPtr& e) {
    // A value a row stage produces is planned with that stage.
    if (auto p = producer_of_.find(e.get()); p != producer_of_.end() && !planned_.count(e.get()) &&
                                              !planned_.count(p->second.get()))
      return plan(p->second);
    if (!planned_.insert(e.get()).second || inputs_.count(e.get())) return;
    if (auto* g = ir::expr_as<ir::TupleGetItem>(e)) return plan(g->tuple());
    auto* c = ir::expr_as<ir::Call>(e);
    if (!c) return;
    if (const StageLowering* l = find_stage_lowering(c->op()->name()); l && l->in_place)
      return plan_in_place(e, *c, *l);
    ExprPtr produced;
    if (auto p = producer_for_.find(c); p != producer_for_.end() && !planned_.count(p->second.get())) {
      produced = p->second;
      plan_producer(produced);
    }
    for (const ExprPtr& a : operands(*c)) plan(a);
    if (auto* tt = dynamic_cast<const ir::TupleType*>(e->type().get()))
      return emit_tuple_stage(e, *c, tt->fields().size());
    if (!materialized(*c)) return;
    size_t s;
    if (auto it = slot_of_.find(c); it != slot_of_.end()) {
      s = it->second;
    } else {
      s = add_slot(Slot::kTemp, num_temps_, e);
      slot_of_[c] = s;
    }
    const ir::Op* op = c->op().get();
    producing_ = produced;
    if (inline_view(*c)) emit_elementwise(s, e, std::string(op->name()), /*root_inline=*/true);
    else if (const StageLowering* l = find_stage_lowering(op->name())) emit_stage(*l, *c, {s});
    else emit_elementwise(s, e, std::string(op->name()), /*root_inline=*/true);
  }


  // Whether e's inlined tree (through elementwise ops) has a fused
  // reduction (seen: nodes already searched, so a shared DAG is walked once).
  bool reaches_fused(const ExprPtr& e, std::unordered_set<const Expr*>& seen) const {
    auto* c = ir::expr_as<ir::Call>(e);
    if (!c || !c->op() || inputs_.count(e.get()) || !seen.insert(c).second) return false;
    if (fused_.count(c)) return true;
    if (!is_scalar_op(*c->op()) || slot_of_.count(c)) return false;
    for (const ExprPtr& a : c->args())
      if (reaches_fused(a, seen)) return true;
    return false;
  }

  // Whether e's value depends on `target` (seen: nodes already searched).
  static bool reads(const ExprPtr& e, const Expr* target, std::unordered_set<const Expr*>& seen) {
    if (e.get() == target) return true;
    if (!seen.insert(e.get()).second) return false;
    if (auto* c = ir::expr_as<ir::Call>(e)) {
      for (const ExprPtr& a : c->args())
        if (reads(a, target, seen)) return true;
    } else if (auto* t = ir::expr_as<ir::Tuple>(e)) {
      for (const ExprPtr& f : t->fields())
        if (reads(f, target, seen)) return true;
    } else if (auto* g = ir::expr_as<ir::TupleGetItem>(e)) {
      return reads(g->tuple(), target, seen);
    }
    return false;
  }

  // Gives the produced value its slot and plans what it reads; the row
  // stage planned next computes it (choose_producers).
  void plan_producer(const ExprPtr& x) {
    planned_.insert(x.get());
    if (!slot_of_.count(x.get())) slot_of_[x.get()] = add_slot(Slot::kTemp, num_temps_, x);
    for (const ExprPtr& a : operands(static_cast<const ir::Call&>(*x))) plan(a);
  }

  // The result gets its slot first; a dst / cache computed here and read by
  // nothing else is then computed straight into that slot, so the insert
  // writes its window in place (no copy). A dst given as an input (the
  // caller's, or a loop carry) is copied unless the host passes the result
  // buffer itself (loop_plan.h: an in-place carry), which the stage checks.
  void plan_in_place(const ExprPtr& e, const ir::Call& c, const StageLowering& l) {
    size_t s;
    if (auto it = slot_of_.find(&c); it != slot_of_.end()) {
      s = it->second;
    } else {
      s = add_slot(Slot::kTemp, num_temps_, e);
      slot_of_[&c] = s;
    }
    const ExprPtr& dst = c.args()[0];
    auto* dc = ir::expr_as<ir::Call>(dst);
    if (dc && dc->op() && !inputs_.count(dst.get()) && !slot_of_.count(dst.get()) && !planned_.count(dst.get()) &&
        uses_[dst.get()] == 1)
      slot_of_[dst.get()] = s;
    for (const ExprPtr& a : operands(c)) plan(a);
    emit_stage(l, c, {s});
  }

  // An integer scalar operand (an insert's offset, a composed dim) as an
  // i64 value: a Constant is a literal.
  tir::ExprPtr int_operand(const ExprPtr& a) {
    if (auto* k = ir::expr_as<ir::Constant>(a)) return tir::i64(k->int_value());
    return scalar_value(slot_vars(slot_of_.at(a.get())));
  }

  // Lowered through TIR (lower_loop_nest.h), printed by the CPU printer.
  void emit_elementwise(size_t s, const ExprPtr& e, const std::string& what, bool root_inline = false) {
    StageEnv env{[this](const Expr* x) -> long {
                   auto it = slot_of_.find(x);
                   return it == slot_of_.end() ? -1 : static_cast<long>(it->second);
                 },
                 [this](size_t k) -> const SlotVars& { return slot_vars(k); },
                 [this](const ir::Call& c) { return fused_.count(&c) > 0; }, err_var(),
                 [this](const ir::ShapeDim& d) -> tir::ExprPtr {
                   if (d.is_static()) return tir::i64(d.value());
                   return runtime_scalar("extent " + d.to_string(), RuntimeScalar{RuntimeScalar::kExtent, d, 0, 1, 0, 0, 0, ""});
                 },
                 [this](const ir::Call& c, size_t b) -> tir::ExprPtr {
                   const auto& sl = static_cast<const ops::Slice&>(*c.op());
                   if (notes_.unchecked.count(&c) && sl.begin.at(b).is_static()) return tir::i64(sl.begin[b].value());
                   std::ostringstream key;
                   key << "slice " << &c << " " << b;
                   return runtime_scalar(key.str(), RuntimeScalar{RuntimeScalar::kSliceBegin, sl.begin.at(b), sl.end.at(b),
                                                                  sl.strides.at(b), tensor_type(*c.args()[0]).shape()[b],
                                                                  tensor_type(c).shape()[b], b, ""});
                 },
                 [this](const ir::Call& c) { return !notes_.unchecked.count(&c); },
                 [this](const ir::Call& c) { return notes_.compute_type_sums.count(&c) > 0; }, nullptr};
    env.produced = std::exchange(producing_, nullptr);
    LoweredStage l;
    l.stage = tir::bind_common_calls(
        tir::hoist_loop_invariants(lower_stage(env, s, e, what, root_inline, &l.may_fail, &l.precheck)));
    emit_lowered(l);
  }

  // Verifies a lowered stage, records its TIR and prints it: its precheck
  // among the entry's checks that run before any stage, the stage itself in
  // order. Parallel loops get their serial twin below the threshold here.
  void emit_lowered(const LoweredStage& l) {
    const tir::StmtPtr stage = tir::split_parallel_threshold(l.stage);
    may_fail_ = may_fail_ || l.may_fail;
    err_var();
    std::vector<tir::VarPtr> entry;
    for (const auto& [v, name] : entry_names_) entry.push_back(v);
    tir::verify(tir::Function{"stage", entry, stage});
    if (l.precheck) {
      tir::verify(tir::Function{"precheck", entry, l.precheck});
      tir_ << tir::to_string(l.precheck);
      prechecks_ << "  {\n" << printer().stmt(l.precheck, 1) << "  }\n";
    }
    tir_ << tir::to_string(stage);
    stages_ << "  {\n" << printer().stmt(stage, 1) << "  }\n";
  }

  // What a stage lowering sees of the entry (entry_vars.h).
  EntryVars entry_vars() {
    err_var();
    return EntryVars{[this](size_t k) -> const SlotVars& { return slot_vars(k); },
                     [this](size_t k) { return slots_[k].kind == Slot::kInput; },
                     err_,
                     info_,
                     rt_,
                     rs_,
                     [this](const RuntimeScalar& r) {
                       scalars_.push_back(r);
                       return scalars_.size() - 1;
                     }};
  }

  // The entry's slot k as TIR variables: data as B[k] typed, shape and
  // strides as the entry's sh<k> / st<k>.
  const SlotVars& slot_vars(size_t k) {
    while (slot_vars_.size() < slots_.size()) {
      const size_t n = slot_vars_.size();
      const ir::DType d = slots_[n].type->dtype();
      SlotVars v{tir::Var::make("B" + S(n), tir::Type::pointer(d)),
                 tir::Var::make("sh" + S(n), tir::Type::pointer(DType::kI64)),
                 tir::Var::make("st" + S(n), tir::Type::pointer(DType::kI64)), slots_[n].type.get()};
      entry_names_.emplace_back(v.data, "static_cast<" + ctype(d) + "*>(B[" + S(n) + "])");
      entry_names_.emplace_back(v.shape, "sh" + S(n));
      entry_names_.emplace_back(v.strides, "st" + S(n));
      slot_vars_.push_back(std::move(v));
    }
    return slot_vars_.at(k);
  }
  // The entry's error flag; also declares the entry's other variables a
  // stage may read: the runtime table, its rt->info and the run-time
  // scalars RS.
  const tir::VarPtr& err_var() {
    if (!err_) {
      err_ = tir::Var::make("err", tir::Type::pointer(DType::kI32));
      entry_names_.emplace_back(err_, "err");
      rt_ = tir::Var::make("rt", tir::Type::opaque_handle());
      entry_names_.emplace_back(rt_, "rt");
      info_ = tir::Var::make("info", tir::Type::pointer(DType::kI64));
      entry_names_.emplace_back(info_, "rt->info");
      rs_ = tir::Var::make("RS", tir::Type::pointer(DType::kI64));
      entry_names_.emplace_back(rs_, "RS");
      // The entry's own locals: no stage variable may take their names.
      for (const char* n : {"B", "P", "SH", "ST", "err_"})
        entry_names_.emplace_back(tir::Var::make(n, tir::Type::scalar(DType::kI64)), n);
    }
    return err_;
  }
  // Run-time scalar `sc` (one per key) as the entry reads it: RS[i].
  tir::ExprPtr runtime_scalar(const std::string& key, const RuntimeScalar& sc) {
    auto it = scalar_index_.find(key);
    if (it == scalar_index_.end()) {
      scalars_.push_back(sc);
      it = scalar_index_.emplace(key, scalars_.size() - 1).first;
    }
    err_var();
    return tir::load(rs_, tir::i64(static_cast<int64_t>(it->second)));
  }
  // A printer per stage: it names variables by node, and a stage's nodes
  // die with it.
  cpu::CppPrinter printer() {
    err_var();
    cpu::CppPrinter p;
    for (const auto& [v, name] : entry_names_) p.predeclare(v, name);
    return p;
  }

  // The buffer of projection #i of multi-output call e: its output slot,
  // or a temporary when it is not an output.
  size_t projection_slot(const ExprPtr& e, int64_t i) {
    auto p = projections_.find({e.get(), i});
    if (p != projections_.end())
      if (auto it = slot_of_.find(p->second); it != slot_of_.end()) return it->second;
    auto* tt = static_cast<const ir::TupleType*>(e->type().get());
    size_t s = add_slot(Slot::kTemp, num_temps_,
                        std::static_pointer_cast<const ir::TensorType>(tt->fields().at(static_cast<size_t>(i))));
    if (p != projections_.end()) slot_of_[p->second] = s;
    return s;
  }

  std::string assemble() const {
    std::ostringstream o;
    o << "extern \"C\" int TF_ENTRY(void* const* P, const int64_t* SH, const int64_t* ST, const tf_rt* rt) {\n";
    o << "  (void)rt;\n";
    o << "  int err_ = 0; int* const err = &err_; (void)err;\n";
    o << "  void* B[" << (slots_.empty() ? 1 : slots_.size()) << "];\n";
    size_t off = 0;
    for (size_t k = 0; k < slots_.size(); ++k) {
      const size_t rk = slots_[k].type->rank();
      o << "  const int64_t* sh" << k << " = SH + " << off << "; const int64_t* st" << k << " = ST + " << off
        << "; (void)sh" << k << "; (void)st" << k << ";\n";
      off += rk;
      o << "  B[" << k << "] = P[" << k << "];\n";  // temporaries too: the host allocates them
    }
    o << "  const int64_t* RS = SH + " << off << "; (void)RS;\n";
    o << prechecks_.str();  // may return: nothing is allocated or written yet
    o << stages_.str();
    o << "  return __atomic_load_n(err, __ATOMIC_RELAXED);\n";
    o << "}\n";
    return o.str();
  }

  const std::vector<ExprPtr>& seg_inputs_;
  const std::vector<ExprPtr>& seg_outputs_;
  const std::unordered_set<const Expr*>& copied_;
  const DecompositionNotes& notes_;  // what the decompositions said of the nodes they built
  std::unordered_map<const Expr*, ExprPtr> producer_of_;   // a produced value -> the stage's root
  std::unordered_map<const Expr*, ExprPtr> producer_for_;  // a stage's root -> the value it produces
  ExprPtr producing_;  // the value the stage being emitted produces
  std::unordered_set<const Expr*> inputs_;  // nodes given in input slots
  std::vector<Slot> slots_;
  size_t num_temps_ = 0;
  std::vector<ExprPtr> outputs_;
  std::unordered_map<const Expr*, int> uses_;
  std::unordered_map<const Expr*, size_t> slot_of_;
  std::unordered_set<const Expr*> force_;
  std::map<std::pair<const Expr*, int64_t>, const Expr*> projections_;  // (call, index) -> its TupleGetItem
  std::unordered_set<const Expr*> planned_;
  std::ostringstream prechecks_;  // run before any allocation or stage; may return an error code
  std::ostringstream stages_;
  std::ostringstream tir_;  // the TIR of the stages lowered through it
  bool may_fail_ = false;
  std::vector<RuntimeScalar> scalars_;
  std::vector<const ir::Call*> reduces_;  // every Reduce, in first-use order
  std::unordered_map<const Expr*, std::vector<const ir::Call*>> users_;  // a value -> the calls reading it
  std::unordered_set<const Expr*> fused_;       // row reductions computed inside their readers' stages
  std::unordered_set<const Expr*> recomputed_;  // multi-use elementwise values each reader recomputes
  std::deque<SlotVars> slot_vars_;
  tir::VarPtr err_, rt_, info_, rs_;  // err_var()
  std::map<std::string, size_t> scalar_index_;  // runtime_scalar's keys
  std::vector<std::pair<tir::VarPtr, std::string>> entry_names_;  // the entry's variables, as spelled there
};

}  // namespace

Program generate(const ir::Function& fn) {
  if (!fn.body() || fn.is_prototype()) unsupported("a dispatch prototype");
  const std::vector<ExprPtr> inputs(fn.params().begin(), fn.params().end());
  return generate_segment(inputs, {split_tuple_calls(inline_calls(fn.body()))});
}

Program generate_segment(const std::vector<ExprPtr>& inputs, const std::vector<ExprPtr>& given) {
  // Built-in ops with a decomposition become their composition (decompose.h).
  DecompositionNotes notes;
  std::unordered_set<const Expr*> stop;
  for (const ExprPtr& i : inputs) stop.insert(i.get());
  std::vector<ExprPtr> outputs;
  for (const ExprPtr& o : given) outputs.push_back(decompose(o, stop, &notes));
  // Each view a stage refuses is copied instead, and the kernel generated
  // again (a handful of views at most; each is refused once).
  std::unordered_set<const Expr*> copied;
  for (;;) {
    try {
      return Generator(inputs, outputs, copied, notes).run();
    } catch (const ViewRefused& r) {
      TF_CHECK(copied.insert(r.node).second, "codegen: a view refused after it was copied");
    }
  }
}

}  // namespace tf::compiler
