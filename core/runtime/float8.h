// 8-bit float storage types with float conversions that are bit-exact with
// c10::Float8_e4m3fn and c10::Float8_e8m0fnu (torch >= 2.1 / 2.7; torch 1.13
// has neither, so tests check them against the format definitions).
//
// fp8e4m3 (e4m3fn): sign, 4 exponent bits (bias 7), 3 mantissa bits; no
// infinity; S.1111.111 is NaN; largest finite 448. float -> e4m3fn rounds to
// nearest, ties to even, and does NOT saturate (torch's cast): a value that
// rounds past 448 lands on the NaN code S.1111.111, so |x| in (464, inf],
// and NaN, become NaN (0x7F with x's sign); 464, the tie between 448 and the
// NaN code, rounds to even (448).
//
// f8e8m0 (e8m0fnu): 8 unsigned exponent bits (bias 127), no sign, no zero,
// no mantissa; 0xFF is NaN; code c is 2^(c - 127). float -> e8m0fnu takes the
// exponent field of x (the sign is ignored), maps inf / NaN to NaN, and rounds
// the mantissa to nearest with ties to even on the implied bit (so 1.5 * 2^e,
// a tie, rounds up to 2^(e+1)); zero becomes code 0 (2^-127).
#pragma once

#include <cstdint>

#include "core/runtime/half.h"  // half_detail::float_bits / bits_float

namespace tf::runtime {


struct Float8E4M3 {
  uint8_t bits = 0;

  // c10::detail::fp8e4m3fn_from_fp32_value.
  static Float8E4M3 from_float(float f) {
    using namespace half_detail;
    constexpr uint32_t kNanBound = UINT32_C(1087) << 20;  // 480.0f; [464, 480) reaches NaN by rounding
    constexpr uint32_t kDenormMask = UINT32_C(141) << 23;
    uint32_t u = half_detail::float_bits(f);
    const uint32_t sign = u & UINT32_C(0x80000000);
    u ^= sign;
    uint8_t r;
    if (u >= kNanBound) {
      r = 0x7F;
    } else if (u < (UINT32_C(121) << 23)) {  // below 2^-6, the least normal
      u = half_detail::float_bits(bits_float(u) + bits_float(kDenormMask));
      r = static_cast<uint8_t>(u - kDenormMask);
    } else {
      const uint32_t mant_odd = (u >> 20) & 1;
      u += (static_cast<uint32_t>(7 - 127) << 23) + UINT32_C(0x7FFFF);
      u += mant_odd;
      r = static_cast<uint8_t>(u >> 20);
    }
    return Float8E4M3{static_cast<uint8_t>(r | (sign >> 24))};
  }

  float to_float() const {
    const uint32_t e = (bits >> 3) & 0xF, m = bits & 0x7;
    const bool neg = bits & 0x80;
    float v;
    if (e == 0xF && m == 0x7) v = __builtin_nanf("");
    else if (e == 0) v = static_cast<float>(m) * 0x1.0p-9f;  // subnormal: m * 2^-6 / 8
    else v = (1.0f + static_cast<float>(m) / 8.0f) * half_detail::bits_float((e - 7 + 127) << 23);
    return neg ? -v : v;
  }
};

struct Float8E8M0 {
  uint8_t bits = 0;

  // c10::detail::fp8e8m0fnu_from_fp32_value.
  static Float8E8M0 from_float(float f) {
    const uint32_t u = half_detail::float_bits(f);
    uint32_t e = (u >> 23) & 0xFF;
    if (e == 0xFF) return Float8E8M0{0xFF};
    const bool g = u & 0x400000, r = u & 0x200000, s = u & 0x1FFFFF;
    const bool lsb = e > 0;  // the implied mantissa bit
    if (g && (r || s || lsb)) ++e;
    return Float8E8M0{static_cast<uint8_t>(e)};
  }

  float to_float() const {
    if (bits == 0xFF) return __builtin_nanf("");
    if (bits == 0) return 0x1.0p-127f;  // a float32 subnormal
    return half_detail::bits_float(static_cast<uint32_t>(bits) << 23);
  }
};

static_assert(sizeof(Float8E4M3) == 1 && sizeof(Float8E8M0) == 1, "8-bit storage types");

}  // namespace tf::runtime
