#include "core/compiler/decompose.h"

#include "core/compiler/emit_util.h"
#include "core/compiler/hir_build.h"
#include "core/ir/visitor.h"
#include "core/ops/math/math.h"
#include "core/ops/nn/nn.h"
#include "core/ops/part_table.h"
#include "core/ops/tensor/tensor.h"
#include "core/sema/typeinfer.h"

namespace tf::compiler {
namespace {

using ir::DType;
using ir::ExprPtr;
using ops::BinaryKind;

using namespace hir;

DType compute(DType d) { return is_half(d) ? DType::kF32 : d; }

// Over the last axis of a float tensor (the cases the code generator
// compiled as built-ins).
bool last_axis_float(const ir::Call& c, int64_t axis = -1) {
  const ir::TensorType& t = tensor_type(c);
  const int64_t r = static_cast<int64_t>(t.rank());
  return r > 0 && (axis == -1 || axis == r - 1) && ir::is_float(t.dtype()) && !is_fp8(t.dtype());
}

// HF LlamaRMSNorm, as the evaluator computes it: in the compute type C, the
// squares' sum in double (a mean rounds it to C before dividing), h * r
// rounded to the storage type before the weight's product.
ExprPtr rms_norm(const ir::Call& c, DecompositionNotes* notes) {
  if (!last_axis_float(c)) return nullptr;
  const DType t = tensor_type(c).dtype(), ct = compute(t);
  const ExprPtr h = cast(c.args()[0], ct);
  const ExprPtr ms = row_reduce(ops::ReduceKind::kMean, mul(h, h));
  notes->unchecked.insert(ms.get());  // a zero-length row is an empty result
  const ExprPtr r = unary(ops::UnaryKind::kRsqrt, add(ms, constant(static_cast<const ops::RMSNorm&>(*c.op()).eps, ct)));
  return mul(cast(mul(h, r), t), c.args()[1]);
}

// The moments in one pass, in double, of the row shifted by its first
// element (E[d^2] - E[d]^2 with d = x - x[0] does not cancel the way
// E[x^2] - E[x]^2 does when the spread is tiny against the mean); the
// normalization in C, with the mean as an unevaluated sum mc + ml of two C
// values (x - mc is exact near the mean, so (x - mc) - ml keeps the digits
// a rounded mean would lose). A few ulps from the evaluator's two-pass
// double computation, rounded once. f64 computes as the evaluator.
ExprPtr layer_norm(const ir::Call& c, DecompositionNotes* notes) {
  if (!last_axis_float(c)) return nullptr;
  const DType t = tensor_type(c).dtype(), ct = compute(t);
  const double eps = static_cast<const ops::LayerNorm&>(*c.op()).eps;
  const ExprPtr &x = c.args()[0], &w = c.args()[1], &b = c.args()[2];
  auto mean = [&](const ExprPtr& v) {
    ExprPtr m = row_reduce(ops::ReduceKind::kMean, v);
    notes->unchecked.insert(m.get());
    return m;
  };
  if (t == DType::kF64) {
    const ExprPtr d = sub(x, mean(x));
    return add(mul(mul(d, unary(ops::UnaryKind::kRsqrt, add(mean(mul(d, d)), constant(eps, t)))), w), b);
  }
  const ExprPtr first = row_first(x);
  notes->unchecked.insert(first.get());
  const ExprPtr k0 = cast(first, DType::kF64);
  const ExprPtr v = sub(cast(x, DType::kF64), k0);
  const ExprPtr s1 = mean(v), s2 = mean(mul(v, v));
  const ExprPtr var = bin(BinaryKind::kMaximum, sub(s2, mul(s1, s1)), constant(0, DType::kF64));
  const ExprPtr m = add(s1, k0);
  const ExprPtr mc = cast(m, ct), ml = cast(sub(m, cast(mc, DType::kF64)), ct);
  const ExprPtr rc = cast(unary(ops::UnaryKind::kRsqrt, add(var, constant(eps, DType::kF64))), ct);
  const ExprPtr y = add(mul(mul(sub(sub(cast(x, ct), mc), ml), rc), cast(w, ct)), cast(b, ct));
  return cast(y, t);
}

// exp(x - max) along the axis, times 1 / their sum; the product by 1 / sum
// is within an ulp of the evaluator's division. Over the last axis a row
// stage computes it, the sum in float, as the evaluator's (and torch's)
// SoftMax, vectorized. Over another axis, Reduce stages over it take the
// max and the sum (that one in double, a Reduce's: closer to the exact sum
// than the evaluator's float one) and elementwise stages the rest; that
// SoftMax ran on the evaluator (f32 [2048, 4096] over axis 0, one thread:
// 152 ms against eager's 28).
ExprPtr softmax(const ir::Call& c, DecompositionNotes* notes) {
  const ir::TensorType& type = tensor_type(c);
  const int64_t rank = static_cast<int64_t>(type.rank()), a = static_cast<const ops::SoftMax&>(*c.op()).axis;
  const int64_t axis = a == rank - 1 ? -1 : a;  // the last axis as a row stage recognizes it
  if (rank == 0 || !ir::is_float(type.dtype()) || is_fp8(type.dtype())) return nullptr;
  const DType t = type.dtype(), ct = compute(t);
  const ExprPtr h = cast(c.args()[0], ct);
  const ExprPtr e = unary(ops::UnaryKind::kExp, sub(h, reduce_over(ops::ReduceKind::kMax, h, axis)));
  const ExprPtr sum = reduce_over(ops::ReduceKind::kSum, e, axis);
  notes->compute_type_sums.insert(sum.get());
  return cast(mul(e, div(constant(1, ct), sum)), t);
}

ops::OpPartTable<Decomposition>& table() {
  static ops::OpPartTable<Decomposition>* t = [] {
    auto* p = new ops::OpPartTable<Decomposition>("a decomposition");
    p->add("RMSNorm", rms_norm);
    p->add("LayerNorm", layer_norm);
    p->add("SoftMax", softmax);
    return p;
  }();
  return *t;
}

class Decomposer final : public ir::ExprMutator {
 public:
  Decomposer(const std::unordered_set<const ir::Expr*>& stop, DecompositionNotes* notes) : stop_(stop), notes_(notes) {}

 protected:
  ir::ExprPtr mutate_tuple_get_item(const ir::ExprPtr& t) override {
    return stop_.count(t.get()) ? t : ir::ExprMutator::mutate_tuple_get_item(t);
  }
  ir::ExprPtr mutate_call(const ir::CallPtr& c) override {
    if (stop_.count(c.get())) return c;
    ir::ExprPtr rebuilt = ir::ExprMutator::mutate_call(c);
    auto* call = ir::expr_as<ir::Call>(rebuilt);
    if (!call || !call->op()) return rebuilt;
    const Decomposition* d = find_decomposition(call->op()->name());
    if (!d) return rebuilt;
    ir::ExprPtr out = (*d)(*call, notes_);
    return out ? out : rebuilt;
  }
 private:
  const std::unordered_set<const ir::Expr*>& stop_;
  DecompositionNotes* notes_;
};

}  // namespace

const Decomposition* find_decomposition(std::string_view op_name) { return table().find(op_name); }

void register_decomposition(std::string op_name, Decomposition d) { table().add(std::move(op_name), std::move(d)); }

ops::OpPart decomposition_part() { return table().part(); }

ir::ExprPtr decompose(const ir::ExprPtr& body, const std::unordered_set<const ir::Expr*>& stop, DecompositionNotes* notes) {
  return Decomposer(stop, notes).mutate(body);
}

}  // namespace tf::compiler
