// Transpose sinking. A reduction of an elementwise value of transposed
// operands,
//
//     s = sum(transpose(x) * 2, axes=-1)
//
// taken literally stores transpose(x) * 2 first: a stage that walks x
// down its columns through tiles, in the transposed value's layout. The
// elementwise ops do not care where an element sits, so the compiler
// computes the same value in x's layout and transposes after,
//
//     s = sum(transpose(x * 2), axes=-1)
//
// which a Reduce stage reads in place through the Transpose's axes,
// computing x * 2 where it reads each element (fusion_plan.h): one pass
// over x in its own layout. Same values, same reduction: the elementwise results are
// identical bit for bit, and the Reduce folds them in the order its
// schedule gives for the strides it sees.
//
// It applies where the reduction is a stage of its own, which is where it
// reads its operand itself: a segment output, or a reduction that is
// not a row reduction (is_row_reduce). A row reduction read back along its
// rows (softmax's sum) is computed inside the stage that reads it, and a
// Transpose under it is stored as a plane copy of an operand in memory
// (fusion_plan.cc); sinking would make that copy compute through tiles.
//
// The elementwise value must be read only by the reduction (otherwise it
// would be computed twice, once in each layout), each of its operands a
// Transpose with the same axes as the others, a value whose every extent
// is 1 (a scalar, which broadcasts the same in either layout), or such an
// elementwise value itself, and at least one a Transpose.
#pragma once

#include <unordered_set>
#include <vector>

#include "core/compiler/decompose.h"
#include "core/ir/expr.h"

namespace tf::compiler {

// `outputs` with each such reduction reading its transpose in place, up to
// the nodes of `stop` (values given to a segment, kept as they are); what
// `notes` says of a node it rebuilds, it says of the new node too.
std::vector<ir::ExprPtr> sink_transposes(const std::vector<ir::ExprPtr>& outputs,
                                         const std::unordered_set<const ir::Expr*>& stop,
                                         DecompositionNotes* notes);

}  // namespace tf::compiler
