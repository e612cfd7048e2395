#include "core/compiler/inline_operand.h"

#include <algorithm>

#include "core/compiler/emit_util.h"
#include "core/compiler/scalar_lowering.h"
#include "core/ir/error.h"
#include "core/ops/tensor/tensor.h"
#include "core/tir/op.h"
#include "core/tir/transform.h"

namespace tf::compiler {

using ir::DType;
using tir::ExprPtr;

namespace {

class TreeLowering {
 public:
  TreeLowering(const StageEnv& env, InlineOperand& out, const ir::Shape& shape, std::vector<size_t> axes)
      : env_(env), out_(out), shape_(shape), axes_(std::move(axes)) {}

  ExprPtr node(const ir::ExprPtr& e) {
    if (const long k = env_.slot_of(e.get()); k >= 0) return leaf(static_cast<size_t>(k));
    if (auto* k = ir::expr_as<ir::Constant>(e)) return constant_value(*k);
    auto* c = ir::expr_as<ir::Call>(e);
    TF_CHECK(c && c->op(), "inline operand: a value that is neither stored nor an elementwise call");
    const ScalarLowering* l = find_scalar_lowering(c->op()->name());
    TF_CHECK(l, "inline operand: op " + std::string(c->op()->name()) + " has no scalar form");
    ScalarArgs a{*c, {}, tensor_type(*c).dtype(), env_.err, nullptr, nullptr, nullptr};
    for (const ir::ExprPtr& x : c->args()) a.args.push_back(node(x));
    out_.may_fail = out_.may_fail || l->may_fail(*c);
    return round_to(a.out, l->lower(a));
  }

 private:
  // Slot k's element at the operand's index, in its compute type.
  ExprPtr leaf(size_t k) {
    auto it = std::find_if(out_.leaves.begin(), out_.leaves.end(), [&](const InlineOperand::Leaf& l) { return l.slot == k; });
    if (it == out_.leaves.end()) {
      const ir::TensorType& t = *env_.slot(k).type;
      InlineOperand::Leaf l{k, {}, {}, tir::Var::make("e" + S(out_.leaves.size()), tir::Type::scalar(t.dtype()))};
      // Trailing axes aligned: the tree's axis a is the leaf's a - lead.
      const int64_t lead = static_cast<int64_t>(shape_.size()) - static_cast<int64_t>(t.rank());
      for (size_t a : axes_) {
        const int64_t b = static_cast<int64_t>(a) - lead;
        const bool absent = b < 0 || is_static_one(t.shape()[static_cast<size_t>(b)]);
        l.axis.push_back(absent ? -1 : b);
        l.run_time_broadcast.push_back(!absent && t.shape()[static_cast<size_t>(b)] != shape_[a]);
      }
      out_.leaves.push_back(std::move(l));
      it = out_.leaves.end() - 1;
    }
    return tir::cast(compute_dtype(it->element->dtype()), it->element);
  }

  const StageEnv& env_;
  InlineOperand& out_;
  const ir::Shape& shape_;   // the tree's
  std::vector<size_t> axes_;  // per operand axis, the tree's axis read there
};

}  // namespace

ExprPtr InlineOperand::at(const std::vector<ExprPtr>& elements) const {
  TF_CHECK(elements.size() == leaves.size(), "InlineOperand::at: one element per leaf");
  tir::VarMap values;
  for (size_t k = 0; k < leaves.size(); ++k) values[leaves[k].element.get()] = elements[k];
  return tir::substitute(value, values);
}

InlineOperand lower_inline_operand(const StageEnv& env, const ir::ExprPtr& root) {
  InlineOperand out;
  const ir::TensorType& t = tensor_type(*root);
  out.dtype = t.dtype();
  for (const ir::ShapeDim& d : t.shape()) out.extents.push_back(env.extent(d));
  // Through a Transpose, the operand's axis i is the tree's axes[i].
  ir::ExprPtr tree = root;
  std::vector<size_t> axes(t.rank());
  for (size_t i = 0; i < axes.size(); ++i) axes[i] = i;
  if (auto* c = ir::expr_as<ir::Call>(root); c && c->op() && c->op()->name() == "Transpose" && env.slot_of(root.get()) < 0) {
    const auto& perm = static_cast<const ops::Transpose&>(*c->op()).axes;
    const auto rank = static_cast<int64_t>(perm.size());
    for (size_t i = 0; i < axes.size(); ++i) axes[i] = static_cast<size_t>(perm[i] < 0 ? perm[i] + rank : perm[i]);
    tree = c->args()[0];
  }
  out.value = TreeLowering(env, out, tensor_type(*tree).shape(), std::move(axes)).node(tree);
  return out;
}

}  // namespace tf::compiler
