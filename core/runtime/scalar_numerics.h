// The scalar numerics of both backends, defined once: f16 / bf16 / 8-bit float
// conversions and per-op roundings, NaN-propagating min / max, wrapping
// signed integer arithmetic, floor division, float -> int conversion, TopK's
// order and the activation forms. The evaluator (core/runtime, core/eval)
// includes this file; the build embeds its text, unchanged, into the prelude
// of every generated kernel (cmake/embed_text.cmake, core/compiler/prelude.cc),
// so the compiled kernels and the evaluator cannot drift apart.
//
// Because the same text is a generated kernel's source, it must stay
// self-contained: standard headers only, no project includes, no namespace
// (the prelude places it at file scope), an include guard rather than
// `#pragma once` (which warns in a main file), and every function
// declared `TF_FN` (static inline; a device function in CUDA kernels):
// internal linkage in every world, and inlined into the kernels' inner
// loops. Functions that sit in such loops are branch-free or
// written so that GCC vectorizes them (selects, masks); keep them so.
//
// The conversions are bit-exact with c10 (torch's CPU types):
//  - f16 (IEEE binary16): float -> f16 rounds to nearest, ties to even; NaN
//    becomes the quiet 0x7E00 with the sign kept.
//  - bf16: round to nearest even on the bits; NaN becomes 0x7FC0.
//  - fp8e4m3 (e4m3fn): sign, 4 exponent bits (bias 7), 3 mantissa bits; no
//    infinity; S.1111.111 is NaN; largest finite 448. Rounds to nearest even
//    and does NOT saturate (torch's cast): |x| in (464, inf] and NaN become
//    the NaN code 0x7F with x's sign; 464, the tie between 448 and the NaN
//    code, rounds to even (448).
//  - f8e8m0 (e8m0fnu): 8 unsigned exponent bits (bias 127); no sign, zero or
//    mantissa; 0xFF is NaN; code c is 2^(c - 127). Takes x's exponent field
//    (the sign is ignored), maps inf / NaN to NaN and rounds the mantissa to
//    nearest, ties to even on the implied bit (so 1.5 * 2^e rounds up); zero
//    becomes code 0 (2^-127).
// Every narrow float converts to float exactly; wider values go through
// float, as c10 does (so f64 -> f16 rounds twice, like torch).
//
// A target with conversion instructions that round the same way defines
// TF_NATIVE_HALF and tf_native_{to,from}_f16 / tf_native_to_bf16 before
// this text, and the f16 / bf16 conversions below use them (the CUDA
// prelude: cvt.rn.f16.f32, cvt.f32.f16, cvt.rn.bf16.f32, one instruction
// each against a dozen integer and float operations). They give the same
// bits but for a NaN's payload: the device's own NaN, which is also what
// torch's CUDA kernels store (c10's half types convert with the same
// instructions on a device).
#ifndef TF_RUNTIME_SCALAR_NUMERICS_H
#define TF_RUNTIME_SCALAR_NUMERICS_H

#ifndef __CUDACC_RTC__
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#endif

// How every function here is declared: internal and inline on the CPU. The
// CUDA prelude defines it first (device functions), and brings the few
// standard names used here itself, since NVRTC has no standard headers
// (core/compiler/cuda/prelude.cc).
#ifndef TF_FN
#define TF_FN static inline
#endif

// ---- bits of a float

TF_FN uint32_t tf_fbits(float f) { uint32_t u; std::memcpy(&u, &f, sizeof u); return u; }
TF_FN float tf_bitsf(uint32_t u) { float f; std::memcpy(&f, &u, sizeof f); return f; }
// All ones for a NaN, else 0: a NaN result chosen by a mask rather than an
// early return or a select, which kept GCC from vectorizing a loop that both
// stored a value and summed its square (bf16 residual + rmsnorm ran at 4.5x
// the f32 time).
TF_FN uint32_t tf_nan_mask(float f) { return f != f ? ~UINT32_C(0) : 0; }

// ---- narrow float storage types

struct tf_f16 { uint16_t bits; };
struct tf_bf16 { uint16_t bits; };
struct tf_fp8e4m3 { uint8_t bits; };
struct tf_f8e8m0 { uint8_t bits; };

