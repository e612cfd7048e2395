// An operand that a stage of its own computes where it reads each element,
// instead of reading it from a slot another stage stored: an elementwise
// tree (scalar_lowering.h) over materialized values (its leaves) and
// constants, possibly read through a Transpose. A Reduce stage folds such
// an operand (FusionPlan decides which: fusion_plan.h), so a loss's
// mean((a - b) ** 2), a norm's sum(x * x) or a bias gradient's
// sum(g * mask, axes=0) reads its inputs once and stores nothing but the
// reduction.
//
// Every leaf is read with broadcasting against the operand's shape
// (trailing axes aligned), so a leaf's element at the operand's index is
// an affine function of it: per operand axis, the leaf's axis there at its
// stride, or index 0 where the leaf is broadcast. A broadcast the types
// fix (an axis the leaf lacks, or of static extent 1) is known here; one
// they leave to the call (a leaf's extent typed apart from the operand's,
// 1 at run time) reads the leaf's stride as 0 where its extent is 1.
#pragma once

#include <cstdint>
#include <vector>

#include "core/compiler/lower_loop_nest.h"
#include "core/tir/expr.h"

namespace tf::compiler {

struct InlineOperand {
  struct Leaf {
    size_t slot;
    // Per operand axis: the leaf's axis read there, or -1 where the types
    // broadcast the leaf (its index is 0).
    std::vector<int64_t> axis;
    // Per operand axis: the leaf's extent there is typed apart from the
    // operand's, so a run-time extent of 1 broadcasts it.
    std::vector<bool> run_time_broadcast;
    tir::VarPtr element;  // stands for the leaf's element (its storage dtype) in `value`
  };
  std::vector<Leaf> leaves;        // each slot once, in first-read order
  std::vector<tir::ExprPtr> extents;  // the operand's, per axis
  ir::DType dtype;                 // the operand's
  tir::ExprPtr value;              // the element, in compute_dtype(dtype), over the leaves' elements
  bool may_fail = false;           // an op of the tree can record a run-time error

  // The element with each leaf's element given (elements[k] for leaves[k],
  // in its storage dtype: a load).
  tir::ExprPtr at(const std::vector<tir::ExprPtr>& elements) const;
};

// The operand `root` (an elementwise call whose tree the fusion plan left
// inline, or a Transpose of one) as read by a stage of env's segment.
InlineOperand lower_inline_operand(const StageEnv& env, const ir::ExprPtr& root);

}  // namespace tf::compiler
