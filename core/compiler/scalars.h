// Run-time scalars of a generated kernel: values the host resolves from the
// call's DimVar bindings (and the argument extents they imply) before the
// entry runs, so that resolution errors are thrown by the host with the
// evaluator's messages. The kernel reads scalar #i as RS[i], where RS points
// just past the last slot's shape in SH (codegen.h's ABI).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/shape.h"

namespace tf::compiler {

struct RuntimeScalar {
  enum Kind {
    kSliceBegin,  // Slice axis `axis`: the normalized begin (0 for an empty window)
    kExtent,      // a typed extent (a view's axis read in place by a fused stage)
    kLoopStart,   // GridRegionExpr bounds: start / extent >= 0, step > 0
    kLoopExtent,
    kLoopStep,
  };
  Kind kind;
  ir::ShapeDim value;  // begin, or the loop bound
  // Slice only: the window's end and stride, the axis extent and the typed
  // extent of the result (a mismatch is the evaluator's run-time error).
  ir::ShapeDim end = 0;
  int64_t stride = 1;
  ir::ShapeDim dim = 0;
  ir::ShapeDim typed = 0;
  size_t axis = 0;
  std::string where;  // loops: the GridRegionExpr's span ("" when unknown)
};

// Throws Error(kRuntime) as core/eval does for the same construct.
int64_t resolve_scalar(const RuntimeScalar& s, const ir::DimBindings& bindings);

}  // namespace tf::compiler
