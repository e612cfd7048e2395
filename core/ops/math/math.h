// The math family: Binary and Unary. Surface aliases
// (add, cmp_eq, a + b, minimum, ...) are names over these kinded ops.
#pragma once

#include <optional>
#include <string_view>

#include "core/ir/op.h"

namespace tf::ops {

// X(enumerator, surface name, Python operator or "", class) — class:
// 'a' arithmetic (numeric in, same dtype out), 'f' float arithmetic (float
// in, same dtype out), 'c' comparison (bool out), 'l' logical (bool out).
#define TF_BINARY_KIND_LIST(X)       \
  X(kAdd, "add", "+", 'a')           \
  X(kSub, "sub", "-", 'a')           \
  X(kMul, "mul", "*", 'a')           \
  X(kDiv, "div", "/", 'a')           \
  X(kMinimum, "minimum", "", 'a')    \
  X(kMaximum, "maximum", "", 'a')    \
  X(kPow, "pow", "", 'f')            \
  X(kEq, "cmp_eq", "==", 'c')        \
  X(kNe, "cmp_ne", "!=", 'c')        \
  X(kLt, "cmp_lt", "<", 'c')         \
  X(kLe, "cmp_le", "<=", 'c')        \
  X(kGt, "cmp_gt", ">", 'c')         \
  X(kGe, "cmp_ge", ">=", 'c')        \
  X(kLogicalAnd, "logical_and", "&", 'l') \
  X(kLogicalOr, "logical_or", "|", 'l')   \
  X(kLogicalXor, "logical_xor", "", 'l')

enum class BinaryKind : uint8_t {
#define TF_X(e, s, o, c) e,
  TF_BINARY_KIND_LIST(TF_X)
#undef TF_X
};

// X(enumerator, surface name, class) — class: 'f' float only, 'n' numeric,
// 'l' logical (bool out).
#define TF_UNARY_KIND_LIST(X)       \
  X(kNeg, "neg", 'n')               \
  X(kAbs, "abs", 'n')               \
  X(kLogicalNot, "logical_not", 'l') \
  X(kRsqrt, "rsqrt", 'f')           \
  X(kSqrt, "sqrt", 'f')             \
  X(kExp, "exp", 'f')               \
  X(kLog, "log", 'f')               \
  X(kExp2, "exp2", 'f')             \
  X(kLog2, "log2", 'f')             \
  X(kCeil, "ceil", 'n')             \
  X(kFloor, "floor", 'n')           \
  X(kRound, "round", 'n')           \
  X(kSquare, "square", 'n')         \
  X(kRelu, "relu", 'n')             \
  X(kSin, "sin", 'f')               \
  X(kCos, "cos", 'f')

enum class UnaryKind : uint8_t {
#define TF_X(e, s, c) e,
  TF_UNARY_KIND_LIST(TF_X)
#undef TF_X
};

std::string_view binary_kind_name(BinaryKind k);      // surface name
std::string_view binary_kind_operator(BinaryKind k);  // "" when none
char binary_kind_class(BinaryKind k);
std::optional<BinaryKind> binary_kind_from_name(std::string_view name);
std::string_view unary_kind_name(UnaryKind k);
char unary_kind_class(UnaryKind k);
std::optional<UnaryKind> unary_kind_from_name(std::string_view name);

struct Binary final : ir::Op {
  explicit Binary(BinaryKind k) : kind(k) {}
  BinaryKind kind;
  std::string_view name() const override { return "Binary"; }
  std::vector<ir::Attr> attrs() const override {
    return {{"kind", std::string(binary_kind_name(kind))}};
  }
  std::string surface_name() const override { return std::string(binary_kind_name(kind)); }
  std::vector<ir::Attr> surface_attrs() const override { return {}; }
};

struct Unary final : ir::Op {
  explicit Unary(UnaryKind k) : kind(k) {}
  UnaryKind kind;
  std::string_view name() const override { return "Unary"; }
  std::vector<ir::Attr> attrs() const override {
    return {{"kind", std::string(unary_kind_name(kind))}};
  }
  std::string surface_name() const override { return std::string(unary_kind_name(kind)); }
  std::vector<ir::Attr> surface_attrs() const override { return {}; }
};

// where(cond, a, b): a where cond is true, else b (cond bool; a and b one
// dtype; all three broadcast).
struct Where final : ir::Op {
  std::string_view name() const override { return "Where"; }
  std::string surface_name() const override { return "where"; }
  std::vector<ir::Attr> attrs() const override { return {}; }
};

// clamp(x, min, max) = minimum(maximum(x, min), max) with scalar bounds
// converted to x's dtype (an infinite bound is no bound).
struct Clamp final : ir::Op {
  Clamp(double lo, double hi) : min(lo), max(hi) {}
  double min, max;
  std::string_view name() const override { return "Clamp"; }
  std::string surface_name() const override { return "clamp"; }
  std::vector<ir::Attr> attrs() const override { return {{"min", min}, {"max", max}}; }
};

// A Clamp bound v (integral or infinite, by typeinfer) saturated to the
// range of the integer dtype d: it clamps d's values the same.
int64_t clamp_int_bound(double v, ir::DType d);

}  // namespace tf::ops
