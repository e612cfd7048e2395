#include "core/ir/shape.h"

#include <functional>
#include <optional>

#include "core/ir/error.h"

namespace tf::ir {

struct DimNode {
  DimKind kind;
  std::string name;  // kVar
  int64_t lo = 0, hi = 0;  // kVar
  ShapeDim a, b;     // binary kinds
};

namespace {

int64_t floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t floormod(int64_t a, int64_t b) { return a - floordiv(a, b) * b; }

int64_t apply(DimKind k, int64_t a, int64_t b) {
  switch (k) {
    case DimKind::kAdd: return a + b;
    case DimKind::kSub: return a - b;
    case DimKind::kMul: return a * b;
    case DimKind::kFloorDiv:
      if (b == 0) fail(ErrorKind::kRuntime, "shape expression divides by zero");
      return floordiv(a, b);
    case DimKind::kMod:
      if (b == 0) fail(ErrorKind::kRuntime, "shape expression takes a modulus by zero");
      return floormod(a, b);
    case DimKind::kMin: return a < b ? a : b;
    case DimKind::kMax: return a > b ? a : b;
    default: break;
  }
  TF_CHECK(false, "not a binary dim kind");
}

const char* binop_spelling(DimKind k) {
  switch (k) {
#define TF_X(e, s) \
  case DimKind::e: return s;
    TF_DIM_BINOP_LIST(TF_X)
#undef TF_X
    default: return "?";
  }
}

}  // namespace

ShapeDim::ShapeDim(int64_t value) : value_(value) {}

ShapeDim ShapeDim::var(const std::string& name, int64_t lo, int64_t hi) {
  if (!(lo < hi))
    fail(ErrorKind::kType, "DimVar '" + name + "' needs lo < hi, but got [" + std::to_string(lo) +
                               ", " + std::to_string(hi) + ")");
  auto n = std::make_shared<DimNode>();
  n->kind = DimKind::kVar;
  n->name = name;
  n->lo = lo;
  n->hi = hi;
  return ShapeDim(std::move(n));
}

// A sum of integer multiples of atoms (DimVars and non-linear subterms) plus
// a constant: the canonical form of Add / Sub / Mul-by-constant, so that
// (N - 1) - N folds to -1 and N * 2 + N to N * 3.
struct Linear {
  int64_t constant = 0;
  std::map<std::string, std::pair<ShapeDim, int64_t>> terms;  // atom text -> (atom, coefficient)

