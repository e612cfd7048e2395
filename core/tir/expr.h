// TIR scalar expressions: the values a loop nest computes per element.
//
// TIR is the level between HIR (whole-tensor dataflow) and a target's source
// text. Its expressions are scalars: immediates, variables (loop indices,
// extents, pointers), arithmetic, comparisons, selects, casts, loads from a
// buffer at a flat element index, and calls of named scalar functions. Nodes
// are immutable, built by their make() factories (which check operand types
// and throw Error(kInternal) on a malformed node: TIR is built by the
// compiler, never by a user) and held by shared_ptr<const ...>; a Var is
// identified by its node, not its name.
//
// Types: every expression has a Type, a DType or a pointer to one (the
// handle a Buffer's data lives at). Half-precision and 8-bit float dtypes are
// storage types: a Load of one yields that dtype, and arithmetic happens
// after a Cast to f32 (the verifier checks it), so where rounding happens is
// explicit in the IR.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/ir/dtype.h"

namespace tf::tir {

using ir::DType;

struct Type {
  DType dtype = DType::kI64;
  bool handle = false;  // a pointer to elements of dtype
  // A handle to memory TIR does not look into (the entry's runtime table):
  // it is passed to extern calls and nothing else, so no Load, Store or
  // Address takes one as its base; dtype means nothing.
  bool opaque = false;
  static Type scalar(DType d) { return Type{d, false, false}; }
  static Type pointer(DType d) { return Type{d, true, false}; }
  static Type opaque_handle() { return Type{DType::kI8, true, true}; }
  bool operator==(const Type& o) const { return dtype == o.dtype && handle == o.handle && opaque == o.opaque; }
  bool operator!=(const Type& o) const { return !(*this == o); }
};
// "f32", "i64", "f16*", "handle".
std::string type_name(const Type& t);
// Whether values of d take part in arithmetic (bool, integers, f32, f64).
bool is_compute_dtype(DType d);

// X(enumerator, class name)
#define TF_TIR_EXPR_LIST(X) \
  X(kIntImm, IntImm)        \
  X(kFloatImm, FloatImm)    \
  X(kVar, Var)              \
  X(kBinary, Binary)        \
  X(kUnary, Unary)          \
  X(kSelect, Select)        \
  X(kCast, Cast)            \
  X(kLoad, Load)            \
  X(kAddress, Address)      \
  X(kCall, Call)

enum class ExprKind : uint8_t {
#define TF_X(e, c) e,
  TF_TIR_EXPR_LIST(TF_X)
#undef TF_X
};

class Expr;
#define TF_X(e, c) class c;
TF_TIR_EXPR_LIST(TF_X)
#undef TF_X
using ExprPtr = std::shared_ptr<const Expr>;
using VarPtr = std::shared_ptr<const Var>;

class Expr {
 public:
  virtual ~Expr() = default;
  ExprKind kind() const { return kind_; }
  const Type& type() const { return type_; }
  DType dtype() const { return type_.dtype; }

 protected:
  Expr(ExprKind kind, Type type) : kind_(kind), type_(type) {}

 private:
  ExprKind kind_;
  Type type_;
};

// e as node class T, or null when it is another kind.
template <typename T>
const T* as(const ExprPtr& e) {
  return e && e->kind() == T::kKind ? static_cast<const T*>(e.get()) : nullptr;
}

class IntImm final : public Expr {
 public:
  static constexpr ExprKind kKind = ExprKind::kIntImm;
  static ExprPtr make(DType d, int64_t v);  // bool or an integer dtype
  int64_t value() const { return value_; }
  IntImm(DType d, int64_t v) : Expr(kKind, Type::scalar(d)), value_(v) {}

 private:
  int64_t value_;
};

class FloatImm final : public Expr {
 public:
  static constexpr ExprKind kKind = ExprKind::kFloatImm;
  static ExprPtr make(DType d, double v);  // f32 or f64
  double value() const { return value_; }
  FloatImm(DType d, double v) : Expr(kKind, Type::scalar(d)), value_(v) {}

 private:
  double value_;
};

// Bound by a For, a LetStmt, or the entry (a Function's parameters). Only
// `mutable_` variables may be assigned (Assign): accumulators of a reduction.
class Var final : public Expr {
 public:
  static constexpr ExprKind kKind = ExprKind::kVar;
  static VarPtr make(std::string name, Type t, bool is_mutable = false);
  const std::string& name() const { return name_; }
  bool is_mutable() const { return mutable_; }
  Var(std::string name, Type t, bool m) : Expr(kKind, t), name_(std::move(name)), mutable_(m) {}

