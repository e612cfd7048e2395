#include "core/spmd/segments.h"

#include <algorithm>
#include <map>
#include <unordered_set>

#include "core/ir/error.h"
#include "core/spmd/blocks.h"
#include "core/spmd/executor.h"

namespace tf::spmd {
namespace {

// The values e reads in the body it belongs to (a loop's own body is a
// scope of its own: only its initial values are read here).
std::vector<ir::ExprPtr> operands(const ir::ExprPtr& e) {
  if (auto* c = ir::expr_as<ir::Call>(e)) return c->args();
  if (auto* t = ir::expr_as<ir::Tuple>(e)) return t->fields();
  if (auto* g = ir::expr_as<ir::TupleGetItem>(e)) return {g->tuple()};
  if (auto* r = ir::expr_as<ir::GridRegionExpr>(e)) return r->fields().init_args;
  return {};
}

// The phases of one body (a function's, or a loop's per iteration): a
// crossing, a loop or a function call starts a new phase; an op, a tuple
// and a projection keep the latest phase of their operands. Owned: the op
// calls (and projections of their tuple results) a segment computes. In a
// loop body only values that depend on the iteration (its induction
// variable and carried values) are owned; the others are the enclosing
// body's, computed once outside, and read as inputs.
class Phases {
 public:
  Phases(const std::vector<ir::VarPtr>& params, const std::vector<ir::ExprPtr>& roots, bool loop_body)
      : loop_body_(loop_body) {
    for (const auto& p : params) {
      phase_[p.get()] = 0;
      variant_.insert(p.get());
    }
    for (const auto& r : roots) visit(r);
  }
  const std::vector<ir::ExprPtr>& order() const { return order_; }  // operands before users
  int64_t phase(const ir::Expr* e) const { return phase_.at(e); }
  bool owned(const ir::Expr* e) const { return owned_.count(e) != 0; }
  // In a loop body: the enclosing body's values that it reads.
  const std::vector<ir::ExprPtr>& captures() const { return captures_; }

 private:
  void visit(const ir::ExprPtr& e) {
    if (phase_.count(e.get())) return;
    std::vector<ir::ExprPtr> ops = operands(e);
    bool variant = false;
    for (const auto& a : ops) {
      visit(a);
      variant = variant || variant_.count(a.get());
    }
    int64_t p = 0;
    bool own = false;
    if (loop_body_ && !variant) {  // the enclosing body's value
      phase_[e.get()] = 0;
      order_.push_back(e);
      return;
    }
    for (const auto& a : ops)
      if (loop_body_ && !variant_.count(a.get()) && a->kind() != ir::ExprKind::kConstant &&
          captured_.insert(a.get()).second)
        captures_.push_back(a);
    for (const auto& a : ops) p = std::max(p, phase_.at(a.get()));
    switch (e->kind()) {
      case ir::ExprKind::kCall:
        own = !crosses_ranks(*ir::expr_as<ir::Call>(e));
        if (!own) ++p;
        break;
      case ir::ExprKind::kTupleGetItem:
        own = owned(ir::expr_as<ir::TupleGetItem>(e)->tuple().get());  // a projection of an owned op's tuple
        break;
      case ir::ExprKind::kGridRegion: ++p; break;  // its body runs per iteration (a plan of its own)
      default: break;                              // tuples keep their operands' phase; constants 0
    }
    phase_[e.get()] = p;
    if (variant) variant_.insert(e.get());
    if (own) owned_.insert(e.get());
    order_.push_back(e);
  }

  bool loop_body_;
  std::unordered_map<const ir::Expr*, int64_t> phase_;
  std::unordered_set<const ir::Expr*> owned_, variant_, captured_;
  std::vector<ir::ExprPtr> order_, captures_;
};

// One segment's local function: its owned nodes rebuilt over local types;
// constants and tuple constructions rebuilt inside each segment that reads
// them (they never cross a segment's boundary themselves); anything else a
// parameter.
class SegmentBuilder {
 public:
  SegmentBuilder(const Phases& phases, int64_t phase) : phases_(phases), phase_(phase) {}

