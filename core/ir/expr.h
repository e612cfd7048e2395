// HIR Expr nodes (docs/ir.md). Nodes are final and immutable, built only by
// their validating make() factories and held by shared_ptr<const ...>.
// Pointer identity is SSA sharing: two uses of one value point at one node.
// Every value node carries its type, fixed at construction (sema computes it
// for Calls; the factories derive it for Tuple / TupleGetItem / Function).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/ir/op.h"
#include "core/ir/type.h"

namespace tf::ir {

// Source position of the DSL text a node came from; line/col are 1-based,
// 0 means unknown. Not part of structural equality.
struct Span {
  std::shared_ptr<const std::string> file;
  int line = 0;
  int col = 0;
  std::string to_string() const;  // "file:line:col" or "" when unknown
};

// X(enumerator, class name)
#define TF_EXPR_KIND_LIST(X)       \
  X(kVar, Var)                     \
  X(kConstant, Constant)           \
  X(kCall, Call)                   \
  X(kTuple, Tuple)                 \
  X(kTupleGetItem, TupleGetItem)   \
  X(kFunction, Function)           \
  X(kGridRegion, GridRegionExpr)

enum class ExprKind : uint8_t {
#define TF_X(e, c) e,
  TF_EXPR_KIND_LIST(TF_X)
#undef TF_X
};

class Expr;
#define TF_X(e, c) class c;
TF_EXPR_KIND_LIST(TF_X)
#undef TF_X
using ExprPtr = std::shared_ptr<const Expr>;
using VarPtr = std::shared_ptr<const Var>;
using CallPtr = std::shared_ptr<const Call>;
using FunctionPtr = std::shared_ptr<const Function>;

class Expr {
 public:
  virtual ~Expr() = default;
  ExprKind kind() const { return kind_; }
  // The value's type; for a Function, its CallableType.
  const TypePtr& type() const { return type_; }
  const Span& span() const { return span_; }

 protected:
  Expr(ExprKind kind, TypePtr type, Span span)
      : kind_(kind), type_(std::move(type)), span_(std::move(span)) {}

 private:
  ExprKind kind_;
  TypePtr type_;
  Span span_;
};

// A function parameter or loop-bound variable; its type is its annotation.
class Var final : public Expr {
 public:
  static VarPtr make(std::string name, TypePtr type, Span span = {});
  const std::string& name() const { return name_; }
  Var(std::string name, TypePtr type, Span span)
      : Expr(ExprKind::kVar, std::move(type), std::move(span)), name_(std::move(name)) {}

 private:
  std::string name_;
};

// A rank-0 literal. Float dtypes hold `value`; int and bool hold `int_value`.
class Constant final : public Expr {
 public:
  static std::shared_ptr<const Constant> make_float(double value, DType dtype, Span span = {});
  static std::shared_ptr<const Constant> make_int(int64_t value, DType dtype, Span span = {});
  DType dtype() const;
  double value() const { return value_; }
  int64_t int_value() const { return int_value_; }
  Constant(double v, int64_t iv, TypePtr type, Span span)
      : Expr(ExprKind::kConstant, std::move(type), std::move(span)), value_(v), int_value_(iv) {}

 private:
  double value_;
  int64_t int_value_;
};

// Applies an Op, or calls a Function, to argument Exprs. Exactly one of op()
// and callee() is non-null.
class Call final : public Expr {
 public:
  static CallPtr make_op(OpPtr op, std::vector<ExprPtr> args, TypePtr type, Span span = {});
  static CallPtr make_function(FunctionPtr callee, std::vector<ExprPtr> args, TypePtr type,
                               Span span = {});
  const OpPtr& op() const { return op_; }
  const FunctionPtr& callee() const { return callee_; }
  const std::vector<ExprPtr>& args() const { return args_; }
  Call(OpPtr op, FunctionPtr callee, std::vector<ExprPtr> args, TypePtr type, Span span)
      : Expr(ExprKind::kCall, std::move(type), std::move(span)), op_(std::move(op)),
        callee_(std::move(callee)), args_(std::move(args)) {}

 private:
  OpPtr op_;
  FunctionPtr callee_;
  std::vector<ExprPtr> args_;
};

class Tuple final : public Expr {
 public:
  static std::shared_ptr<const Tuple> make(std::vector<ExprPtr> fields, Span span = {});
  const std::vector<ExprPtr>& fields() const { return fields_; }
  Tuple(std::vector<ExprPtr> fields, TypePtr type, Span span)
      : Expr(ExprKind::kTuple, std::move(type), std::move(span)), fields_(std::move(fields)) {}

