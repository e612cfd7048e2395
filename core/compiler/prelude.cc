// The C++ text every generated kernel starts with: first the scalar numerics
// the evaluator compiles too (core/runtime/scalar_numerics.h, embedded at
// build time: f16 / bf16 / 8-bit float conversions and roundings, min / max,
// wrapping integer arithmetic, floor division, float -> int, TopK's order,
// the activation forms), then the backend's own part below: the runtime
// table, a vectorizable single-precision exp, the per-element forms built on
// it, data / conv helpers, and routines over whole chunks (gelu, SoftMax's
// exp, f16 / bf16 conversions) written with AVX-512 intrinsics where the
// target has them. Scalar semantics belong in the shared header, never here,
// so that the backends cannot drift apart. It is plain C++17 with no project
// includes, so a library compiled from it needs nothing from the source tree.
// Its exp and the forms built on it are inlined polynomials (SLEEF's exp and
// tanh measured slower); the other transcendental functions come from glibc's
// vector math library, libmvec, which it links (declared below).
#include "core/compiler/prelude.h"

#include <string>

namespace tf::compiler {
namespace {

const char* const kBackendPrelude = R"TFPRELUDE(
#include <cstdio>
#include <cstdlib>
#include <unistd.h>
#if defined(_OPENMP)
#include <omp.h>
#endif
#if defined(__AVX__)
#include <immintrin.h>
#endif

// glibc's vector math (libmvec): declared as SIMD functions, so that GCC's
// vectorizer calls their 16-lane (AVX-512) or 8-lane forms in a vectorized
// loop, not libm's scalar function once per element (tanh over 2^20 floats
// in L1: 12.1 against 0.21 ns per element; sin 7.5 / 0.21, erf 9.0 / 0.37,
// log 1.5 / 0.21). Within 4 ulp of the exact result (measured: log 3.8,
// erf 4.0, the others below 2), where the evaluator's scalar libm is within
// 2 (tanhf 2.1). Special values are handled as libm's. The same
// declarations are what glibc's <math.h> makes under -ffast-math.
#if defined(__x86_64__) && defined(__GLIBC__)
#define TF_SIMD __attribute__((simd("notinbranch")))
#define TF_SIMD_BOTH(name) TF_SIMD float name##f(float) noexcept; TF_SIMD double name(double) noexcept;
extern "C" {
TF_SIMD_BOTH(sin) TF_SIMD_BOTH(cos) TF_SIMD_BOTH(tanh) TF_SIMD_BOTH(log) TF_SIMD_BOTH(log2) TF_SIMD_BOTH(exp2)
TF_SIMD_BOTH(erf)
TF_SIMD double exp(double) noexcept;  // float's is tf_exp, below
TF_SIMD float powf(float, float) noexcept;
TF_SIMD double pow(double, double) noexcept;
}
#undef TF_SIMD_BOTH
#undef TF_SIMD
#endif

namespace {

// The runtime table the host passes: BLAS entry points, so a kernel library
// links against nothing but libc / libm / libgomp.
struct tf_rt {
  void (*sgemm)(int ta, int tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                const float* b, int64_t ldb, float* c, int64_t ldc);
  void (*dgemm)(int ta, int tb, int64_t m, int64_t n, int64_t k, const double* a, int64_t lda,
                const double* b, int64_t ldb, double* c, int64_t ldc);
  // oneDNN's bf16 MatMul and f32 Conv2D (runtime/dnnl_primitives.h): false
  // when oneDNN has no fast kernel for the arguments. conv2d_f32's dims:
  // n, c, h, w, o, kh, kw, ho, wo, groups, strides, paddings, dilations (two
  // each), x's four strides, the weight's four, the bias stride.
  bool (*matmul_bf16)(int64_t m, int64_t n, int64_t k, const uint16_t* a, int64_t as0, int64_t as1,
                      const uint16_t* b, int64_t bs0, int64_t bs1, uint16_t* c);
  bool (*conv2d_f32)(const int64_t* dims, const float* x, const float* w, const float* bias, float* y);
  int64_t* info;  // details of a run-time error (codegen.h), per call
};

// exp for float, branch-free so loops over it vectorize: Cody-Waite range
// reduction and a degree-6 minimax polynomial (max error 1 ulp against
// std::exp, measured on 2^23 points of [-104, 89]; the Cephes degree-7 form
// it replaced cost two more FMAs for the same bound). The result is
// (2 * poly) * 2^(n-1): halving the scale lets n reach 128, so every finite
// exp up to FLT_MAX is exact to that ulp and inputs past ln(FLT_MAX) overflow
// to +inf through the product itself. The price is at the bottom: results
// below ~1.7e-38 (x < -86.99) are flushed to 0 (absolute error < 1.8e-38),
// which also makes exp(-inf) exactly 0. A NaN input passes both clamps and
// makes the result NaN. No special-case selects: this is the inner loop of
// softmax, silu and gelu. tf_exp16 (below) is the same function on 16 lanes.
// (tests/compiler/test_breadth.cc: TranscendentalsAtSpecialValues.)
static inline float tf_exp_core(float xc) {  // xc in [-87.33654, 88.7228391] or NaN
  // n = round(xc / ln2), by the 1.5 * 2^23 rounding constant: t's low
  // mantissa bits then hold n + 126, which the shift below moves into the
  // exponent field (3 operations instead of a round, convert, add, shift).
  // Explicit FMAs: generated code is compiled without contraction, so the
  // polynomial would otherwise cost a multiply and an add per step.
  const float t = __builtin_fmaf(xc, 1.44269504088896341f, 12582912.0f + 126.0f);
  const float n = t - (12582912.0f + 126.0f);
  float r = __builtin_fmaf(n, -0.693359375f, xc);
  r = __builtin_fmaf(n, 2.12194440e-4f, r);
  // 2 * (1 + r q(r)), q the minimax fit of (exp(r) - 1) / r on |r| <= ln2 / 2,
  // its coefficients doubled (exact).
  float p = __builtin_fmaf(0x1.6ae55ep-9f, r, 0x1.126976p-6f);
  p = __builtin_fmaf(p, r, 0x1.55582ap-4f);
  p = __builtin_fmaf(p, r, 0x1.555416p-2f);
  p = __builtin_fmaf(p, r, 0x1.fffffcp-1f);
  p = __builtin_fmaf(p, r, 2.0f);
  p = __builtin_fmaf(p, r, 2.0f);
  uint32_t bits;
  std::memcpy(&bits, &t, sizeof bits);
  bits <<= 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return p * scale;
}
static inline float tf_exp(float x) {
  // Two one-sided clamps a NaN passes (each comparison is false for it).
  float xc = x < -87.33654f ? -87.33654f : x;
  xc = xc > 88.7228391f ? 88.7228391f : xc;
  return tf_exp_core(xc);
}
static inline double tf_exp(double x) { return std::exp(x); }

// torch's CPU silu, the shared form with this exp.
template <typename C>
static inline C tf_silu(C x) { return tf_silu_of(x, tf_exp(-x)); }

// tanh(y) for gelu, through e = exp(2y): 2e / (1 + e) - 1 in one rounding
// (the FMA), as a correctly rounded tanh rounds where it nears -1; so
// 1 + tanh(y) is 0 or a multiple of 2^-24 exactly where torch's is (the
// older 1 - 2 / (e + 1) rounded 1 + e first and gave 0 for e < 2^-24, where
// torch gives 2^-24 from e >= 2^-26 on). 2y is kept below 64 so e and the
// quotient stay finite (2e / (1 + e) rounds to 2 from 2y > 17 on); NaN
// propagates; gelu is its only user (the exp form cancels near 0, where
// tanh's relative error grows, but gelu only needs it next to 1).
static inline float tf_tanh(float y) {
  float v = 2.0f * y;
  v = v < -87.33654f ? -87.33654f : v;
  v = v > 64.0f ? 64.0f : v;
  const float e = tf_exp_core(v);
  return __builtin_fmaf(e + e, 1.0f / (1.0f + e), -1.0f);
}
static inline double tf_tanh(double y) { return std::tanh(y); }

// torch's GeluKernel, tanh form: the shared form (torch's own order, which
// matters where 1 + tanh(u) cancels: a random program comparing such a gelu
// with a threshold told a cheaper, equal form apart;
// tests/compiler/test_random_programs.cc) with tf_tanh. tf_gelu_tanh_n
// (below) is the form elementwise stages use.
template <typename C>
static inline C tf_gelu_tanh(C x) { return tf_gelu_tanh_of(x, tf_tanh(tf_gelu_tanh_arg(x))); }

// Copies the r-d array x (shape sh, strides sx) onto y (strides sy), both in
// elements: InsertSlice / CacheUpdate's copy of dst and their window write;
// with X another type of T's width, Bitcast (each element's bits moved).
// y may equal x only when the strides are equal (then nothing moves).
template <typename T, typename X = T>
static void tf_copy_nd(T* y, const int64_t* sy, const X* x, const int64_t* sx, const int64_t* sh, int r) {
  if (r == 0) { y[0] = tf_bits_as<T>(x[0]); return; }
  int64_t outer = 1;
  for (int a = 0; a + 1 < r; ++a) outer *= sh[a];
  const int64_t inner = sh[r - 1], iy = sy[r - 1], ix = sx[r - 1];
  if (inner == 0) return;
  #pragma omp parallel for schedule(static) if (outer * inner >= 65536)
  for (int64_t row = 0; row < outer; ++row) {
    int64_t oy = 0, ox = 0, rem = row;
    for (int a = r - 2; a >= 0; --a) { const int64_t q = rem % sh[a]; rem /= sh[a]; oy += q * sy[a]; ox += q * sx[a]; }
    T* yr = y + oy;
    const X* xr = x + ox;
    if (iy == 1 && ix == 1) { for (int64_t j = 0; j < inner; ++j) yr[j] = tf_bits_as<T>(xr[j]); }
    else { for (int64_t j = 0; j < inner; ++j) yr[j * iy] = tf_bits_as<T>(xr[j * ix]); }
  }
}

// y[i] = element i of arange(n, start, step) stored as T (scalar_numerics.h).
template <typename T>
static void tf_arange(T* y, int64_t n, double start, double step) {
  if constexpr (std::is_integral_v<T>) {
    const int64_t s0 = static_cast<int64_t>(start), st = static_cast<int64_t>(step);
    for (int64_t i = 0; i < n; ++i) y[i] = static_cast<T>(tf_arange_int(s0, st, i));
  } else if constexpr (std::is_floating_point_v<T>) {
    for (int64_t i = 0; i < n; ++i) y[i] = static_cast<T>(tf_arange_float<double>(start, step, i));
  } else {
    const float s0 = static_cast<float>(start), st = static_cast<float>(step);
    for (int64_t i = 0; i < n; ++i) y[i] = tf_narrow<T>(tf_arange_float<float>(s0, st, i));
  }
}

// Non-temporal output stores. A stage whose output is too large to still be
// in cache when it is read again writes it through tf_stream: the values go
// to memory without first reading each line in (a plain store's
// read-for-ownership), which is a third of a streaming kernel's traffic.
// The loop computes a chunk of kChunk values into a scratch array in L1
// (GCC does not vectorize into streaming stores), then streams it out; a
// task ends with tf_stream_fence() so the stores are visible before the
// OpenMP barrier that ends the stage.
constexpr int64_t kChunk = 256;

// The size in bytes of the highest-level data or unified cache listed under
// dir, a cpu's cache folder in sysfs (one indexN/ per cache, each with
// `level`, `type` and `size` such as "32768K"); 0 where it lists none.
static inline int64_t tf_sysfs_llc_bytes(const char* dir) {
  int64_t bytes = 0;
  int top = 0;
  for (int i = 0; i < 64; ++i) {
    char path[1024], type[32] = "", unit = 0;
    int level = 0;
    long long size = 0;
    std::snprintf(path, sizeof path, "%s/index%d/level", dir, i);
    FILE* f = std::fopen(path, "r");
    if (!f) break;
    const bool leveled = std::fscanf(f, "%d", &level) == 1;
    std::fclose(f);
    std::snprintf(path, sizeof path, "%s/index%d/type", dir, i);
    if ((f = std::fopen(path, "r"))) {
      if (std::fscanf(f, "%31s", type) != 1) type[0] = 0;
      std::fclose(f);
    }
    std::snprintf(path, sizeof path, "%s/index%d/size", dir, i);
    if (!(f = std::fopen(path, "r"))) continue;
    const int got = std::fscanf(f, "%lld%c", &size, &unit);
    std::fclose(f);
    if (!leveled || got < 1 || size <= 0 || std::strcmp(type, "Instruction") == 0 || level < top) continue;
    const int64_t scale = unit == 'K' ? 1 << 10 : unit == 'M' ? 1 << 20 : unit == 'G' ? 1 << 30 : 1;
    top = level;
    bytes = static_cast<int64_t>(size) * scale;
  }
  return bytes;
}
// The last-level cache's size, which decides whether a stage's data is still
// in cache when it is next read: TF_LLC_BYTES where set (tests pin it, so
// that which form of a stage runs does not depend on the machine), else the
// kernel's view of cpu0's caches in sysfs, else the L3 that sysconf reports,
// else 64 MiB. sysfs comes first because it lists the cache a core shares:
// glibc's sysconf reports an AMD package's whole L3 (384 MiB on an EPYC
// guest whose sysfs and lscpu say 32 MiB, its core complex's L3). Read once
// per kernel library.
static inline int64_t tf_llc_bytes() {
  static const int64_t bytes = [] {
    if (const char* v = std::getenv("TF_LLC_BYTES")) {
      const long long b = std::atoll(v);
      if (b > 0) return static_cast<int64_t>(b);
    }
    if (const int64_t b = tf_sysfs_llc_bytes("/sys/devices/system/cpu/cpu0/cache")) return b;
    const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
    return l3 > 0 ? static_cast<int64_t>(l3) : (int64_t{64} << 20);
  }();
  return bytes;
}
// A stage that moves three quarters of the cache or more (its inputs and
// output together) streams its output, and a streamed elementwise stage
// also prefetches its inputs (lower_loop_nest.h has the measurements).
static inline int64_t tf_stream_min_bytes() { return tf_llc_bytes() / 4 * 3; }
static inline int64_t tf_prefetch_min_bytes() { return tf_stream_min_bytes(); }
// Whether this is an AMD core (the compiler's CPU model, read once by its
// runtime; false off x86).
static inline bool tf_amd_core() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  return __builtin_cpu_is("amd");
#else
  return false;
#endif
}
// Whether a streamed elementwise stage prefetches inputs it reads as one
// ascending run (one that reads an input at several offsets always does):
// `setting` (TF_PREFETCH_STREAMS) "0" or "1" where given, else not on an
// AMD core, whose own prefetcher keeps up with such runs, and yes
// elsewhere (lower_loop_nest.h has the measurements).
static inline bool tf_prefetch_streams_for(const char* setting, bool amd) {
  if (setting && *setting) return std::strcmp(setting, "0") != 0;
  return !amd;
}
static inline bool tf_prefetch_streams() {
  static const bool on = tf_prefetch_streams_for(std::getenv("TF_PREFETCH_STREAMS"), tf_amd_core());
  return on;
}
// The team a parallel loop of this call would get (the caller's thread
// count, set around every call): a stage with one thread runs its serial
// twin rather than build a team of one (0.3-0.4 us a stage).
static inline int64_t tf_threads() {
#if defined(_OPENMP)
  return omp_get_max_threads();
#else
  return 1;
#endif
}
template <typename T>
static inline void tf_stream(T* __restrict dst, const T* __restrict src, int64_t n) {
  int64_t i = 0;
#if defined(__AVX__)
  if constexpr (sizeof(T) >= 4) {
    for (; i < n && (reinterpret_cast<uintptr_t>(dst + i) & 31) != 0; ++i) dst[i] = src[i];
    constexpr int64_t kLanes = 32 / sizeof(T);
    for (; i + kLanes <= n; i += kLanes)
      _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + i), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i)));
  }