 private:
  std::string name_;
  bool mutable_;
};

// X(enumerator, spelling, category): 'a' arithmetic (operand type), 'c'
// compare (bool), 'l' logical (bool operands and result).
#define TF_TIR_BINARY_LIST(X) \
  X(kAdd, "+", 'a')           \
  X(kSub, "-", 'a')           \
  X(kMul, "*", 'a')           \
  X(kDiv, "/", 'a')           \
  X(kMod, "%", 'a')           \
  X(kMin, "min", 'a')         \
  X(kMax, "max", 'a')         \
  X(kEq, "==", 'c')           \
  X(kNe, "!=", 'c')           \
  X(kLt, "<", 'c')            \
  X(kLe, "<=", 'c')           \
  X(kGt, ">", 'c')            \
  X(kGe, ">=", 'c')           \
  X(kAnd, "&&", 'l')          \
  X(kOr, "||", 'l')

enum class BinaryOp : uint8_t {
#define TF_X(e, s, c) e,
  TF_TIR_BINARY_LIST(TF_X)
#undef TF_X
};
const char* binary_spelling(BinaryOp op);
bool is_compare(BinaryOp op);
bool is_logical(BinaryOp op);

// Both operands of one type. Integer kDiv / kMod truncate (C's); kMin / kMax
// are the plain comparisons (NaN handling, where an op needs it, is a Call
// of the shared scalar function). Pointers (not opaque handles) of one type
// may be compared with kEq / kNe: whether two slots share a buffer.
class Binary final : public Expr {
 public:
  static constexpr ExprKind kKind = ExprKind::kBinary;
  static ExprPtr make(BinaryOp op, ExprPtr a, ExprPtr b);
  BinaryOp op() const { return op_; }
  const ExprPtr& a() const { return a_; }
  const ExprPtr& b() const { return b_; }
  Binary(BinaryOp op, ExprPtr a, ExprPtr b, Type t) : Expr(kKind, t), op_(op), a_(std::move(a)), b_(std::move(b)) {}

 private:
  BinaryOp op_;
  ExprPtr a_, b_;
};

enum class UnaryOp : uint8_t { kNeg, kNot };

class Unary final : public Expr {
 public:
  static constexpr ExprKind kKind = ExprKind::kUnary;
  static ExprPtr make(UnaryOp op, ExprPtr a);
  UnaryOp op() const { return op_; }
  const ExprPtr& a() const { return a_; }
  Unary(UnaryOp op, ExprPtr a, Type t) : Expr(kKind, t), op_(op), a_(std::move(a)) {}

 private:
  UnaryOp op_;
  ExprPtr a_;
};

// cond ? t : f, both arms evaluated (a select, not a branch).
class Select final : public Expr {
 public:
  static constexpr ExprKind kKind = ExprKind::kSelect;
  static ExprPtr make(ExprPtr cond, ExprPtr t, ExprPtr f);
  const ExprPtr& cond() const { return cond_; }
  const ExprPtr& t() const { return t_; }
  const ExprPtr& f() const { return f_; }
  Select(ExprPtr c, ExprPtr t, ExprPtr f, Type ty)
      : Expr(kKind, ty), cond_(std::move(c)), t_(std::move(t)), f_(std::move(f)) {}

 private:
  ExprPtr cond_, t_, f_;
};

// A value converted to another dtype: widening a storage type to f32,
// rounding f32 to a storage type (round to nearest even), C conversions
// between compute types, and x != 0 for bool. Float to integer truncates,
// with the shared scalar function's saturation (the printer's business).
class Cast final : public Expr {
 public:
  static constexpr ExprKind kKind = ExprKind::kCast;
  static ExprPtr make(DType to, ExprPtr value);
  const ExprPtr& value() const { return value_; }
  Cast(DType to, ExprPtr v) : Expr(kKind, Type::scalar(to)), value_(std::move(v)) {}

 private:
  ExprPtr value_;
};

// The element at `index` (in elements) of the memory `base` points to.
class Load final : public Expr {
 public:
  static constexpr ExprKind kKind = ExprKind::kLoad;
  static ExprPtr make(VarPtr base, ExprPtr index);
  const VarPtr& base() const { return base_; }
  const ExprPtr& index() const { return index_; }
  Load(VarPtr b, ExprPtr i, Type t) : Expr(kKind, t), base_(std::move(b)), index_(std::move(i)) {}

 private:
  VarPtr base_;
  ExprPtr index_;
};

// base + index, a pointer (extern calls take them; a LetStmt of one names a
// row of a buffer).
class Address final : public Expr {
 public:
  static constexpr ExprKind kKind = ExprKind::kAddress;
  static ExprPtr make(VarPtr base, ExprPtr index);
  const VarPtr& base() const { return base_; }
  const ExprPtr& index() const { return index_; }
  Address(VarPtr b, ExprPtr i) : Expr(kKind, b->type()), base_(std::move(b)), index_(std::move(i)) {}

 private:
  VarPtr base_;
  ExprPtr index_;
};

// A call of a named function of the target's runtime: pure scalar math
// (kPure: tf_exp, tf_silu, ...; may be reordered, hoisted or vectorized) or
// an effectful routine (kExtern: the BLAS GEMM, a chunk routine writing
// through a pointer, tf_fail). `name` is the runtime's spelling; a printer
// may map it. `type_args` are template arguments some runtime functions take
// (tf_narrow<T>).
class Call final : public Expr {
 public:
  static constexpr ExprKind kKind = ExprKind::kCall;
  enum Effect : uint8_t { kPure, kExtern };
  static ExprPtr make(Type ret, std::string name, std::vector<ExprPtr> args, Effect effect = kPure,
                      std::vector<Type> type_args = {});
  const std::string& name() const { return name_; }
  const std::vector<ExprPtr>& args() const { return args_; }
  Effect effect() const { return effect_; }
  const std::vector<Type>& type_args() const { return type_args_; }
  Call(Type ret, std::string n, std::vector<ExprPtr> a, Effect e, std::vector<Type> ta)
      : Expr(kKind, ret), name_(std::move(n)), args_(std::move(a)), effect_(e), type_args_(std::move(ta)) {}

 private:
  std::string name_;
  std::vector<ExprPtr> args_;
  Effect effect_;
  std::vector<Type> type_args_;
};

}  // namespace tf::tir