// c10::detail::fp16_ieee_from_fp32_value.
TF_FN tf_f16 tf_to_f16(float f) {
#ifdef TF_NATIVE_HALF
  return tf_f16{tf_native_to_f16(f)};
#else
  float base = (tf_bitsf(tf_fbits(f) & UINT32_C(0x7FFFFFFF)) * 0x1.0p+112f) * 0x1.0p-110f;
  const uint32_t w = tf_fbits(f), shl1_w = w + w, sign = w & UINT32_C(0x80000000);
  uint32_t bias = shl1_w & UINT32_C(0xFF000000);
  if (bias < UINT32_C(0x71000000)) bias = UINT32_C(0x71000000);
  base = tf_bitsf((bias >> 1) + UINT32_C(0x07800000)) + base;
  const uint32_t bits = tf_fbits(base);
  const uint32_t nonsign = ((bits >> 13) & UINT32_C(0x00007C00)) + (bits & UINT32_C(0x00000FFF));
  return tf_f16{static_cast<uint16_t>((sign >> 16) | (shl1_w > UINT32_C(0xFF000000) ? UINT32_C(0x7E00) : nonsign))};
#endif
}
// c10::detail::fp16_ieee_to_fp32_value.
TF_FN float tf_widen(tf_f16 h) {
#ifdef TF_NATIVE_HALF
  return tf_native_from_f16(h.bits);
#else
  const uint32_t w = static_cast<uint32_t>(h.bits) << 16, sign = w & UINT32_C(0x80000000), two_w = w + w;
  const float normalized = tf_bitsf((two_w >> 4) + (UINT32_C(0xE0) << 23)) * 0x1.0p-112f;
  const float denormalized = tf_bitsf((two_w >> 17) | (UINT32_C(126) << 23)) - 0.5f;
  return tf_bitsf(sign | (two_w < (UINT32_C(1) << 27) ? tf_fbits(denormalized) : tf_fbits(normalized)));
#endif
}

// c10::detail::round_to_nearest_even, its NaN by mask (tf_nan_mask).
TF_FN tf_bf16 tf_to_bf16(float f) {
#ifdef TF_NATIVE_HALF
  return tf_bf16{tf_native_to_bf16(f)};
#else
  const uint32_t u = tf_fbits(f), nan = tf_nan_mask(f);
  const uint32_t r = (u + ((u >> 16) & 1) + UINT32_C(0x7FFF)) >> 16;
  return tf_bf16{static_cast<uint16_t>((r & ~nan) | (UINT32_C(0x7FC0) & nan))};
#endif
}
TF_FN float tf_widen(tf_bf16 h) { return tf_bitsf(static_cast<uint32_t>(h.bits) << 16); }

// c10::detail::fp8e4m3fn_from_fp32_value.
TF_FN tf_fp8e4m3 tf_to_fp8e4m3(float f) {
  const uint32_t kNanBound = UINT32_C(1087) << 20;  // 480.0f; [464, 480) reaches NaN by rounding
  uint32_t u = tf_fbits(f);
  const uint32_t sign = u & UINT32_C(0x80000000);
  u ^= sign;
  // c10's three cases, each computed and one selected, in integer
  // arithmetic only: a branch or a float add under a condition (c10's
  // subnormal rounding adds 0.5f-style magic) keeps a loop of conversions
  // from vectorizing. Bit-identical to c10's form over every float
  // (checked exhaustively when this was written).
  // Below 2^-6: the subnormal code round-half-even(|f| * 2^9), from the
  // 24-bit significand m shifted right by 141 - e (>= 21 here).
  const uint32_t e = u >> 23;
  const uint32_t m = (u & UINT32_C(0x7FFFFF)) | (e != 0 ? UINT32_C(0x800000) : 0);
  const int32_t sh = 141 - static_cast<int32_t>(e);
  const uint32_t s = static_cast<uint32_t>(sh < 1 ? 1 : sh > 31 ? 31 : sh);
  const uint32_t sub = sh > 31 ? 0 : (m + (UINT32_C(1) << (s - 1)) - 1 + ((m >> s) & 1)) >> s;
  const uint32_t norm = (u + (static_cast<uint32_t>(7 - 127) << 23) + UINT32_C(0x7FFFF) + ((u >> 20) & 1)) >> 20;
  uint32_t r = u < (UINT32_C(121) << 23) ? sub : norm;
  r = u >= kNanBound ? UINT32_C(0x7F) : r;
  return tf_fp8e4m3{static_cast<uint8_t>((r & 0xFF) | (sign >> 24))};
}
TF_FN float tf_widen(tf_fp8e4m3 h) {
  const uint32_t e = (h.bits >> 3) & 0xF, m = h.bits & 0x7;
  const float sub = static_cast<float>(m) * 0x1.0p-9f;  // subnormal: m * 2^-6 / 8
  const float norm = (1.0f + static_cast<float>(m) / 8.0f) * tf_bitsf((e + (127 - 7)) << 23);
  float v = e == 0 ? sub : norm;
  v = (e == 0xF && m == 0x7) ? tf_bitsf(UINT32_C(0x7FC00000)) : v;
  return (h.bits & 0x80) ? -v : v;
}

