#include "core/runtime/gemm.h"

#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <cstring>

#include "core/runtime/sanitizers.h"
#include "core/runtime/threads.h"

// The OpenMP runtime oneDNN threads with (libgomp, linked for this: core is
// not built with -fopenmp). Declared here rather than through <omp.h>, which
// a clang build does not always have.
extern "C" int omp_get_max_threads();
extern "C" void omp_set_num_threads(int);
extern "C" int omp_get_thread_num();
extern "C" int omp_get_num_threads();
// libgomp's entry for a parallel region (what `#pragma omp parallel` compiles
// to under GCC): fn(data) on each of num_threads team threads, the caller one
// of them. Called directly so that core needs no -fopenmp, whose clang form
// would want LLVM's runtime instead of the libgomp oneDNN uses.
extern "C" void GOMP_parallel(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags);

namespace tf::runtime {

namespace {

CBLAS_TRANSPOSE trans(int t) { return t ? CblasTrans : CblasNoTrans; }
blasint ld(int64_t v) { return static_cast<blasint>(std::max<int64_t>(v, 1)); }

// One tile of C: R rows by W columns, accumulated in registers over rows
// [p0, p1) of B (W is a constant, so the loops unroll into vector
// registers), starting from zero when p0 == 0 and from C's values otherwise.
// Inlined into each target clone below. Every element of C is one chain of
// FMAs in k order, whatever the tile shape or the split of k, so neither
// changes a result. With kPrefetch (the decode loop below), each row of B
// is prefetched into L1 kStreamPrefetchStrips tiles ahead, so that the
// block's rows, each read a tile's width at a time, do not wait on the
// hardware prefetcher: on an AMD EPYC (Zen 5), K = N = 4096, GFLOP/s
// without / with, one thread: M = 1 14.4 / 17.1, M = 8 55-57 / 92,
// M = 16 93-95 / 127-129 (oneDNN 82-85 and 124-129); two threads M = 8
// 93-110 / 147-182, M = 16 148-154 / 205-208, M = 1 22.6 / 21.0. 1 and 16
// tiles ahead were slower than 4 at M = 8 and 16.
constexpr int64_t kStreamPrefetchStrips = 4;
template <int R, int W, bool kPrefetch = false>
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
    if constexpr (kPrefetch)
      for (int q = 0; q < W; q += 16) __builtin_prefetch(br + kStreamPrefetchStrips * W + q, 0, 3);
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

// Under ThreadSanitizer:
//  * no clones: their ifunc resolver is instrumented, and the dynamic loader
//    runs it before the TSan runtime exists (a segfault before main in every
//    TSan test binary);
//  * the streaming loop stays on the calling thread: libgomp is not
//    instrumented, so TSan cannot see the barrier after which the caller
//    reads what the team wrote, and would report it as a race.
#if defined(TF_UNDER_TSAN)
#define TF_GEMM_NO_CLONES
constexpr bool kSerialStreaming = true;
#else
constexpr bool kSerialStreaming = false;
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
// read a block of rows at a time, each row front to back (a few sequential
// streams), and the R x W tile of C it updates goes through registers from
// L1/L2 between blocks (tile_rows over p0..p1). Each element of C is still
// one FMA chain in k order, so results equal the tiles' bit for bit.
//
// A block is about kStreamBlockBytes of one thread's columns, between
// kStreamMinRows and kStreamMaxRows rows: measured at K = N = 4096, 16 rows
// on one thread ran M = 8 and M = 16 in 0.79x and 0.82x the time of 32 rows,
// 32 rows of half the columns on each of two threads were as fast as 16
// (within 6%), and 64 rows ran 1.2-1.4x slower than 32 (more concurrent
// streams than the prefetcher follows).
constexpr int64_t kStreamBlockBytes = int64_t{256} << 10;
constexpr int64_t kStreamMinRows = 8;
constexpr int64_t kStreamMaxRows = 32;
// Rows of C per pass over a block of B: 16 accumulator registers hold an
// 8 x 32 tile. More rows would narrow the strip to 16 columns, one load of B
// per 16 broadcasts of A (M = 16 in one pass ran no faster than oneDNN); a
// second pass rereads the block from L2.
constexpr int64_t kStreamPassRows = 8;
// Columns of C per strip for the widest pass, and the fewest strips worth a
// thread of their own.
constexpr int64_t kStreamStrip = 32;
constexpr int64_t kStreamStripsPerThread = 8;
// Rows of W (columns of C) worth a thread of their own in the dot loop.
constexpr int64_t kDotRowsPerThread = 128;

// Columns [j0, j1) of R rows of C over rows [p0, p1) of B: strips of
// W = 256 / R floats (at least 16), then the remaining columns one at a time.
template <int R>
[[gnu::always_inline]] inline void stream_pass(int64_t p0, int64_t p1, int64_t j0, int64_t j1, const float* a,
                                               int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc) {
  constexpr int W = 256 / R >= 16 ? 256 / R : 16;
  int64_t j = j0;
  for (; j1 - j >= W; j += W) tile_rows<R, W, true>(p0, p1, a, lda, b + j, ldb, c + j, ldc);
  for (; j < j1; ++j) tile_rows<R, 1>(p0, p1, a, lda, b + j, ldb, c + j, ldc);
}

// Columns [j0, j1) of all m rows of C: B block by block, each block once per
// pass of up to kStreamPassRows rows.
TF_GEMM_CLONES
void stream_columns(int64_t m, int64_t j0, int64_t j1, int64_t k, const float* a, int64_t lda, const float* b,
                    int64_t ldb, float* c, int64_t ldc) {
  const int64_t row_bytes = std::max<int64_t>(1, (j1 - j0) * int64_t{sizeof(float)});
  const int64_t block = std::clamp(kStreamBlockBytes / row_bytes, kStreamMinRows, kStreamMaxRows);
  for (int64_t p0 = 0; p0 < k; p0 += block) {
    const int64_t p1 = std::min(k, p0 + block);
    for (int64_t i = 0; i < m; i += kStreamPassRows) {
      const float* ai = a + i * lda;
      float* ci = c + i * ldc;
      switch (std::min(kStreamPassRows, m - i)) {
#define TF_STREAM_CASE(R) \
  case R: stream_pass<R>(p0, p1, j0, j1, ai, lda, b, ldb, ci, ldc); break;
        TF_STREAM_CASE(1) TF_STREAM_CASE(2) TF_STREAM_CASE(3) TF_STREAM_CASE(4)
        TF_STREAM_CASE(5) TF_STREAM_CASE(6) TF_STREAM_CASE(7) TF_STREAM_CASE(8)
#undef TF_STREAM_CASE
      }
    }
  }
}

struct StreamProduct {
  int64_t m, n, k;
  const float* a;
  int64_t lda;
  const float* b;
  int64_t ldb;
  float* c;
  int64_t ldc;
};

// One thread's share of a team: a contiguous range of whole strips, so each
// thread streams its own columns of every row of B.
void stream_share(void* data) {
  const auto& p = *static_cast<const StreamProduct*>(data);
  const int64_t t = omp_get_thread_num(), team = omp_get_num_threads();
  const int64_t strips = (p.n + kStreamStrip - 1) / kStreamStrip;
  const int64_t s0 = strips * t / team, s1 = strips * (t + 1) / team;
  stream_columns(p.m, s0 * kStreamStrip, std::min(p.n, s1 * kStreamStrip), p.k, p.a, p.lda, p.b, p.ldb, p.c,
                 p.ldc);
}

// The columns are split across the host's threads (GNU OpenMP's team, which
// oneDNN and compiled kernels use too). A split never changes a result: each
// element is the same chain whichever thread computes it.
void stream_sgemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
                  float* c, int64_t ldc) {
  StreamProduct p{m, n, k, a, lda, b, ldb, c, ldc};
  const int64_t threads = num_threads() > 0 ? num_threads() : omp_get_max_threads();
  const int64_t strips = (n + kStreamStrip - 1) / kStreamStrip;
  const int64_t team = std::min(threads, std::max<int64_t>(1, strips / kStreamStripsPerThread));
  if (team <= 1 || kSerialStreaming) return stream_columns(m, 0, n, k, a, lda, b, ldb, c, ldc);
  GOMP_parallel(&stream_share, &p, static_cast<unsigned>(team), 0);
}

// ---- Decode shapes against a transposed B: dot products of rows

// A linear layer's `x @ W.T` hands the GEMM B = W^T, W row-major [n, k], so
// each element of C is the dot product of a row of A with a row of W. W is
// read once, kDotWRows rows at a time, each front to back and prefetched
// kDotPrefetch floats ahead; the rows of A meet them kDotPassRows at a time
// (the group of W rows stays in L2 between passes). Each (row of A, row of
// W) pair accumulates 16 lanes of partial sums over k in order, the lanes
// are summed pairwise in a fixed order, then the k % 16 tail is added in
// order: a fixed sequence per element whichever thread computes it.
// Measured at 8 x 4096 x 4096 (ms, one / two threads): oneDNN's sgemm, which
// served this before, 8.0 / 4.9 (eager torch 7-8 / 6); rows of A x rows of
// W per pass 8 x 2: 4.7 / 2.8, 4 x 4: 4.2 / 1.9, 2 x 8: 4.5 / 2.2; prefetch
// 256 / 1024 / 4096 floats ahead (8 x 2): 5.4 / 4.3 / 4.7 on one thread,
// none 6.5.
constexpr int kDotLanes = 16;
constexpr int kDotPrefetch = 1024;
constexpr int64_t kDotPassRows = 4;
constexpr int kDotWRows = 4;

// C[r, j] for R rows of A and J rows of W (c points at C[0, 0] of the tile).
// FMAs written out per lane (as tile_rows), so every clone computes the
// same sequence.
template <int R, int J>
[[gnu::always_inline]] inline void dot_tile(int64_t k, const float* __restrict a, int64_t lda,
                                            const float* __restrict w, int64_t ldw, float* __restrict c,
                                            int64_t ldc) {
  float acc[R][J][kDotLanes] = {};
  int64_t p = 0;
  for (; p + kDotLanes <= k; p += kDotLanes) {
    for (int r = 0; r < R; ++r) {
      const float* ar = a + r * lda + p;
      for (int j = 0; j < J; ++j) {
        const float* wr = w + j * ldw + p;
        if (r == 0) __builtin_prefetch(wr + kDotPrefetch, 0, 3);
#pragma omp simd
        for (int q = 0; q < kDotLanes; ++q) acc[r][j][q] = __builtin_fmaf(ar[q], wr[q], acc[r][j][q]);
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < J; ++j) {
      float* h = acc[r][j];
      for (int width = kDotLanes / 2; width >= 1; width /= 2)
        for (int q = 0; q < width; ++q) h[q] += h[q + width];
      float sum = h[0];
      for (int64_t q = p; q < k; ++q) sum = __builtin_fmaf(a[r * lda + q], w[j * ldw + q], sum);
      c[r * ldc + j] = sum;
    }
}

template <int J>
[[gnu::always_inline]] inline void dot_rows_of_a(int64_t m, int64_t k, const float* a, int64_t lda, const float* w,
                                                 int64_t ldw, float* c, int64_t ldc) {
  for (int64_t i = 0; i < m; i += kDotPassRows) {
    const float* ai = a + i * lda;
    float* ci = c + i * ldc;
    switch (std::min(kDotPassRows, m - i)) {
#define TF_DOT_CASE(R) \
  case R: dot_tile<R, J>(k, ai, lda, w, ldw, ci, ldc); break;
      TF_DOT_CASE(1) TF_DOT_CASE(2) TF_DOT_CASE(3) TF_DOT_CASE(4)
      TF_DOT_CASE(5) TF_DOT_CASE(6) TF_DOT_CASE(7) TF_DOT_CASE(8)
#undef TF_DOT_CASE
    }
  }
}

// Columns [j0, j1) of C: rows j0..j1 of W, kDotWRows at a time.
TF_GEMM_CLONES
void dot_columns(int64_t m, int64_t j0, int64_t j1, int64_t k, const float* a, int64_t lda, const float* w,
                 int64_t ldw, float* c, int64_t ldc) {
  int64_t j = j0;
  for (; j + kDotWRows <= j1; j += kDotWRows) dot_rows_of_a<kDotWRows>(m, k, a, lda, w + j * ldw, ldw, c + j, ldc);
  for (; j < j1; ++j) dot_rows_of_a<1>(m, k, a, lda, w + j * ldw, ldw, c + j, ldc);
}

void dot_share(void* data) {
  const auto& p = *static_cast<const StreamProduct*>(data);
  const int64_t t = omp_get_thread_num(), team = omp_get_num_threads();
  const int64_t groups = (p.n + kDotWRows - 1) / kDotWRows;
  const int64_t s0 = groups * t / team, s1 = groups * (t + 1) / team;
  dot_columns(p.m, kDotWRows * s0, std::min(p.n, kDotWRows * s1), p.k, p.a, p.lda, p.b, p.ldb, p.c, p.ldc);
}

// The rows of W are split across the host's threads in groups of
// kDotWRows; a split never changes a result.
void dot_sgemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* w, int64_t ldw, float* c,
               int64_t ldc) {
  StreamProduct p{m, n, k, a, lda, w, ldw, c, ldc};
  const int64_t threads = num_threads() > 0 ? num_threads() : omp_get_max_threads();
  const int64_t team = std::min(threads, std::max<int64_t>(1, n / kDotRowsPerThread));
  if (team <= 1 || kSerialStreaming) return dot_columns(m, 0, n, k, a, lda, w, ldw, c, ldc);
  GOMP_parallel(&dot_share, &p, static_cast<unsigned>(team), 0);
}

// Decode shapes against a transposed B with rows long enough for the lanes.
bool dot_gemm_fits(int ta, int tb, int64_t m, int64_t n, int64_t k) {
  return !ta && tb && m <= kStreamGemmMaxRows && n >= 256 && k >= 64;
}

// Decode shapes: a few rows of A, B not transposed and wide enough for whole
// strips. Against oneDNN's sgemm at K = N = 4096 (docs/decisions.md): as
// fast at M = 1, 0.6-0.8x its time from M = 2 up on two threads, 0.5-0.6x
// at M = 12-16 on one.
bool stream_gemm_fits(int ta, int tb, int64_t m, int64_t n) {
  return !ta && !tb && m <= kStreamGemmMaxRows && n >= 256;
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
  if (dot_gemm_fits(ta, tb, m, n, k)) return dot_sgemm(m, n, k, a, lda, b, ldb, c, ldc);
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
