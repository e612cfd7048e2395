// Walking and rewriting TIR. A Visitor calls one virtual per node kind,
// whose default visits the children; a Mutator returns a node per node,
// rebuilding a parent only when a child changed (so an unchanged tree is
// returned as the same pointer, and passes can test for "no change").
// Subclasses override the kinds they care about and call the base for the
// rest.
#pragma once

#include "core/tir/expr.h"
#include "core/tir/stmt.h"

namespace tf::tir {

class Visitor {
 public:
  virtual ~Visitor() = default;
  void visit(const ExprPtr& e);
  void visit(const StmtPtr& s);

 protected:
#define TF_X(e, c) virtual void visit_##c(const c& n);
  TF_TIR_EXPR_LIST(TF_X)
  TF_TIR_STMT_LIST(TF_X)
#undef TF_X
};

class Mutator {
 public:
  virtual ~Mutator() = default;
  ExprPtr mutate(const ExprPtr& e);
  StmtPtr mutate(const StmtPtr& s);

 protected:
  // `self` is the node as held, returned when nothing changed.
#define TF_X(e, c) virtual ExprPtr mutate_##c(const c& n, const ExprPtr& self);
  TF_TIR_EXPR_LIST(TF_X)
#undef TF_X
#define TF_X(e, c) virtual StmtPtr mutate_##c(const c& n, const StmtPtr& self);
  TF_TIR_STMT_LIST(TF_X)
#undef TF_X
  // A Var used as a Load / Store / Address base goes through mutate_Var,
  // which must keep it a Var there. Binders (a For's index, a LetStmt's or
  // Allocate's variable, an Assign's target, a reduction's variable) are
  // not mutated: a substitution replaces uses, never declarations.
  VarPtr mutate_base(const VarPtr& v);
};

}  // namespace tf::tir
