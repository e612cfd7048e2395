// The DSL's function surface (docs/dsl.md §7): each name the user can call
// — add, cmp_eq, sum, rms_norm, ... — with its parameters and a builder of
// the Op it denotes. Each op's record (registry.h, OpInfo::surfaces) holds
// its own functions; the lookups below read the registry, so there is no
// separate table to keep in step. The frontend resolves calls through
// find_surface; the printer writes op.surface_name() + op.surface_attrs(),
// which is always an entry here, so printing and parsing are inverse by
// construction.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/op.h"

namespace tf::ops {

// What an attribute parameter accepts. kAxes takes an int or a tuple of ints.
// kDim takes one dim: an int or a dim expression (TopK's k).
enum class AttrType : uint8_t { kInt, kFloat, kBool, kString, kDType, kInts, kAxes, kShape, kDim, kStorage };
std::string_view attr_type_name(AttrType t);

struct SurfaceParam {
  std::string name;
  bool is_tensor = false;  // an operand (becomes a Call argument)
  AttrType type = AttrType::kInt;
  std::optional<ir::AttrValue> default_value;  // absent: required
  // With is_tensor: the operand is one ir::Tuple of tensors, written as a
  // Python tuple `(a, b, ...)` (concat's inputs, insert_slice's offsets);
  // insert_slice also takes a bare scalar for a rank-1 dst.
  bool tuple = false;
  // With is_tensor: may be omitted or None, which passes an empty Tuple
  // (conv2d's bias).
  bool optional = false;
  // With is_tensor: a literal in another tensor parameter takes this
  // operand's dtype (add(x, 1.0)). Off for a mask (where's cond), whose
  // dtype says nothing of the values'.
  bool literal_partner = true;
};

struct SurfaceFn {
  std::string name;
  std::vector<SurfaceParam> params;
  // Builds the op from the attribute params' values, in declaration order,
  // already coerced to their AttrType. May throw Error(kType) for a bad value.
  std::function<ir::OpPtr(const std::vector<ir::AttrValue>&)> make;
};

// Parameters, as an op's record declares them.
SurfaceParam tensor_param(const char* name);
SurfaceParam attr_param(const char* name, AttrType t, std::optional<ir::AttrValue> def = std::nullopt);
// A tensor param that takes one ir::Tuple of tensors (SurfaceParam::tuple).
SurfaceParam tuple_param(const char* name);

// Attribute i of a builder's argument list, as the C++ type of its AttrType.
template <typename T>
const T& attr_arg(const std::vector<ir::AttrValue>& attrs, size_t i) {
  return std::get<T>(attrs.at(i));
}

// Null when no registered op has a surface function of that name.
const SurfaceFn* find_surface(std::string_view name);
// Every surface function, in op registration order. A snapshot: an op
// registered later is not in it; the functions themselves live as long as
// the process.
std::vector<std::reference_wrapper<const SurfaceFn>> all_surfaces();

// Converts a literal to the parameter's type (int -> float, int -> (int,),
// ints -> shape, "rmem" -> storage); nullopt when it does not convert.
std::optional<ir::AttrValue> coerce_attr(const ir::AttrValue& v, AttrType t);

}  // namespace tf::ops
