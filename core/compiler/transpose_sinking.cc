#include "core/compiler/transpose_sinking.h"

#include <algorithm>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "core/compiler/emit_util.h"
#include "core/compiler/lower_loop_nest.h"
#include "core/compiler/stage_lowering.h"
#include "core/ir/visitor.h"
#include "core/ops/tensor/tensor.h"
#include "core/sema/typeinfer.h"

namespace tf::compiler {
namespace {

using ir::Expr;
using ir::ExprPtr;
using Axes = std::vector<int64_t>;

// Ops whose value at an index is a function of their operands' values at
// that index (broadcast) and of nothing else: neither the position nor the
// shape. Zeros, which has a scalar form too, makes its value from a shape.
bool is_pointwise(const ir::Call& c) {
  static const std::unordered_set<std::string_view> kOps{"Binary", "Where",   "Clamp", "Unary", "Cast",
                                                         "Silu",   "Gelu",    "ReLU",  "Sigmoid", "Tanh"};
  return c.op() && kOps.count(c.op()->name()) > 0;
}

// A value that broadcasts the same in either layout: every extent 1.
bool all_ones(const ExprPtr& e) {
  const ir::Shape& shape = tensor_type(*e).shape();
  return std::all_of(shape.begin(), shape.end(), [](const ir::ShapeDim& d) { return is_static_one(d); });
}

// The axes of a Transpose, each in [0, rank).
Axes normalized_axes(const ir::Call& t) {
  Axes axes = static_cast<const ops::Transpose&>(*t.op()).axes;
  const auto rank = static_cast<int64_t>(axes.size());
  for (int64_t& a : axes) a = (a % rank + rank) % rank;
  return axes;
}

class Sinker final : public ir::ExprMutator {
 public:
  Sinker(const std::vector<ExprPtr>& outputs, const std::unordered_set<const Expr*>& stop) : stop_(stop) {
    for (const ExprPtr& o : outputs) {
      count_uses(o);
      collect_outputs(o);
    }
  }

  // The decompositions' notes, carried to the nodes that replace the
  // noted ones (a rebuilt reader of a sunk reduction).
  void carry(DecompositionNotes* notes) const {
    for (auto* set : {&notes->unchecked, &notes->compute_type_sums, &notes->finite}) {
      std::vector<const Expr*> now;
      for (const Expr* e : *set)
        if (auto it = renamed_.find(e); it != renamed_.end()) now.push_back(it->second);
      set->insert(now.begin(), now.end());
    }
  }

 protected:
  ExprPtr mutate_tuple_get_item(const ExprPtr& t) override {
    return stop_.count(t.get()) ? t : ir::ExprMutator::mutate_tuple_get_item(t);
  }
  ExprPtr mutate_call(const ir::CallPtr& c) override {
    if (stop_.count(c.get())) return c;
    ExprPtr r;
    if (std::optional<Axes> axes = own_stage_reduce(*c) ? sinkable(c->args()[0]) : std::nullopt) {
      const ExprPtr t = sema::make_op_call(std::make_shared<ops::Transpose>(*axes), {rebuilt_in_place(c->args()[0])});
      r = sema::make_op_call(c->op(), {t});
    } else {
      r = ir::ExprMutator::mutate_call(c);
    }
    if (r.get() != c.get()) renamed_[c.get()] = r.get();
    return r;
  }

 private:
  void count_uses(const ExprPtr& e) {
    if (++uses_[e.get()] > 1 || stop_.count(e.get())) return;
    if (auto* c = ir::expr_as<ir::Call>(e)) {
      for (const ExprPtr& a : c->args()) count_uses(a);
    } else if (auto* t = ir::expr_as<ir::Tuple>(e)) {
      for (const ExprPtr& f : t->fields()) count_uses(f);
    } else if (auto* g = ir::expr_as<ir::TupleGetItem>(e)) {
      count_uses(g->tuple());
    }
  }
  void collect_outputs(const ExprPtr& e) {
    if (auto* t = ir::expr_as<ir::Tuple>(e)) {
      for (const ExprPtr& f : t->fields()) collect_outputs(f);
    } else {
      outputs_.insert(e.get());
    }
  }

  // A Reduce that is a stage of its own: an output, or not a row
  // reduction (transpose_sinking.h).
  bool own_stage_reduce(const ir::Call& c) const {
    return c.op() && c.op()->name() == "Reduce" && (outputs_.count(&c) || !is_row_reduce(c));
  }

  // A Transpose a Reduce stage reads in place, outside the values given to
  // the segment.
  const ir::Call* transpose_of_value(const ExprPtr& e) const {
    const ir::Call* t = transpose_read_in_place(e);
    return t && !stop_.count(t) ? t : nullptr;
  }

  // The common axes of the Transposes under y when y can be computed in
  // their operands' layout (transpose_sinking.h); else nothing.
  std::optional<Axes> sinkable(const ExprPtr& y) const {
    auto* c = ir::expr_as<ir::Call>(y);
    // One reader (a node the count did not reach, in a loop's body, is left
    // as written).
    const auto n = uses_.find(c);
    if (!c || stop_.count(c) || outputs_.count(c) || n == uses_.end() || n->second != 1 || !is_pointwise(*c))
      return std::nullopt;
    const size_t rank = tensor_type(*c).rank();
    std::optional<Axes> common;
    for (const ExprPtr& a : c->args()) {
      std::optional<Axes> axes;
      if (const ir::Call* t = transpose_of_value(a)) axes = normalized_axes(*t);
      else if (all_ones(a)) continue;
      else axes = sinkable(a);
      if (!axes || axes->size() != rank || (common && *common != *axes)) return std::nullopt;
      common = axes;
    }
    return common;
  }

  // y (sinkable) computed in the layout of its Transposes' operands.
  ExprPtr rebuilt_in_place(const ExprPtr& y) {
    const auto& c = static_cast<const ir::Call&>(*y);
    std::vector<ExprPtr> args;
    for (const ExprPtr& a : c.args()) {
      if (const ir::Call* t = transpose_of_value(a)) args.push_back(mutate(t->args()[0]));
      else if (all_ones(a)) args.push_back(mutate(a));
      else args.push_back(rebuilt_in_place(a));
    }
    return sema::make_op_call(c.op(), std::move(args));
  }

  const std::unordered_set<const Expr*>& stop_;
  std::unordered_map<const Expr*, int> uses_;
  std::unordered_set<const Expr*> outputs_;
  std::unordered_map<const Expr*, const Expr*> renamed_;
};

}  // namespace

std::vector<ExprPtr> sink_transposes(const std::vector<ExprPtr>& outputs,
                                     const std::unordered_set<const Expr*>& stop, DecompositionNotes* notes) {
  Sinker s(outputs, stop);
  std::vector<ExprPtr> out;
  for (const ExprPtr& o : outputs) out.push_back(s.mutate(o));
  s.carry(notes);
  return out;
}

}  // namespace tf::compiler