 private:
  std::vector<ExprPtr> fields_;
};

class TupleGetItem final : public Expr {
 public:
  static std::shared_ptr<const TupleGetItem> make(ExprPtr tuple, int64_t index, Span span = {});
  const ExprPtr& tuple() const { return tuple_; }
  int64_t index() const { return index_; }
  TupleGetItem(ExprPtr tuple, int64_t index, TypePtr type, Span span)
      : Expr(ExprKind::kTupleGetItem, std::move(type), std::move(span)), tuple_(std::move(tuple)),
        index_(index) {}

 private:
  ExprPtr tuple_;
  int64_t index_;
};

// DimVarRangePat: selects the variant for dim_var in [lo, hi).
struct DimVarRangePat {
  std::string dim_var;
  int64_t lo = 0;
  int64_t hi = 0;
  bool operator==(const DimVarRangePat& o) const {
    return dim_var == o.dim_var && lo == o.lo && hi == o.hi;
  }
};

// The HIR function container (docs/ir.md, Functions). Exactly one of three shapes:
// normal (body, no variants), dispatch prototype (no body, variants),
// variant (body, one specialization). Its type — the CallableType projected
// from params and return_type — is fixed here, at construction.
class Function final : public Expr {
 public:
  struct Fields {
    std::string name;
    std::vector<VarPtr> params;
    ExprPtr body;  // null for a dispatch prototype
    TypePtr return_type;
    std::vector<DimVarRangePat> specializations;
    std::vector<FunctionPtr> variants;
    std::string label;  // display label of a variant; non-canonical
    Span span;
    // In-place results: for each tensor leaf of the return type (in order),
    // the index of the parameter whose buffer receives it, or -1 for a
    // fresh result. Empty: every result is fresh. The function stays a pure
    // value: this says where the caller's copy of the result lives.
    std::vector<int64_t> inplace = {};
  };
  // Checks the shape invariants that hold at every stage of authoring:
  // params are distinct non-null Vars, a return type exists, a variant has a
  // body and no variants of its own, and `inplace` pairs results with
  // parameters of exactly their type, each parameter at most once.
  // (Sealing checks the rest.)
  static FunctionPtr make(Fields fields);

  const std::string& name() const { return f_.name; }
  const std::vector<VarPtr>& params() const { return f_.params; }
  const ExprPtr& body() const { return f_.body; }
  const TypePtr& return_type() const { return f_.return_type; }
  const std::vector<DimVarRangePat>& specializations() const { return f_.specializations; }
  const std::vector<FunctionPtr>& variants() const { return f_.variants; }
  const std::string& label() const { return f_.label; }
  const std::vector<int64_t>& inplace() const { return f_.inplace; }
  // The parameter result `leaf` is written into, or -1.
  int64_t inplace_param(size_t leaf) const { return leaf < f_.inplace.size() ? f_.inplace[leaf] : -1; }
  const CallableType& callable_type() const { return static_cast<const CallableType&>(*type()); }

  bool is_prototype() const { return !f_.variants.empty(); }
  bool is_variant() const { return !f_.specializations.empty(); }
  // The canonical signature of a variant: "S$1_64" (";"-joined).
  std::string canonical_signature() const;

  Function(Fields f, TypePtr type) : Expr(ExprKind::kFunction, std::move(type), f.span), f_(std::move(f)) {}

 private:
  Fields f_;
};

// Loop-phi-shaped structured SSA (docs/ir.md, Loops).
class GridRegionExpr final : public Expr {
 public:
  struct Fields {
    VarPtr induction_var;
    std::vector<VarPtr> carried_args;
    std::vector<ExprPtr> init_args;
    ExprPtr body;
    std::vector<ExprPtr> yield_values;
    ShapeDim extent;
    ShapeDim step = 1;
    ShapeDim start = 0;
    Span span;
  };
  // Checks the carry chain has equal lengths and derives the type: the single
  // carry's type, or a TupleType of the carries.
  static std::shared_ptr<const GridRegionExpr> make(Fields fields);
  const Fields& fields() const { return f_; }
  GridRegionExpr(Fields f, TypePtr type)
      : Expr(ExprKind::kGridRegion, std::move(type), f.span), f_(std::move(f)) {}

 private:
  Fields f_;
};

template <typename T>
const T* expr_as(const ExprPtr& e);

#define TF_X(e, c)                                                              \
  template <>                                                                   \
  inline const c* expr_as<c>(const ExprPtr& x) {                                \
    return x && x->kind() == ExprKind::e ? static_cast<const c*>(x.get()) : nullptr; \
  }
TF_EXPR_KIND_LIST(TF_X)
#undef TF_X

}  // namespace tf::ir
