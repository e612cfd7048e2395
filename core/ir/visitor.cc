#include "core/ir/visitor.h"

#include "core/ir/error.h"

namespace tf::ir {

void ExprVisitor::visit(const ExprPtr& e) {
  if (!e || !visited_.insert(e.get()).second) return;
  switch (e->kind()) {
    case ExprKind::kVar: visit_var(static_cast<const Var&>(*e)); return;
    case ExprKind::kConstant: visit_constant(static_cast<const Constant&>(*e)); return;
    case ExprKind::kCall: {
      auto& c = static_cast<const Call&>(*e);
      for (const auto& a : c.args()) visit(a);
      visit_call(c);
      return;
    }
    case ExprKind::kTuple: {
      auto& t = static_cast<const Tuple&>(*e);
      for (const auto& f : t.fields()) visit(f);
      visit_tuple(t);
      return;
    }
    case ExprKind::kTupleGetItem: {
      auto& t = static_cast<const TupleGetItem&>(*e);
      visit(t.tuple());
      visit_tuple_get_item(t);
      return;
    }
    case ExprKind::kFunction: {
      auto& f = static_cast<const Function&>(*e);
      for (const auto& p : f.params()) visit(p);
      visit(f.body());
      for (const auto& v : f.variants()) visit(v);
      visit_function(f);
      return;
    }
    case ExprKind::kGridRegion: {
      auto& g = static_cast<const GridRegionExpr&>(*e);
      for (const auto& i : g.fields().init_args) visit(i);
      visit(g.fields().body);
      for (const auto& y : g.fields().yield_values) visit(y);
      visit_grid_region(g);
      return;
    }
  }
}

ExprPtr ExprMutator::mutate(const ExprPtr& e) {
  if (!e) return e;
  auto it = memo_.find(e.get());
  if (it != memo_.end()) return it->second;
  ExprPtr out;
  switch (e->kind()) {
    case ExprKind::kVar: out = mutate_var(std::static_pointer_cast<const Var>(e)); break;
    case ExprKind::kConstant: out = mutate_constant(e); break;
    case ExprKind::kCall: out = mutate_call(std::static_pointer_cast<const Call>(e)); break;
    case ExprKind::kTuple: out = mutate_tuple(e); break;
    case ExprKind::kTupleGetItem: out = mutate_tuple_get_item(e); break;
    case ExprKind::kFunction: out = mutate_function(std::static_pointer_cast<const Function>(e)); break;
    case ExprKind::kGridRegion: out = mutate_grid_region(e); break;
  }
  memo_.emplace(e.get(), out);
  return out;
}

namespace {
// Mutates a list; true when any element changed identity.
template <typename M>
bool mutate_list(M&& m, const std::vector<ExprPtr>& in, std::vector<ExprPtr>* out) {
  bool changed = false;
  for (const auto& x : in) {
    out->push_back(m(x));
    changed |= out->back() != x;
  }
  return changed;
}
}  // namespace

ExprPtr ExprMutator::mutate_call(const CallPtr& c) {
  std::vector<ExprPtr> args;
  if (!mutate_list([this](const ExprPtr& x) { return mutate(x); }, c->args(), &args)) return c;
  return rebuild_call(*c, std::move(args));
}

CallPtr ExprMutator::rebuild_call(const Call& old, std::vector<ExprPtr> args) {
  for (size_t i = 0; i < args.size(); ++i)
    TF_CHECK(type_equal(args[i]->type(), old.args()[i]->type()),
             "ExprMutator changed an argument type; use a typing mutator (sema)");
  return old.op() ? Call::make_op(old.op(), std::move(args), old.type(), old.span())
                  : Call::make_function(old.callee(), std::move(args), old.type(), old.span());
}

ExprPtr ExprMutator::mutate_tuple(const ExprPtr& e) {
  auto& t = static_cast<const Tuple&>(*e);
  std::vector<ExprPtr> fields;
  if (!mutate_list([this](const ExprPtr& x) { return mutate(x); }, t.fields(), &fields)) return e;
  return Tuple::make(std::move(fields), t.span());
}

ExprPtr ExprMutator::mutate_tuple_get_item(const ExprPtr& e) {
  auto& t = static_cast<const TupleGetItem&>(*e);
  ExprPtr tuple = mutate(t.tuple());
  if (tuple == t.tuple()) return e;
  return TupleGetItem::make(std::move(tuple), t.index(), t.span());
}

ExprPtr ExprMutator::mutate_function(const FunctionPtr& f) {
  ExprPtr body = mutate(f->body());
  std::vector<FunctionPtr> variants;
  bool changed = body != f->body();
  for (const auto& v : f->variants()) {
    auto nv = std::static_pointer_cast<const Function>(mutate(v));
    changed |= nv != v;
    variants.push_back(std::move(nv));
  }
  if (!changed) return f;
  Function::Fields fields{f->name(), f->params(), body, f->return_type(), f->specializations(),
                          std::move(variants), f->label(), f->span(), f->inplace()};
  return Function::make(std::move(fields));
}

ExprPtr ExprMutator::mutate_grid_region(const ExprPtr& e) {
  auto& g = static_cast<const GridRegionExpr&>(*e);
  GridRegionExpr::Fields f = g.fields();
  std::vector<ExprPtr> init, yields;
  auto m = [this](const ExprPtr& x) { return mutate(x); };
  bool changed = mutate_list(m, f.init_args, &init);
  ExprPtr body = mutate(f.body);
  changed |= body != f.body;
  changed |= mutate_list(m, f.yield_values, &yields);
  if (!changed) return e;
  f.init_args = std::move(init);
  f.body = std::move(body);
  f.yield_values = std::move(yields);
  return GridRegionExpr::make(std::move(f));
}

}  // namespace tf::ir
