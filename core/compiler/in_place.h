// Whether native code writes a function's in-place results (Function::inplace)
// straight into their parameters' buffers, touching only what changes.
//
// The function is a pure value; an in-place result only says that the
// caller's copy of it lives in a parameter's buffer. Native code realizes
// that without a copy when the result is a chain of window writes
// (InsertSlice, CacheUpdate, CacheScatter: ops whose stage lowering is
// in_place) whose innermost dst is that very parameter, and nothing else
// reads the parameter: then the first write finds its dst already in the
// result's buffer (no copy) and writes only its window. Otherwise the host
// computes the result into fresh memory and copies it over the parameter
// afterwards (capi/kernel.h), which is correct for any body.
#pragma once

#include <cstddef>

#include "core/ir/expr.h"

namespace tf::compiler {

// Result `leaf` (a tensor leaf of the return type) of fn, written in place of
// parameter `param`, is a window-write chain rooted at that parameter, which
// nothing else reads (see above). False for a body with loops.
bool writes_in_place(const ir::Function& fn, size_t leaf, size_t param);

// Every in-place result of fn qualifies (each variant's, for a dispatch
// prototype); true when fn has none.
bool writes_all_in_place(const ir::Function& fn);

}  // namespace tf::compiler
