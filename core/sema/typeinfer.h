// The typeinfer driver: builds typed Calls. Every Call in HIR is created
// through here (or by a mutator that re-runs it), so a Call's type is always
// the one its op's typeinfer derives from its argument types.
#pragma once

#include <vector>

#include "core/ir/expr.h"

namespace tf::sema {

// Types op applied to args (via the op's registered typeinfer) and builds the
// Call. Throws Error(kType) in the shape
//   "<span>: error: '<surface>' operand #i (<name>) must be ..., but got ..."
// An op that is not registered is Error(kInternal).
ir::CallPtr make_op_call(ir::OpPtr op, std::vector<ir::ExprPtr> args, ir::Span span = {});

// A call to a Function, typed by elaboration (elaborate.h): the Call targets
// the concrete instance for the argument types (the callee itself when nothing
// changes) and its type is the instance return type with the call DimVars
// substituted. Throws Error(kType) naming the callee, the parameter and the rule.
ir::CallPtr make_function_call(ir::FunctionPtr callee, std::vector<ir::ExprPtr> args, ir::Span span = {});

}  // namespace tf::sema
