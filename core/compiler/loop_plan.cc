#include "core/compiler/loop_plan.h"

#include <atomic>
#include <map>
#include <set>
#include <unordered_set>

#include "core/compiler/inline.h"
#include "core/compiler/stage_lowering.h"
#include "core/ir/error.h"

namespace tf::compiler {
namespace {

using ir::Expr;
using ir::ExprPtr;
using runtime::NDArray;

// A value of a scope: a node, or projection #k of a multi-carry loop (-1: the node itself).
using Reg = std::pair<const Expr*, int64_t>;
using Regs = std::map<Reg, NDArray>;

std::atomic<int64_t> g_in_place_runs{0};

[[noreturn]] void unsupported(const std::string& what) {
  ir::fail(ir::ErrorKind::kUnsupported, "native codegen: " + what + " is not compiled yet");
}

struct Scope;

struct Segment {
  std::shared_ptr<const CompiledFunction> kernel;
  std::vector<Reg> reads;                 // one per input slot
  std::vector<ir::TensorTypePtr> types;   // of the outputs (= the scope's roots)
};

struct Loop {
  const ir::GridRegionExpr* node;
  std::vector<RuntimeScalar> bounds;      // start, extent, step
  std::shared_ptr<Scope> init, body;
  std::vector<ir::TensorTypePtr> carried;
  // Carry k is yielded by an InsertSlice / CacheUpdate of carry k itself,
  // its only reader: one buffer, written in place from the second iteration.
  std::vector<bool> in_place;
};

// Steps in order; the last computes the roots, unless every root is given
// (then `given` names them and nothing runs).
struct Scope {
  std::vector<Loop> loops;
  Segment final;
  std::vector<Reg> given;
};

ir::TensorTypePtr tensor_of(const ir::TypePtr& t) {
  auto tt = std::dynamic_pointer_cast<const ir::TensorType>(t);
  if (!tt) unsupported("a non-tensor loop value");
  return tt;
}

// The tensors of a root: a Tuple's fields, a multi-carry loop's projections.
void flatten_root(const ExprPtr& e, std::vector<ExprPtr>* out) {
  if (auto* t = ir::expr_as<ir::Tuple>(e)) {
    for (const ExprPtr& f : t->fields()) flatten_root(f, out);
    return;
  }
  if (auto* tt = dynamic_cast<const ir::TupleType*>(e->type().get())) {
    for (size_t k = 0; k < tt->fields().size(); ++k) out->push_back(ir::TupleGetItem::make(e, static_cast<int64_t>(k)));
    return;
  }
  out->push_back(e);
}

class Builder {
 public:
  Builder(const SegmentCompiler& c, const SegmentObserver& observe, std::string name)
      : compile_(c), observe_(observe), name_(std::move(name)) {}

  // `force`: always end in a segment (the function's outputs are the caller's buffers).
  std::shared_ptr<Scope> scope(const std::vector<ExprPtr>& roots, std::set<const Expr*> avail, bool force = false) {
    auto s = std::make_shared<Scope>();
    while (const ir::GridRegionExpr* g = ready_loop(roots, avail)) {
      s->loops.push_back(loop(*g, avail));
      avail.insert(g);
    }
    std::vector<Reg> given;
    for (const ExprPtr& r : roots) {
      if (!given_reg(r, avail, &given)) break;
    }
    if (given.size() == roots.size() && !force) {
      s->given = given;
      return s;
    }
    s->final = segment(roots, avail);
    return s;
  }

 private:
  // r's register when it is given in `avail` (a node, or a loop's projection).
  static bool given_reg(const ExprPtr& r, const std::set<const Expr*>& avail, std::vector<Reg>* out) {
    if (avail.count(r.get())) {
      out->push_back({r.get(), -1});
      return true;
    }
    if (auto* g = ir::expr_as<ir::TupleGetItem>(r)) {
      if (g->tuple()->kind() == ir::ExprKind::kGridRegion && avail.count(g->tuple().get())) {
        out->push_back({g->tuple().get(), g->index()});
        return true;
      }
    }
    return false;
  }

