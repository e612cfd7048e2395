#include "core/tir/functor.h"

#include "core/ir/error.h"
#include "core/tir/op.h"

namespace tf::tir {

void Visitor::visit(const ExprPtr& e) {
  switch (e->kind()) {
#define TF_X(k, c)   \
  case ExprKind::k:  \
    return visit_##c(static_cast<const c&>(*e));
    TF_TIR_EXPR_LIST(TF_X)
#undef TF_X
  }
}

void Visitor::visit(const StmtPtr& s) {
  switch (s->kind()) {
#define TF_X(k, c)   \
  case StmtKind::k:  \
    return visit_##c(static_cast<const c&>(*s));
    TF_TIR_STMT_LIST(TF_X)
#undef TF_X
  }
}

void Visitor::visit_IntImm(const IntImm&) {}
void Visitor::visit_FloatImm(const FloatImm&) {}
void Visitor::visit_Var(const Var&) {}
void Visitor::visit_Binary(const Binary& n) {
  visit(n.a());
  visit(n.b());
}
void Visitor::visit_Unary(const Unary& n) { visit(n.a()); }
void Visitor::visit_Select(const Select& n) {
  visit(n.cond());
  visit(n.t());
  visit(n.f());
}
void Visitor::visit_Cast(const Cast& n) { visit(n.value()); }
void Visitor::visit_Load(const Load& n) {
  visit(ExprPtr(n.base()));
  visit(n.index());
}
void Visitor::visit_Address(const Address& n) {
  visit(ExprPtr(n.base()));
  visit(n.index());
}
void Visitor::visit_Call(const Call& n) {
  for (const ExprPtr& a : n.args()) visit(a);
}

void Visitor::visit_For(const For& n) {
  visit(n.min());
  visit(n.extent());
  if (n.min_work()) visit(n.min_work());
  visit(n.body());
}
void Visitor::visit_LetStmt(const LetStmt& n) {
  visit(n.value());
  visit(n.body());
}
void Visitor::visit_Store(const Store& n) {
  visit(ExprPtr(n.base()));
  visit(n.index());
  visit(n.value());
}
void Visitor::visit_Assign(const Assign& n) { visit(n.value()); }
void Visitor::visit_IfThenElse(const IfThenElse& n) {
  visit(n.cond());
  visit(n.then_case());
  if (n.else_case()) visit(n.else_case());
}
void Visitor::visit_Allocate(const Allocate& n) {
  visit(n.extent());
  visit(n.body());
}
void Visitor::visit_Evaluate(const Evaluate& n) { visit(n.value()); }
void Visitor::visit_Seq(const Seq& n) {
  for (const StmtPtr& s : n.stmts()) visit(s);
}
void Visitor::visit_Barrier(const Barrier&) {}
void Visitor::visit_Return(const Return& n) { visit(n.code()); }
void Visitor::visit_Comment(const Comment&) {}

ExprPtr Mutator::mutate(const ExprPtr& e) {
  switch (e->kind()) {
#define TF_X(k, c)   \
  case ExprKind::k:  \
    return mutate_##c(static_cast<const c&>(*e), e);
    TF_TIR_EXPR_LIST(TF_X)
#undef TF_X
  }
  return e;
}

StmtPtr Mutator::mutate(const StmtPtr& s) {
  switch (s->kind()) {
#define TF_X(k, c)   \
  case StmtKind::k:  \
    return mutate_##c(static_cast<const c&>(*s), s);
    TF_TIR_STMT_LIST(TF_X)
#undef TF_X
  }
  return s;
}

VarPtr Mutator::mutate_base(const VarPtr& v) {
  ExprPtr m = mutate(ExprPtr(v));
  if (m.get() == v.get()) return v;
  TF_CHECK(m->kind() == ExprKind::kVar, "tir: a pointer base rewritten to a non-variable");
  return std::static_pointer_cast<const Var>(m);
}

ExprPtr Mutator::mutate_IntImm(const IntImm&, const ExprPtr& self) { return self; }
ExprPtr Mutator::mutate_FloatImm(const FloatImm&, const ExprPtr& self) { return self; }
ExprPtr Mutator::mutate_Var(const Var&, const ExprPtr& self) { return self; }

ExprPtr Mutator::mutate_Binary(const Binary& n, const ExprPtr& self) {
  ExprPtr a = mutate(n.a()), b = mutate(n.b());
  if (a == n.a() && b == n.b()) return self;
  return binary(n.op(), std::move(a), std::move(b));
}
ExprPtr Mutator::mutate_Unary(const Unary& n, const ExprPtr& self) {
  ExprPtr a = mutate(n.a());
  if (a == n.a()) return self;
  return n.op() == UnaryOp::kNeg ? neg(std::move(a)) : lnot(std::move(a));
}
ExprPtr Mutator::mutate_Select(const Select& n, const ExprPtr& self) {
  ExprPtr c = mutate(n.cond()), t = mutate(n.t()), f = mutate(n.f());
  if (c == n.cond() && t == n.t() && f == n.f()) return self;
  return select(std::move(c), std::move(t), std::move(f));
}
ExprPtr Mutator::mutate_Cast(const Cast& n, const ExprPtr& self) {
  ExprPtr v = mutate(n.value());
  return v == n.value() ? self : cast(n.dtype(), std::move(v));
}
ExprPtr Mutator::mutate_Load(const Load& n, const ExprPtr& self) {
  VarPtr b = mutate_base(n.base());
  ExprPtr i = mutate(n.index());
  if (b == n.base() && i == n.index()) return self;
  return Load::make(std::move(b), std::move(i));
}
ExprPtr Mutator::mutate_Address(const Address& n, const ExprPtr& self) {
  VarPtr b = mutate_base(n.base());
  ExprPtr i = mutate(n.index());
  if (b == n.base() && i == n.index()) return self;
  return Address::make(std::move(b), std::move(i));
}
ExprPtr Mutator::mutate_Call(const Call& n, const ExprPtr& self) {
  std::vector<ExprPtr> args;
  bool changed = false;
  for (const ExprPtr& a : n.args()) {
    args.push_back(mutate(a));
    changed = changed || args.back() != a;
  }
  if (!changed) return self;
  return Call::make(n.type(), n.name(), std::move(args), n.effect(), n.type_args());
}

StmtPtr Mutator::mutate_For(const For& n, const StmtPtr& self) {
  ExprPtr mn = mutate(n.min()), ex = mutate(n.extent());
  ExprPtr mw = n.min_work() ? mutate(n.min_work()) : nullptr;
  StmtPtr b = mutate(n.body());
  if (mn == n.min() && ex == n.extent() && mw == n.min_work() && b == n.body()) return self;
  return For::make(n.var(), std::move(mn), std::move(ex), n.for_kind(), std::move(b), n.reductions(), std::move(mw));
}
StmtPtr Mutator::mutate_LetStmt(const LetStmt& n, const StmtPtr& self) {
  ExprPtr v = mutate(n.value());
  StmtPtr b = mutate(n.body());
  if (v == n.value() && b == n.body()) return self;
  return LetStmt::make(n.var(), std::move(v), std::move(b), n.no_alias());
}
StmtPtr Mutator::mutate_Store(const Store& n, const StmtPtr& self) {
  VarPtr b = mutate_base(n.base());
  ExprPtr i = mutate(n.index()), v = mutate(n.value());
  if (b == n.base() && i == n.index() && v == n.value()) return self;
  return Store::make(std::move(b), std::move(i), std::move(v));
}
StmtPtr Mutator::mutate_Assign(const Assign& n, const StmtPtr& self) {
  ExprPtr v = mutate(n.value());
  return v == n.value() ? self : Assign::make(n.var(), std::move(v));
}
StmtPtr Mutator::mutate_IfThenElse(const IfThenElse& n, const StmtPtr& self) {
  ExprPtr c = mutate(n.cond());
  StmtPtr t = mutate(n.then_case());
  StmtPtr e = n.else_case() ? mutate(n.else_case()) : nullptr;
  if (c == n.cond() && t == n.then_case() && e == n.else_case()) return self;
  return IfThenElse::make(std::move(c), std::move(t), std::move(e));
}
StmtPtr Mutator::mutate_Allocate(const Allocate& n, const StmtPtr& self) {
  ExprPtr ex = mutate(n.extent());
  StmtPtr b = mutate(n.body());
  if (ex == n.extent() && b == n.body()) return self;
  return Allocate::make(n.var(), std::move(ex), n.scope(), std::move(b));
}
StmtPtr Mutator::mutate_Evaluate(const Evaluate& n, const StmtPtr& self) {
  ExprPtr v = mutate(n.value());
  return v == n.value() ? self : Evaluate::make(std::move(v));
}
StmtPtr Mutator::mutate_Seq(const Seq& n, const StmtPtr& self) {
  std::vector<StmtPtr> out;
  bool changed = false;
  for (const StmtPtr& s : n.stmts()) {
    out.push_back(mutate(s));
    changed = changed || out.back() != s;
  }
  return changed ? Seq::make(std::move(out)) : self;
}
StmtPtr Mutator::mutate_Barrier(const Barrier&, const StmtPtr& self) { return self; }
StmtPtr Mutator::mutate_Return(const Return& n, const StmtPtr& self) {
  ExprPtr c = mutate(n.code());
  return c == n.code() ? self : Return::make(std::move(c));
}
StmtPtr Mutator::mutate_Comment(const Comment&, const StmtPtr& self) { return self; }

}  // namespace tf::tir
