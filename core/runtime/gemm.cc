#include "core/runtime/gemm.h"

#include <cblas.h>

#include <algorithm>

namespace tf::runtime {

namespace {

CBLAS_TRANSPOSE trans(int t) { return t ? CblasTrans : CblasNoTrans; }
blasint ld(int64_t v) { return static_cast<blasint>(std::max<int64_t>(v, 1)); }

// One tile of C: R rows by 32 columns (W < 32 for the last column tile),
// accumulated in registers over k. Inlined into each target clone below.
template <int R, bool kFull>
[[gnu::always_inline]] inline void tile(int64_t k, int64_t w, const float* __restrict a, int64_t lda,
                                        const float* __restrict b, int64_t ldb, float* __restrict c, int64_t ldc) {
  float acc[R][32] = {};
  const int64_t wq = kFull ? 32 : w;  // a constant for full tiles: the loops unroll into registers
  for (int64_t p = 0; p < k; ++p) {
    const float* __restrict br = b + p * ldb;
    for (int r = 0; r < R; ++r) {
      const float av = a[r * lda + p];
#pragma omp simd
      for (int64_t q = 0; q < wq; ++q) acc[r][q] = __builtin_fmaf(av, br[q], acc[r][q]);
    }
  }
  for (int r = 0; r < R; ++r) {
#pragma omp simd
    for (int64_t q = 0; q < wq; ++q) c[r * ldc + q] = acc[r][q];
  }
}

template <bool kFull>
[[gnu::always_inline]] inline void rows(int64_t n_rows, int64_t k, int64_t w, const float* a, int64_t lda,
                                        const float* b, int64_t ldb, float* c, int64_t ldc) {
  switch (n_rows) {
    case 8: return tile<8, kFull>(k, w, a, lda, b, ldb, c, ldc);
    case 7: return tile<7, kFull>(k, w, a, lda, b, ldb, c, ldc);
    case 6: return tile<6, kFull>(k, w, a, lda, b, ldb, c, ldc);
    case 5: return tile<5, kFull>(k, w, a, lda, b, ldb, c, ldc);
    case 4: return tile<4, kFull>(k, w, a, lda, b, ldb, c, ldc);
    case 3: return tile<3, kFull>(k, w, a, lda, b, ldb, c, ldc);
    case 2: return tile<2, kFull>(k, w, a, lda, b, ldb, c, ldc);
    default: return tile<1, kFull>(k, w, a, lda, b, ldb, c, ldc);
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
  for (int64_t i = 0; i < m; i += 8) {
    const int64_t r = std::min<int64_t>(8, m - i);
    for (int64_t j = 0; j < n; j += 32) {
      if (n - j >= 32) rows<true>(r, k, 32, a + i * lda, lda, b + j, ldb, c + i * ldc + j, ldc);
      else rows<false>(r, k, n - j, a + i * lda, lda, b + j, ldb, c + i * ldc + j, ldc);
    }
  }
}

}  // namespace

void sgemm(int ta, int tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
           int64_t ldb, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (!ta && !tb && k * n <= kSmallGemmB) return small_sgemm(m, n, k, a, lda, b, ldb, c, ldc);
  cblas_sgemm(CblasRowMajor, trans(ta), trans(tb), static_cast<blasint>(m), static_cast<blasint>(n),
              static_cast<blasint>(k), 1.0f, a, ld(lda), b, ld(ldb), 0.0f, c, ld(ldc));
}

void dgemm(int ta, int tb, int64_t m, int64_t n, int64_t k, const double* a, int64_t lda, const double* b,
           int64_t ldb, double* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  cblas_dgemm(CblasRowMajor, trans(ta), trans(tb), static_cast<blasint>(m), static_cast<blasint>(n),
              static_cast<blasint>(k), 1.0, a, ld(lda), b, ld(ldb), 0.0, c, ld(ldc));
}

}  // namespace tf::runtime
