// Checks the rules TIR's factories cannot see locally, over a whole
// Function: every variable is used inside a scope that binds it and is not
// bound again inside it (the same loop may appear in two branches, as a
// specialization makes it, but never shadows itself); only mutable variables are assigned or reduced, and a reduction's
// variable is bound outside its loop; arithmetic operands are compute
// dtypes (storage types are Cast first); a local Allocate has a constant
// extent; Return is not inside a loop or a global Allocate (whose memory
// would not be freed); a Barrier is inside a parallel or
// GPU loop. Throws Error(kInternal) naming the first violation: a TIR that
// fails it is a lowering bug.
#pragma once

#include "core/tir/stmt.h"

namespace tf::tir {

void verify(const Function& f);

}  // namespace tf::tir