// c10::detail::fp8e8m0fnu_from_fp32_value.
TF_FN tf_f8e8m0 tf_to_f8e8m0(float f) {
  const uint32_t u = tf_fbits(f);
  const uint32_t e = (u >> 23) & 0xFF;
  // Round half to even on the exponent: up when the guard bit is set and a
  // lower bit or the implied mantissa bit (e > 0) is. Selected, not
  // branched, so conversions vectorize (bit-identical over every float).
  const uint32_t guard = (u >> 22) & 1, rest = (u & UINT32_C(0x3FFFFF)) != 0, lsb = e != 0;
  return tf_f8e8m0{static_cast<uint8_t>(e == 0xFF ? UINT32_C(0xFF) : e + (guard & (rest | lsb)))};
}
TF_FN float tf_widen(tf_f8e8m0 h) {
  const float v = h.bits == 0 ? 0x1.0p-127f : tf_bitsf(static_cast<uint32_t>(h.bits) << 23);  // 0: a float32 subnormal
  return h.bits == 0xFF ? tf_bitsf(UINT32_C(0x7FC00000)) : v;
}

// Every other storage type computes in itself.
template <typename T>
TF_FN T tf_widen(T x) { return x; }

// Stores a computed value in the storage type T: the narrow floats round
// once from float.
template <typename T, typename C>
TF_FN T tf_narrow(C v) {
  if constexpr (std::is_same_v<T, tf_f16>) return tf_to_f16(static_cast<float>(v));
  else if constexpr (std::is_same_v<T, tf_bf16>) return tf_to_bf16(static_cast<float>(v));
  else if constexpr (std::is_same_v<T, tf_fp8e4m3>) return tf_to_fp8e4m3(static_cast<float>(v));
  else if constexpr (std::is_same_v<T, tf_f8e8m0>) return tf_to_f8e8m0(static_cast<float>(v));
  else return static_cast<T>(v);
}

// Element i of an arange, as torch's CPU arange computes it: in int64,
// wrapping, for the integer dtypes; in the accumulation type A (double for
// f32 / f64, float for the narrow floats) for the floats.
TF_FN int64_t tf_arange_int(int64_t start, int64_t step, int64_t i) {
  return static_cast<int64_t>(static_cast<uint64_t>(start) + static_cast<uint64_t>(step) * static_cast<uint64_t>(i));
}
template <typename A>
TF_FN A tf_arange_float(A start, A step, int64_t i) { return start + step * static_cast<A>(i); }

// The bits of v read as T (same width): Bitcast's element.
template <typename T, typename X>
TF_FN T tf_bits_as(X v) {
  if constexpr (std::is_same_v<T, X>) {
    return v;
  } else {
    static_assert(sizeof(T) == sizeof(X), "a bitcast keeps the width");
    T t;
    std::memcpy(&t, &v, sizeof t);
    return t;
  }
}

// ---- an op's result rounded to a narrow float and read back as float

