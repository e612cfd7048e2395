// Call elaboration (docs/ir.md, Calls and elaboration). A Call whose
// target is a Function types by elaborate(callee, arg_types): each parameter
// is bound to the caller's argument type, the body is reconstructed under that
// binding (every node re-typeinferred), and the resulting concrete Function
// instance becomes the Call's target.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/ir/expr.h"

namespace tf::sema {

// The memo of one construction session: one parser run, or one top-level
// elaborate call and every nested call it re-elaborates. Keyed on (callee,
// bound parameter types), which are a function of the argument types, so two
// call sites with identical argument types get the identical instance.
// Constructing a session makes it the thread's active one until it is
// destroyed; sessions nest (the innermost is active). Nothing outlives it.
class ElaborationSession {
 public:
  ElaborationSession();
  ~ElaborationSession();
  ElaborationSession(const ElaborationSession&) = delete;
  ElaborationSession& operator=(const ElaborationSession&) = delete;

  // The thread's active session, or null.
  static ElaborationSession* active();
  // Null when (callee, param_types) was not elaborated in this session.
  ir::FunctionPtr find(const ir::Function* callee, const std::vector<ir::TypePtr>& param_types) const;
  void remember(const ir::Function* callee, std::vector<ir::TypePtr> param_types, ir::FunctionPtr instance);
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    const ir::Function* callee;
    std::vector<ir::TypePtr> param_types;
    ir::FunctionPtr instance;
  };
  std::vector<Entry> entries_;
  ElaborationSession* outer_;
};

// The result of binding arguments to a callee's parameters.
struct Binding {
  // The type each parameter takes in the instance: a layout-less TensorType
  // parameter (template wildcard) takes the argument's layout and storage over
  // its own (DimVar) shape; every other parameter keeps its declared type.
  std::vector<ir::TypePtr> param_types;
  // DimVar name -> the caller's dim (envelope matching).
  std::map<std::string, ir::ShapeDim> dims;
};

// Argument <-> parameter binding. Throws Error(kType) naming the callee, the
// argument and the rule (arity, dtype, rank, axis envelope, layout contract,
// exact type equality).
Binding bind_call(const ir::Function& callee, const std::vector<ir::TypePtr>& arg_types, const ir::Span& span);

// The concrete instance of callee for arg_types. A dispatch prototype is
// returned as is (never elaborated); when the bound parameter types equal the
// callee's, the callee itself is returned (dedup); otherwise the body is
// rebuilt with every node re-typeinferred, memoized in the active session
// (a fresh one when none is active). A failure inside the body is rethrown
// with its kind, prefixed by the call site: "<span>: error: in call to 'g': ...".
ir::FunctionPtr elaborate(const ir::FunctionPtr& callee, const std::vector<ir::TypePtr>& arg_types,
                          const ir::Span& span = {});

// The type a Call to `instance` has: its (re-derived) return type with the
// call's DimVar bindings substituted.
ir::TypePtr call_result_type(const ir::Function& instance, const Binding& binding);

// Replaces DimVars by name in every tensor leaf of t.
ir::TypePtr substitute_type(const ir::TypePtr& t, const std::map<std::string, ir::ShapeDim>& subst);

}  // namespace tf::sema
