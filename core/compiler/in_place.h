// Whether native code writes a function's in-place results (Function::inplace)
// straight into their parameters' buffers, touching only what changes.
//
// The function is a pure value; an in-place result only says that the
// caller's copy of it lives in a parameter's buffer. Native code realizes
// that without a copy in two forms:
// * a chain of window writes (InsertSlice, CacheUpdate, CacheScatter: ops
//   whose stage lowering is in_place) whose innermost dst is that very
//   parameter, which nothing else reads: the first write finds its dst
//   already in the result's buffer (no copy) and writes only its window;
// * an elementwise update (x * decay + u): elementwise ops of the result's
//   shape between the result and the parameter, nothing outside them
//   reading either, so each element is read before it is written, at its
//   own index (codegen drops __restrict from that output: lower_segment.h).
//   Not for a dispatch prototype's variants.
// Otherwise the host computes the result into fresh memory and copies it
// over the parameter afterwards (capi/kernel.h), which is correct for any
// body.
#pragma once

#include <cstddef>

#include "core/ir/expr.h"

namespace tf::compiler {

// Result `leaf` (a tensor leaf of the return type) of fn, written in place of
// parameter `param`, takes one of the two forms above. False for a body
// with loops.
bool writes_in_place(const ir::Function& fn, size_t leaf, size_t param);

// Every in-place result of fn qualifies (each variant's, for a dispatch
// prototype); true when fn has none.
bool writes_all_in_place(const ir::Function& fn);

}  // namespace tf::compiler
