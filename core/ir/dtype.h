// Element types (docs/dsl.md §3.2). One table, TF_DTYPE_LIST, generates the
// enum, names and properties; adding a dtype is one line plus its behaviour.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tf::ir {

// X(enumerator, dsl name, bits, category) — category: 'b' bool, 'i' signed int,
// 'u' unsigned int, 'f' float. New dtypes go last: the enumerators are
// stable numbers (kernel cache keys, serialized modules).
#define TF_DTYPE_LIST(X)     \
  X(kBool, "bool", 8, 'b')   \
  X(kI8, "i8", 8, 'i')       \
  X(kI32, "i32", 32, 'i')    \
  X(kI64, "i64", 64, 'i')    \
  X(kF16, "f16", 16, 'f')    \
  X(kBF16, "bf16", 16, 'f')  \
  X(kF32, "f32", 32, 'f')    \
  X(kF64, "f64", 64, 'f')    \
  X(kFP8E4M3, "fp8e4m3", 8, 'f') \
  X(kF8E8M0, "f8e8m0", 8, 'f')   \
  X(kF4E2M1, "f4e2m1", 4, 'f')   \
  X(kU8, "u8", 8, 'u')

enum class DType : uint8_t {
#define TF_X(e, name, bits, cat) e,
  TF_DTYPE_LIST(TF_X)
#undef TF_X
};

std::string_view dtype_name(DType d);
std::optional<DType> dtype_from_name(std::string_view name);
int dtype_bits(DType d);
bool is_float(DType d);
bool is_int(DType d);       // integer dtypes, signed or unsigned
bool is_unsigned(DType d);  // the unsigned integer dtypes (u8)
bool is_bool(DType d);
// Storage size of one element in bytes (f4e2m1 is stored one per byte).
// Inline: every tensor a kernel call checks asks it, several times.
inline int dtype_bytes(DType d) {
  constexpr uint8_t kBytes[] = {
#define TF_X(e, name, bits, cat) (bits) < 8 ? 1 : (bits) / 8,
      TF_DTYPE_LIST(TF_X)
#undef TF_X
  };
  return kBytes[static_cast<int>(d)];
}

}  // namespace tf::ir