  ir::ExprPtr local(const ir::ExprPtr& e) {
    if (auto it = built_.find(e.get()); it != built_.end()) return it->second;
    ir::ExprPtr out;
    if (mine(e.get())) {
      if (e->kind() == ir::ExprKind::kCall) {
        const auto& c = *ir::expr_as<ir::Call>(e);
        std::vector<ir::ExprPtr> args;
        for (const auto& a : c.args()) args.push_back(local(a));
        out = ir::Call::make_op(c.op(), std::move(args), local_type(c.type()), c.span());
      } else {
        const auto& g = *ir::expr_as<ir::TupleGetItem>(e);
        out = ir::TupleGetItem::make(local(g.tuple()), g.index(), g.span());
      }
    } else if (e->kind() == ir::ExprKind::kConstant) {
      out = e;  // plain-typed: the same on every rank
    } else if (e->kind() == ir::ExprKind::kTuple) {
      std::vector<ir::ExprPtr> fields;
      for (const auto& f : ir::expr_as<ir::Tuple>(e)->fields()) fields.push_back(local(f));
      out = ir::Tuple::make(std::move(fields), e->span());
    } else {
      if (!ir::as_tensor(e->type())) unsupported("a segment reads a tuple value");
      out = ir::Var::make("in" + std::to_string(inputs_.size()), local_type(e->type()));
      inputs_.push_back(e);
      params_.push_back(std::static_pointer_cast<const ir::Var>(out));
    }
    built_[e.get()] = out;
    return out;
  }

  bool mine(const ir::Expr* e) const { return phases_.owned(e) && phases_.phase(e) == phase_; }

  // The local function returning `outputs` (owned tensor values of this
  // segment that something outside it reads).
  Segment finish(const std::string& name, const std::vector<ir::ExprPtr>& outputs) {
    std::vector<ir::ExprPtr> results;
    std::vector<ir::TypePtr> types;
    for (const auto& o : outputs) {
      results.push_back(local(o));
      types.push_back(results.back()->type());
    }
    ir::Function::Fields f;
    f.name = name;
    f.body = results.size() == 1 ? results[0] : ir::Tuple::make(results);
    f.return_type = results.size() == 1 ? types[0] : ir::TupleType::make(types);
    f.params = params_;
    Segment s;
    s.local = ir::Function::make(std::move(f));
    s.inputs = inputs_;
    s.outputs = outputs;
    return s;
  }

 private:
  const Phases& phases_;
  int64_t phase_;
  std::unordered_map<const ir::Expr*, ir::ExprPtr> built_;
  std::vector<ir::ExprPtr> inputs_;
  std::vector<ir::VarPtr> params_;
};

// A loop body's parameters: its induction variable, then its carried values.
std::vector<ir::VarPtr> loop_params(const ir::GridRegionExpr& g) {
  std::vector<ir::VarPtr> params{g.fields().induction_var};
  for (const auto& c : g.fields().carried_args) params.push_back(c);
  return params;
}

}  // namespace

namespace detail {

// Plans one body and, through it, every loop body and called function it
// reaches (each once: plans are shared by every place that runs them).
class Planner {
 public:
  explicit Planner(std::shared_ptr<SegmentPlan::Nested> nested) : nested_(std::move(nested)) {}

