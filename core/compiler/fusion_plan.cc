#include "core/compiler/fusion_plan.h"

#include <functional>
#include <string>

#include "core/compiler/emit_util.h"
#include "core/compiler/lower_loop_nest.h"
#include "core/compiler/scalar_lowering.h"
#include "core/compiler/stage_lowering.h"
#include "core/ops/tensor/tensor.h"

namespace tf::compiler {

using ir::DType;
using ir::Expr;
using ir::ExprPtr;

namespace {

bool is_reduce(const ir::Call& c) { return c.op() && c.op()->name() == "Reduce"; }

// An op with a scalar form (scalar_lowering.h): inlined into the loop nest
// of the stage that reads it, whichever op it is.
bool is_elementwise_call(const ir::Call& c) { return c.op() && find_scalar_lowering(c.op()->name()) != nullptr; }

bool is_transcendental_call(const ir::Call& c) {
  const ScalarLowering* l = c.op() ? find_scalar_lowering(c.op()->name()) : nullptr;
  return l && l->transcendental(*c.op());
}

// A value computed by a stage of its own (stage_lowering.h): always in memory.
bool has_own_stage(const ir::Call& c) { return find_stage_lowering(c.op()->name()) != nullptr; }

// Whether e's value depends on `target` (seen: nodes already searched).
bool reads(const ExprPtr& e, const Expr* target, std::unordered_set<const Expr*>& seen) {
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

}  // namespace

std::vector<ExprPtr> flat_operands(const ir::Call& c) {
  std::vector<ExprPtr> out;
  for (const ExprPtr& a : c.args()) {
    if (auto* t = ir::expr_as<ir::Tuple>(a)) out.insert(out.end(), t->fields().begin(), t->fields().end());
    else out.push_back(a);
  }
  return out;
}

FusionPlan::FusionPlan(const std::vector<ExprPtr>& inputs, const std::vector<ExprPtr>& outputs,
                       const std::unordered_set<const Expr*>& copied)
    : copied_(copied) {
  for (const ExprPtr& i : inputs) {
    tensor_type(*i);
    inputs_.insert(i.get());
    stored_.insert(i.get());
  }
  for (const ExprPtr& o : outputs) collect_outputs(o);
  for (const ExprPtr& o : outputs_) count_uses(o);
  decide_fusion();
  // The outputs the segment computes have slots from here on: a row stage
  // may produce one of them (choose_producers).
  for (const ExprPtr& o : outputs_)
    if (o->kind() == ir::ExprKind::kCall || o->kind() == ir::ExprKind::kTupleGetItem) stored_.insert(o.get());
  choose_producers();
}

bool FusionPlan::inline_view(const ir::Call& c) const { return c.op() && is_view(*c.op()) && !copied_.count(&c); }

int FusionPlan::uses(const Expr* e) const {
  auto it = uses_.find(e);
  return it == uses_.end() ? 0 : it->second;
}

const Expr* FusionPlan::projection(const Expr* e, int64_t i) const {
  auto it = projections_.find({e, i});
  return it == projections_.end() ? nullptr : it->second;
}

ExprPtr FusionPlan::producer_of(const Expr* e) const {
  auto it = producer_of_.find(e);
  return it == producer_of_.end() ? nullptr : it->second;
}

ExprPtr FusionPlan::produced_by(const Expr* e) const {
  auto it = produced_by_.find(e);
  return it == produced_by_.end() ? nullptr : it->second;
}

bool FusionPlan::materialized(const ir::Call& c) const {
  if (stored_.count(&c) || force_.count(&c)) return true;
  if (fused_.count(&c)) return false;
  auto it = uses_.find(&c);
  const bool shared = it != uses_.end() && it->second > 1 && !recomputed_.count(&c);
  if (inline_view(c)) return shared;
  return has_own_stage(c) || shared;
}

void FusionPlan::collect_outputs(const ExprPtr& e) {
  if (auto* t = ir::expr_as<ir::Tuple>(e)) {
    for (const ExprPtr& f : t->fields()) collect_outputs(f);
    return;
  }
  if (auto* g = ir::expr_as<ir::TupleGetItem>(e)) {
    if (auto* t = ir::expr_as<ir::Tuple>(g->tuple())) return collect_outputs(t->fields().at(g->index()));
  }
  tensor_type(*e);
  outputs_.push_back(e);
}

// Counts uses, checks that every reachable node is compiled, and marks the
// operands that must live in memory (MatMul reads whole matrices).
void FusionPlan::count_uses(const ExprPtr& e) {
  if (++uses_[e.get()] > 1 || inputs_.count(e.get())) return;
  switch (e->kind()) {
    case ir::ExprKind::kVar: unsupported("a free variable");
    case ir::ExprKind::kConstant: ctype(tensor_type(*e).dtype()); return;
    case ir::ExprKind::kCall: break;
    case ir::ExprKind::kTupleGetItem: {
      // A canonical projection (split_tuple_calls) of a multi-output op.
      const auto& g = static_cast<const ir::TupleGetItem&>(*e);
      if (g.tuple()->kind() != ir::ExprKind::kCall) unsupported("TupleGetItem of a computed tuple");
      projections_[{g.tuple().get(), g.index()}] = e.get();
      count_uses(g.tuple());
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
    for (const ExprPtr& a : flat_operands(c)) {
      if (a->kind() == ir::ExprKind::kConstant || a->kind() == ir::ExprKind::kTuple)
        unsupported(std::string(c.op()->name()) + " of a constant or a nested tuple");
      ctype(tensor_type(*a).dtype());
    }
    ctype(tensor_type(c).dtype());
    return read_operands(flat_operands(c));
  }
  if (const StageLowering* l = find_stage_lowering(c.op()->name())) {
    // A stage of its own: what it reads from memory, whether it can fail.
    const std::vector<ExprPtr> ops = flat_operands(c);
    if (c.type()->kind() == ir::TypeKind::kTensor) ctype(tensor_type(c).dtype());
    for (const ExprPtr& a : ops) {
      if (a->kind() == ir::ExprKind::kTuple) unsupported("a nested tuple operand");
      ctype(tensor_type(*a).dtype());
    }
    const StageNeeds needs = l->needs(c, ops);
    for (size_t i = 0; i < ops.size(); ++i)
      if (needs.in_memory.at(i)) force_.insert(ops[i].get());
    // A Transpose read in place: its operand is what lives in memory.
    for (size_t i = 0; i < needs.transposed_in_place.size(); ++i)
      if (needs.transposed_in_place[i]) force_.insert(static_cast<const ir::Call&>(*ops[i]).args().at(0).get());
    may_fail_ = may_fail_ || needs.may_fail;
    // A reduction is fused into its readers or a stage of its own:
    // decide_fusion forces its operand to memory when it is not fused
    // and cannot compute it inline.
    if (is_reduce(c)) reduces_.push_back(&c);
    return read_operands(ops);
  }
  check_elementwise(c);
  read_operands(c.args());
}

// An elementwise op: its scalar form (scalar_lowering.h) lowers it, and
// says itself whether it can fail. 8-bit floats are converted and moved,
// not computed on (emit_util.h).
void FusionPlan::check_elementwise(const ir::Call& c) {
  const ir::Op& op = *c.op();
  if (!find_scalar_lowering(op.name())) unsupported("op " + std::string(op.name()));
  const DType d = tensor_type(c).dtype();
  ctype(d);
  bool fp8 = is_fp8(d);
  for (const ExprPtr& a : c.args()) fp8 = fp8 || is_fp8(tensor_type(*a).dtype());
  if (fp8 && op.name() != "Cast") unsupported("fp8 " + std::string(op.name()));
}

// Row reductions (lower_loop_nest.h) are computed inside the stages that
// read them when every reader is an elementwise value of the reduction's
// operand shape whose own readers stay in that shape until something
// stores it (so the reduction's rows are the stage's rows). An elementwise
// value read more than once is recomputed by each reader rather than
// stored and read back when that is cheap (a few arithmetic ops, no
// exp-like call) or when a fused reduction reads it (softmax's exp(x - m),
// read by its sum and by the division). Whatever does not qualify is
// materialized, and a reduction that is not fused reads its operand from
// memory or, an elementwise one nothing else needs stored, computes it
// where it reads it (computable_inline).
void FusionPlan::decide_fusion() {
  std::unordered_set<const Expr*> is_output;
  for (const ExprPtr& o : outputs_) is_output.insert(o.get());
  for (const ir::Call* r : reduces_)
    if (is_row_reduce(*r) && !is_output.count(r) && !force_.count(r)) fused_.insert(r);
  for (bool changed = true; changed;) {
    changed = false;
    choose_recomputed(is_output);
    // In the reductions' first-use order, not the set's: which reductions
    // stay fused can depend on the order they are examined in, and the
    // set's order is the nodes' addresses (a kernel generated twice must
    // come out the same: its cache key and an AOT library's entry key are
    // hashes of the text).
    for (const ir::Call* r : reduces_) {
      if (!fused_.count(r)) continue;
      const ir::TensorType& shape = tensor_type(*r->args()[0]);
      bool ok = true;
      for (const ir::Call* u : users_[r]) ok = ok && row_closed(*u, shape, is_output);
      if (!ok) {
        fused_.erase(r);
        changed = true;
      }
    }
  }
  store_transposed_rows();
  choose_recomputed(is_output);
  for (const ir::Call* r : reduces_) {
    if (fused_.count(r)) continue;  // its stage checks empty rows first (a precheck)
    // A Transpose is read in place (through its axes: a sum over the rows
    // of x.T folds tiles of x's rows, lower_reduce.cc) rather than a
    // transposed copy stored first; what lives in memory is its operand.
    // One stored anyway (an output) is read from its slot.
    const ExprPtr& x = r->args()[0];
    const ir::Call* t = transpose_read_in_place(x);
    const bool in_place = t && inline_view(*t) && !is_output.count(t);
    const ExprPtr& read = in_place ? t->args()[0] : x;
    // An elementwise operand is computed by the stage itself where it
    // fits (prologue fusion), else stored first.
    if (computable_inline(read, is_output)) computes_operand_.insert(r);
    else force_.insert(read.get());
    // A reduce stage records a mean over an empty axis where it runs.
    if (static_cast<const ops::Reduce&>(*r->op()).kind == ops::ReduceKind::kMean) may_fail_ = true;
  }
}

// A fused row reduction's stage walks its operand along rows. Through a
// Transpose that moves the last axis that walk goes down the operand's
// columns, a line per element: softmax of a transposed [2048, 4096] f32
// took 109 ms on one thread (eager 9.8). Such a Transpose is stored
// instead (a copy of transposed planes, lower_stages.h) and the row stage
// reads its rows.
void FusionPlan::store_transposed_rows() {
  std::unordered_set<const Expr*> seen;
  std::function<void(const ExprPtr&)> walk = [&](const ExprPtr& e) {
    auto* c = ir::expr_as<ir::Call>(e);
    if (!c || !c->op() || inputs_.count(c) || !seen.insert(c).second) return;
    if (inline_view(*c) && c->op()->name() == "Transpose") {
      const auto rank = static_cast<int64_t>(tensor_type(*c).rank());
      const int64_t last = static_cast<const ops::Transpose&>(*c->op()).axes.back();
      if ((last + rank) % rank != rank - 1) {
        force_.insert(c);
        return;
      }
    }
    // Read from memory, or a reduction whose own operand is walked.
    if (is_reduce(*c) || stored_.count(c) || force_.count(c) || !(is_elementwise_call(*c) || inline_view(*c))) return;
    for (const ExprPtr& a : flat_operands(*c)) walk(a);
  };
  for (const ir::Call* r : reduces_)
    if (fused_.count(r)) walk(r->args()[0]);
}

// Whether value u of a row stage keeps the rows of `shape` until stored:
// u has that shape (and may be stored: its stage iterates over those rows),
// or is a scalar of the row (the shape with its last extent 1, as
// mean(x) + eps) that is only read inline. A scalar of the row that is
// stored (an output, as mean(x) + mean(x * x) returned) is a stage over its
// own rows of one element, which cannot compute the reductions over x's.
bool FusionPlan::row_closed(const ir::Call& u, const ir::TensorType& shape,
                            const std::unordered_set<const Expr*>& is_output) const {
  if (!is_elementwise_call(u)) return false;
  const ir::TensorType& t = tensor_type(u);
  const bool full = t.shape() == shape.shape();
  bool scalar = t.rank() == shape.rank() && is_static_one(t.shape().back());
  for (size_t a = 0; scalar && a + 1 < t.rank(); ++a) scalar = t.shape()[a] == shape.shape()[a];
  if (!full && !scalar) return false;
  if (materialized(u) || is_output.count(&u)) return full;
  auto it = users_.find(&u);
  if (it == users_.end()) return true;
  for (const ir::Call* v : it->second)
    if (!fused_.count(v) && !row_closed(*v, shape, is_output)) return false;
  return true;
}

void FusionPlan::choose_recomputed(const std::unordered_set<const Expr*>& is_output) {
  recomputed_.clear();
  for (const auto& [e, n] : uses_) {
    auto* c = e->kind() == ir::ExprKind::kCall ? static_cast<const ir::Call*>(e) : nullptr;
    if (n < 2 || !c || !(is_elementwise_call(*c) || inline_view(*c)) || is_output.count(e) || force_.count(e))
      continue;
    bool read_by_fused = false;
    if (auto it = users_.find(e); it != users_.end())
      for (const ir::Call* u : it->second) read_by_fused = read_by_fused || fused_.count(u);
    if (read_by_fused || cheap(*c)) recomputed_.insert(e);
  }
}

// A few arithmetic ops over materialized values: no exp-like call, at most
// 8 nodes inlined (views cost nothing: they are addresses).
bool FusionPlan::cheap(const ir::Call& c) const {
  int budget = 8;
  std::function<bool(const ir::Call&)> walk = [&](const ir::Call& k) {
    if (!(is_elementwise_call(k) || inline_view(k)) || is_transcendental_call(k)) return false;
    if (&k != &c && !inline_view(k) && --budget < 0) return false;
    for (const ExprPtr& a : flat_operands(k)) {
      auto* ak = ir::expr_as<ir::Call>(a);
      if (ak && !inputs_.count(ak) && !fused_.count(ak) && !walk(*ak)) return false;
    }
    return true;
  };
  return walk(c);
}

// Whether a Reduce stage can compute `root` where it reads it
// (inline_operand.h): an elementwise value nothing else needs stored, whose
// tree down to stored values holds elementwise calls and constants alone,
// at most kMaxInlineOps of them (a column pass computes the tree once per
// row it folds, and the generated code grows with it), and no 8-bit float.
bool FusionPlan::computable_inline(const ExprPtr& root, const std::unordered_set<const Expr*>& is_output) const {
  constexpr int kMaxInlineOps = 16;
  auto* c = ir::expr_as<ir::Call>(root);
  if (!c || !c->op() || !is_elementwise_call(*c) || is_output.count(c) || materialized(*c)) return false;
  int ops = 0;
  std::function<bool(const ExprPtr&)> walk = [&](const ExprPtr& e) {
    if (is_fp8(tensor_type(*e).dtype())) return false;
    auto* k = ir::expr_as<ir::Call>(e);
    if (!k || inputs_.count(k) || (k != c && materialized(*k))) return true;  // a leaf or a constant
    if (!is_elementwise_call(*k) || ++ops > kMaxInlineOps) return false;
    for (const ExprPtr& a : k->args())
      if (!walk(a)) return false;
    return true;
  };
  return walk(root);
}

// A row stage (one whose value reads fused reductions) that reads a
// materialized elementwise value h of its own shape computes h in its first
// pass and stores it (StageEnv::produced), when h's own value reads no
// fused reduction and nothing else the stage reads depends on h: one pass
// over h's operands instead of a stage writing h and this one reading it
// back from memory (residual + RMSNorm returning both).
void FusionPlan::choose_producers() {
  std::unordered_set<const Expr*> seen;
  std::function<void(const ExprPtr&)> visit = [&](const ExprPtr& e) {
    if (!seen.insert(e.get()).second || inputs_.count(e.get())) return;
    if (auto* g = ir::expr_as<ir::TupleGetItem>(e)) return visit(g->tuple());
    auto* c = ir::expr_as<ir::Call>(e);
    if (!c || !c->op()) return;
    for (const ExprPtr& a : flat_operands(*c)) visit(a);
    if (materialized(*c) && is_elementwise_call(*c)) choose_producer(e);
  };
  for (const ExprPtr& o : outputs_) visit(o);
}

void FusionPlan::choose_producer(const ExprPtr& root) {
  std::vector<ExprPtr> frontier;  // the materialized values the stage reads
  bool row = false;
  std::unordered_set<const Expr*> seen;
  std::function<void(const ExprPtr&)> walk = [&](const ExprPtr& e) {
    auto* c = ir::expr_as<ir::Call>(e);
    if (!c || !c->op() || inputs_.count(c) || !seen.insert(c).second) return;
    if (c != root.get() && materialized(*c)) return frontier.push_back(e);
    row = row || fused_.count(c) > 0;
    for (const ExprPtr& a : flat_operands(*c)) walk(a);
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
    produced_by_[root.get()] = h;
    return;
  }
}

// Whether e's inlined tree (through elementwise ops) has a fused reduction
// (seen: nodes already searched, so a shared DAG is walked once).
bool FusionPlan::reaches_fused(const ExprPtr& e, std::unordered_set<const Expr*>& seen) const {
  auto* c = ir::expr_as<ir::Call>(e);
  if (!c || !c->op() || inputs_.count(e.get()) || !seen.insert(c).second) return false;
  if (fused_.count(c)) return true;
  if (!is_elementwise_call(*c) || stored_.count(c)) return false;
  for (const ExprPtr& a : c->args())
    if (reaches_fused(a, seen)) return true;
  return false;
}

}  // namespace tf::compiler
