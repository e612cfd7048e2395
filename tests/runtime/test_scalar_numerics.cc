// The shared scalar numerics (core/runtime/scalar_numerics.h) at known values:
// the evaluator computes with them and generated kernels compile the same
// text, so these pin both backends. Conversions follow c10; the values at the
// rounding boundaries are worked out from the formats' definitions.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "core/runtime/float8.h"
#include "core/runtime/half.h"
#include "core/runtime/scalar_numerics.h"

namespace {

float bits_to_float(uint32_t u) { return tf_bitsf(u); }
uint16_t f16(float f) { return tf_to_f16(f).bits; }
uint16_t bf16(float f) { return tf_to_bf16(f).bits; }
uint8_t e4m3(float f) { return tf_to_fp8e4m3(f).bits; }
uint8_t e8m0(float f) { return tf_to_f8e8m0(f).bits; }
const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST(ScalarNumerics, F16RoundsToNearestTiesToEven) {
  EXPECT_EQ(f16(1.0f), 0x3C00);
  EXPECT_EQ(f16(-2.0f), 0xC000);
  EXPECT_EQ(f16(1.0f + 0x1.0p-11f), 0x3C00);         // halfway between 1 and 1 + 2^-10: to even
  EXPECT_EQ(f16(1.0f + 3 * 0x1.0p-11f), 0x3C02);     // halfway between odd 0x3C01 and 0x3C02: to even
  EXPECT_EQ(f16(1.0f + 0x1.0p-11f + 0x1.0p-20f), 0x3C01);  // past halfway
  EXPECT_EQ(f16(65504.0f), 0x7BFF);                  // largest finite
  EXPECT_EQ(f16(65519.0f), 0x7BFF);
  EXPECT_EQ(f16(65520.0f), 0x7C00);                  // halfway to 65536: even, which is inf
  EXPECT_EQ(f16(0x1.0p-24f), 0x0001);                // least subnormal
  EXPECT_EQ(f16(0x1.0p-25f), 0x0000);                // halfway to it: to even (0)
  EXPECT_EQ(f16(3 * 0x1.0p-25f), 0x0002);            // halfway between 1 and 2 quanta: to even
  EXPECT_EQ(f16(-0.0f), 0x8000);
  EXPECT_EQ(f16(-0x1.0p-26f), 0x8000);               // rounds to -0, sign kept
}

TEST(ScalarNumerics, F16InfinityAndNaN) {
  EXPECT_EQ(f16(kInf), 0x7C00);
  EXPECT_EQ(f16(-kInf), 0xFC00);
  EXPECT_EQ(f16(kNaN), 0x7E00);                      // c10's quiet NaN
  EXPECT_EQ(f16(-kNaN), 0xFE00);                     // sign kept
  EXPECT_EQ(f16(bits_to_float(0x7F800001u)), 0x7E00);  // signalling payload dropped
  EXPECT_EQ(tf_widen(tf_f16{0x7C00}), kInf);
  EXPECT_EQ(tf_widen(tf_f16{0xFC00}), -kInf);
  EXPECT_TRUE(std::isnan(tf_widen(tf_f16{0x7E01})));
  EXPECT_EQ(tf_widen(tf_f16{0x0001}), 0x1.0p-24f);
  EXPECT_EQ(tf_widen(tf_f16{0x7BFF}), 65504.0f);
  EXPECT_EQ(tf_fbits(tf_widen(tf_f16{0x8000})), 0x80000000u);
}

TEST(ScalarNumerics, F16WideningIsExactForEveryCode) {
  for (uint32_t c = 0; c < 0x10000; ++c) {
    const tf_f16 h{static_cast<uint16_t>(c)};
    const float f = tf_widen(h);
    if (std::isnan(f)) continue;
    EXPECT_EQ(tf_to_f16(f).bits, c) << std::hex << c;  // round trip of every non-NaN code
  }
}

TEST(ScalarNumerics, BF16RoundsToNearestTiesToEven) {
  EXPECT_EQ(bf16(1.0f), 0x3F80);
  EXPECT_EQ(bf16(bits_to_float(0x3F808000u)), 0x3F80);  // halfway, even below
  EXPECT_EQ(bf16(bits_to_float(0x3F818000u)), 0x3F82);  // halfway, even above
  EXPECT_EQ(bf16(bits_to_float(0x3F808001u)), 0x3F81);
  EXPECT_EQ(bf16(bits_to_float(0x7F7FFFFFu)), 0x7F80);  // FLT_MAX rounds to inf
  EXPECT_EQ(bf16(kInf), 0x7F80);
  EXPECT_EQ(bf16(-kInf), 0xFF80);
  EXPECT_EQ(bf16(kNaN), 0x7FC0);
  EXPECT_EQ(bf16(-kNaN), 0x7FC0);                        // c10's canonical NaN, sign dropped
  EXPECT_EQ(bf16(bits_to_float(0x7FFFFFFFu)), 0x7FC0);   // would carry into the sign without the NaN rule
  EXPECT_EQ(tf_widen(tf_bf16{0x3F80}), 1.0f);
}

// The per-op roundings are the round trips, computed another way.
TEST(ScalarNumerics, PerOpRoundingsEqualTheRoundTrips) {
  std::mt19937 rng(7);
  auto same = [](float x) {
    EXPECT_EQ(tf_fbits(tf_rf16(x)), tf_fbits(tf_widen(tf_to_f16(x)))) << std::hex << tf_fbits(x);
    EXPECT_EQ(tf_fbits(tf_rbf16(x)), tf_fbits(tf_widen(tf_to_bf16(x)))) << std::hex << tf_fbits(x);
    EXPECT_EQ(tf_fbits(tf_rfp8e4m3(x)), tf_fbits(tf_widen(tf_to_fp8e4m3(x)))) << std::hex << tf_fbits(x);
  };
  for (float x : {0.0f, -0.0f, 1.0f, 65504.0f, 65520.0f, -65520.0f, 0x1.0p-24f, 0x1.0p-25f, kInf, -kInf, kNaN, -kNaN})
    same(x);
  for (uint32_t u = 0; u < 0xFFFF0000u; u += 0x10001u) same(bits_to_float(u));  // every exponent, many mantissas
  for (int i = 0; i < 100000; ++i) same(bits_to_float(static_cast<uint32_t>(rng())));
}

TEST(ScalarNumerics, Fp8E4M3RoundsAndDoesNotSaturate) {
  EXPECT_EQ(e4m3(1.0f), 0x38);
  EXPECT_EQ(e4m3(448.0f), 0x7E);     // largest finite
  EXPECT_EQ(e4m3(-448.0f), 0xFE);
  EXPECT_EQ(e4m3(464.0f), 0x7E);     // halfway to the NaN code: to even (448)
  EXPECT_EQ(e4m3(465.0f), 0x7F);     // past it: NaN, not 448 (torch's cast does not saturate)
  EXPECT_EQ(e4m3(1000.0f), 0x7F);
  EXPECT_EQ(e4m3(-1000.0f), 0xFF);
  EXPECT_EQ(e4m3(kInf), 0x7F);
  EXPECT_EQ(e4m3(-kInf), 0xFF);
  EXPECT_EQ(e4m3(kNaN), 0x7F);
  EXPECT_EQ(e4m3(0x1.0p-9f), 0x01);  // least subnormal
  EXPECT_EQ(e4m3(0x1.0p-10f), 0x00); // halfway to it: to even
  EXPECT_EQ(e4m3(1.0625f), 0x38);    // halfway between 1 and 1.125: to even
  EXPECT_EQ(e4m3(1.1875f), 0x3A);    // halfway between 1.125 and 1.25: to even
  EXPECT_TRUE(std::isnan(tf_widen(tf_fp8e4m3{0x7F})));
  EXPECT_TRUE(std::isnan(tf_widen(tf_fp8e4m3{0xFF})));
  EXPECT_EQ(tf_widen(tf_fp8e4m3{0x7E}), 448.0f);
  EXPECT_EQ(tf_widen(tf_fp8e4m3{0x01}), 0x1.0p-9f);
  for (uint32_t c = 0; c < 0x100; ++c) {
    const float f = tf_widen(tf_fp8e4m3{static_cast<uint8_t>(c)});
    if (std::isnan(f)) continue;
    EXPECT_EQ(e4m3(f), c) << c;
  }
}

TEST(ScalarNumerics, F8E8M0TakesTheExponent) {
  EXPECT_EQ(e8m0(1.0f), 127);
  EXPECT_EQ(e8m0(-2.0f), 128);       // no sign: the magnitude's exponent
  EXPECT_EQ(e8m0(1.25f), 127);
  EXPECT_EQ(e8m0(1.5f), 128);        // a tie on the implied bit: up
  EXPECT_EQ(e8m0(0.0f), 0);          // no zero: the least code, 2^-127
  EXPECT_EQ(e8m0(kInf), 0xFF);
  EXPECT_EQ(e8m0(kNaN), 0xFF);
  EXPECT_EQ(tf_widen(tf_f8e8m0{0}), 0x1.0p-127f);
  EXPECT_EQ(tf_widen(tf_f8e8m0{127}), 1.0f);
  EXPECT_TRUE(std::isnan(tf_widen(tf_f8e8m0{0xFF})));
}

// The evaluator's storage types are the shared conversions.
TEST(ScalarNumerics, RuntimeStorageTypesUseTheSharedConversions) {
  for (float x : {1.0f + 0x1.0p-11f, 65520.0f, -kNaN, 464.0f, 1.5f}) {
    EXPECT_EQ(tf::runtime::Half::from_float(x).bits, f16(x));
    EXPECT_EQ(tf::runtime::BFloat16::from_float(x).bits, bf16(x));
    EXPECT_EQ(tf::runtime::Float8E4M3::from_float(x).bits, e4m3(x));
    EXPECT_EQ(tf::runtime::Float8E8M0::from_float(x).bits, e8m0(x));
  }
  EXPECT_EQ(tf::runtime::Half{0x3C00}.to_float(), 1.0f);
  EXPECT_EQ(tf::runtime::Float8E4M3{0x7E}.to_float(), 448.0f);
}

TEST(ScalarNumerics, NarrowRoundsOnceFromFloat) {
  EXPECT_EQ((tf_narrow<tf_f16, double>(1.0 + 0x1.0p-11)).bits, 0x3C00);
  EXPECT_EQ((tf_narrow<tf_fp8e4m3, float>(465.0f)).bits, 0x7F);
  EXPECT_EQ((tf_narrow<int32_t, int64_t>(7)), 7);
  EXPECT_EQ(tf_widen(3.5), 3.5);
}

TEST(ScalarNumerics, FloorDivisionRoundsTowardMinusInfinity) {
  int err = 0;
  EXPECT_EQ(tf_floordiv<int32_t>(7, 2, &err), 3);
  EXPECT_EQ(tf_floordiv<int32_t>(-7, 2, &err), -4);
  EXPECT_EQ(tf_floordiv<int32_t>(7, -2, &err), -4);
  EXPECT_EQ(tf_floordiv<int32_t>(-7, -2, &err), 3);
  EXPECT_EQ(tf_floordiv<int32_t>(6, -3, &err), -2);
  EXPECT_EQ(tf_floordiv<int64_t>(0, -5, &err), 0);
  EXPECT_EQ(tf_floordiv<int8_t>(-128, -1, &err), -128);  // wraps
  EXPECT_EQ(tf_floordiv<int32_t>(INT32_MIN, -1, &err), INT32_MIN);
  EXPECT_EQ(tf_floordiv<int64_t>(INT64_MIN, -1, &err), INT64_MIN);
  EXPECT_EQ(tf_floordiv<int64_t>(INT64_MIN, 2, &err), INT64_MIN / 2);
  EXPECT_EQ(err, 0);
}

TEST(ScalarNumerics, FloorDivisionByZeroRecordsTheErrorAndYieldsZero) {
  int err = 0;
  EXPECT_EQ(tf_floordiv<int32_t>(5, 0, &err), 0);
  EXPECT_EQ(err, tf_err_div_by_zero);
  err = 0;
  EXPECT_EQ(tf_floordiv<int8_t>(0, 0, &err), 0);
  EXPECT_EQ(err, tf_err_div_by_zero);
}

TEST(ScalarNumerics, FloatToIntTruncatesAndGivesIntMinWhereUndefined) {
  EXPECT_EQ((tf_f2i<int32_t, float>(2.9f)), 2);
  EXPECT_EQ((tf_f2i<int32_t, float>(-2.9f)), -2);
  EXPECT_EQ((tf_f2i<int32_t, double>(2147483647.0)), INT32_MAX);
  EXPECT_EQ((tf_f2i<int32_t, double>(2147483648.0)), INT32_MIN);  // out of range
  EXPECT_EQ((tf_f2i<int32_t, double>(-2147483648.0)), INT32_MIN); // in range
  EXPECT_EQ((tf_f2i<int32_t, double>(-2147483649.0)), INT32_MIN);
  EXPECT_EQ((tf_f2i<int32_t, float>(kNaN)), INT32_MIN);
  EXPECT_EQ((tf_f2i<int32_t, float>(kInf)), INT32_MIN);
  EXPECT_EQ((tf_f2i<int32_t, float>(-kInf)), INT32_MIN);
  EXPECT_EQ((tf_f2i<int64_t, double>(9.3e18)), INT64_MIN);
  EXPECT_EQ((tf_f2i<int64_t, double>(-9.0e18)), static_cast<int64_t>(-9.0e18));
  EXPECT_EQ((tf_f2i<int64_t, float>(kNaN)), INT64_MIN);
  EXPECT_EQ((tf_f2i<int8_t, float>(200.0f)), -56);  // through the 32-bit conversion, then wrapped
  EXPECT_EQ((tf_f2i<int8_t, float>(kNaN)), 0);      // INT32_MIN wrapped to 8 bits
}

TEST(ScalarNumerics, MinAndMaxPropagateNaN) {
  EXPECT_EQ(tf_min(1.0f, 2.0f), 1.0f);
  EXPECT_EQ(tf_max(1.0f, 2.0f), 2.0f);
  EXPECT_TRUE(std::isnan(tf_min(kNaN, 2.0f)));
  EXPECT_TRUE(std::isnan(tf_min(2.0f, kNaN)));
  EXPECT_TRUE(std::isnan(tf_max(kNaN, -kInf)));
  EXPECT_TRUE(std::isnan(tf_max(-kInf, kNaN)));
  EXPECT_TRUE(std::isnan(tf_max(0.0, std::nan(""))));
  // A running maximum stays NaN once it met one (at run time, not folded).
  // Which NaN's bits it keeps is not specified: a + b of two NaNs gives
  // either operand's payload, as the compiler orders the addition (GCC and
  // clang differ), and torch itself is not consistent there.
  volatile float first = -kNaN, second = kNaN;
  EXPECT_TRUE(std::isnan(tf_max(tf_max(1.0f, static_cast<float>(first)), static_cast<float>(second))));
  EXPECT_TRUE(std::isnan(tf_max(tf_max(static_cast<float>(first), 1.0f), 2.0f)));
  EXPECT_EQ(tf_min<int32_t>(-3, 2), -3);
  EXPECT_EQ(tf_max<int64_t>(-3, 2), 2);
}

TEST(ScalarNumerics, SignedArithmeticWraps) {
  EXPECT_EQ(tf_wadd<int32_t>(INT32_MAX, 1), INT32_MIN);
  EXPECT_EQ(tf_wsub<int64_t>(INT64_MIN, 1), INT64_MAX);
  EXPECT_EQ(tf_wmul<int8_t>(100, 3), 44);
  EXPECT_EQ(tf_wmul<int8_t>(-128, -1), -128);
  EXPECT_EQ(tf_wmul<int64_t>(INT64_MAX, 2), -2);
  EXPECT_EQ(tf_neg<int8_t>(-128), -128);
  EXPECT_EQ(tf_abs<int32_t>(INT32_MIN), INT32_MIN);
  EXPECT_EQ(tf_abs<int32_t>(-5), 5);
  EXPECT_EQ(tf_square<int32_t>(65536), 0);
  EXPECT_EQ(tf_relu<int32_t>(-5), 0);
  EXPECT_TRUE(std::isnan(tf_relu(kNaN)));
  EXPECT_EQ(tf_relu(-1.5f), 0.0f);
  EXPECT_EQ(tf_abs(-1.5), 1.5);
}

TEST(ScalarNumerics, TopKOrderPutsNaNAboveEveryNumber) {
  EXPECT_TRUE(tf_topk_greater(kNaN, kInf));
  EXPECT_FALSE(tf_topk_greater(kInf, kNaN));
  EXPECT_FALSE(tf_topk_greater(kNaN, kNaN));  // NaNs tie: the index decides
  EXPECT_TRUE(tf_topk_greater(2.0, 1.0));
  EXPECT_FALSE(tf_topk_greater(1.0f, 1.0f));
  EXPECT_TRUE(tf_topk_greater<int64_t>(3, -3));
}

TEST(ScalarNumerics, ActivationFormsFollowTorchsOrder) {
  EXPECT_EQ(tf_silu_of(2.0, std::exp(-2.0)), 2.0 / (1.0 + std::exp(-2.0)));
  EXPECT_EQ(tf_gelu_erf(0.0f), 0.0f);
  EXPECT_EQ(tf_gelu_erf(1.0), 1.0 * 0.5 * (1.0 + std::erf(1.0 * M_SQRT1_2)));
  const double x = -3.5;
  const double u = M_SQRT2 * M_2_SQRTPI * 0.5 * (x + 0.044715 * (x * x * x));
  EXPECT_EQ(tf_gelu_tanh_arg(x), u);
  EXPECT_EQ(tf_gelu_tanh_of(x, std::tanh(u)), 0.5 * x * (1.0 + std::tanh(u)));
}

}  // namespace
