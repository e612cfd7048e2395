// ExprVisitor and ExprMutator. Both memoize on node identity, so a shared
// node (SSA value with several uses) is visited / rewritten once, and the
// mutator preserves identity: when no child changed it returns the original
// node, so "did this pass change anything?" is one pointer comparison.
// Callee Functions of Calls are not entered (they are module-level symbols);
// a pass that wants them visits the Module's functions.
#pragma once

#include <unordered_map>
#include <unordered_set>

#include "core/ir/expr.h"

namespace tf::ir {

class ExprVisitor {
 public:
  virtual ~ExprVisitor() = default;
  // Visits e once per visitor instance, children first (post-order).
  void visit(const ExprPtr& e);

 protected:
  virtual void visit_var(const Var&) {}
  virtual void visit_constant(const Constant&) {}
  virtual void visit_call(const Call&) {}
  virtual void visit_tuple(const Tuple&) {}
  virtual void visit_tuple_get_item(const TupleGetItem&) {}
  virtual void visit_function(const Function&) {}
  virtual void visit_grid_region(const GridRegionExpr&) {}

 private:
  std::unordered_set<const Expr*> visited_;
};

class ExprMutator {
 public:
  virtual ~ExprMutator() = default;
  // Rewrites e; memoized on identity, identity-preserving.
  ExprPtr mutate(const ExprPtr& e);

 protected:
  // Hook per kind; the default rebuilds from mutated children.
  virtual ExprPtr mutate_var(const VarPtr& v) { return v; }
  virtual ExprPtr mutate_constant(const ExprPtr& c) { return c; }
  virtual ExprPtr mutate_call(const CallPtr& c);
  virtual ExprPtr mutate_tuple(const ExprPtr& t);
  virtual ExprPtr mutate_tuple_get_item(const ExprPtr& t);
  virtual ExprPtr mutate_function(const FunctionPtr& f);
  virtual ExprPtr mutate_grid_region(const ExprPtr& g);
  // Builds a Call with new arguments. The default keeps the old type and so
  // requires the argument types to be unchanged; a typing-aware mutator
  // (sema) overrides it to re-typeinfer.
  virtual CallPtr rebuild_call(const Call& old, std::vector<ExprPtr> args);

 private:
  std::unordered_map<const Expr*, ExprPtr> memo_;
};

}  // namespace tf::ir
