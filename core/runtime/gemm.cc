#include "core/runtime/gemm.h"

#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <cstring>

#include "core/runtime/threads.h"

// The OpenMP runtime oneDNN threads with (libgomp, linked for this: core is
// not built with -fopenmp). Declared here rather than through <omp.h>, which
// a clang build does not always have.
extern "C" int omp_get_max_threads();
extern "C" void omp_set_num_threads(int);

namespace tf::runtime {

namespace {

CBLAS_TRANSPOSE trans(int t) { return t ? CblasTrans : CblasNoTrans; }
blasint ld(int64_t v) { return static_cast<blasint>(std::max<int64_t>(v, 1)); }

// One tile of C: R rows by W columns, accumulated in registers over rows
// [p0, p1) of B (W is a constant, so the loops unroll into vector
// registers), starting from zero when p0 == 0 and from C's values otherwise.
// Inlined into each target clone below. Every element of C is one chain of
// FMAs in k order, whatever the tile shape or the split of k, so neither
// changes a result.
template <int R, int W>
[[gnu::always_inline]] inline void tile_rows(int64_t p0, int64_t p1, const float* __restrict a, int64_t lda,
                                             const float* __restrict b, int64_t ldb, float* __restrict c,
                                             int64_t ldc) {
  float acc[R][W];
  for (int r = 0; r < R; ++r) {
#pragma omp simd
    for (int q = 0; q < W; ++q) acc[r][q] = p0 == 0 ? 0.0f : c[r * ldc + q];
  }
  for (int64_t p = p0; p < p1; ++p) {
    const float* __restrict br = b + p * ldb;
    for (int r = 0; r < R; ++r) {
      const float av = a[r * lda + p];
#pragma omp simd
      for (int q = 0; q < W; ++q) acc[r][q] = __builtin_fmaf(av, br[q], acc[r][q]);
    }
  }
  for (int r = 0; r < R; ++r) {
#pragma omp simd
    for (int q = 0; q < W; ++q) c[r * ldc + q] = acc[r][q];
  }
}

// A tile over all of k.
template <int R, int W>
[[gnu::always_inline]] inline void tile(int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
                                        float* c, int64_t ldc) {
  tile_rows<R, W>(0, k, a, lda, b, ldb, c, ldc);
}

// R rows of C, all n columns: full tiles, then the remainder as tiles of 16,
// 8, 4, 2 and 1 columns (a variable-width tile would keep its accumulators
// in memory, 2-3x slower). Blocks of one or two rows take 64 columns per
// tile: 32 would leave too few independent FMA chains to hide the latency.
template <int R>
[[gnu::always_inline]] inline void row_block(int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                                             int64_t ldb, float* c, int64_t ldc) {
  constexpr int kW = R <= 2 ? 64 : 32;
  int64_t j = 0;
  for (; n - j >= kW; j += kW) tile<R, kW>(k, a, lda, b + j, ldb, c + j, ldc);
  if constexpr (kW > 32) {
    if (n - j >= 32) { tile<R, 32>(k, a, lda, b + j, ldb, c + j, ldc); j += 32; }
  }
  if (n - j >= 16) { tile<R, 16>(k, a, lda, b + j, ldb, c + j, ldc); j += 16; }
  if (n - j >= 8) { tile<R, 8>(k, a, lda, b + j, ldb, c + j, ldc); j += 8; }
  if (n - j >= 4) { tile<R, 4>(k, a, lda, b + j, ldb, c + j, ldc); j += 4; }
  if (n - j >= 2) { tile<R, 2>(k, a, lda, b + j, ldb, c + j, ldc); j += 2; }
  if (n - j >= 1) tile<R, 1>(k, a, lda, b + j, ldb, c + j, ldc);
}

[[gnu::always_inline]] inline void rows(int64_t n_rows, int64_t n, int64_t k, const float* a, int64_t lda,
                                        const float* b, int64_t ldb, float* c, int64_t ldc) {
  switch (n_rows) {
    case 8: return row_block<8>(n, k, a, lda, b, ldb, c, ldc);
    case 7: return row_block<7>(n, k, a, lda, b, ldb, c, ldc);
    case 6: return row_block<6>(n, k, a, lda, b, ldb, c, ldc);
    case 5: return row_block<5>(n, k, a, lda, b, ldb, c, ldc);
    case 4: return row_block<4>(n, k, a, lda, b, ldb, c, ldc);
    case 3: return row_block<3>(n, k, a, lda, b, ldb, c, ldc);
    case 2: return row_block<2>(n, k, a, lda, b, ldb, c, ldc);
    default: return row_block<1>(n, k, a, lda, b, ldb, c, ldc);
  }
}

// Not under ThreadSanitizer: the clones' ifunc resolver is instrumented, and
// the dynamic loader runs it before the TSan runtime exists (a segfault
// before main in every TSan test binary).
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TF_GEMM_NO_CLONES
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define TF_GEMM_NO_CLONES
#endif
#if defined(__x86_64__) && !defined(TF_GEMM_NO_CLONES)
#define TF_GEMM_CLONES [[gnu::target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")]]
#else
#define TF_GEMM_CLONES
#endif

// Row tiles run in order on the calling thread: the products this serves
// are small, and a deterministic single-thread order keeps the result
// independent of the thread count.
TF_GEMM_CLONES
void small_sgemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
                 float* c, int64_t ldc) {
  for (int64_t i = 0; i < m; i += 8) rows(std::min<int64_t>(8, m - i), n, k, a + i * lda, lda, b, ldb, c + i * ldc, ldc);
}

// Decode-shaped products (a few rows of A against a large B, as a model's
// token step multiplies its activations by a weight) are bound by reading B
// once. The tiles above walk B a column strip at a time down all k rows: 4096
// rows of 128 bytes, each on another page, which the prefetcher and the TLB
// serve badly (8 x 4096 x 4096 ran at half the bandwidth bound). Here B is
// read kStreamRows rows at a time, each row front to back (a few sequential
// streams), and the R x W tile of C it updates goes through registers from
// L1/L2 between blocks (tile_rows over p0..p1). Each element of C is still
// one FMA chain in k order, so results equal the tiles' bit for bit.
constexpr int64_t kStreamRows = 32;

// All of C for m = R rows: 16 accumulator registers per strip (W = 256 / R
// floats, at least 16), the columns past the last full strip one at a time.
template <int R>
[[gnu::always_inline]] inline void stream_rows(int64_t n, int64_t k, const float* a, int64_t lda,
                                               const float* b, int64_t ldb, float* c, int64_t ldc) {
  constexpr int W = 256 / R >= 16 ? 256 / R : 16;
  for (int64_t p0 = 0; p0 < k; p0 += kStreamRows) {
    const int64_t p1 = std::min(k, p0 + kStreamRows);
    int64_t j = 0;
    for (; n - j >= W; j += W) tile_rows<R, W>(p0, p1, a, lda, b + j, ldb, c + j, ldc);
    for (; j < n; ++j) tile_rows<R, 1>(p0, p1, a, lda, b + j, ldb, c + j, ldc);
  }
}

TF_GEMM_CLONES
void stream_sgemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
                  float* c, int64_t ldc) {
  switch (m) {
#define TF_STREAM_CASE(R) \
  case R: return stream_rows<R>(n, k, a, lda, b, ldb, c, ldc);
    TF_STREAM_CASE(1) TF_STREAM_CASE(2) TF_STREAM_CASE(3) TF_STREAM_CASE(4)
    TF_STREAM_CASE(5) TF_STREAM_CASE(6) TF_STREAM_CASE(7) TF_STREAM_CASE(8)
    TF_STREAM_CASE(9) TF_STREAM_CASE(10) TF_STREAM_CASE(11) TF_STREAM_CASE(12)
    TF_STREAM_CASE(13) TF_STREAM_CASE(14) TF_STREAM_CASE(15) TF_STREAM_CASE(16)
#undef TF_STREAM_CASE
  }
}

