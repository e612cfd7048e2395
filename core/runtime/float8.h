// 8-bit float storage types of the evaluator and the runtime: fp8e4m3
// (c10::Float8_e4m3fn) and f8e8m0 (c10::Float8_e8m0fnu; torch >= 2.1 / 2.7,
// torch 1.13 has neither, so tests check them against the format
// definitions). Their bits and float conversions are the shared ones of
// scalar_numerics.h, which describes both formats.
#pragma once

#include <cstdint>

#include "core/runtime/scalar_numerics.h"

namespace tf::runtime {

struct Float8E4M3 {
  uint8_t bits = 0;

  static Float8E4M3 from_float(float f) { return Float8E4M3{::tf_to_fp8e4m3(f).bits}; }
  float to_float() const { return ::tf_widen(::tf_fp8e4m3{bits}); }
};

struct Float8E8M0 {
  uint8_t bits = 0;

  static Float8E8M0 from_float(float f) { return Float8E8M0{::tf_to_f8e8m0(f).bits}; }
  float to_float() const { return ::tf_widen(::tf_f8e8m0{bits}); }
};

static_assert(sizeof(Float8E4M3) == 1 && sizeof(Float8E8M0) == 1, "8-bit storage types");

}  // namespace tf::runtime