#endif
  for (; i < n; ++i) dst[i] = src[i];
}
// The elements of p's row before its first 64-byte line boundary, at most
// n: where stream_lines starts streaming whole lines (all n when p is not
// even aligned to its element, which no line boundary then follows).
template <typename T>
static inline int64_t tf_line_head(const T* p, int64_t n) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  if (a % sizeof(T) != 0) return n;
  const int64_t h = static_cast<int64_t>(((64 - (a & 63)) & 63) / sizeof(T));
  return h < n ? h : n;
}
// One 64-byte line from an aligned L1 buffer to the line-aligned dst, as
// one streaming store: a chunk's lines go out as they are computed rather
// than in one burst after it.
template <typename T>
static inline void tf_stream_line(T* __restrict dst, const T* __restrict src) {
#if defined(__AVX512F__)
  _mm512_stream_si512(reinterpret_cast<__m512i*>(dst), _mm512_load_si512(src));
#elif defined(__AVX__)
  _mm256_stream_si256(reinterpret_cast<__m256i*>(dst), _mm256_load_si256(reinterpret_cast<const __m256i*>(src)));
  _mm256_stream_si256(reinterpret_cast<__m256i*>(dst) + 1, _mm256_load_si256(reinterpret_cast<const __m256i*>(src) + 1));
#else
  for (int64_t i = 0; i < 64 / static_cast<int64_t>(sizeof(T)); ++i) dst[i] = src[i];
#endif
}
static inline void tf_stream_fence() {
#if defined(__AVX__)
  _mm_sfence();
#endif
}

