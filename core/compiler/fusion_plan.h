// The fusion decisions for one straight-line segment of a function: which
// values are stored in memory (materialized) and which are computed inside
// the stages that read them. The lowering (lower_segment.h) walks the
// segment and asks the plan; the plan itself builds nothing.
//
// A value is materialized when it is a parameter, an output, read more than
// once and not cheap to recompute, computed by a stage of its own (its op
// registered a StageLowering: a Reduce that is not fused, MatMul, data
// ops, a view a stage could not read in place), or an operand such a stage
// reads from memory. Every other elementwise value (an op with a scalar
// form: scalar_lowering.h) and every view (lower_loop_nest.h) is inlined
// into the loop of the stage that reads it.
//
// Row reductions are fused into their readers (epilogue fusion: the
// normalization pattern's mean read back along its row) when every reader
// keeps the reduction's rows until something stores them. A row stage also
// computes and stores an elementwise value it reads (a producer) when that
// saves a pass: residual + RMSNorm returning both. A Reduce that is a stage
// of its own computes an elementwise operand where it reads each element
// (prologue fusion: inline_operand.h) when nothing else needs that operand
// stored: a loss's mean((a - b) ** 2) stores nothing but the mean.
#pragma once

#include <map>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/ir/expr.h"

namespace tf::compiler {

class FusionPlan {
 public:
  // `inputs`: the nodes whose values are given; `outputs`: the values to
  // compute (tuples are flattened); `copied`: views a stage could not read
  // in place (ViewRefused), computed as copies instead.
  FusionPlan(const std::vector<ir::ExprPtr>& inputs, const std::vector<ir::ExprPtr>& outputs,
             const std::unordered_set<const ir::Expr*>& copied);

  // The tensor values the segment stores, in order, tuples flattened.
  const std::vector<ir::ExprPtr>& outputs() const { return outputs_; }
  bool is_input(const ir::Expr* e) const { return inputs_.count(e) > 0; }
  // Whether c's value is stored in memory (in a slot) rather than computed
  // by the stages that read it.
  bool materialized(const ir::Call& c) const;
  // A row reduction computed inside the stages that read it.
  bool fused(const ir::Call& c) const { return fused_.count(&c) > 0; }
  // A Reduce stage that computes its operand (an elementwise tree, or a
  // Transpose of one) where it reads it, unless that operand was given a
  // slot after all.
  bool computes_operand(const ir::Call& reduce) const { return computes_operand_.count(&reduce) > 0; }
  // A view read in place by the stages that read it.
  bool inline_view(const ir::Call& c) const;
  // How many calls (and outputs) read e.
  int uses(const ir::Expr* e) const;
  // The TupleGetItem reading field i of call e, or null.
  const ir::Expr* projection(const ir::Expr* e, int64_t i) const;
  // The stage that computes produced value e, and the value stage e
  // produces (both null when none).
  ir::ExprPtr producer_of(const ir::Expr* e) const;
  ir::ExprPtr produced_by(const ir::Expr* e) const;
  // Some op of the segment can record a run-time error after a stage wrote
  // (as its stage lowering says, or a mean over a possibly empty axis).
  bool may_fail() const { return may_fail_; }

 private:
  void collect_outputs(const ir::ExprPtr& e);
  void count_uses(const ir::ExprPtr& e);
  void check_elementwise(const ir::Call& c);
  void decide_fusion();
  bool row_closed(const ir::Call& u, const ir::TensorType& shape,
                  const std::unordered_set<const ir::Expr*>& is_output) const;
  void choose_recomputed(const std::unordered_set<const ir::Expr*>& is_output);
  void store_transposed_rows();
  bool cheap(const ir::Call& c) const;
  bool computable_inline(const ir::ExprPtr& root, const std::unordered_set<const ir::Expr*>& is_output) const;
  void choose_producers();
  void choose_producer(const ir::ExprPtr& root);
  bool reaches_fused(const ir::ExprPtr& e, std::unordered_set<const ir::Expr*>& seen) const;

  const std::unordered_set<const ir::Expr*>& copied_;
  std::unordered_set<const ir::Expr*> inputs_;
  std::unordered_set<const ir::Expr*> stored_;  // inputs and computed outputs: they have slots
  std::vector<ir::ExprPtr> outputs_;
  std::unordered_map<const ir::Expr*, int> uses_;
  std::unordered_map<const ir::Expr*, std::vector<const ir::Call*>> users_;  // a value -> the calls reading it
  std::map<std::pair<const ir::Expr*, int64_t>, const ir::Expr*> projections_;
  std::unordered_set<const ir::Expr*> force_;  // read from memory by some stage
  std::vector<const ir::Call*> reduces_;       // every Reduce, in first-use order
  std::unordered_set<const ir::Expr*> fused_;
  std::unordered_set<const ir::Expr*> computes_operand_;  // Reduce stages fusing their operand
  std::unordered_set<const ir::Expr*> recomputed_;  // multi-use elementwise values each reader recomputes
  std::unordered_map<const ir::Expr*, ir::ExprPtr> producer_of_;  // a produced value -> the stage's root
  std::unordered_map<const ir::Expr*, ir::ExprPtr> produced_by_;  // a stage's root -> the value it produces
  bool may_fail_ = false;
};

// A call's operands with tuple operands (InsertSlice's offsets) flattened.
std::vector<ir::ExprPtr> flat_operands(const ir::Call& c);

}  // namespace tf::compiler