// The bits of tf_widen(tf_to_f16(x)) (checked for all 2^32 floats) in a third
// of the operations: adding and subtracting c = 2^(e + 13) with x's sign (e:
// x's exponent, at least f16's -14, where the subnormals' fixed quantum
// 2^-24 starts) rounds x to 11 significant bits, ties to even; past 65504 it
// rounds to 65536 or more, which becomes inf; a NaN becomes c10's quiet NaN
// with x's sign; -0 and negative values that round to 0 keep their sign.
TF_FN float tf_rf16(float x) {
#ifdef TF_NATIVE_HALF
  return tf_widen(tf_to_f16(x));
#else
  const uint32_t u = tf_fbits(x), sign = u & UINT32_C(0x80000000);
  uint32_t e = u & UINT32_C(0x7F800000);
  e = e < (UINT32_C(113) << 23) ? (UINT32_C(113) << 23) : e;
  e = e > (UINT32_C(143) << 23) ? (UINT32_C(143) << 23) : e;  // keeps c finite for inf and NaN
  const float c = tf_bitsf((e + (UINT32_C(13) << 23)) | sign);
  uint32_t a = tf_fbits((x + c) - c) & UINT32_C(0x7FFFFFFF);
  const uint32_t big = a > UINT32_C(0x7F800000) ? UINT32_C(0x7FC00000) : UINT32_C(0x7F800000);
  a = a >= UINT32_C(0x47800000) ? big : a;
  return tf_bitsf(a | sign);
#endif
}
// bf16: the rounding of tf_to_bf16 with the low half cleared in place.
TF_FN float tf_rbf16(float x) {
#ifdef TF_NATIVE_HALF
  return tf_widen(tf_to_bf16(x));
#else
  const uint32_t u = tf_fbits(x), nan = tf_nan_mask(x);
  const uint32_t r = (u + ((u >> 16) & 1) + UINT32_C(0x7FFF)) & UINT32_C(0xFFFF0000);
  return tf_bitsf((r & ~nan) | (UINT32_C(0x7FC00000) & nan));
#endif
}
TF_FN float tf_rfp8e4m3(float x) { return tf_widen(tf_to_fp8e4m3(x)); }
TF_FN float tf_rf8e8m0(float x) { return tf_widen(tf_to_f8e8m0(x)); }

// ---- min / max, integer arithmetic

// torch.minimum / torch.maximum propagate NaN: the result is a NaN operand
// (quieted) through a + b, a form that stays a select GCC vectorizes. Which
// NaN's bits a + b keeps when both are NaN depends on how the compiler
// orders the addition (GCC and clang differ); torch itself gives +qNaN on
// its scalar path and all-ones bits on its vector path, so only NaN-ness is
// specified.
template <typename C>
TF_FN C tf_min(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) if (a != a || b != b) return a + b;
  return b < a ? b : a;
}
template <typename C>
TF_FN C tf_max(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) if (a != a || b != b) return a + b;
  return a < b ? b : a;
}

// Signed integer add / sub / mul wrap modulo 2^bits (two's complement, as
// torch's int kernels do in practice) instead of being undefined.
template <typename T>
TF_FN T tf_wadd(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
}
template <typename T>
TF_FN T tf_wsub(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
}
template <typename T>
TF_FN T tf_wmul(T a, T b) {
  using U = std::make_unsigned_t<T>;
  // uint8 / uint16 promote to (signed) int, so multiply in at least unsigned int.
  using W = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
  return static_cast<T>(static_cast<U>(static_cast<W>(static_cast<U>(a)) * static_cast<W>(static_cast<U>(b))));
}

// Unary forms on the compute type: floats as torch's CPU kernels (relu keeps
// NaN), integers wrapping (|INT_MIN| and -INT_MIN are INT_MIN).
template <typename C>
TF_FN C tf_relu(C x) {
  if constexpr (std::is_floating_point_v<C>) return x != x ? x : (x < C(0) ? C(0) : x);
  else return x < C(0) ? C(0) : x;
}
template <typename C>
TF_FN C tf_abs(C x) {
  if constexpr (std::is_floating_point_v<C>) return std::abs(x);
  else return x < C(0) ? tf_wsub<C>(C(0), x) : x;
}
template <typename C>
TF_FN C tf_neg(C x) {
  if constexpr (std::is_floating_point_v<C>) return -x;
  else return tf_wsub<C>(C(0), x);
}
template <typename C>
TF_FN C tf_square(C x) {
  if constexpr (std::is_floating_point_v<C>) return x * x;
  else return tf_wmul<C>(x, x);
}
// where(c, a, b) with both values computed, as a call's arguments are: a
// select between two loads is then a blend, where `c ? x[j] : k` is a
// branch around one load wherever GCC forms no masked load for it (a line
// of 16 whose condition is read as bytes: a random mask mispredicted).
// Where's operands are read at the index the Where is computed at, so
// both loads are always in bounds.
template <typename C>
TF_FN C tf_where(bool c, C a, C b) {
  return c ? a : b;
}
// Logical and / or of two elementwise values, both computed (&& and ||
// read the second only where the first decides nothing: a branch per
// element, as above).
TF_FN bool tf_land(bool a, bool b) { return a & b; }
TF_FN bool tf_lor(bool a, bool b) { return a | b; }