// The n partials of a row reduction that kept one per lane across its
// chunks (lane_partials.h; n is 32 or 16) combined: partial l with
// l + n / 2, those sums l with l + n / 4, and so on down to one, in vector
// registers where the CPU has AVX-512 (the vector path and tf_lanes_fold
// combine in the same order; a chain through the array, or the compiler's own
// lane-by-lane epilogue, cost a short row more than its elements). l is
// 64-byte aligned. A max's partials hold no NaN (the reductions count NaN
// elements apart), so the vector max is the comparison's up to the sign of
// a zero maximum, which a vectorized max left to the lanes' order before.
template <typename T, typename F>
static inline T tf_lanes_fold(const T* l, int64_t n, F f) {
  T v[16];
  for (int64_t i = 0; i < n / 2; ++i) v[i] = f(l[i], l[i + n / 2]);
  for (int64_t w = n / 4; w >= 1; w /= 2)
    for (int64_t i = 0; i < w; ++i) v[i] = f(v[i], v[i + w]);
  return v[0];
}
template <typename T>
static inline T tf_lanes_add(const T* l, int64_t n) {
#if defined(__AVX512F__)
  if (n == 32) {
    if constexpr (std::is_same_v<T, double>) {
      const __m512d a = _mm512_add_pd(_mm512_load_pd(l), _mm512_load_pd(l + 16));
      const __m512d b = _mm512_add_pd(_mm512_load_pd(l + 8), _mm512_load_pd(l + 24));
      return _mm512_reduce_add_pd(_mm512_add_pd(a, b));
    } else if constexpr (std::is_same_v<T, float>) {
      return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_load_ps(l), _mm512_load_ps(l + 16)));
    } else if constexpr (std::is_same_v<T, int32_t>) {  // a max's count of NaN elements
      const __m512i* v = reinterpret_cast<const __m512i*>(l);
      return _mm512_reduce_add_epi32(_mm512_add_epi32(_mm512_load_si512(v), _mm512_load_si512(v + 1)));
    }
  }
#endif
  return tf_lanes_fold(l, n, [](T a, T b) { return a + b; });
}
template <typename T>
static inline T tf_lanes_max(const T* l, int64_t n) {
#if defined(__AVX512F__)
  if constexpr (std::is_same_v<T, float>)
    if (n == 32) return _mm512_reduce_max_ps(_mm512_max_ps(_mm512_load_ps(l), _mm512_load_ps(l + 16)));
#endif
  return tf_lanes_fold(l, n, [](T a, T b) { return b > a ? b : a; });
}

// ---- Whole-chunk forms of gelu, SoftMax's exp and the f16 / bf16 storage
// conversions. GCC vectorizes the scalar helpers above, but not into
// AVX-512's NaN-passing min / max, rcp14 or the F16C / BF16 conversion
// instructions (the scalar forms' NaN rules; GCC 12 has no vectorized
// _Float16 conversion), and a long dependency chain per element leaves the
// out-of-order window short of independent work. These run over a chunk
// (kChunk values: at most that for the gelu routines, any length for the
// others) that the code generator stages through an L1 buffer, or, for
// gelu, reads from an input's row where it lies; each falls back to a
// loop over the scalar helper and, but for gelu (its exponential and
// reciprocal), gives its bits exactly. Measured on one core (AVX-512), ns
// per element in cache, before -> after: gelu 0.52 -> 0.39, SoftMax's exp
// 0.25 -> 0.19; an f16 round trip through the c10 bit formulas ~30 vector
// operations per 16 values, by F16C 2.
#if defined(__AVX512F__)
static inline __m512 tf_exp16_core(__m512 xc) {  // tf_exp_core, the same operations
  const __m512 t = _mm512_fmadd_ps(xc, _mm512_set1_ps(1.44269504088896341f), _mm512_set1_ps(12582912.0f + 126.0f));
  const __m512 n = _mm512_sub_ps(t, _mm512_set1_ps(12582912.0f + 126.0f));
  __m512 r = _mm512_fmadd_ps(n, _mm512_set1_ps(-0.693359375f), xc);
  r = _mm512_fmadd_ps(n, _mm512_set1_ps(2.12194440e-4f), r);
  __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(0x1.6ae55ep-9f), r, _mm512_set1_ps(0x1.126976p-6f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0x1.55582ap-4f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0x1.555416p-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0x1.fffffcp-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(2.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(2.0f));
  return _mm512_mul_ps(p, _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_castps_si512(t), 23)));
}
// max(lo, x) / min(hi, x) return their second operand when it is NaN: the
// scalar form's comparisons, one instruction each.
static inline __m512 tf_clamp16(__m512 x, float lo, float hi) {
  return _mm512_min_ps(_mm512_set1_ps(hi), _mm512_max_ps(_mm512_set1_ps(lo), x));
}
static inline __mmask16 tf_tail_mask(int64_t n) { return static_cast<__mmask16>((1u << n) - 1); }
#endif

