#include "core/tir/op.h"

#include <cmath>

#include "core/ir/error.h"

namespace tf::tir {

ExprPtr i64(int64_t v) { return IntImm::make(DType::kI64, v); }
ExprPtr i32(int64_t v) { return IntImm::make(DType::kI32, v); }
ExprPtr boolean(bool v) { return IntImm::make(DType::kBool, v ? 1 : 0); }

ExprPtr imm(DType d, double v) {
  if (d == DType::kF32 || d == DType::kF64) return FloatImm::make(d, v);
  if (d == DType::kBool) return boolean(v != 0);
  return IntImm::make(d, static_cast<int64_t>(v));
}

bool const_int(const ExprPtr& e, int64_t* out) {
  auto* k = as<IntImm>(e);
  if (!k) return false;
  *out = k->value();
  return true;
}

bool is_const_int(const ExprPtr& e, int64_t v) {
  int64_t k;
  return const_int(e, &k) && k == v;
}

namespace {

// Folds integer arithmetic of two immediates of dtype d; only i64 / i32
// index arithmetic, whose values the lowering keeps far from overflow.
bool fold(BinaryOp op, const ExprPtr& a, const ExprPtr& b, ExprPtr* out) {
  int64_t x, y;
  if (!const_int(a, &x) || !const_int(b, &y) || a->dtype() == DType::kBool) return false;
  const DType d = a->dtype();
  switch (op) {
    case BinaryOp::kAdd: *out = IntImm::make(d, x + y); return true;
    case BinaryOp::kSub: *out = IntImm::make(d, x - y); return true;
    case BinaryOp::kMul: *out = IntImm::make(d, x * y); return true;
    case BinaryOp::kDiv: if (y == 0) return false; *out = IntImm::make(d, x / y); return true;
    case BinaryOp::kMod: if (y == 0) return false; *out = IntImm::make(d, x % y); return true;
    case BinaryOp::kMin: *out = IntImm::make(d, x < y ? x : y); return true;
    case BinaryOp::kMax: *out = IntImm::make(d, x > y ? x : y); return true;
    case BinaryOp::kEq: *out = boolean(x == y); return true;
    case BinaryOp::kNe: *out = boolean(x != y); return true;
    case BinaryOp::kLt: *out = boolean(x < y); return true;
    case BinaryOp::kLe: *out = boolean(x <= y); return true;
    case BinaryOp::kGt: *out = boolean(x > y); return true;
    case BinaryOp::kGe: *out = boolean(x >= y); return true;
    default: return false;
  }
}

bool is_integer(const ExprPtr& e) { return ir::is_int(e->dtype()) && !e->type().handle; }

ExprPtr folded_binary(BinaryOp op, ExprPtr a, ExprPtr b) {
  ExprPtr folded;
  if (fold(op, a, b, &folded)) return folded;
  return Binary::make(op, std::move(a), std::move(b));
}

}  // namespace

ExprPtr binary(BinaryOp op, ExprPtr a, ExprPtr b) {
  switch (op) {
    case BinaryOp::kAdd: return add(std::move(a), std::move(b));
    case BinaryOp::kSub: return sub(std::move(a), std::move(b));
    case BinaryOp::kMul: return mul(std::move(a), std::move(b));
    case BinaryOp::kDiv: return div(std::move(a), std::move(b));
    case BinaryOp::kMod: return mod(std::move(a), std::move(b));
    case BinaryOp::kAnd: return land(std::move(a), std::move(b));
    case BinaryOp::kOr: return lor(std::move(a), std::move(b));
    default: return folded_binary(op, std::move(a), std::move(b));
  }
}

ExprPtr add(ExprPtr a, ExprPtr b) {
  if (is_integer(a) && is_const_int(b, 0)) return a;
  if (is_integer(b) && is_const_int(a, 0)) return b;
  return folded_binary(BinaryOp::kAdd, std::move(a), std::move(b));
}
ExprPtr sub(ExprPtr a, ExprPtr b) {
  if (is_integer(a) && is_const_int(b, 0)) return a;
  return folded_binary(BinaryOp::kSub, std::move(a), std::move(b));
}
ExprPtr mul(ExprPtr a, ExprPtr b) {
  if (is_integer(a)) {
    if (is_const_int(b, 1)) return a;
    if (is_const_int(a, 1)) return b;
    if (is_const_int(a, 0) || is_const_int(b, 0)) return IntImm::make(a->dtype(), 0);
  }
  return folded_binary(BinaryOp::kMul, std::move(a), std::move(b));
}
ExprPtr div(ExprPtr a, ExprPtr b) {
  if (is_integer(a) && is_const_int(b, 1)) return a;
  return folded_binary(BinaryOp::kDiv, std::move(a), std::move(b));
}
ExprPtr mod(ExprPtr a, ExprPtr b) {
  if (is_integer(a) && is_const_int(b, 1)) return IntImm::make(a->dtype(), 0);
  return folded_binary(BinaryOp::kMod, std::move(a), std::move(b));
}
ExprPtr min(ExprPtr a, ExprPtr b) { return folded_binary(BinaryOp::kMin, std::move(a), std::move(b)); }
ExprPtr max(ExprPtr a, ExprPtr b) { return folded_binary(BinaryOp::kMax, std::move(a), std::move(b)); }
ExprPtr eq(ExprPtr a, ExprPtr b) { return folded_binary(BinaryOp::kEq, std::move(a), std::move(b)); }
ExprPtr ne(ExprPtr a, ExprPtr b) { return folded_binary(BinaryOp::kNe, std::move(a), std::move(b)); }
ExprPtr lt(ExprPtr a, ExprPtr b) { return folded_binary(BinaryOp::kLt, std::move(a), std::move(b)); }
ExprPtr le(ExprPtr a, ExprPtr b) { return folded_binary(BinaryOp::kLe, std::move(a), std::move(b)); }
ExprPtr gt(ExprPtr a, ExprPtr b) { return folded_binary(BinaryOp::kGt, std::move(a), std::move(b)); }
ExprPtr ge(ExprPtr a, ExprPtr b) { return folded_binary(BinaryOp::kGe, std::move(a), std::move(b)); }

ExprPtr land(ExprPtr a, ExprPtr b) {
  if (is_const_int(a, 1)) return b;
  if (is_const_int(b, 1)) return a;
  if (is_const_int(a, 0) || is_const_int(b, 0)) return boolean(false);
  return Binary::make(BinaryOp::kAnd, std::move(a), std::move(b));
}
ExprPtr lor(ExprPtr a, ExprPtr b) {
  if (is_const_int(a, 0)) return b;
  if (is_const_int(b, 0)) return a;
  if (is_const_int(a, 1) || is_const_int(b, 1)) return boolean(true);
  return Binary::make(BinaryOp::kOr, std::move(a), std::move(b));
}

ExprPtr neg(ExprPtr a) {
  int64_t k;
  if (is_integer(a) && const_int(a, &k)) return IntImm::make(a->dtype(), -k);
  return Unary::make(UnaryOp::kNeg, std::move(a));
}
ExprPtr lnot(ExprPtr a) {
  int64_t k;
  if (a->dtype() == DType::kBool && const_int(a, &k)) return boolean(k == 0);
  return Unary::make(UnaryOp::kNot, std::move(a));
}

ExprPtr select(ExprPtr c, ExprPtr t, ExprPtr f) {
  int64_t k;
  if (const_int(c, &k)) return k ? t : f;
  return Select::make(std::move(c), std::move(t), std::move(f));
}

ExprPtr cast(DType to, ExprPtr value) {
  if (!value->type().handle && value->dtype() == to) return value;
  int64_t k;
  if (is_integer(value) && const_int(value, &k) && ir::is_int(to)) return IntImm::make(to, k);
  return Cast::make(to, std::move(value));
}

ExprPtr load(const VarPtr& base, ExprPtr index) { return Load::make(base, std::move(index)); }
ExprPtr address(const VarPtr& base, ExprPtr index) { return Address::make(base, std::move(index)); }

ExprPtr call(Type ret, std::string name, std::vector<ExprPtr> args, std::vector<Type> type_args) {
  return Call::make(ret, std::move(name), std::move(args), Call::kPure, std::move(type_args));
}
ExprPtr extern_call(std::string name, std::vector<ExprPtr> args, std::vector<Type> type_args) {
  return Call::make(Type::scalar(DType::kI32), std::move(name), std::move(args), Call::kExtern, std::move(type_args));
}

}  // namespace tf::tir
