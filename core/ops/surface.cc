#include "core/ops/surface.h"

#include "core/ops/registry.h"

namespace tf::ops {

SurfaceParam tensor_param(const char* name) { return {name, true, AttrType::kInt, std::nullopt}; }

SurfaceParam attr_param(const char* name, AttrType t, std::optional<ir::AttrValue> def) {
  return {name, false, t, std::move(def)};
}

SurfaceParam tuple_param(const char* name) {
  SurfaceParam p = tensor_param(name);
  p.tuple = true;
  return p;
}

std::string_view attr_type_name(AttrType t) {
  switch (t) {
    case AttrType::kInt: return "an int";
    case AttrType::kFloat: return "a float";
    case AttrType::kBool: return "a bool";
    case AttrType::kString: return "a string";
    case AttrType::kDType: return "a dtype";
    case AttrType::kInts: return "a tuple of ints";
    case AttrType::kAxes: return "an int or a tuple of ints";
    case AttrType::kShape: return "a shape tuple";
    case AttrType::kDim: return "an int or a dim expression (a DimVar, N // 4, dim_min(512, N), ...)";
    case AttrType::kStorage: return "a storage kind (\"rmem\", \"smem\", \"gmem\")";
  }
  return "?";
}

std::vector<std::reference_wrapper<const SurfaceFn>> all_surfaces() { return registry().surfaces(); }

const SurfaceFn* find_surface(std::string_view name) { return registry().find_surface(name); }

std::optional<ir::AttrValue> coerce_attr(const ir::AttrValue& v, AttrType t) {
  switch (t) {
    case AttrType::kInt:
      if (std::holds_alternative<int64_t>(v)) return v;
      return std::nullopt;
    case AttrType::kFloat:
      if (auto* d = std::get_if<double>(&v)) return *d;
      if (auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
      return std::nullopt;
    case AttrType::kBool:
      if (std::holds_alternative<bool>(v)) return v;
      return std::nullopt;
    case AttrType::kString:
      if (std::holds_alternative<std::string>(v)) return v;
      return std::nullopt;
    case AttrType::kDType:
      if (std::holds_alternative<ir::DType>(v)) return v;
      return std::nullopt;
    case AttrType::kAxes:
      if (auto* i = std::get_if<int64_t>(&v)) return std::vector<int64_t>{*i};
      [[fallthrough]];
    case AttrType::kInts:
      if (std::holds_alternative<std::vector<int64_t>>(v)) return v;
      if (auto* s = std::get_if<ir::Shape>(&v)) {  // a tuple the parser read as dims
        std::vector<int64_t> ints;
        for (const auto& d : *s) {
          if (!d.is_static()) return std::nullopt;
          ints.push_back(d.value());
        }
        return ints;
      }
      return std::nullopt;
    case AttrType::kShape:
      if (std::holds_alternative<ir::Shape>(v)) return v;
      if (auto* ints = std::get_if<std::vector<int64_t>>(&v)) return ir::Shape(ints->begin(), ints->end());
      if (auto* i = std::get_if<int64_t>(&v)) return ir::Shape{*i};
      return std::nullopt;
    case AttrType::kDim:  // one dim; the printer writes it as a one-element shape (k=(N,))
      if (auto* i = std::get_if<int64_t>(&v)) return ir::Shape{*i};
      if (auto* ints = std::get_if<std::vector<int64_t>>(&v); ints && ints->size() == 1) return ir::Shape{(*ints)[0]};
      if (auto* s = std::get_if<ir::Shape>(&v); s && s->size() == 1) return v;
      return std::nullopt;
    case AttrType::kStorage:
      if (std::holds_alternative<ir::StorageKind>(v)) return v;
      if (auto* s = std::get_if<std::string>(&v)) {
        if (auto k = ir::storage_from_name(*s)) return *k;
      }
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace tf::ops
