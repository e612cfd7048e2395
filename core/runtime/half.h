// f16 (IEEE binary16) and bf16 storage types of the evaluator and the
// runtime. Their bits and float conversions are the shared ones of
// scalar_numerics.h (bit-exact with c10::Half and c10::BFloat16, and the same
// text generated kernels compile), so the two backends cannot round apart.
#pragma once

#include <cstdint>

#include "core/runtime/scalar_numerics.h"

namespace tf::runtime {

struct Half {
  uint16_t bits = 0;

  static Half from_float(float f) { return Half{::tf_to_f16(f).bits}; }
  float to_float() const { return ::tf_widen(::tf_f16{bits}); }
};

struct BFloat16 {
  uint16_t bits = 0;

  static BFloat16 from_float(float f) { return BFloat16{::tf_to_bf16(f).bits}; }
  float to_float() const { return ::tf_widen(::tf_bf16{bits}); }
};

static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2, "16-bit storage types");

}  // namespace tf::runtime