  std::shared_ptr<SegmentPlan> plan(const std::string& name, const std::vector<ir::VarPtr>& params,
                                    const std::vector<ir::ExprPtr>& roots, bool loop_body) {
    auto plan = std::make_shared<SegmentPlan>();
    plan->nested_ = nested_.get();
    Phases phases(params, roots, loop_body);
    plan->captures_ = phases.captures();  // == loop_captures(g) for a loop body
    for (const auto& e : phases.order()) plan_inner(name, e);
    // Outputs per phase: owned values read by a node of another phase, by a
    // node the executor computes, or returned.
    std::map<int64_t, std::vector<ir::ExprPtr>> outputs;
    std::unordered_set<const ir::Expr*> is_output;
    std::map<int64_t, std::string> left;  // phases the executor keeps, and why
    auto mark = [&](const ir::ExprPtr& v) {
      if (!phases.owned(v.get()) || !is_output.insert(v.get()).second) return;
      if (!ir::as_tensor(v->type())) left[phases.phase(v.get())] = "a tuple value leaves it";
      outputs[phases.phase(v.get())].push_back(v);
    };
    for (const auto& u : phases.order())
      for (const auto& v : operands(u))
        if (!phases.owned(u.get()) || phases.phase(u.get()) != phases.phase(v.get())) mark(v);
    for (const auto& r : roots) mark(r);
    for (auto& [phase, outs] : outputs) {
      const std::string where = name + " segment " + std::to_string(phase);
      if (left.count(phase)) {
        leave(where, left[phase]);
        continue;
      }
      SegmentBuilder b(phases, phase);
      Segment seg;
      try {
        seg = b.finish(name + "__segment" + std::to_string(plan->segments_.size()), outs);
        seg.code = compiler::compile(*seg.local);
      } catch (const ir::Error& e) {  // no compiler, or a construct it does not take
        leave(where, e.what());
        continue;
      }
      const auto index = static_cast<int64_t>(plan->segments_.size());
      for (const auto& e : phases.order())
        if (b.mine(e.get())) plan->owner_[e.get()] = index;
      plan->segments_.push_back(std::move(seg));
    }
    return plan;
  }

  std::string reasons;

 private:
  // A loop's body and a called function's (each variant's) get plans of
  // their own.
  void plan_inner(const std::string& name, const ir::ExprPtr& e) {
    if (auto* g = ir::expr_as<ir::GridRegionExpr>(e)) {
      if (nested_->count(g)) return;
      (*nested_)[g] = nullptr;
      (*nested_)[g] = plan(name + "__loop", loop_params(*g), g->fields().yield_values, true);
    } else if (auto* c = ir::expr_as<ir::Call>(e); c && c->callee()) {
      std::vector<ir::FunctionPtr> fns = c->callee()->is_prototype() ? c->callee()->variants()
                                                                     : std::vector<ir::FunctionPtr>{c->callee()};
      for (const auto& f : fns) {
        if (nested_->count(f.get()) || !f->body()) continue;
        (*nested_)[f.get()] = nullptr;
        (*nested_)[f.get()] = plan(f->name(), f->params(), {f->body()}, false);
      }
    }
  }

  void leave(const std::string& where, const std::string& why) {
    reasons += (reasons.empty() ? "" : "; ") + where + ": " + why;
  }

  std::shared_ptr<SegmentPlan::Nested> nested_;
};

}  // namespace detail

std::vector<ir::ExprPtr> loop_captures(const ir::GridRegionExpr& g) {
  return Phases(loop_params(g), g.fields().yield_values, true).captures();
}

const SegmentPlan* SegmentPlan::nested(const ir::Expr* scope) const {
  if (!nested_) return nullptr;
  auto it = nested_->find(scope);
  return it == nested_->end() ? nullptr : it->second.get();
}

std::shared_ptr<const SegmentPlan> plan_segments(const ir::Function& fn) {
  if (!fn.body()) return std::make_shared<SegmentPlan>();
  auto nested = std::make_shared<SegmentPlan::Nested>();
  detail::Planner planner(nested);
  auto plan = planner.plan(fn.name(), fn.params(), {fn.body()}, false);
  plan->nested_owner_ = std::move(nested);
  plan->fallback_reason_ = std::move(planner.reasons);
  return plan;
}

}  // namespace tf::spmd