  // A loop reachable from roots (not through avail) whose init values need
  // no other pending loop; null when none is left. Loop bodies are not
  // entered: they are scopes of their own.
  const ir::GridRegionExpr* ready_loop(const std::vector<ExprPtr>& roots, const std::set<const Expr*>& avail) {
    std::unordered_set<const Expr*> seen;
    std::function<const ir::GridRegionExpr*(const ExprPtr&)> find = [&](const ExprPtr& e) -> const ir::GridRegionExpr* {
      if (avail.count(e.get()) || !seen.insert(e.get()).second) return nullptr;
      switch (e->kind()) {
        case ir::ExprKind::kGridRegion: {
          auto* g = ir::expr_as<ir::GridRegionExpr>(e);
          for (const ExprPtr& a : g->fields().init_args)
            if (auto* inner = find(a)) return inner;
          return g;
        }
        case ir::ExprKind::kCall:
          for (const ExprPtr& a : ir::expr_as<ir::Call>(e)->args())
            if (auto* l = find(a)) return l;
          return nullptr;
        case ir::ExprKind::kTuple:
          for (const ExprPtr& a : ir::expr_as<ir::Tuple>(e)->fields())
            if (auto* l = find(a)) return l;
          return nullptr;
        case ir::ExprKind::kTupleGetItem: return find(ir::expr_as<ir::TupleGetItem>(e)->tuple());
        default: return nullptr;
      }
    };
    for (const ExprPtr& r : roots)
      if (auto* g = find(r)) return g;
    return nullptr;
  }

  Loop loop(const ir::GridRegionExpr& g, const std::set<const Expr*>& avail) {
    const auto& f = g.fields();
    const std::string at = g.span().to_string();
    Loop l{&g, {}, nullptr, nullptr, {}, {}};
    l.bounds.push_back(RuntimeScalar{RuntimeScalar::kLoopStart, f.start, 0, 1, 0, 0, 0, at});
    l.bounds.push_back(RuntimeScalar{RuntimeScalar::kLoopExtent, f.extent, 0, 1, 0, 0, 0, at});
    l.bounds.push_back(RuntimeScalar{RuntimeScalar::kLoopStep, f.step, 0, 1, 0, 0, 0, at});
    l.init = scope(f.init_args, avail);
    std::set<const Expr*> inner = avail;
    inner.insert(f.induction_var.get());
    for (const ir::VarPtr& v : f.carried_args) {
      inner.insert(v.get());
      l.carried.push_back(tensor_of(v->type()));
    }
    if (f.yield_values.size() != f.carried_args.size()) unsupported("a loop whose yields do not match its carries");
    l.body = scope(f.yield_values, inner);
    for (size_t k = 0; k < f.carried_args.size(); ++k) l.in_place.push_back(in_place(f, *l.body, k));
    return l;
  }

  // Whether yield k may overwrite carry k's buffer: the body is one segment
  // (no inner loop could hand the carry on), yield k is a stage that writes
  // in place into its first operand (an insert: stage_lowering.h) and that
  // operand is carry k, and nothing else in the body reads carry k.
  static bool in_place(const ir::GridRegionExpr::Fields& f, const Scope& body, size_t k) {
    if (!body.loops.empty() || !body.final.kernel) return false;
    auto* c = ir::expr_as<ir::Call>(f.yield_values[k]);
    if (!c || !c->op() || c->args().empty() || c->args()[0].get() != f.carried_args[k].get()) return false;
    const StageLowering* l = find_stage_lowering(c->op()->name());
    if (!l || !l->in_place) return false;
    const Expr* var = f.carried_args[k].get();
    int refs = 0;
    std::unordered_set<const Expr*> seen;
    std::function<void(const ExprPtr&)> walk = [&](const ExprPtr& e) {
      if (e.get() == var) ++refs;
      if (!seen.insert(e.get()).second) return;
      if (auto* call = ir::expr_as<ir::Call>(e))
        for (const ExprPtr& a : call->args()) walk(a);
      else if (auto* t = ir::expr_as<ir::Tuple>(e))
        for (const ExprPtr& a : t->fields()) walk(a);
      else if (auto* g = ir::expr_as<ir::TupleGetItem>(e))
        walk(g->tuple());
    };
    for (const ExprPtr& y : f.yield_values) walk(y);
    return refs == 1;
  }