// The streaming loop serves one thread; with more, oneDNN splits the columns
// across the team (measured at 2 threads: 8 x 4096 x 4096 114 GFLOP/s
// against torch.mm's 85).
bool stream_gemm_fits(int ta, int tb, int64_t m, int64_t n) {
  const int threads = num_threads() > 0 ? num_threads() : omp_get_max_threads();
  return !ta && !tb && m <= kStreamGemmMaxRows && n >= 256 && threads == 1;
}

// beta = 0 semantics for k == 0: C is all zeros (C may hold garbage, even
// NaN, so it is written, never scaled).
template <typename T>
void zero_c(int64_t m, int64_t n, T* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) std::memset(c + i * ldc, 0, static_cast<size_t>(n) * sizeof(T));
}

// The small loop runs single-threaded with no call overhead: it wins while
// B stays in L2 and the product is too small for threads or a library's
// packing to pay off.
bool small_gemm_fits(int ta, int tb, int64_t m, int64_t n, int64_t k) {
  return !ta && !tb && k * n <= kSmallGemmB && m * n * k <= kSmallGemmMacs;
}

// oneDNN's sgemm: row-major like ours, and it dispatches on CPUID features
// rather than on a table of CPU models (Debian's OpenBLAS 0.3.21 falls back
// to an SSE3 kernel on CPUs newer than it knows). It threads with the
// OpenMP runtime (GNU's in Debian's build), on the host's thread setting
// (runtime/threads.h) as compiled kernels are, so that the evaluator and
// compiled code split a product the same way.
// False when it refuses the arguments (it checks leading dimensions
// strictly): the caller then uses the BLAS.
bool onednn_sgemm(int ta, int tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                  int64_t ldb, float* c, int64_t ldc) {
  const OmpTeamScope team(omp_get_max_threads, omp_set_num_threads);
  return dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc) == dnnl_success;
}

}  // namespace

void sgemm(int ta, int tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
           int64_t ldb, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) return zero_c(m, n, c, ldc);
  if (small_gemm_fits(ta, tb, m, n, k)) return small_sgemm(m, n, k, a, lda, b, ldb, c, ldc);
  if (stream_gemm_fits(ta, tb, m, n)) return stream_sgemm(m, n, k, a, lda, b, ldb, c, ldc);
  if (onednn_sgemm(ta, tb, m, n, k, a, lda, b, ldb, c, ldc)) return;
  cblas_sgemm(CblasRowMajor, trans(ta), trans(tb), static_cast<blasint>(m), static_cast<blasint>(n),
              static_cast<blasint>(k), 1.0f, a, ld(lda), b, ld(ldb), 0.0f, c, ld(ldc));
}

// oneDNN has no f64 GEMM: f64 stays on the BLAS.
void dgemm(int ta, int tb, int64_t m, int64_t n, int64_t k, const double* a, int64_t lda, const double* b,
           int64_t ldb, double* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) return zero_c(m, n, c, ldc);
  cblas_dgemm(CblasRowMajor, trans(ta), trans(tb), static_cast<blasint>(m), static_cast<blasint>(n),
              static_cast<blasint>(k), 1.0, a, ld(lda), b, ld(ldb), 0.0, c, ld(ldc));
}

}  // namespace tf::runtime