// v[i] = tf_exp(v[i]) for i < n, in place: the exponentials a row stage's
// reduction pass computes a chunk at a time (softmax's sum of exp(x - max)).
static inline void tf_exp_n(float* __restrict v, int64_t n) {
  int64_t i = 0;
#if defined(__AVX512F__)
  for (; i + 32 <= n; i += 32) {
    const __m512 a = tf_exp16_core(tf_clamp16(_mm512_loadu_ps(v + i), -87.33654f, 88.7228391f));
    const __m512 b = tf_exp16_core(tf_clamp16(_mm512_loadu_ps(v + i + 16), -87.33654f, 88.7228391f));
    _mm512_storeu_ps(v + i, a);
    _mm512_storeu_ps(v + i + 16, b);
  }
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(v + i, tf_exp16_core(tf_clamp16(_mm512_loadu_ps(v + i), -87.33654f, 88.7228391f)));
#endif
  #pragma omp simd
  for (int64_t j = i; j < n; ++j) v[j] = tf_exp(v[j]);
}
// v[i] = tf_exp(x[i]) for i < n (x may be v), returning the sum of the
// exponentials (in lanes, two accumulators, then across): softmax's sum
// pass in one sweep of the chunk. With kDrain, v's previous values first
// go to dst, streamed 32 at a time just before they are overwritten (dst
// line-aligned), so that a scratch row's previous row leaves during this
// row's exps rather than in one burst before them; the sum is the same.
template <bool kDrain>
static inline float tf_exp_sum_into(float* v, const float* x, int64_t n, float* dst) {
  int64_t i = 0;
  float sum = 0;
#if defined(__AVX512F__)
  __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
  for (; i + 32 <= n; i += 32) {
    if constexpr (kDrain) {
      _mm512_stream_ps(dst + i, _mm512_loadu_ps(v + i));
      _mm512_stream_ps(dst + i + 16, _mm512_loadu_ps(v + i + 16));
    }
    const __m512 a = tf_exp16_core(tf_clamp16(_mm512_loadu_ps(x + i), -87.33654f, 88.7228391f));
    const __m512 b = tf_exp16_core(tf_clamp16(_mm512_loadu_ps(x + i + 16), -87.33654f, 88.7228391f));
    _mm512_storeu_ps(v + i, a);
    _mm512_storeu_ps(v + i + 16, b);
    s0 = _mm512_add_ps(s0, a);
    s1 = _mm512_add_ps(s1, b);
  }
  if constexpr (kDrain) tf_stream(dst + i, v + i, n - i);
  // The last 1..31 values in masked vectors. A scalar loop with an omp simd
  // reduction here cost GCC's epilogue, 16 dependent scalar adds of its
  // spilled lanes, on every call even when it ran no iteration: 10% of a
  // large softmax on one thread (256-value chunks).
  for (; i < n; i += 16) {
    const __mmask16 m = n - i >= 16 ? static_cast<__mmask16>(0xffff) : tf_tail_mask(n - i);
    const __m512 a = tf_exp16_core(tf_clamp16(_mm512_maskz_loadu_ps(m, x + i), -87.33654f, 88.7228391f));
    _mm512_mask_storeu_ps(v + i, m, a);
    s0 = _mm512_mask_add_ps(s0, m, s0, a);
  }
  sum = _mm512_reduce_add_ps(_mm512_add_ps(s0, s1));
#else
  if constexpr (kDrain) tf_stream(dst + i, v + i, n - i);
  if (i < n) {  // the reduction's epilogue costs even an empty loop
    #pragma omp simd reduction(+:sum)
    for (int64_t j = i; j < n; ++j) {
      v[j] = tf_exp(x[j]);
      sum += v[j];
    }
  }
#endif
  return sum;
}
static inline float tf_exp_sum_n(float* v, int64_t n) { return tf_exp_sum_into<false>(v, v, n, nullptr); }
// tf_exp_sum_into<true> where dst starts a line; elsewhere the previous
// values go out in one burst first.
static inline float tf_exp_sum_drain_n(float* v, const float* x, int64_t n, float* dst) {
  if (tf_line_head(dst, n) == 0) return tf_exp_sum_into<true>(v, x, n, dst);
  tf_stream(dst, v, n);
  return tf_exp_sum_into<false>(v, x, n, nullptr);
}

