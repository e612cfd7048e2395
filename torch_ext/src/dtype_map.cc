#include "dtype_map.h"

#include <c10/util/Exception.h>

namespace tf::torch_ext {

namespace {
constexpr uint8_t kDLBoolCode = 6;  // kDLBool in DLPack >= 0.8; absent from 0.6.
}  // namespace

std::optional<at::ScalarType> scalar_type_from_dl(DLDataType t) {
  if (t.lanes != 1) return std::nullopt;
  switch (t.code) {
    case kDLFloat:
      if (t.bits == 16) return at::kHalf;
      if (t.bits == 32) return at::kFloat;
      if (t.bits == 64) return at::kDouble;
      return std::nullopt;
    case kDLBfloat:
      return t.bits == 16 ? std::optional<at::ScalarType>(at::kBFloat16) : std::nullopt;
    case kDLInt:
      if (t.bits == 8) return at::kChar;
      if (t.bits == 32) return at::kInt;
      if (t.bits == 64) return at::kLong;
      return std::nullopt;
    case kDLUInt:
      return t.bits == 8 ? std::optional<at::ScalarType>(at::kBool) : std::nullopt;
    case kDLBoolCode:
      return t.bits == 8 ? std::optional<at::ScalarType>(at::kBool) : std::nullopt;
    default:
      return std::nullopt;
  }
}

bool is_supported_input(at::ScalarType s) {
  switch (s) {
    case at::kBool:
    case at::kChar:
    case at::kInt:
    case at::kLong:
    case at::kHalf:
    case at::kBFloat16:
    case at::kFloat:
    case at::kDouble:
      return true;
    default:
      return false;
  }
}

DLDataType dl_from_scalar_type(at::ScalarType s) {
  switch (s) {
    case at::kBool: return {kDLUInt, 8, 1};
    case at::kChar: return {kDLInt, 8, 1};
    case at::kInt: return {kDLInt, 32, 1};
    case at::kLong: return {kDLInt, 64, 1};
    case at::kHalf: return {kDLFloat, 16, 1};
    case at::kBFloat16: return {kDLBfloat, 16, 1};
    case at::kFloat: return {kDLFloat, 32, 1};
    case at::kDouble: return {kDLFloat, 64, 1};
    default: break;
  }
  TORCH_INTERNAL_ASSERT(false, "dl_from_scalar_type: unsupported dtype ", s);
  return {};
}

}  // namespace tf::torch_ext
