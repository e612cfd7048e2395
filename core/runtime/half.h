// f16 (IEEE binary16) and bf16 storage types with float conversions that are
// bit-exact with c10::Half and c10::BFloat16: float -> f16/bf16 rounds to
// nearest, ties to even; NaN stays NaN (f16: sign kept, quiet 0x7E00 payload;
// bf16: canonical 0x7FC0, as c10's round_to_nearest_even). Conversion to
// float is exact. Everything else (double, ints) converts through float, as
// c10 does, so a double -> f16 conversion rounds twice exactly like torch.
#pragma once

#include <cstdint>
#include <cstring>

namespace tf::runtime {

namespace half_detail {
inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
}  // namespace half_detail

struct Half {
  uint16_t bits = 0;

  // c10::detail::fp16_ieee_from_fp32_value.
  static Half from_float(float f) {
    using namespace half_detail;
    const float scale_to_inf = 0x1.0p+112f;
    const float scale_to_zero = 0x1.0p-110f;
    float base = (__builtin_fabsf(f) * scale_to_inf) * scale_to_zero;
    const uint32_t w = float_bits(f);
    const uint32_t shl1_w = w + w;
    const uint32_t sign = w & UINT32_C(0x80000000);
    uint32_t bias = shl1_w & UINT32_C(0xFF000000);
    if (bias < UINT32_C(0x71000000)) bias = UINT32_C(0x71000000);
    base = bits_float((bias >> 1) + UINT32_C(0x07800000)) + base;
    const uint32_t bits = float_bits(base);
    const uint32_t exp_bits = (bits >> 13) & UINT32_C(0x00007C00);
    const uint32_t mantissa_bits = bits & UINT32_C(0x00000FFF);
    const uint32_t nonsign = exp_bits + mantissa_bits;
    return Half{static_cast<uint16_t>((sign >> 16) |
                                      (shl1_w > UINT32_C(0xFF000000) ? UINT32_C(0x7E00) : nonsign))};
  }

  // c10::detail::fp16_ieee_to_fp32_value.
  float to_float() const {
    using namespace half_detail;
    const uint32_t w = static_cast<uint32_t>(bits) << 16;
    const uint32_t sign = w & UINT32_C(0x80000000);
    const uint32_t two_w = w + w;
    const uint32_t exp_offset = UINT32_C(0xE0) << 23;
    const float exp_scale = 0x1.0p-112f;
    const float normalized = bits_float((two_w >> 4) + exp_offset) * exp_scale;
    const uint32_t magic_mask = UINT32_C(126) << 23;
    const float denormalized = bits_float((two_w >> 17) | magic_mask) - 0.5f;
    const uint32_t cutoff = UINT32_C(1) << 27;
    return bits_float(sign | (two_w < cutoff ? float_bits(denormalized) : float_bits(normalized)));
  }
};

struct BFloat16 {
  uint16_t bits = 0;

  // c10::detail::round_to_nearest_even.
  static BFloat16 from_float(float f) {
    if (f != f) return BFloat16{UINT16_C(0x7FC0)};
    uint32_t u = half_detail::float_bits(f);
    uint32_t rounding_bias = ((u >> 16) & 1) + UINT32_C(0x7FFF);
    return BFloat16{static_cast<uint16_t>((u + rounding_bias) >> 16)};
  }
  float to_float() const { return half_detail::bits_float(static_cast<uint32_t>(bits) << 16); }
};

static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2, "16-bit storage types");

}  // namespace tf::runtime