// ---- Transpose of a plane, a block of rows at a time:
// y[a * ys + j] = x[j * xs + a] for j < rows, a < cols, where rows is at
// most tf_transpose_rows<T> (two 64-byte lines of y: 32 floats, 16
// doubles, 64 halves). The block's x rows are read along, 16 (8) columns
// a step, so each is a sequential run for the hardware prefetcher; every y
// row of a step gets two whole lines, streamed where `nt` and the lines
// are aligned. Gathering down x's columns instead reads lines a power of
// two apart, which share cache sets ([2048, 4096] f32: 43 ms on one
// thread), and walking 16 columns down all of x's rows reads a line every
// 16 KiB, a stride the prefetcher does not follow (5.4-6.0 ms streamed,
// against 3.3-3.7 read along, in a C model; the library's two lines a row
// 1.8; docs/decisions.md).
template <typename T>
constexpr int64_t tf_transpose_rows = 128 / static_cast<int64_t>(sizeof(T));
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
// v[k] lane i <- v[i] lane k, 32-bit lanes.
static inline void tf_transpose16x16(__m512i* v) {
  __m512 t[16], u[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(_mm512_castsi512_ps(v[i]), _mm512_castsi512_ps(v[i + 1]));
    t[i + 1] = _mm512_unpackhi_ps(_mm512_castsi512_ps(v[i]), _mm512_castsi512_ps(v[i + 1]));
  }
  for (int i = 0; i < 16; i += 4) {
    u[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44);
    u[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xEE);
    u[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    u[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
  for (int i = 0; i < 4; ++i) {
    t[i] = _mm512_shuffle_f32x4(u[i], u[i + 4], 0x88);
    t[i + 4] = _mm512_shuffle_f32x4(u[i], u[i + 4], 0xDD);
    t[i + 8] = _mm512_shuffle_f32x4(u[i + 8], u[i + 12], 0x88);
    t[i + 12] = _mm512_shuffle_f32x4(u[i + 8], u[i + 12], 0xDD);
  }
  for (int i = 0; i < 4; ++i) {
    v[i] = _mm512_castps_si512(_mm512_shuffle_f32x4(t[i], t[i + 8], 0x88));
    v[i + 8] = _mm512_castps_si512(_mm512_shuffle_f32x4(t[i], t[i + 8], 0xDD));
    v[i + 4] = _mm512_castps_si512(_mm512_shuffle_f32x4(t[i + 4], t[i + 12], 0x88));
    v[i + 12] = _mm512_castps_si512(_mm512_shuffle_f32x4(t[i + 4], t[i + 12], 0xDD));
  }
}
// v[k] lane i <- v[i] lane k, 64-bit lanes.
static inline void tf_transpose8x8(__m512i* v) {
  __m512i t[8], u[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm512_unpacklo_epi64(v[i], v[i + 1]);
    t[i + 1] = _mm512_unpackhi_epi64(v[i], v[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    u[i] = _mm512_shuffle_i64x2(t[i], t[i + 2], 0x88);
    u[i + 1] = _mm512_shuffle_i64x2(t[i], t[i + 2], 0xDD);
    u[i + 2] = _mm512_shuffle_i64x2(t[i + 1], t[i + 3], 0x88);
    u[i + 3] = _mm512_shuffle_i64x2(t[i + 1], t[i + 3], 0xDD);
  }
  v[0] = _mm512_shuffle_i64x2(u[0], u[4], 0x88);
  v[4] = _mm512_shuffle_i64x2(u[0], u[4], 0xDD);
  v[2] = _mm512_shuffle_i64x2(u[1], u[5], 0x88);
  v[6] = _mm512_shuffle_i64x2(u[1], u[5], 0xDD);
  v[1] = _mm512_shuffle_i64x2(u[2], u[6], 0x88);
  v[5] = _mm512_shuffle_i64x2(u[2], u[6], 0xDD);
  v[3] = _mm512_shuffle_i64x2(u[3], u[7], 0x88);
  v[7] = _mm512_shuffle_i64x2(u[3], u[7], 0xDD);
}
// One line of y: streamed, or stored with the lanes of `rows` values.
template <typename T>
static inline void tf_transpose_put(T* y, __m512i v, int64_t rows, bool stream) {
  if (stream) {
    _mm512_stream_si512(reinterpret_cast<__m512i*>(y), v);
  } else if constexpr (sizeof(T) == 8) {
    _mm512_mask_storeu_epi64(y, static_cast<__mmask8>((1u << rows) - 1), v);
  } else if constexpr (sizeof(T) == 4) {
    _mm512_mask_storeu_epi32(y, static_cast<__mmask16>((1u << rows) - 1), v);
  } else {
    _mm512_mask_storeu_epi16(y, static_cast<__mmask32>(rows >= 32 ? ~0u : (1u << rows) - 1), v);
  }
}
// Columns [a, a + n) of `rows` x rows (at most a line of y's values; n at
// most 16, or 8 for 8-byte values) as a line of each y row a..a + n.
template <typename T>
static inline void tf_transpose_line(const T* x, int64_t xs, T* y, int64_t ys, int64_t rows, int64_t n, bool stream) {
  __m512i v[16];
  if constexpr (sizeof(T) == 8) {
    const __mmask8 cm = static_cast<__mmask8>((1u << n) - 1);
    for (int64_t k = 0; k < 8; ++k) v[k] = k < rows ? _mm512_maskz_loadu_epi64(cm, x + k * xs) : _mm512_setzero_si512();
    tf_transpose8x8(v);
    for (int64_t k = 0; k < n; ++k) tf_transpose_put(y + k * ys, v[k], rows, stream);
  } else if constexpr (sizeof(T) == 4) {
    const __mmask16 cm = static_cast<__mmask16>((1u << n) - 1);
    for (int64_t k = 0; k < 16; ++k) v[k] = k < rows ? _mm512_maskz_loadu_epi32(cm, x + k * xs) : _mm512_setzero_si512();
    tf_transpose16x16(v);
    for (int64_t k = 0; k < n; ++k) tf_transpose_put(y + k * ys, v[k], rows, stream);
  } else {  // 2 bytes: two 16 x 16 transposes in 32-bit lanes, each half a line of y
    const __mmask16 cm = static_cast<__mmask16>((1u << n) - 1);
    __m512i w[16];
    for (int64_t k = 0; k < 16; ++k) {
      v[k] = k < rows ? _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(cm, x + k * xs)) : _mm512_setzero_si512();
      w[k] = k + 16 < rows ? _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(cm, x + (k + 16) * xs)) : _mm512_setzero_si512();
    }
    tf_transpose16x16(v);
    tf_transpose16x16(w);
    for (int64_t k = 0; k < n; ++k) {
      const __m512i line = _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtepi32_epi16(v[k])), _mm512_cvtepi32_epi16(w[k]), 1);
      tf_transpose_put(y + k * ys, line, rows, stream);
    }
  }
}
#endif  // AVX-512 F, BW and VL
template <typename T>
static inline void tf_transpose_block(const T* __restrict x, int64_t xs, T* __restrict y, int64_t ys, int64_t rows,
                                      int64_t cols, bool nt) {
  int64_t a = 0;
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
  if constexpr (sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8) {
    constexpr int64_t kStep = sizeof(T) == 8 ? 8 : 16;
    const bool stream = nt && rows == tf_transpose_rows<T> && (reinterpret_cast<uintptr_t>(y) & 63) == 0 &&
                        (ys * static_cast<int64_t>(sizeof(T))) % 64 == 0;
    constexpr int64_t kLine = 64 / sizeof(T);
    for (; a < cols; a += kStep) {
      const int64_t n = a + kStep <= cols ? kStep : cols - a;
      for (int64_t g = 0; g < rows; g += kLine)
        tf_transpose_line(x + a + g * xs, xs, y + a * ys + g, ys, rows - g < kLine ? rows - g : kLine, n, stream);
    }
    if (stream) tf_stream_fence();
    return;
  }
#endif
  (void)nt;
  // Elsewhere a 16-column strip of the block's rows stays in L1 while its
  // columns become y's rows.
  for (; a < cols; a += 16) {
    const int64_t a1 = a + 16 < cols ? a + 16 : cols;
    for (int64_t c = a; c < a1; ++c)
      for (int64_t j = 0; j < rows; ++j) y[c * ys + j] = x[j * xs + c];
  }
}

#if defined(__AVX512F__)
// q = a y, then q + (a - b q) y: a / b correctly rounded inside the range
// tf_div_n tests (y = 1 / b).
static inline __m512 tf_div16_fma(__m512 a, __m512 bv, __m512 yv) {
  const __m512 q = _mm512_mul_ps(a, yv);
  return _mm512_fmadd_ps(_mm512_fnmadd_ps(q, bv, a), yv, q);
}
#endif
// The bottom of that range for a normal b: max(2^-100, 2^-99 |b|), a power
// of two times b, exact in double and, at 2^-100 or above, in float.
static inline float tf_div_bottom(float b) {
  const double low = 0x1p-99 * std::fabs(static_cast<double>(b));
  return static_cast<float>(low > 0x1p-100 ? low : 0x1p-100);
}
// v[i] = v[i] / b for i < n, in place, with the bits of the quotient
// itself: q = v y with y = 1 / b, then one FMA correction q + (v - b q) y,
// which is the correctly rounded quotient when y is b's correctly rounded
// reciprocal and nothing underflows or overflows (Markstein; checked
// exhaustively over every f32 v for several b): |v| and |q| at least
// 2^-100 and |q| at most 2^100. Both hold when |v| lies in [max(2^-100,
// 2^-99 |b|), 2^99 |b|] (y is within an ulp of 1 / b), one range test per
// lane on the bits of |v| (unsigned: below the bottom wraps above the
// top; NaN and inf are above any finite top). A vector with a lane out of
// that range, or a b whose reciprocal is not normal, divides. The
// divider's throughput is a quarter of the multiplier's: a softmax
// written as e / sum(e) divides every element by one row sum.
static inline void tf_div_n(float* __restrict v, int64_t n, float b) {
  int64_t i = 0;
  const float y = 1.0f / b;
#if defined(__AVX512F__)
  if (std::isnormal(b) && std::isnormal(y)) {
    // Both bounds are powers of two times b, exact in double and, inside
    // [2^-100, the largest float], in float.
    const double mb = std::fabs(static_cast<double>(b));
    const double top = std::numeric_limits<float>::max();
    const float lo = tf_div_bottom(b);
    const float hi = static_cast<float>(0x1p99 * mb < top ? 0x1p99 * mb : top);
    const __m512 bv = _mm512_set1_ps(b), yv = _mm512_set1_ps(y);
    const __m512i bottom = _mm512_set1_epi32(static_cast<int>(tf_fbits(lo)));
    const __m512i span = _mm512_set1_epi32(static_cast<int>(tf_fbits(hi) - tf_fbits(lo)));
    for (; i + 16 <= n; i += 16) {
      const __m512 a = _mm512_loadu_ps(v + i);
      const __m512i mag = _mm512_castps_si512(_mm512_abs_ps(a));
      const __mmask16 ok = _mm512_cmple_epu32_mask(_mm512_sub_epi32(mag, bottom), span);
      __m512 r = tf_div16_fma(a, bv, yv);
      if (ok != 0xFFFF) r = _mm512_mask_div_ps(r, static_cast<__mmask16>(~ok), a, bv);
      _mm512_storeu_ps(v + i, r);
    }
  }
#endif
  for (int64_t j = i; j < n; ++j) v[j] = v[j] / b;
}

// tf_div_n where b is a sum of terms that are never negative and include
// every v[i] (softmax's e / sum(e)): the caller guarantees that no v[i] is
// NaN, infinite or above 2^99 |b| unless b is not a normal number (a NaN
// or an infinity among the terms makes their sum one). Of tf_div_n's range
// test only the bottom is left, and it is made on the least of four
// vectors at once: a block holding a lane below max(2^-100, 2^-99 |b|) (a
// zero, an exp that underflowed, a negative) divides. Per 16 lanes that is
// a quarter of a min and a compare instead of an and, a subtract and a
// compare: a composed softmax row of 4096 floats 0.80 -> 0.76 ms per 512
// rows, against 0.72 for the built-in's multiply.
static inline void tf_div_by_sum_n(float* __restrict v, int64_t n, float b) {
  int64_t i = 0;
#if defined(__AVX512F__)
  const float y = 1.0f / b;
  if (std::isnormal(b) && std::isnormal(y)) {
    const __m512 lo = _mm512_set1_ps(tf_div_bottom(b));
    const __m512 bv = _mm512_set1_ps(b), yv = _mm512_set1_ps(y);
    for (; i + 64 <= n; i += 64) {
      __m512 a[4];
      for (int k = 0; k < 4; ++k) a[k] = _mm512_loadu_ps(v + i + 16 * k);
      const __m512 least = _mm512_min_ps(_mm512_min_ps(a[0], a[1]), _mm512_min_ps(a[2], a[3]));
      if (_mm512_cmp_ps_mask(least, lo, _CMP_LT_OQ))
        for (int k = 0; k < 4; ++k) _mm512_storeu_ps(v + i + 16 * k, _mm512_div_ps(a[k], bv));
      else
        for (int k = 0; k < 4; ++k) _mm512_storeu_ps(v + i + 16 * k, tf_div16_fma(a[k], bv, yv));
    }
    for (; i + 16 <= n; i += 16) {
      const __m512 a = _mm512_loadu_ps(v + i);
      if (_mm512_cmp_ps_mask(a, lo, _CMP_LT_OQ))
        _mm512_storeu_ps(v + i, _mm512_div_ps(a, bv));
      else
        _mm512_storeu_ps(v + i, tf_div16_fma(a, bv, yv));
    }
  }
#endif
  for (int64_t j = i; j < n; ++j) v[j] = v[j] / b;
}

#if defined(__AVX512F__)
// tf_gelu_tanh<float> in two halves, each a loop of its own over the chunk
// (one long chain per element kept the out-of-order window from filling:
// 0.45 ns per element in one loop, 0.39 in two). The reciprocal is rcp14
// and a Newton step instead of a division (the divider alone took 0.21 ns
// per element); it is within an ulp of the quotient, and exact where
// 1 + tanh nears 0 (there 1 + e is 1 + k 2^-23 for small k), so the
// saturation matches the scalar form.
// e = exp(2 u), u = k (x + 0.044715 x^3) in torch's order, taken as 2^y,
// y = (2 k log2 e) times the sum: a power of two splits into round(y)
// (roundscale) and y - round(y), exact, with no Cody-Waite steps, and
// scalef applies round(y) to the polynomial (no bit shift and multiply).
// Rounding y once more moves e by up to |y| 2^-24 relatively, less than the
// rounding of u itself already does, and gelu damps it (e / (1 + e)^2 <= 1/4
// of it reaches the result): against the scalar form, at most 4 units of
// the result's last place, or of |x| 2^-25 where 1 + tanh cancels (torch's
// own grain there); one element in 15 differs, 51 million checked. Three
// operations fewer per 16 values, and four fewer of the multiplies and
// FMAs, whose two pipes bound this loop: 0.180 -> 0.147 ns per element in
// L1 on an EPYC.
static inline __m512 tf_gelu16_exp(__m512 x) {
  const __m512 k2 = _mm512_set1_ps(static_cast<float>(M_SQRT2 * M_2_SQRTPI * 0.5 * 2.0 * M_LOG2E));
  const __m512 cube = _mm512_mul_ps(_mm512_mul_ps(x, x), x);
  const __m512 sum = _mm512_add_ps(x, _mm512_mul_ps(_mm512_set1_ps(0.044715f), cube));
  // [-126, 92] is the scalar form's [-87.34, 64] for 2u in powers of two.
  const __m512 y = tf_clamp16(_mm512_mul_ps(k2, sum), -126.0f, 92.0f);
  const __m512 n = _mm512_roundscale_ps(y, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m512 f = _mm512_sub_ps(y, n);
  // 2^f on |f| <= 1/2: a degree-6 minimax fit, relative error 2e-9 (0.03 of
  // an ulp) before the rounding of its evaluation.
  __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(0x1.41fbbcp-13f), f, _mm512_set1_ps(0x1.5f3e54p-10f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(0x1.3b2d4cp-7f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(0x1.c6aee8p-5f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(0x1.ebfbdcp-3f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(0x1.62e430p-1f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, n);
}
// 0.5 x (1 + fma(2e, 1 / (1 + e), -1)) as x (0.5 + fma(e, 1 / (1 + e),
// -0.5)): every rounding halved exactly (but below the normal range), so
// the same bits in two operations fewer (a doubling, a halving) of the
// ~35 per 16 values: gelu is compute-bound on one core.
static inline __m512 tf_gelu16_finish(__m512 x, __m512 e) {
  const __m512 d = _mm512_add_ps(_mm512_set1_ps(1.0f), e);
  __m512 q = _mm512_rcp14_ps(d);
  q = _mm512_fmadd_ps(q, _mm512_fnmadd_ps(d, q, _mm512_set1_ps(1.0f)), q);
  const __m512 half_t = _mm512_fmsub_ps(e, q, _mm512_set1_ps(0.5f));
  return _mm512_mul_ps(x, _mm512_add_ps(_mm512_set1_ps(0.5f), half_t));
}
// y[i] = tf_gelu_tanh(v[i]) for i < n <= kChunk; y may be v. With
// kStream, y starts a 64-byte line and its whole vectors are streamed
// stores, each issued as soon as it is computed.
template <bool kStream>
static inline void tf_gelu_tanh_to(float* y, const float* v, int64_t n) {
  alignas(64) float e[kChunk];
  const int64_t full = n & ~int64_t{15};
  const __mmask16 tail = tf_tail_mask(n - full);
  for (int64_t i = 0; i < full; i += 16) _mm512_store_ps(e + i, tf_gelu16_exp(_mm512_loadu_ps(v + i)));
  if (tail) _mm512_store_ps(e + full, tf_gelu16_exp(_mm512_maskz_loadu_ps(tail, v + full)));
  for (int64_t i = 0; i < full; i += 16) {
    const __m512 r = tf_gelu16_finish(_mm512_loadu_ps(v + i), _mm512_load_ps(e + i));
    if constexpr (kStream) _mm512_stream_ps(y + i, r);
    else _mm512_storeu_ps(y + i, r);
  }
  if (tail) _mm512_mask_storeu_ps(y + full, tail, tf_gelu16_finish(_mm512_maskz_loadu_ps(tail, v + full), _mm512_load_ps(e + full)));
}
// tf_gelu_tanh_to over x[i * sx]: a unit-stride row is read where it
// lies, another is gathered into L1 first.
template <bool kStream>
static inline void tf_gelu_tanh_strided(float* y, const float* x, int64_t sx, int64_t n) {
  if (sx == 1) {
    tf_gelu_tanh_to<kStream>(y, x, n);
    return;
  }
  alignas(64) float v[kChunk];
  for (int64_t i = 0; i < n; ++i) v[i] = x[i * sx];
  tf_gelu_tanh_to<kStream>(y, v, n);
}
#endif
// y[i] = tf_gelu_tanh(x[i * sx]) for i < n <= kChunk; y may be x when sx
// is 1. The form an elementwise stage calls on an input's row itself (no
// copy into an L1 buffer first) or where the result is the stored value
// (no copy out of one).
static inline void tf_gelu_tanh_from_n(float* y, const float* x, int64_t sx, int64_t n) {
#if defined(__AVX512F__)
  tf_gelu_tanh_strided<false>(y, x, sx, n);
#else
  #pragma omp simd
  for (int64_t i = 0; i < n; ++i) y[i] = tf_gelu_tanh<float>(x[i * sx]);
#endif
}
// v[i] = tf_gelu_tanh(v[i]) for i < n <= kChunk, in place.
static inline void tf_gelu_tanh_n(float* v, int64_t n) { tf_gelu_tanh_from_n(v, v, 1, n); }
// y[i] = tf_gelu_tanh(x[i * sx]) for i < n <= kChunk, streamed past the
// cache: where y starts a line, each line as the routine's last loop
// computes it; elsewhere computed into L1 and then streamed. y may be x
// when sx is 1.
static inline void tf_gelu_tanh_stream_n(float* y, const float* x, int64_t sx, int64_t n) {
#if defined(__AVX512F__)
  if (tf_line_head(y, n) == 0) {
    tf_gelu_tanh_strided<true>(y, x, sx, n);
    return;
  }
#endif
  alignas(64) float v[kChunk];
  tf_gelu_tanh_from_n(v, x, sx, n);
  tf_stream(y, v, n);
}

// v[i] = tf_rf16(v[i]) for i < n, bit for bit: F16C's round trip, NaN lanes
// first made c10's sign | 0x7FC00000 (F16C keeps a NaN's payload).
#if defined(__AVX512F__)
static inline __m512 tf_f16_nan16(__m512 v) {
  const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  const __m512i sign = _mm512_and_si512(_mm512_castps_si512(v), _mm512_set1_epi32(INT32_MIN));
  return _mm512_mask_mov_ps(v, nan, _mm512_castsi512_ps(_mm512_or_si512(sign, _mm512_set1_epi32(0x7FC00000))));
}
#endif
static inline void tf_rf16_n(float* __restrict v, int64_t n) {
  int64_t i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(v + i, _mm512_cvtph_ps(_mm512_cvtps_ph(tf_f16_nan16(_mm512_loadu_ps(v + i)),
                                                            _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)));
#endif
  for (; i < n; ++i) v[i] = tf_rf16(v[i]);
}

// d[i] = the float value of s[i * st] for i < n (exact). f16 by F16C; bf16 is
// a shift GCC vectorizes as well.
template <typename T>
static inline void tf_widen_n(float* __restrict d, const T* __restrict s, int64_t st, int64_t n) {
  int64_t i = 0;
#if defined(__AVX512F__)
  if constexpr (std::is_same_v<T, tf_f16>)
    if (st == 1)
      for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(d + i, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i))));
#endif
  for (; i < n; ++i) d[i] = tf_widen(s[i * st]);
}

// d[i * st] = s[i] stored as T for i < n, bit for bit tf_narrow<T>.
// f16: F16C rounds as c10 does except that it keeps a NaN's payload, so
// NaN lanes become sign | 0x7FC00000 first (which converts to c10's
// sign | 0x7E00). bf16: VCVTNEPS2BF16 (where the CPU has it) rounds as
// c10 except for NaN (payload kept) and float subnormals (flushed to 0):
// a vector holding either takes the integer rounding instead.
#if defined(__AVX512F__)
static inline __m256i tf_bf16_round16(__m512 v) {  // tf_to_bf16 on 16 lanes
  const __m512i u = _mm512_castps_si512(v);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  __m512i r = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(u, lsb), _mm512_set1_epi32(0x7FFF)), 16);
  r = _mm512_mask_mov_epi32(r, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), _mm512_set1_epi32(0x7FC0));
  return _mm512_cvtepi32_epi16(r);
}
#endif
template <typename T>
static inline void tf_narrow_n(T* __restrict d, int64_t st, const float* __restrict s, int64_t n) {
  int64_t i = 0;
#if defined(__AVX512F__)
  if (st == 1) {
    if constexpr (std::is_same_v<T, tf_f16>) {
      for (; i + 16 <= n; i += 16)
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + i),
                            _mm512_cvtps_ph(tf_f16_nan16(_mm512_loadu_ps(s + i)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    } else if constexpr (std::is_same_v<T, tf_bf16>) {
      for (; i + 16 <= n; i += 16) {
        const __m512 v = _mm512_loadu_ps(s + i);
#if defined(__AVX512BF16__) && defined(__AVX512DQ__)
        if (_mm512_fpclass_ps_mask(v, 0xA1) == 0) {  // no QNaN (0x01), SNaN (0x80) or subnormal (0x20)
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + i), (__m256i)_mm512_cvtneps_pbh(v));
          continue;
        }
#endif
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + i), tf_bf16_round16(v));
      }
    }
  }