  void add(const ShapeDim& d, int64_t scale) {
    switch (d.kind()) {
      case DimKind::kConst: constant += scale * d.value(); return;
      case DimKind::kAdd: add(d.lhs(), scale); add(d.rhs(), scale); return;
      case DimKind::kSub: add(d.lhs(), scale); add(d.rhs(), -scale); return;
      case DimKind::kMul:
        if (d.lhs().is_static()) return add(d.rhs(), scale * d.lhs().value());
        if (d.rhs().is_static()) return add(d.lhs(), scale * d.rhs().value());
        break;
      default: break;
    }
    auto& slot = terms.emplace(d.to_string(), std::make_pair(d, int64_t{0})).first->second;
    slot.second += scale;
  }
};

ShapeDim ShapeDim::make_node(DimKind kind, const ShapeDim& a, const ShapeDim& b) {
  auto n = std::make_shared<DimNode>();
  n->kind = kind;
  n->a = a;
  n->b = b;
  return ShapeDim(std::move(n));
}

// Rebuilds a Linear as positive terms (in atom order), then the negative
// ones subtracted, then the constant: N * 2 + M - K - 1.
ShapeDim ShapeDim::from_linear(const Linear& lin) {
  std::optional<ShapeDim> acc;
  auto term = [](const ShapeDim& atom, int64_t c) { return c == 1 ? atom : make_node(DimKind::kMul, atom, c); };
  for (const auto& [key, tc] : lin.terms)
    if (tc.second > 0) acc = acc ? make_node(DimKind::kAdd, *acc, term(tc.first, tc.second)) : term(tc.first, tc.second);
  bool constant_used = !acc;  // no positive term: start from the constant ("0 - N")
  if (!acc) acc = ShapeDim(lin.constant);
  for (const auto& [key, tc] : lin.terms)
    if (tc.second < 0) acc = make_node(DimKind::kSub, *acc, term(tc.first, -tc.second));
  if (!constant_used && lin.constant > 0) acc = make_node(DimKind::kAdd, *acc, lin.constant);
  if (!constant_used && lin.constant < 0) acc = make_node(DimKind::kSub, *acc, -lin.constant);
  return *acc;
}

ShapeDim ShapeDim::binary(DimKind kind, const ShapeDim& a, const ShapeDim& b) {
  if (a.is_static() && b.is_static()) return ShapeDim(apply(kind, a.value(), b.value()));
  bool linear = kind == DimKind::kAdd || kind == DimKind::kSub ||
                (kind == DimKind::kMul && (a.is_static() || b.is_static()));
  if (linear) {
    Linear lin;
    lin.add(a, 1);
    lin.add(b, kind == DimKind::kSub ? -1 : 1);
    if (kind == DimKind::kMul) {
      lin = Linear();
      lin.add(a.is_static() ? b : a, a.is_static() ? a.value() : b.value());
    }
    for (auto it = lin.terms.begin(); it != lin.terms.end();)
      it = it->second.second == 0 ? lin.terms.erase(it) : std::next(it);
    return from_linear(lin);
  }
  if (b.is_static() && kind == DimKind::kFloorDiv && b.value() == 1) return a;
  return make_node(kind, a, b);
}

DimKind ShapeDim::kind() const { return node_ ? node_->kind : DimKind::kConst; }

int64_t ShapeDim::value() const {
  TF_CHECK(is_static(), "value() of a symbolic dim");
  return value_;
}
const std::string& ShapeDim::var_name() const {
  TF_CHECK(kind() == DimKind::kVar, "var_name() of a non-DimVar");
  return node_->name;
}
int64_t ShapeDim::var_lo() const {
  TF_CHECK(kind() == DimKind::kVar, "var_lo() of a non-DimVar");
  return node_->lo;
}
int64_t ShapeDim::var_hi() const {
  TF_CHECK(kind() == DimKind::kVar, "var_hi() of a non-DimVar");
  return node_->hi;
}
const ShapeDim& ShapeDim::lhs() const {
  TF_CHECK(node_ && node_->kind > DimKind::kVar, "lhs() of a leaf dim");
  return node_->a;
}
const ShapeDim& ShapeDim::rhs() const {
  TF_CHECK(node_ && node_->kind > DimKind::kVar, "rhs() of a leaf dim");
  return node_->b;
}

std::optional<int64_t> ShapeDim::upper_bound() const {
  switch (kind()) {
    case DimKind::kConst: return value_;
    case DimKind::kVar: return node_->hi - 1;
    case DimKind::kSub: return std::nullopt;  // does not compose statically
    default: break;
  }
  auto a = node_->a.upper_bound();
  auto b = node_->b.upper_bound();
  switch (kind()) {
    case DimKind::kMin:
      if (a && b) return std::min(*a, *b);
      return a ? a : b;
    case DimKind::kFloorDiv:
    case DimKind::kMod:
      // A symbolic divisor does not compose.
      if (!a || !node_->b.is_static() || node_->b.value() <= 0) return std::nullopt;
      if (kind() == DimKind::kMod) return std::min(*a, node_->b.value() - 1);
      return floordiv(*a, node_->b.value());
    default:
      if (!a || !b) return std::nullopt;
      return apply(kind(), *a, *b);
  }
}

int64_t ShapeDim::evaluate(const DimBindings& bindings) const {
  switch (kind()) {
    case DimKind::kConst: return value_;
    case DimKind::kVar: {
      auto it = bindings.find(node_->name);
      if (it == bindings.end())
        fail(ErrorKind::kRuntime, "DimVar '" + node_->name + "' is not bound by any argument shape");
      return it->second;
    }
    default: return apply(kind(), node_->a.evaluate(bindings), node_->b.evaluate(bindings));
  }
}

void ShapeDim::collect_vars(std::map<std::string, std::pair<int64_t, int64_t>>* out) const {
  switch (kind()) {
    case DimKind::kConst: return;
    case DimKind::kVar: out->emplace(node_->name, std::make_pair(node_->lo, node_->hi)); return;
    default: node_->a.collect_vars(out); node_->b.collect_vars(out);
  }
}

std::string ShapeDim::to_string() const {
  switch (kind()) {
    case DimKind::kConst: return std::to_string(value_);
    case DimKind::kVar: return node_->name;
    case DimKind::kMin:
    case DimKind::kMax:
      return std::string(binop_spelling(kind())) + "(" + node_->a.to_string() + ", " +
             node_->b.to_string() + ")";
    default: {
      // Parenthesize nested arithmetic so the text reparses to the same tree.
      auto side = [](const ShapeDim& d) {
        bool leaf = d.kind() == DimKind::kConst || d.kind() == DimKind::kVar ||
                    d.kind() == DimKind::kMin || d.kind() == DimKind::kMax;
        return leaf ? d.to_string() : "(" + d.to_string() + ")";
      };
      return side(node_->a) + " " + binop_spelling(kind()) + " " + side(node_->b);
    }
  }
}

bool ShapeDim::structural_equal(const ShapeDim& o) const {
  if (kind() != o.kind()) return false;
  switch (kind()) {
    case DimKind::kConst: return value_ == o.value_;
    case DimKind::kVar:
      return node_->name == o.node_->name && node_->lo == o.node_->lo && node_->hi == o.node_->hi;
    default: return node_->a.structural_equal(o.node_->a) && node_->b.structural_equal(o.node_->b);
  }
}

size_t ShapeDim::structural_hash() const {
  auto mix = [](size_t h, size_t v) { return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); };
  size_t h = static_cast<size_t>(kind());
  switch (kind()) {
    case DimKind::kConst: return mix(h, std::hash<int64_t>()(value_));
    case DimKind::kVar:
      h = mix(h, std::hash<std::string>()(node_->name));
      h = mix(h, std::hash<int64_t>()(node_->lo));
      return mix(h, std::hash<int64_t>()(node_->hi));
    default: return mix(mix(h, node_->a.structural_hash()), node_->b.structural_hash());
  }
}

