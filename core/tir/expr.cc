#include "core/tir/expr.h"

#include "core/ir/error.h"

namespace tf::tir {

std::string type_name(const Type& t) {
  if (t.opaque) return "handle";
  return std::string(ir::dtype_name(t.dtype)) + (t.handle ? "*" : "");
}

bool is_compute_dtype(DType d) {
  return d == DType::kBool || ir::is_int(d) || d == DType::kF32 || d == DType::kF64;
}

namespace {

void check_scalar(const ExprPtr& e, const char* what) {
  TF_CHECK(e, std::string("tir: ") + what + " is null");
  TF_CHECK(!e->type().handle, std::string("tir: ") + what + " is a pointer");
}

void check_index(const ExprPtr& e) {
  check_scalar(e, "index");
  TF_CHECK(ir::is_int(e->dtype()), "tir: an index of type " + type_name(e->type()));
}

}  // namespace

ExprPtr IntImm::make(DType d, int64_t v) {
  TF_CHECK(d == DType::kBool || ir::is_int(d), "tir: IntImm of " + std::string(ir::dtype_name(d)));
  return std::make_shared<IntImm>(d, v);
}

ExprPtr FloatImm::make(DType d, double v) {
  TF_CHECK(d == DType::kF32 || d == DType::kF64, "tir: FloatImm of " + std::string(ir::dtype_name(d)));
  return std::make_shared<FloatImm>(d, v);
}

VarPtr Var::make(std::string name, Type t, bool is_mutable) {
  TF_CHECK(!name.empty(), "tir: a Var without a name");
  return std::make_shared<Var>(std::move(name), t, is_mutable);
}

const char* binary_spelling(BinaryOp op) {
  switch (op) {
#define TF_X(e, s, c) \
  case BinaryOp::e:   \
    return s;
    TF_TIR_BINARY_LIST(TF_X)
#undef TF_X
  }
  return "?";
}

namespace {
char binary_category(BinaryOp op) {
  switch (op) {
#define TF_X(e, s, c) \
  case BinaryOp::e:   \
    return c;
    TF_TIR_BINARY_LIST(TF_X)
#undef TF_X
  }
  return '?';
}
}  // namespace

bool is_compare(BinaryOp op) { return binary_category(op) == 'c'; }
bool is_logical(BinaryOp op) { return binary_category(op) == 'l'; }

ExprPtr Binary::make(BinaryOp op, ExprPtr a, ExprPtr b) {
  TF_CHECK(a && b, "tir: a Binary operand is null");
  if (a->type().handle && (op == BinaryOp::kEq || op == BinaryOp::kNe)) {
    TF_CHECK(!a->type().opaque && a->type() == b->type(), std::string("tir: ") + binary_spelling(op) + " of " +
                                                              type_name(a->type()) + " and " + type_name(b->type()));
    return std::make_shared<Binary>(op, std::move(a), std::move(b), Type::scalar(DType::kBool));
  }
  check_scalar(a, "a Binary operand");
  check_scalar(b, "a Binary operand");
  TF_CHECK(a->type() == b->type(), std::string("tir: ") + binary_spelling(op) + " of " + type_name(a->type()) +
                                       " and " + type_name(b->type()));
  if (is_logical(op)) TF_CHECK(a->dtype() == DType::kBool, "tir: a logical op of non-bool values");
  const Type t = is_compare(op) || is_logical(op) ? Type::scalar(DType::kBool) : a->type();
  if (op == BinaryOp::kMod) TF_CHECK(ir::is_int(a->dtype()), "tir: % of non-integers");
  return std::make_shared<Binary>(op, std::move(a), std::move(b), t);
}

ExprPtr Unary::make(UnaryOp op, ExprPtr a) {
  check_scalar(a, "a Unary operand");
  if (op == UnaryOp::kNot) TF_CHECK(a->dtype() == DType::kBool, "tir: ! of a non-bool value");
  const Type t = a->type();
  return std::make_shared<Unary>(op, std::move(a), t);
}

ExprPtr Select::make(ExprPtr cond, ExprPtr t, ExprPtr f) {
  check_scalar(cond, "a Select condition");
  TF_CHECK(cond->dtype() == DType::kBool, "tir: a Select condition of type " + type_name(cond->type()));
  TF_CHECK(t && f && t->type() == f->type(), "tir: Select arms of different types");
  const Type ty = t->type();
  return std::make_shared<Select>(std::move(cond), std::move(t), std::move(f), ty);
}

ExprPtr Cast::make(DType to, ExprPtr value) {
  check_scalar(value, "a Cast operand");
  return std::make_shared<Cast>(to, std::move(value));
}

ExprPtr Load::make(VarPtr base, ExprPtr index) {
  TF_CHECK(base && base->type().handle && !base->type().opaque, "tir: a Load from a non-pointer");
  check_index(index);
  const Type t = Type::scalar(base->dtype());
  return std::make_shared<Load>(std::move(base), std::move(index), t);
}

ExprPtr Address::make(VarPtr base, ExprPtr index) {
  TF_CHECK(base && base->type().handle && !base->type().opaque, "tir: an Address in a non-pointer");
  check_index(index);
  return std::make_shared<Address>(std::move(base), std::move(index));
}

ExprPtr Call::make(Type ret, std::string name, std::vector<ExprPtr> args, Effect effect, std::vector<Type> type_args) {
  TF_CHECK(!name.empty(), "tir: a Call without a name");
  for (const ExprPtr& a : args) TF_CHECK(a, "tir: a null argument of " + name);
  return std::make_shared<Call>(ret, std::move(name), std::move(args), effect, std::move(type_args));
}

}  // namespace tf::tir
