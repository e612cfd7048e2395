#include "core/spmd/segments.h"

#include <algorithm>
#include <map>
#include <unordered_set>

#include "core/ir/error.h"
#include "core/spmd/blocks.h"
#include "core/spmd/executor.h"

namespace tf::spmd {
namespace {

// The phases of fn's body (segments.h): a crossing, a loop or a function
// call starts a new phase; an op, a tuple and a projection keep the
// latest phase of their operands. Owned: the op calls (and projections of
// their tuple results) a segment computes.
class Phases {
 public:
  explicit Phases(const ir::Function& fn) {
    for (const auto& p : fn.params()) phase_[p.get()] = 0;
    visit(fn.body());
  }
  const std::vector<ir::ExprPtr>& order() const { return order_; }  // operands before users
  int64_t phase(const ir::Expr* e) const { return phase_.at(e); }
  bool owned(const ir::Expr* e) const { return owned_.count(e) != 0; }

 private:
  void visit(const ir::ExprPtr& e) {
    if (phase_.count(e.get())) return;
    int64_t p = 0;
    bool own = false;
    switch (e->kind()) {
      case ir::ExprKind::kCall: {
        const auto& c = *ir::expr_as<ir::Call>(e);
        for (const auto& a : c.args()) p = std::max(p, operand_phase(a));
        own = !crosses_ranks(c);
        if (!own) ++p;
        break;
      }
      case ir::ExprKind::kTuple:
        for (const auto& f : ir::expr_as<ir::Tuple>(e)->fields()) p = std::max(p, operand_phase(f));
        break;
      case ir::ExprKind::kTupleGetItem: {
        const ir::ExprPtr& t = ir::expr_as<ir::TupleGetItem>(e)->tuple();
        p = operand_phase(t);
        own = owned(t.get());  // a projection of an owned op's tuple result
        break;
      }
      case ir::ExprKind::kGridRegion: {
        const auto& f = ir::expr_as<ir::GridRegionExpr>(e)->fields();
        for (const auto& a : f.init_args) p = std::max(p, operand_phase(a));
        ++p;  // its body runs on the executor
        break;
      }
      default: break;  // constants: phase 0
    }
    phase_[e.get()] = p;
    if (own) owned_.insert(e.get());
    order_.push_back(e);
  }

  int64_t operand_phase(const ir::ExprPtr& a) {
    visit(a);
    return phase_.at(a.get());
  }

  std::unordered_map<const ir::Expr*, int64_t> phase_;
  std::unordered_set<const ir::Expr*> owned_;
  std::vector<ir::ExprPtr> order_;
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

}  // namespace

std::shared_ptr<const SegmentPlan> plan_segments(const ir::Function& fn) {
  auto plan = std::make_shared<SegmentPlan>();
  if (!fn.body()) return plan;
  Phases phases(fn);
  // Outputs per phase: owned tensor values read by a node of another phase,
  // by a node the executor computes, or returned.
  std::map<int64_t, std::vector<ir::ExprPtr>> outputs;
  std::unordered_set<const ir::Expr*> is_output;
  std::map<int64_t, std::string> left;  // phases the executor keeps, and why
  auto mark = [&](const ir::ExprPtr& v) {
    if (!phases.owned(v.get()) || !is_output.insert(v.get()).second) return;
    if (!ir::as_tensor(v->type())) left[phases.phase(v.get())] = "a tuple value leaves it";
    outputs[phases.phase(v.get())].push_back(v);
  };
  auto operands = [](const ir::ExprPtr& e) {
    std::vector<ir::ExprPtr> ops;
    if (auto* c = ir::expr_as<ir::Call>(e)) ops = c->args();
    if (auto* t = ir::expr_as<ir::Tuple>(e)) ops = t->fields();
    if (auto* g = ir::expr_as<ir::TupleGetItem>(e)) ops = {g->tuple()};
    if (auto* r = ir::expr_as<ir::GridRegionExpr>(e)) ops = r->fields().init_args;
    return ops;
  };
  for (const auto& u : phases.order())
    for (const auto& v : operands(u))
      if (!phases.owned(u.get()) || phases.phase(u.get()) != phases.phase(v.get())) mark(v);
  mark(fn.body());
  std::string reasons;
  auto leave = [&](int64_t phase, const std::string& why) {
    reasons += (reasons.empty() ? "" : "; ") + std::string("segment ") + std::to_string(phase) + ": " + why;
  };
  for (auto& [phase, outs] : outputs) {
    if (left.count(phase)) {
      leave(phase, left[phase]);
      continue;
    }
    SegmentBuilder b(phases, phase);
    Segment seg;
    try {
      seg = b.finish(fn.name() + "__segment" + std::to_string(plan->segments_.size()), outs);
      seg.code = compiler::compile(*seg.local);
    } catch (const ir::Error& e) {
      if (e.kind() != ir::ErrorKind::kUnsupported) throw;
      leave(phase, e.what());
      continue;
    }
    const auto index = static_cast<int64_t>(plan->segments_.size());
    for (const auto& e : phases.order())
      if (b.mine(e.get())) plan->owner_[e.get()] = index;
    plan->segments_.push_back(std::move(seg));
  }
  plan->fallback_reason_ = std::move(reasons);
  return plan;
}

}  // namespace tf::spmd