ShapeDim operator+(const ShapeDim& a, const ShapeDim& b) { return ShapeDim::binary(DimKind::kAdd, a, b); }
ShapeDim operator-(const ShapeDim& a, const ShapeDim& b) { return ShapeDim::binary(DimKind::kSub, a, b); }
ShapeDim operator*(const ShapeDim& a, const ShapeDim& b) { return ShapeDim::binary(DimKind::kMul, a, b); }
ShapeDim dim_floordiv(const ShapeDim& a, const ShapeDim& b) { return ShapeDim::binary(DimKind::kFloorDiv, a, b); }
ShapeDim dim_mod(const ShapeDim& a, const ShapeDim& b) { return ShapeDim::binary(DimKind::kMod, a, b); }
ShapeDim dim_min(const ShapeDim& a, const ShapeDim& b) { return ShapeDim::binary(DimKind::kMin, a, b); }
ShapeDim dim_max(const ShapeDim& a, const ShapeDim& b) { return ShapeDim::binary(DimKind::kMax, a, b); }

ShapeDim substitute(const ShapeDim& d, const std::map<std::string, ShapeDim>& by_name) {
  switch (d.kind()) {
    case DimKind::kConst: return d;
    case DimKind::kVar: {
      auto it = by_name.find(d.var_name());
      return it == by_name.end() ? d : it->second;
    }
    default: return ShapeDim::binary(d.kind(), substitute(d.lhs(), by_name), substitute(d.rhs(), by_name));
  }
}

bool shape_equal(const Shape& a, const Shape& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!a[i].structural_equal(b[i])) return false;
  return true;
}

std::string shape_to_string(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ", ";
    out += s[i].to_string();
  }
  if (s.size() == 1) out += ",";
  return out + ")";
}

ShapeDim shape_numel(const Shape& s) {
  ShapeDim n(1);
  for (const auto& d : s) n = n * d;
  return n;
}

}  // namespace tf::ir
