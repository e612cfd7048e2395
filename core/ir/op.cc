#include "core/ir/op.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>

namespace tf::ir {

bool attr_value_equal(const AttrValue& a, const AttrValue& b) {
  if (a.index() != b.index()) return false;
  if (auto* s = std::get_if<Shape>(&a)) return shape_equal(*s, std::get<Shape>(b));
  if (auto* l = std::get_if<LayoutPtr>(&a)) {
    const LayoutPtr& m = std::get<LayoutPtr>(b);
    return *l && m ? (*l)->structural_equal(*m) : *l == m;
  }
  if (auto* d = std::get_if<double>(&a)) {
    // Bitwise, so NaN == NaN and -0.0 != 0.0: attributes are compared as written.
    double x = *d, y = std::get<double>(b);
    return std::memcmp(&x, &y, sizeof x) == 0;
  }
  return a == b;
}

size_t attr_value_hash(const AttrValue& v) {
  size_t h = v.index() * 0x9e3779b97f4a7c15ULL;
  auto mix = [&h](size_t x) { h ^= x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, Shape>) {
          for (const auto& d : x) mix(d.structural_hash());
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          for (int64_t i : x) mix(std::hash<int64_t>()(i));
        } else if constexpr (std::is_same_v<T, LayoutPtr>) {
          mix(x ? x->structural_hash() : 0);
        } else if constexpr (std::is_same_v<T, DType> || std::is_same_v<T, StorageKind>) {
          mix(static_cast<size_t>(x));
        } else {
          mix(std::hash<T>()(x));
        }
      },
      v);
  return h;
}

std::string format_double(double d) {
  char buf[64];
  // Shortest round-tripping spelling, always with a '.' or exponent so it reads as a float.
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, d);
    if (std::strtod(buf, nullptr) == d) break;
  }
  std::string s = buf;
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

std::string attr_value_to_string(const AttrValue& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, bool>) return x ? "True" : "False";
        else if constexpr (std::is_same_v<T, int64_t>) return std::to_string(x);
        else if constexpr (std::is_same_v<T, double>) return format_double(x);
        else if constexpr (std::is_same_v<T, std::string>) return "\"" + x + "\"";
        else if constexpr (std::is_same_v<T, DType>) return std::string(dtype_name(x));
        else if constexpr (std::is_same_v<T, StorageKind>) return "\"" + std::string(storage_name(x)) + "\"";
        else if constexpr (std::is_same_v<T, Shape>) return shape_to_string(x);
        else if constexpr (std::is_same_v<T, LayoutPtr>) return x ? x->to_string() : "None";
        else {
          std::string s = "(";
          for (size_t i = 0; i < x.size(); ++i) s += (i ? ", " : "") + std::to_string(x[i]);
          return s + (x.size() == 1 ? ",)" : ")");
        }
      },
      v);
}

bool Op::structural_equal(const Op& other) const {
  if (this == &other) return true;
  if (name() != other.name()) return false;
  auto a = attrs(), b = other.attrs();
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].name != b[i].name || !attr_value_equal(a[i].value, b[i].value)) return false;
  return true;
}

size_t Op::structural_hash() const {
  size_t h = std::hash<std::string_view>()(name());
  for (const auto& a : attrs()) h = h * 1000003 ^ attr_value_hash(a.value);
  return h;
}

std::string Op::to_string() const {
  std::string s = std::string(name()) + "(";
  auto as = attrs();
  for (size_t i = 0; i < as.size(); ++i)
    s += (i ? ", " : "") + as[i].name + "=" + attr_value_to_string(as[i].value);
  return s + ")";
}

}  // namespace tf::ir