// ---- run-time errors a scalar function can raise

// Error codes: a generated entry's return values (core/compiler/codegen.h
// names them all; core/compiler/compiler.cc asserts that the two agree).
enum : int { tf_err_div_by_zero = 1 };

// Records run-time error `code` in *err, from any thread: a generated entry
// returns it once every stage has run; the evaluator raises its message.
TF_FN void tf_fail(int* err, int code) {
#ifdef __CUDACC__
  atomicExch(err, code);
#else
  __atomic_store_n(err, code, __ATOMIC_RELAXED);
#endif
}

// Integer `div` is floor division (Python's //, torch.div with
// rounding_mode="floor"): Binary keeps the dtype, so true division is not
// expressible for ints. A zero divisor records tf_err_div_by_zero and
// yields 0 instead of trapping; INT_MIN // -1 wraps to INT_MIN.
template <typename T>
TF_FN T tf_floordiv(T a, T b, int* err) {
  if (b == 0) { tf_fail(err, tf_err_div_by_zero); return T(0); }
  if (b == T(-1)) return tf_wsub<T>(T(0), a);
  T q = static_cast<T>(a / b), r = static_cast<T>(a % b);
  if (r != 0 && ((r < 0) != (b < 0))) --q;
  return q;
}

// Float -> signed int truncates toward zero (C++ / torch static_cast). Where
// that cast is undefined (NaN, out of range) the result is what x86's cvtt*
// instructions give torch, INT_MIN of the 32- or 64-bit conversion; i8 goes
// through the 32-bit conversion and wraps, as torch's scalar path does.
template <typename D, typename F>
TF_FN D tf_f2i(F f) {
  using W = std::conditional_t<std::is_same_v<D, int64_t>, int64_t, int32_t>;
  W w = (f >= F(std::numeric_limits<W>::min()) && f < -F(std::numeric_limits<W>::min()))
            ? static_cast<W>(f) : std::numeric_limits<W>::min();
  return static_cast<D>(w);
}

// ---- TopK's order

// a before b in torch.topk's largest-first order, on compute values: NaN
// above every number (and NaNs tie). Ties of equal values go to the lower
// index, which a sort adds (stable sort, or an index tie-break).
template <typename C>
TF_FN bool tf_topk_greater(C a, C b) {
  if constexpr (std::is_floating_point_v<C>)
    if (a != a || b != b) return a != a && b == b;
  return a > b;
}

// ---- activation forms, in torch's CPU order

// silu given e = exp(-x): x / (1 + e), the sigmoid never rounded. Each
// backend brings its exp (the evaluator libm's, generated code its own
// vectorizable one), so the two agree within the exp's ulp.
template <typename C>
TF_FN C tf_silu_of(C x, C e) { return x / (C(1) + e); }

// gelu, tanh form: 0.5 x (1 + tanh(u)), u = sqrt(2 / pi) (x + 0.044715 x^3),
// in torch's own order (where 1 + tanh(u) cancels, x < -3 or so, the result
// is 0 or a few ulps of 1, and only this order rounds like torch). The
// caller computes t = tanh(u) with its tanh.
template <typename C>
TF_FN C tf_gelu_tanh_arg(C x) {
  const C beta = C(M_SQRT2 * M_2_SQRTPI * 0.5);
  const C kappa = C(0.044715);
  return beta * (x + kappa * (x * x * x));
}
template <typename C>
TF_FN C tf_gelu_tanh_of(C x, C t) { return C(0.5) * x * (C(1) + t); }

// gelu, erf form ("none"): x * 0.5 * (1 + erf(x / sqrt(2))).
template <typename C>
TF_FN C tf_gelu_erf(C x) { return x * C(0.5) * (C(1) + std::erf(x * C(M_SQRT1_2))); }

#endif  // TF_RUNTIME_SCALAR_NUMERICS_H
