#include "dtype_map.h"

#include <c10/util/Exception.h>
#include <torch/version.h>

// torch's float8 dtypes: e4m3fn since 2.1, e8m0fnu since 2.7.
#define TF_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) || (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))
#define TF_TORCH_HAS_FP8E4M3 TF_TORCH_AT_LEAST(2, 1)
#define TF_TORCH_HAS_F8E8M0 TF_TORCH_AT_LEAST(2, 7)

namespace tf::torch_ext {

namespace {
constexpr uint8_t kDLBoolCode = 6;  // kDLBool in DLPack >= 0.8; absent from 0.6.
// DLPack >= 1.1's codes for the 8-bit floats (the library's, ndarray.cc).
constexpr uint8_t kDLFloat8E4M3FnCode = 10;
constexpr uint8_t kDLFloat8E8M0FnuCode = 14;

// The torch dtype of an 8-bit float code: torch's own, or uint8 (its bytes).
at::ScalarType fp8_scalar_type(uint8_t code) {
#if TF_TORCH_HAS_FP8E4M3
  if (code == kDLFloat8E4M3FnCode) return at::ScalarType::Float8_e4m3fn;
#endif
#if TF_TORCH_HAS_F8E8M0
  if (code == kDLFloat8E8M0FnuCode) return at::ScalarType::Float8_e8m0fnu;
#endif
  (void)code;
  return at::kByte;
}
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
      return t.bits == 8 ? std::optional<at::ScalarType>(at::kByte) : std::nullopt;
    case kDLBoolCode:
      return t.bits == 8 ? std::optional<at::ScalarType>(at::kBool) : std::nullopt;
    case kDLFloat8E4M3FnCode:
    case kDLFloat8E8M0FnuCode:
      return t.bits == 8 ? std::optional<at::ScalarType>(fp8_scalar_type(t.code)) : std::nullopt;
    default:
      return std::nullopt;
  }
}

bool is_supported_input(at::ScalarType s) {
  switch (s) {
    case at::kBool:
    case at::kByte:
    case at::kChar:
    case at::kInt:
    case at::kLong:
    case at::kHalf:
    case at::kBFloat16:
    case at::kFloat:
    case at::kDouble:
#if TF_TORCH_HAS_FP8E4M3
    case at::ScalarType::Float8_e4m3fn:
#endif
#if TF_TORCH_HAS_F8E8M0
    case at::ScalarType::Float8_e8m0fnu:
#endif
      return true;
    default:
      return false;
  }
}

DLDataType dl_from_scalar_type(at::ScalarType s) {
  switch (s) {
    case at::kBool: return {kDLBoolCode, 8, 1};
    case at::kByte: return {kDLUInt, 8, 1};
    case at::kChar: return {kDLInt, 8, 1};
    case at::kInt: return {kDLInt, 32, 1};
    case at::kLong: return {kDLInt, 64, 1};
    case at::kHalf: return {kDLFloat, 16, 1};
    case at::kBFloat16: return {kDLBfloat, 16, 1};
    case at::kFloat: return {kDLFloat, 32, 1};
    case at::kDouble: return {kDLFloat, 64, 1};
#if TF_TORCH_HAS_FP8E4M3
    case at::ScalarType::Float8_e4m3fn: return {kDLFloat8E4M3FnCode, 8, 1};
#endif
#if TF_TORCH_HAS_F8E8M0
    case at::ScalarType::Float8_e8m0fnu: return {kDLFloat8E8M0FnuCode, 8, 1};
#endif
    default: break;
  }
  TORCH_INTERNAL_ASSERT(false, "dl_from_scalar_type: unsupported dtype ", s);
  return {};
}

DLDataType dl_for(at::ScalarType s, DLDataType declared) {
  const bool fp8 = declared.bits == 8 && declared.lanes == 1 &&
                   (declared.code == kDLFloat8E4M3FnCode || declared.code == kDLFloat8E8M0FnuCode);
  if (s == at::kByte && fp8) return declared;
  return dl_from_scalar_type(s);
}

}  // namespace tf::torch_ext
