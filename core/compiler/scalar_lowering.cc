#include "core/compiler/scalar_lowering.h"

#include <cmath>
#include <limits>


#include "core/compiler/emit_util.h"
#include "core/ir/error.h"
#include "core/runtime/float8.h"
#include "core/runtime/half.h"
#include "core/ops/math/math.h"
#include "core/ops/nn/nn.h"
#include "core/ops/part_table.h"
#include "core/ops/tensor/tensor.h"
#include "core/tir/op.h"

namespace tf::compiler {

using ir::DType;
using ops::BinaryKind;
using ops::UnaryKind;
using tir::ExprPtr;
using tir::Type;

DType compute_dtype(DType d) { return tir::is_compute_dtype(d) ? d : DType::kF32; }

ExprPtr round_to(DType d, ExprPtr v) {
  switch (d) {
    case DType::kF16: return tir::call(Type::scalar(DType::kF32), "tf_rf16", {std::move(v)});
    case DType::kBF16: return tir::call(Type::scalar(DType::kF32), "tf_rbf16", {std::move(v)});
    case DType::kFP8E4M3: return tir::call(Type::scalar(DType::kF32), "tf_rfp8e4m3", {std::move(v)});
    case DType::kF8E8M0: return tir::call(Type::scalar(DType::kF32), "tf_rf8e8m0", {std::move(v)});
    default: return v;
  }
}

ExprPtr constant_value(const ir::Constant& k) {
  const DType d = k.dtype();
  if (!ir::is_float(d)) return tir::imm(d, static_cast<double>(k.int_value()));
  return round_to(d, tir::imm(compute_dtype(d) == DType::kF64 ? DType::kF64 : DType::kF32, k.value()));
}

namespace {

// f<C>(args...) returning C: the prelude's templated scalar helpers.
ExprPtr tcall(DType c, const std::string& f, std::vector<ExprPtr> args) {
  return tir::call(Type::scalar(c), f, std::move(args), {Type::scalar(c)});
}
ExprPtr fcall(DType c, const std::string& f, ExprPtr x) { return tir::call(Type::scalar(c), f, {std::move(x)}); }
ExprPtr zero(DType c) { return tir::imm(c, 0); }
ExprPtr one(DType c) { return tir::imm(c, 1); }

// exp(v) / sum(exp(v)) with keepdim (softmax's e / sum(e); exps are the
// values a row stage caches): exps are never negative and every dividend
// is one of the terms of its own divisor, so none lies above it, and a NaN
// or an infinity among them is the divisor's too (tf_div_by_sum_n's
// precondition).
bool divides_exps_by_their_sum(const ir::Call& div) {
  const auto* sum = dynamic_cast<const ir::Call*>(div.args()[1].get());
  if (!sum || !sum->op() || sum->op()->name() != "Reduce" || sum->args()[0] != div.args()[0]) return false;
  const auto& reduce = static_cast<const ops::Reduce&>(*sum->op());
  if (reduce.kind != ops::ReduceKind::kSum || !reduce.keepdim) return false;
  const auto* e = dynamic_cast<const ir::Call*>(div.args()[0].get());
  return e && e->op() && e->op()->name() == "Unary" &&
         static_cast<const ops::Unary&>(*e->op()).kind == UnaryKind::kExp;
}

DType operand_compute(const ScalarArgs& a, size_t i) {
  return compute_dtype(tensor_type(*a.call.args()[i]).dtype());
}

ExprPtr lower_binary(const ScalarArgs& a) {
  const auto& op = static_cast<const ops::Binary&>(*a.call.op());
  const DType in = tensor_type(*a.call.args()[0]).dtype(), c = compute_dtype(in);
  const ExprPtr &x = a.args[0], &y = a.args[1];
  const bool fl = ir::is_float(in);
  switch (op.kind) {
    case BinaryKind::kAdd: return fl ? tir::add(x, y) : tcall(c, "tf_wadd", {x, y});
    case BinaryKind::kSub: return fl ? tir::sub(x, y) : tcall(c, "tf_wsub", {x, y});
    case BinaryKind::kMul: return fl ? tir::mul(x, y) : tcall(c, "tf_wmul", {x, y});
    case BinaryKind::kDiv:
      // A cached f32 row divided by a value of the whole row (softmax's
      // e / sum(e)): the prelude's exact division by a reciprocal, in place.
      if (fl && c == DType::kF32 && a.stage && a.invariant(y) && a.in_row(x))
        return a.stage(divides_exps_by_their_sum(a.call) ? "tf_div_by_sum_n" : "tf_div_n", x, {y});
      if (fl) return tir::div(x, y);
      if (in == DType::kBool) unsupported("div of bool");
      return tir::Call::make(Type::scalar(c), "tf_floordiv", {x, y, a.err}, tir::Call::kExtern, {Type::scalar(c)});
    case BinaryKind::kMinimum: return tcall(c, "tf_min", {x, y});
    case BinaryKind::kMaximum: return tcall(c, "tf_max", {x, y});
    case BinaryKind::kPow: return tir::call(Type::scalar(c), "std::pow", {x, y});
    case BinaryKind::kEq: return tir::eq(x, y);
    case BinaryKind::kNe: return tir::ne(x, y);
    case BinaryKind::kLt: return tir::lt(x, y);
    case BinaryKind::kLe: return tir::le(x, y);
    case BinaryKind::kGt: return tir::gt(x, y);
    case BinaryKind::kGe: return tir::ge(x, y);
    // Both operands computed (tf_land / tf_lor), not && / ||, which read the
    // second only where the first decides nothing: a branch per element.
    case BinaryKind::kLogicalAnd:
      return tir::call(Type::scalar(DType::kBool), "tf_land", {tir::ne(x, zero(c)), tir::ne(y, zero(c))});
    case BinaryKind::kLogicalOr:
      return tir::call(Type::scalar(DType::kBool), "tf_lor", {tir::ne(x, zero(c)), tir::ne(y, zero(c))});
    case BinaryKind::kLogicalXor: return tir::ne(tir::ne(x, zero(c)), tir::ne(y, zero(c)));
  }
  TF_CHECK(false, "scalar lowering: unknown Binary kind");
}

ExprPtr lower_unary(const ScalarArgs& a) {
  const auto& op = static_cast<const ops::Unary&>(*a.call.op());
  const DType c = compute_dtype(a.out);
  const ExprPtr& x = a.args[0];
  const bool fl = ir::is_float(a.out);
  switch (op.kind) {
    case UnaryKind::kNeg: return tcall(c, "tf_neg", {x});
    case UnaryKind::kAbs: return tcall(c, "tf_abs", {x});
    case UnaryKind::kLogicalNot: return tir::eq(x, zero(operand_compute(a, 0)));
    case UnaryKind::kRsqrt: return tir::div(one(c), fcall(c, "std::sqrt", x));
    case UnaryKind::kSqrt: return fcall(c, "std::sqrt", x);
    case UnaryKind::kExp: return fcall(c, "tf_exp", x);
    case UnaryKind::kLog: return fcall(c, "std::log", x);
    case UnaryKind::kExp2: return fcall(c, "std::exp2", x);
    case UnaryKind::kLog2: return fcall(c, "std::log2", x);
    case UnaryKind::kCeil: return fl ? fcall(c, "std::ceil", x) : x;
    case UnaryKind::kFloor: return fl ? fcall(c, "std::floor", x) : x;
    case UnaryKind::kRound: return fl ? fcall(c, "std::nearbyint", x) : x;
    case UnaryKind::kSquare: return tcall(c, "tf_square", {x});
    case UnaryKind::kRelu: return tcall(c, "tf_relu", {x});
    case UnaryKind::kSin: return fcall(c, "std::sin", x);
    case UnaryKind::kCos: return fcall(c, "std::cos", x);
  }
  TF_CHECK(false, "scalar lowering: unknown Unary kind");
}

// Both values computed (tf_where), not a select that loads one of them.
ExprPtr lower_where(const ScalarArgs& a) {
  return tcall(a.args[1]->dtype(), "tf_where", {a.args[0], a.args[1], a.args[2]});
}

// A bound in the compute type, converted as the evaluator converts it
// (rounded to a float dtype, saturated to an integer one); null when it
// bounds nothing (an infinity on its own side).
ExprPtr clamp_bound(double v, DType d, bool lower) {
  if (v == (lower ? -1 : 1) * std::numeric_limits<double>::infinity()) return nullptr;
  if (!ir::is_float(d)) return tir::IntImm::make(d, ops::clamp_int_bound(v, d));
  switch (d) {
    case DType::kF64: return tir::imm(d, v);
    case DType::kF16: return tir::imm(DType::kF32, runtime::Half::from_float(static_cast<float>(v)).to_float());
    case DType::kBF16: return tir::imm(DType::kF32, runtime::BFloat16::from_float(static_cast<float>(v)).to_float());
    case DType::kFP8E4M3: return tir::imm(DType::kF32, runtime::Float8E4M3::from_float(static_cast<float>(v)).to_float());
    case DType::kF8E8M0: return tir::imm(DType::kF32, runtime::Float8E8M0::from_float(static_cast<float>(v)).to_float());
    default: return tir::imm(DType::kF32, static_cast<float>(v));
  }
}

ExprPtr lower_clamp(const ScalarArgs& a) {
  const auto& op = static_cast<const ops::Clamp&>(*a.call.op());
  const DType c = compute_dtype(a.out);
  ExprPtr v = a.args[0];
  if (ExprPtr lo = clamp_bound(op.min, a.out, true)) v = tcall(c, "tf_max", {v, lo});
  if (ExprPtr hi = clamp_bound(op.max, a.out, false)) v = tcall(c, "tf_min", {v, hi});
  return v;
}

ExprPtr lower_cast(const ScalarArgs& a) {
  if (a.out == DType::kBool) return tir::ne(a.args[0], zero(operand_compute(a, 0)));
  return tir::cast(compute_dtype(a.out), a.args[0]);
}

// The nn activations, as the evaluator computes them: the sigmoid through
// the compiled exp, tanh through libm (the exp form of tanh cancels near 0).
ExprPtr lower_silu(const ScalarArgs& a) { return tcall(compute_dtype(a.out), "tf_silu", {a.args[0]}); }
ExprPtr lower_gelu(const ScalarArgs& a) {
  const DType c = compute_dtype(a.out);
  if (static_cast<const ops::Gelu&>(*a.call.op()).approximate != "tanh") return tcall(c, "tf_gelu_erf", {a.args[0]});
  if (a.stage && c == DType::kF32) return a.stage("tf_gelu_tanh_n", a.args[0], {});
  return tcall(c, "tf_gelu_tanh", {a.args[0]});
}
ExprPtr lower_relu(const ScalarArgs& a) { return tcall(compute_dtype(a.out), "tf_relu", {a.args[0]}); }
ExprPtr lower_sigmoid(const ScalarArgs& a) {
  const DType c = compute_dtype(a.out);
  return tir::div(one(c), tir::add(one(c), fcall(c, "tf_exp", tir::neg(a.args[0]))));
}
ExprPtr lower_tanh(const ScalarArgs& a) { return fcall(compute_dtype(a.out), "std::tanh", a.args[0]); }
ExprPtr lower_zeros(const ScalarArgs& a) { return zero(compute_dtype(a.out)); }

bool never(const ir::Op&) { return false; }
bool always(const ir::Op&) { return true; }
bool cannot_fail(const ir::Call&) { return false; }
bool unary_transcendental(const ir::Op& op) {
  switch (static_cast<const ops::Unary&>(op).kind) {
    case UnaryKind::kExp: case UnaryKind::kLog: case UnaryKind::kExp2: case UnaryKind::kLog2:
    case UnaryKind::kSin: case UnaryKind::kCos: return true;
    default: return false;
  }
}
bool binary_transcendental(const ir::Op& op) { return static_cast<const ops::Binary&>(op).kind == BinaryKind::kPow; }
bool integer_division(const ir::Call& c) {
  return static_cast<const ops::Binary&>(*c.op()).kind == BinaryKind::kDiv &&
         !ir::is_float(tensor_type(*c.args()[0]).dtype());
}

// The ops layer's per-op part table (open, thread-safe, a second entry for
// a name refused), filled with the built-in forms on first use.
ops::OpPartTable<ScalarLowering>& table() {
  static ops::OpPartTable<ScalarLowering>* t = [] {
    auto* p = new ops::OpPartTable<ScalarLowering>("a scalar lowering");
    p->add("Binary", {lower_binary, binary_transcendental, integer_division});
    p->add("Where", {lower_where, never, cannot_fail});
    p->add("Clamp", {lower_clamp, never, cannot_fail});
    p->add("Unary", {lower_unary, unary_transcendental, cannot_fail});
    p->add("Cast", {lower_cast, never, cannot_fail});
    p->add("Silu", {lower_silu, always, cannot_fail});
    p->add("Gelu", {lower_gelu, always, cannot_fail});
    p->add("ReLU", {lower_relu, never, cannot_fail});
    p->add("Sigmoid", {lower_sigmoid, always, cannot_fail});
    p->add("Tanh", {lower_tanh, always, cannot_fail});
    p->add("Zeros", {lower_zeros, never, cannot_fail});
    return p;
  }();
  return *t;
}

}  // namespace

const ScalarLowering* find_scalar_lowering(std::string_view op_name) { return table().find(op_name); }

void register_scalar_lowering(std::string op_name, ScalarLowering l) { table().add(std::move(op_name), l); }

ops::OpPart scalar_lowering_part() { return table().part(); }

}  // namespace tf::compiler