#endif
  for (; i < n; ++i) d[i * st] = tf_narrow<T>(s[i]);
}

// C = A @ B for one row-major m x n output; A and B strided (elements). Uses
// the BLAS when A and B are row- or column-major matrices, else packs them.
template <typename T>
static void tf_gemm(const tf_rt* rt, int64_t m, int64_t n, int64_t k, const T* a, int64_t as0, int64_t as1,
                    const T* b, int64_t bs0, int64_t bs1, T* c) {
  if (m == 0 || n == 0) return;
  if (k == 0) { std::memset(c, 0, static_cast<size_t>(m * n) * sizeof(T)); return; }
  T* pack_a = nullptr;
  T* pack_b = nullptr;
  int ta = 0, tb = 0;
  int64_t lda, ldb;
  if (as1 == 1 && (m == 1 || as0 >= k)) { lda = m == 1 ? k : as0; }
  else if (as0 == 1 && (k == 1 || as1 >= m)) { ta = 1; lda = k == 1 ? m : as1; }
  else {
    pack_a = static_cast<T*>(std::malloc(static_cast<size_t>(m * k) * sizeof(T)));
    for (int64_t i = 0; i < m; ++i) for (int64_t p = 0; p < k; ++p) pack_a[i * k + p] = a[i * as0 + p * as1];
    a = pack_a; lda = k;
  }
  if (bs1 == 1 && (k == 1 || bs0 >= n)) { ldb = k == 1 ? n : bs0; }
  else if (bs0 == 1 && (n == 1 || bs1 >= k)) { tb = 1; ldb = n == 1 ? k : bs1; }
  else {
    pack_b = static_cast<T*>(std::malloc(static_cast<size_t>(k * n) * sizeof(T)));
    for (int64_t p = 0; p < k; ++p) for (int64_t j = 0; j < n; ++j) pack_b[p * n + j] = b[p * bs0 + j * bs1];
    b = pack_b; ldb = n;
  }
  if constexpr (std::is_same_v<T, float>) rt->sgemm(ta, tb, m, n, k, a, lda, b, ldb, c, n);
  else rt->dgemm(ta, tb, m, n, k, a, lda, b, ldb, c, n);
  std::free(pack_a);
  std::free(pack_b);
}

}  // namespace