  Segment segment(const std::vector<ExprPtr>& roots, const std::set<const Expr*>& avail) {
    Segment s;
    std::vector<ExprPtr> inputs;
    std::unordered_set<const Expr*> seen;
    std::function<void(const ExprPtr&)> walk = [&](const ExprPtr& e) {
      if (!seen.insert(e.get()).second) return;
      std::vector<Reg> r;
      if (given_reg(e, avail, &r)) {
        inputs.push_back(e);
        s.reads.push_back(r[0]);
        return;
      }
      switch (e->kind()) {
        case ir::ExprKind::kVar: unsupported("a free variable '" + ir::expr_as<ir::Var>(e)->name() + "'");
        case ir::ExprKind::kCall:
          for (const ExprPtr& a : ir::expr_as<ir::Call>(e)->args()) walk(a);
          return;
        case ir::ExprKind::kTupleGetItem: return walk(ir::expr_as<ir::TupleGetItem>(e)->tuple());
        case ir::ExprKind::kTuple:
          for (const ExprPtr& a : ir::expr_as<ir::Tuple>(e)->fields()) walk(a);
          return;
        default: return;
      }
    };
    for (const ExprPtr& r : roots) {
      walk(r);
      s.types.push_back(tensor_of(r->type()));
    }
    if (observe_) observe_(inputs, roots);
    Program p = generate_segment(inputs, roots);
    // A segment runs after others (an earlier iteration, the loop before
    // it) wrote the outputs: a precheck of its own fails after writing.
    p.may_fail = p.may_fail || p.prechecks;
    s.kernel = compile_(p, name_ + ".seg" + std::to_string(count_++));
    return s;
  }

