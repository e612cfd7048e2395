// ShapeDim: a tensor extent — a static int, a DimVar(name, lo, hi) with the
// half-open range [lo, hi), or a DimExpr over them (docs/ir.md, Types).
// Immutable value type; the Dim* builders fold constants, so a dim built only
// from ints is always a plain int.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tf::ir {

// X(enumerator, DSL spelling) for the binary DimExpr nodes.
#define TF_DIM_BINOP_LIST(X) \
  X(kAdd, "+")               \
  X(kSub, "-")               \
  X(kMul, "*")               \
  X(kFloorDiv, "//")         \
  X(kMod, "%")               \
  X(kMin, "dim_min")         \
  X(kMax, "dim_max")

enum class DimKind : uint8_t {
  kConst,
  kVar,
#define TF_X(e, s) e,
  TF_DIM_BINOP_LIST(TF_X)
#undef TF_X
};

class ShapeDim;
using DimBindings = std::map<std::string, int64_t>;

struct DimNode;
struct Linear;  // shape.cc: the canonical linear form

class ShapeDim {
 public:
  ShapeDim(int64_t value = 0);  // NOLINT(google-explicit-constructor): ints are dims
  // A DimVar; its range is [lo, hi). Requires lo < hi.
  static ShapeDim var(const std::string& name, int64_t lo, int64_t hi);
  // Folding builder for binary DimExpr nodes. Add, Sub and Mul by a constant
  // are kept in a canonical linear form (positive terms in atom order, then
  // negative ones, then the constant), so equal sums are structurally equal.
  static ShapeDim binary(DimKind kind, const ShapeDim& a, const ShapeDim& b);

  DimKind kind() const;
  bool is_static() const { return kind() == DimKind::kConst; }
  int64_t value() const;              // requires is_static()
  const std::string& var_name() const;  // requires kind() == kVar
  int64_t var_lo() const;
  int64_t var_hi() const;
  const ShapeDim& lhs() const;        // requires a binary kind
  const ShapeDim& rhs() const;

  // Static upper bound (inclusive) when it composes through
  // Add/Mul/FloorDiv/Mod/Min/Max with non-negative constants; nullopt otherwise.
  std::optional<int64_t> upper_bound() const;
  // Value under bindings; throws Error(kRuntime) naming an unbound DimVar.
  int64_t evaluate(const DimBindings& bindings) const;
  // Every DimVar mentioned, with its bounds (name -> (lo, hi)).
  void collect_vars(std::map<std::string, std::pair<int64_t, int64_t>>* out) const;
  // DSL spelling: 4096, N, N * 2, dim_min(512, CTX // 4).
  std::string to_string() const;

  bool structural_equal(const ShapeDim& other) const;
  bool operator==(const ShapeDim& o) const { return structural_equal(o); }
  bool operator!=(const ShapeDim& o) const { return !structural_equal(o); }
  size_t structural_hash() const;

 private:
  explicit ShapeDim(std::shared_ptr<const DimNode> node) : node_(std::move(node)) {}
  static ShapeDim make_node(DimKind kind, const ShapeDim& a, const ShapeDim& b);
  static ShapeDim from_linear(const Linear& lin);
  std::shared_ptr<const DimNode> node_;  // null for a constant (stored inline)
  int64_t value_ = 0;
};

ShapeDim operator+(const ShapeDim& a, const ShapeDim& b);
ShapeDim operator-(const ShapeDim& a, const ShapeDim& b);
ShapeDim operator*(const ShapeDim& a, const ShapeDim& b);
ShapeDim dim_floordiv(const ShapeDim& a, const ShapeDim& b);
ShapeDim dim_mod(const ShapeDim& a, const ShapeDim& b);
ShapeDim dim_min(const ShapeDim& a, const ShapeDim& b);
ShapeDim dim_max(const ShapeDim& a, const ShapeDim& b);

// Replaces DimVars by name (those absent from the map stay), refolding.
ShapeDim substitute(const ShapeDim& d, const std::map<std::string, ShapeDim>& by_name);

using Shape = std::vector<ShapeDim>;
bool shape_equal(const Shape& a, const Shape& b);
std::string shape_to_string(const Shape& s);  // "(N, 4096)" ; "(4,)" ; "()"
// Product of the extents; folds when static.
ShapeDim shape_numel(const Shape& s);

}  // namespace tf::ir