// ---- data and conv helpers (Gather / TopK / Conv2D / half MatMul)
// Extern routines the data, conv and MatMul lowerings call (core/compiler/
// lower_data.cc, lower_conv.cc, lower_matmul.cc); semantics mirror
// core/eval/kernels (indexing.cc, conv_norm.cc, nn.cc).
#include <algorithm>

namespace {

// TopK of one line x[i * xs], i < len: the first k entries of torch.topk's
// order (NaN above every number, equal values by lower index first, as the
// evaluator's stable sort), written to v[j * vs] / ix[j * is]. `order` has
// room for len indices. The index tie-break makes the order total, so a
// partial sort yields exactly the stable sort's first k.
template <typename T>
static void tf_topk_row(const T* x, int64_t xs, int64_t len, int64_t k, bool largest, T* v, int64_t vs,
                        int64_t* ix, int64_t is, int64_t* order) {
  for (int64_t i = 0; i < len; ++i) order[i] = i;
  auto greater = [&](int64_t a, int64_t b) { return tf_topk_greater(tf_widen(x[a * xs]), tf_widen(x[b * xs])); };
  auto before = [&](int64_t a, int64_t b) {
    const bool ab = largest ? greater(a, b) : greater(b, a), ba = largest ? greater(b, a) : greater(a, b);
    return ab || (!ba && a < b);
  };
  std::partial_sort(order, order + k, order + len, before);
  for (int64_t j = 0; j < k; ++j) {
    v[j * vs] = x[order[j] * xs];
    ix[j * is] = order[j];
  }
}

// C = A @ B for f16 / bf16 (and any storage T computed in float), as the
// evaluator's MatMul: both operands widened to row-major float matrices,
// one sgemm, each result rounded to T once.
template <typename T>
static void tf_gemm_widened(const tf_rt* rt, int64_t m, int64_t n, int64_t k, const T* a, int64_t as0, int64_t as1,
                            const T* b, int64_t bs0, int64_t bs1, T* c) {
  if (m == 0 || n == 0) return;
  if constexpr (std::is_same_v<T, tf_bf16>) {
    if (rt->matmul_bf16(m, n, k, &a->bits, as0, as1, &b->bits, bs0, bs1, &c->bits)) return;
  }
  float* am = static_cast<float*>(std::malloc(static_cast<size_t>(m * k + k * n + m * n + 1) * sizeof(float)));
  float* bm = am + m * k;
  float* cm = bm + k * n;
  for (int64_t i = 0; i < m; ++i) for (int64_t p = 0; p < k; ++p) am[i * k + p] = tf_widen(a[i * as0 + p * as1]);
  for (int64_t p = 0; p < k; ++p) for (int64_t j = 0; j < n; ++j) bm[p * n + j] = tf_widen(b[p * bs0 + j * bs1]);
  if (k == 0) for (int64_t i = 0; i < m * n; ++i) cm[i] = 0.0f;
  else rt->sgemm(0, 0, m, n, k, am, k, bm, n, cm, n);
  for (int64_t i = 0; i < m * n; ++i) c[i] = tf_narrow<T>(cm[i]);
  std::free(am);
}

// Conv2D through oneDNN (the runtime table's conv2d_f32), with the geometry
// as scalars: true when it computed y, false when the caller's loops must.
static bool tf_conv2d_onednn(const tf_rt* rt, int64_t n, int64_t c, int64_t h, int64_t w, int64_t o, int64_t kh,
                             int64_t kw, int64_t ho, int64_t wo, int64_t groups, int64_t s0, int64_t s1, int64_t p0,
                             int64_t p1, int64_t d0, int64_t d1, const float* x, int64_t xs0, int64_t xs1,
                             int64_t xs2, int64_t xs3, const float* wt, int64_t ws0, int64_t ws1, int64_t ws2,
                             int64_t ws3, bool has_bias, const float* bias, int64_t bs, float* y) {
  const int64_t dims[] = {n, c, h, w, o, kh, kw, ho, wo, groups, s0, s1, p0, p1, d0, d1,
                          xs0, xs1, xs2, xs3, ws0, ws1, ws2, ws3, bs};
  return rt->conv2d_f32(dims, x, wt, has_bias ? bias : nullptr, y);
}

}  // namespace
// ---- end of the data and conv helpers
)TFPRELUDE";

}  // namespace

const char* prelude_source() {
  static const std::string text =
      std::string("// Generated by TileFoundry; do not edit.\n") + scalar_numerics_source() + kBackendPrelude;
  return text.c_str();
}

}  // namespace tf::compiler
