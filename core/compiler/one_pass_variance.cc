#include "core/compiler/one_pass_variance.h"

#include <limits>
#include <string_view>
#include <utility>

#include "core/compiler/hir_build.h"
#include "core/ir/visitor.h"

namespace tf::compiler {
namespace {

using ir::DType;
using ir::ExprPtr;
using namespace hir;

// e as a call of OpT (the op named `name`) and that op; else nulls.
template <typename OpT>
std::pair<const ir::Call*, const OpT*> call_of(const ExprPtr& e, std::string_view name) {
  const auto* c = ir::expr_as<ir::Call>(e);
  if (!c || !c->op() || c->op()->name() != name) return {nullptr, nullptr};
  return {c, &static_cast<const OpT&>(*c->op())};
}

// e as a mean over its operand's last axis, keepdim; else null.
const ir::Call* row_mean(const ExprPtr& e) {
  const auto [c, r] = call_of<ops::Reduce>(e, "Reduce");
  if (!r || r->kind != ops::ReduceKind::kMean || !r->keepdim || r->axes.size() != 1) return nullptr;
  const int64_t rank = static_cast<int64_t>(tensor_type(*c->args()[0]).rank());
  return rank > 0 && (r->axes[0] == -1 || r->axes[0] == rank - 1) ? c : nullptr;
}

// e as a Binary of `kind`; else null.
const ir::Call* binary(const ExprPtr& e, ops::BinaryKind kind) {
  const auto [c, b] = call_of<ops::Binary>(e, "Binary");
  return b && b->kind == kind ? c : nullptr;
}

// The deviation d of a square d * d, d ** 2 or square(d); else null.
const ExprPtr* squared(const ExprPtr& e) {
  if (const auto [c, u] = call_of<ops::Unary>(e, "Unary"); u && u->kind == ops::UnaryKind::kSquare)
    return &c->args()[0];
  if (const ir::Call* m = binary(e, ops::BinaryKind::kMul); m && m->args()[0] == m->args()[1])
    return &m->args()[0];
  if (const ir::Call* p = binary(e, ops::BinaryKind::kPow)) {
    const auto* k = ir::expr_as<ir::Constant>(p->args()[1]);
    if (k && ir::is_float(k->dtype()) && k->value() == 2.0) return &p->args()[0];
  }
  return nullptr;
}

class Rewriter final : public ir::ExprMutator {
 public:
  Rewriter(const std::unordered_set<const ir::Expr*>& stop, DecompositionNotes* notes) : stop_(stop), notes_(notes) {}

 protected:
  ExprPtr mutate_tuple_get_item(const ExprPtr& t) override {
    return stop_.count(t.get()) ? t : ir::ExprMutator::mutate_tuple_get_item(t);
  }
  ExprPtr mutate_call(const ir::CallPtr& c) override {
    if (stop_.count(c.get())) return c;
    ExprPtr rebuilt = ir::ExprMutator::mutate_call(c);
    ExprPtr v = variance(rebuilt);
    return v ? v : rebuilt;
  }

 private:
  bool given(const ExprPtr& e) const { return stop_.count(e.get()) > 0; }

  // The one-pass form of `outer` when it is mean((x - mean(x))^2) over the
  // last axis of an f32 x computed in this segment; else null.
  ExprPtr variance(const ExprPtr& outer) {
    const ir::Call* o = row_mean(outer);
    if (!o || tensor_type(*outer).dtype() != DType::kF32 || given(o->args()[0])) return nullptr;
    const ExprPtr* d = squared(o->args()[0]);
    if (!d || given(*d)) return nullptr;
    const ir::Call* dev = binary(*d, ops::BinaryKind::kSub);
    if (!dev) return nullptr;
    const ExprPtr &x = dev->args()[0], &m = dev->args()[1];
    const ir::Call* inner = row_mean(m);
    if (!inner || inner->args()[0] != x || tensor_type(*x).dtype() != DType::kF32) return nullptr;
    const ExprPtr first = row_first(x);
    // The shift: x[0], or 0 where x[0] is infinite or NaN (the moments are
    // then NaN or infinite as the literal form's; a finite shift lets the
    // mean's own sum be derived from the shifted one).
    const ExprPtr x0 = cast(first, DType::kF64);
    const ExprPtr finite = bin(ops::BinaryKind::kLt, unary(ops::UnaryKind::kAbs, x0),
                               constant(std::numeric_limits<double>::infinity(), DType::kF64));
    const ExprPtr k = make<ops::Where>({finite, x0, constant(0, DType::kF64)});
    notes_->finite.insert(k.get());
    const ExprPtr s = sub(cast(x, DType::kF64), k);
    const ExprPtr m1 = row_reduce(ops::ReduceKind::kMean, s), m2 = row_reduce(ops::ReduceKind::kMean, mul(s, s));
    for (const ExprPtr& e : {first, m1, m2}) notes_->unchecked.insert(e.get());
    const ExprPtr t = sub(cast(m, DType::kF64), k);
    const ExprPtr var = sub(m2, mul(t, sub(add(m1, m1), t)));
    return cast(bin(ops::BinaryKind::kMaximum, var, constant(0, DType::kF64)), DType::kF32);
  }

  const std::unordered_set<const ir::Expr*>& stop_;
  DecompositionNotes* notes_;
};

}  // namespace

std::vector<ExprPtr> one_pass_variances(const std::vector<ExprPtr>& outputs,
                                        const std::unordered_set<const ir::Expr*>& stop,
                                        DecompositionNotes* notes) {
  Rewriter r(stop, notes);
  std::vector<ExprPtr> out;
  for (const ExprPtr& o : outputs) out.push_back(r.mutate(o));
  return out;
}

}  // namespace tf::compiler