  const SegmentCompiler& compile_;
  const SegmentObserver& observe_;
  std::string name_;
  int count_ = 0;
};

std::vector<int64_t> extents(const ir::TensorType& t, const ir::DimBindings& b) {
  std::vector<int64_t> out;
  for (const ir::ShapeDim& d : t.shape()) out.push_back(d.evaluate(b));
  return out;
}

std::vector<NDArray> fresh(const std::vector<ir::TensorTypePtr>& types, const ir::DimBindings& b) {
  std::vector<NDArray> out;
  for (const auto& t : types) out.push_back(NDArray::empty(t->dtype(), extents(*t, b)));
  return out;
}

std::vector<NDArray> run_scope(const Scope& s, Regs regs, const ir::DimBindings& b,
                               const std::vector<NDArray>* outs);

// The loop's carries after its last iteration (the init values when it has none).
std::vector<NDArray> run_loop(const Loop& l, const Regs& regs, const ir::DimBindings& b) {
  const auto& f = l.node->fields();
  const int64_t start = resolve_scalar(l.bounds[0], b), stop = resolve_scalar(l.bounds[1], b),
                step = resolve_scalar(l.bounds[2], b);
  std::vector<NDArray> carry = run_scope(*l.init, regs, b, nullptr);
  if (start >= stop) return carry;
  // The loop-carried buffers: iteration n writes buf[n % 2] and reads the
  // other, except that an in-place carry always writes buf[0] (so from the
  // second iteration on it reads and writes the same buffer).
  std::vector<NDArray> buf[2] = {fresh(l.carried, b), fresh(l.carried, b)};
  std::vector<NDArray> outs;
  NDArray iv = NDArray::empty(ir::DType::kI64, {});
  ir::DimBindings ib = b;
  Regs body = regs;
  for (int64_t i = start, n = 0; i < stop; i += step, ++n) {
    ib[f.induction_var->name()] = i;
    *static_cast<int64_t*>(iv.data()) = i;
    body[{f.induction_var.get(), -1}] = iv;
    for (size_t k = 0; k < carry.size(); ++k) body[{f.carried_args[k].get(), -1}] = carry[k];
    outs = buf[n % 2];
    for (size_t k = 0; k < carry.size(); ++k) {
      if (!l.in_place[k]) continue;
      outs[k] = buf[0][k];
      if (carry[k].data() == outs[k].data()) g_in_place_runs.fetch_add(1, std::memory_order_relaxed);
    }
    carry = run_scope(*l.body, body, ib, &outs);
  }
  return carry;
}

// Runs the scope's loops, then its segment into *outs (fresh arrays when
// null); returns the roots' values.
std::vector<NDArray> run_scope(const Scope& s, Regs regs, const ir::DimBindings& b,
                               const std::vector<NDArray>* outs) {
  for (const Loop& l : s.loops) {
    std::vector<NDArray> c = run_loop(l, regs, b);
    if (c.size() == 1) regs[{l.node, -1}] = c[0];
    for (size_t k = 0; k < c.size(); ++k) regs[{l.node, static_cast<int64_t>(k)}] = c[k];
  }
  std::vector<NDArray> result;
  if (!s.final.kernel) {
    for (const Reg& r : s.given) result.push_back(regs.at(r));
    return result;
  }
  result = outs ? *outs : fresh(s.final.types, b);
  std::vector<NDArray> in;
  for (const Reg& r : s.final.reads) in.push_back(regs.at(r));
  s.final.kernel->run(in, result, b);
  return result;
}

void collect_keys(const Scope& s, std::string* key, bool* fail) {
  for (const Loop& l : s.loops) {
    collect_keys(*l.init, key, fail);
    collect_keys(*l.body, key, fail);
  }
  if (s.final.kernel) {
    *key += (key->empty() ? "" : "-") + s.final.kernel->key();
    *fail = *fail || s.final.kernel->may_fail();
  }
}

}  // namespace

struct LoopPlan {
  std::shared_ptr<Scope> top;
  std::vector<const Expr*> params;
};

bool contains_loop(const ExprPtr& e) {
  std::unordered_set<const Expr*> seen;
  std::function<bool(const ExprPtr&)> walk = [&](const ExprPtr& x) {
    if (!x || !seen.insert(x.get()).second) return false;
    switch (x->kind()) {
      case ir::ExprKind::kGridRegion: return true;
      case ir::ExprKind::kCall: {
        auto* c = ir::expr_as<ir::Call>(x);
        for (const ExprPtr& a : c->args())
          if (walk(a)) return true;
        return c->callee() && c->callee()->body() && walk(c->callee()->body());
      }
      case ir::ExprKind::kTuple:
        for (const ExprPtr& a : ir::expr_as<ir::Tuple>(x)->fields())
          if (walk(a)) return true;
        return false;
      case ir::ExprKind::kTupleGetItem: return walk(ir::expr_as<ir::TupleGetItem>(x)->tuple());
      default: return false;
    }
  };
  return walk(e);
}

std::shared_ptr<const LoopPlan> build_loop_plan(const ir::Function& fn, const SegmentCompiler& compile_segment,
                                                const SegmentObserver& observe) {
  if (!fn.body() || fn.is_prototype()) unsupported("a dispatch prototype");
  ExprPtr body = split_tuple_calls(inline_calls(fn.body()));
  std::vector<ExprPtr> roots;
  flatten_root(body, &roots);
  std::set<const Expr*> avail;
  auto plan = std::make_shared<LoopPlan>();
  for (const ir::VarPtr& p : fn.params()) {
    avail.insert(p.get());
    plan->params.push_back(p.get());
  }
  plan->top = Builder(compile_segment, observe, fn.name()).scope(roots, avail, /*force=*/true);
  return plan;
}

void run_loop_plan(const LoopPlan& plan, const std::vector<NDArray>& inputs, const std::vector<NDArray>& outputs,
                   const ir::DimBindings& bindings) {
  Regs regs;
  for (size_t i = 0; i < plan.params.size(); ++i) regs[{plan.params[i], -1}] = inputs.at(i);
  run_scope(*plan.top, regs, bindings, &outputs);
}

int64_t loop_carry_in_place_runs() { return g_in_place_runs.load(std::memory_order_relaxed); }

std::string loop_plan_key(const LoopPlan& plan) {
  std::string key;
  bool fail = false;
  collect_keys(*plan.top, &key, &fail);
  return key;
}

bool loop_plan_may_fail(const LoopPlan& plan) {
  std::string key;
  bool fail = false;
  collect_keys(*plan.top, &key, &fail);
  return fail;
}

}  // namespace tf::compiler
