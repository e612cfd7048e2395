#include "core/compiler/loop_tree.h"

#include <set>
#include <string>
#include <unordered_set>

#include "core/compiler/inline.h"
#include "core/compiler/stage_lowering.h"
#include "core/ir/error.h"

namespace tf::compiler::loops {
namespace {

using ir::Expr;
using ir::ExprPtr;

[[noreturn]] void unsupported(const std::string& what) {
  ir::fail(ir::ErrorKind::kUnsupported, "native codegen: " + what + " is not compiled yet");
}

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
  explicit Builder(TreeOptions options) : options_(options) {}

  // How many segments the scopes built so far have.
  size_t segments() const { return count_; }

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
    l.body = scope(f.yield_values, inner, options_.body_ends_in_segment);
    for (size_t k = 0; k < f.carried_args.size(); ++k) l.in_place.push_back(in_place(f, *l.body, k));
    return l;
  }

  // Whether yield k may overwrite carry k's buffer: the body is one segment
  // (no inner loop could hand the carry on), yield k is a stage that writes
  // in place into its first operand (an insert: stage_lowering.h) and that
  // operand is carry k, and nothing else in the body reads carry k.
  static bool in_place(const ir::GridRegionExpr::Fields& f, const Scope& body, size_t k) {
    if (!body.loops.empty() || !body.final) return false;
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
    Segment s{count_++, {}, roots, {}, {}};
    std::vector<ExprPtr>& inputs = s.inputs;
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
    return s;
  }

  TreeOptions options_;
  size_t count_ = 0;
};

}  // namespace

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

Tree build_tree(const ir::Function& fn, TreeOptions options) {
  if (!fn.body() || fn.is_prototype()) unsupported("a dispatch prototype");
  ExprPtr body = split_tuple_calls(inline_calls(fn.body()));
  std::vector<ExprPtr> roots;
  flatten_root(body, &roots);
  std::set<const Expr*> avail;
  Tree t;
  for (const ir::VarPtr& p : fn.params()) {
    avail.insert(p.get());
    t.params.push_back(p.get());
  }
  Builder builder(options);
  t.top = builder.scope(roots, avail, /*force=*/true);
  t.segments = builder.segments();
  return t;
}

void for_each_segment(const Tree& t, const std::function<void(const Segment&)>& f) {
  std::vector<const Segment*> by_id(t.segments, nullptr);
  std::function<void(const Scope&)> walk = [&](const Scope& s) {
    for (const Loop& l : s.loops) {
      walk(*l.init);
      walk(*l.body);
    }
    if (s.final) by_id.at(s.final->id) = &*s.final;
  };
  walk(*t.top);
  for (const Segment* s : by_id) f(*s);
}

}  // namespace tf::compiler::loops
