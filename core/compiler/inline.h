// Inlining for the code generator: calls of (elaborated) functions are
// replaced by their callee's body with the parameters bound to the call's
// arguments, so the generator sees one flat Call DAG and fuses across
// function boundaries.
#pragma once

#include "core/ir/expr.h"

namespace tf::compiler {

// `body` with every function call inlined (recursively) and every
// TupleGetItem of a literal Tuple folded. Throws Error(kUnsupported) for a
// call of a dispatch prototype (its variant is chosen at run time) or when
// the callee's types do not line up with the call's arguments.
ir::ExprPtr inline_calls(const ir::ExprPtr& body);

// `body` (inlined) with the results of tuple-valued op calls (RoPE) in one
// canonical form: every projection of call c at index i is the same
// TupleGetItem node (so the code generator can give it one buffer), and a
// tuple-valued call in output position (the body itself, or a field of the
// returned Tuple) becomes a Tuple of those projections.
ir::ExprPtr split_tuple_calls(const ir::ExprPtr& body);

}  // namespace tf::compiler
