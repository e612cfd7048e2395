// runtime::sgemm / dgemm against a naive double-precision product, on a shape
// of every path the dispatcher takes (core/runtime/gemm.h): the small loop,
// the streaming and dot-product loops of decode shapes, oneDNN (large B,
// many multiply-adds, transposed operands), the BLAS (f64), and k == 0. Leading dimensions are padded so that a path that ignores one,
// or writes past a row of C, fails.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "core/runtime/gemm.h"
#include "core/runtime/threads.h"

extern "C" int omp_get_max_threads();
extern "C" void omp_set_num_threads(int);

namespace tf::runtime {
namespace {

struct Case {
  int ta, tb;
  int64_t m, n, k;
};

std::string name(const Case& c) {
  return std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k) + " ta=" +
         std::to_string(c.ta) + " tb=" + std::to_string(c.tb);
}

// Stored A is m x k (k x m when transposed), B k x n (n x k); each row padded.
template <typename T>
void check(const Case& c) {
  constexpr int64_t kPad = 3;
  const int64_t a_rows = c.ta ? c.k : c.m, a_cols = c.ta ? c.m : c.k;
  const int64_t b_rows = c.tb ? c.n : c.k, b_cols = c.tb ? c.k : c.n;
  const int64_t lda = a_cols + kPad, ldb = b_cols + kPad, ldc = c.n + kPad;
  std::mt19937 rng(static_cast<unsigned>(c.m * 7919 + c.n * 131 + c.k + c.ta * 2 + c.tb));
  std::uniform_real_distribution<T> dist(-1, 1);
  std::vector<T> a(a_rows * lda), b(b_rows * ldb);
  for (auto& v : a) v = dist(rng);
  for (auto& v : b) v = dist(rng);
  // C starts as NaN: beta = 0 must overwrite it, never scale it.
  const T sentinel = std::numeric_limits<T>::quiet_NaN();
  std::vector<T> out(c.m * ldc, sentinel);
  if constexpr (std::is_same_v<T, float>)
    sgemm(c.ta, c.tb, c.m, c.n, c.k, a.data(), lda, b.data(), ldb, out.data(), ldc);
  else
    dgemm(c.ta, c.tb, c.m, c.n, c.k, a.data(), lda, b.data(), ldb, out.data(), ldc);
  const double eps = std::numeric_limits<T>::epsilon();
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < c.n; ++j) {
      double want = 0, mag = 0;
      for (int64_t p = 0; p < c.k; ++p) {
        const double x = c.ta ? a[p * lda + i] : a[i * lda + p];
        const double y = c.tb ? b[j * ldb + p] : b[p * ldb + j];
        want += x * y;
        mag += std::fabs(x * y);
      }
      // Any summation order is within k * eps * sum |x * y| of the exact sum.
      ASSERT_NEAR(out[i * ldc + j], want, 2 * (c.k + 1) * eps * mag + 1e-30) << name(c) << " at " << i << "," << j;
    }
    for (int64_t j = c.n; j < ldc; ++j)
      ASSERT_TRUE(std::isnan(out[i * ldc + j])) << name(c) << ": wrote C's padding in row " << i;
  }
}

// count floats uniform in [-1, 1).
std::vector<float> uniform(int64_t count, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> v(static_cast<size_t>(count));
  for (float& x : v) x = dist(rng);
  return v;
}

const std::vector<Case> kCases = {
    {0, 0, 7, 33, 5},      // small loop: row and column remainders
    {0, 0, 64, 64, 64},    // small loop: full tiles
    {0, 0, 1, 300, 700},   // k * n over the small loop's bound (a decode-like row)
    {0, 0, 16, 512, 512},  // decode-like, several rows
    {0, 0, 65, 64, 64},    // just over the small loop's multiply-add bound
    {0, 0, 130, 130, 130},
    {1, 0, 33, 17, 40},    // transposed A
    {0, 1, 9, 20, 31},     // transposed B
    {0, 1, 8, 300, 700},   // transposed B, decode-like: the dot-product loop
    {1, 1, 70, 65, 90},    // both transposed
    {0, 0, 5, 6, 0},       // k == 0: C is zero
    {1, 1, 5, 6, 0},
};

TEST(Gemm, SgemmMatchesReferenceOnEveryPath) {
  for (const Case& c : kCases) check<float>(c);
}

// The small loop's tiles: blocks of 1-8 rows, 64- or 32-column tiles and
// every remainder width (16, 8, 4, 2, 1 and their sums).
TEST(Gemm, SmallLoopEveryRowAndColumnRemainder) {
  for (int64_t m : {1, 2, 3, 7, 8, 9, 17})
    for (int64_t n : {1, 2, 3, 5, 7, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 127})
      for (int64_t k : {1, 37}) check<float>({0, 0, m, n, k});
}

// The decode loops (m <= kStreamGemmMaxRows) on one thread and on a team:
// for every m and each n and k, sgemm(0, tb) of random A (m x k) and B
// (k x n; n x k with tb) within the reference bound (check), and each
// element equal bit for bit to want(row i of A, B, j, n, k): the sequence
// the loop promises whichever thread computes the element.
using Sequence = std::function<float(const float* a_row, const float* b, int64_t j, int64_t n, int64_t k)>;
void expect_decode_sequence(int tb, std::initializer_list<int64_t> ns, std::initializer_list<int64_t> ks,
                            const Sequence& want) {
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    for (int64_t m = 1; m <= kStreamGemmMaxRows; ++m)
      for (int64_t n : ns)
        for (int64_t k : ks) {
          const Case c{0, tb, m, n, k};
          check<float>(c);
          std::mt19937 rng(static_cast<unsigned>(m * 31 + n * 7 + k));
          const std::vector<float> a = uniform(m * k, rng), b = uniform(k * n, rng);
          std::vector<float> out(m * n);
          sgemm(0, tb, m, n, k, a.data(), k, b.data(), tb ? k : n, out.data(), n);
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j)
              ASSERT_EQ(out[i * n + j], want(a.data() + i * k, b.data(), j, n, k))
                  << name(c) << " on " << threads << " threads at " << i << "," << j;
        }
  }
  set_num_threads(0);
}

// The streaming loop of decode shapes (m <= kStreamGemmMaxRows, n >= 256):
// every row count (one pass of rows and two), strips with and without a
// column remainder, k below, at and past a block of B rows (32 rows for the
// narrow shapes, 16 at n = 4096 on one thread), on one thread and on a team
// that splits the columns (n = 1100: two shares of whole strips and a
// ragged end). Each element of C is one FMA chain in k order
// whichever thread computes it, so it equals that chain bit for bit (the
// check above only bounds the error).
TEST(Gemm, StreamingLoopIsTheFmaChainInKOrderOnAnyTeam) {
  expect_decode_sequence(0, {256, 300, 513, 1100, 4096}, {1, 15, 16, 17, 31, 32, 33, 100},
                         [](const float* a, const float* b, int64_t j, int64_t n, int64_t k) {
                           float want = 0.0f;
                           for (int64_t p = 0; p < k; ++p) want = std::fmaf(a[p], b[p * n + j], want);
                           return want;
                         });
}

// The dot-product loop of decode shapes against a transposed B (m <=
// kStreamGemmMaxRows, n >= 256, k >= 64: a linear layer's x @ W.T): every
// row count (passes of four rows and their remainders), W's rows in groups
// with and without a remainder, k with and without a tail past the 16
// lanes, on one thread and on a team. Each element is 16 lane sums over k
// in order, summed pairwise, then the tail in order, whichever thread
// computes it: checked bit for bit against that sequence.
TEST(Gemm, DotLoopIsOneSequencePerElementOnAnyTeam) {
  expect_decode_sequence(1, {256, 258, 1100}, {64, 65, 100, 257},
                         [](const float* a, const float* w, int64_t j, int64_t, int64_t k) {
                           const float* wj = w + j * k;
                           float lanes[16] = {};
                           int64_t p = 0;
                           for (; p + 16 <= k; p += 16)
                             for (int q = 0; q < 16; ++q) lanes[q] = std::fmaf(a[p + q], wj[p + q], lanes[q]);
                           for (int width = 8; width >= 1; width /= 2)
                             for (int q = 0; q < width; ++q) lanes[q] += lanes[q + width];
                           float want = lanes[0];
                           for (; p < k; ++p) want = std::fmaf(a[p], wj[p], want);
                           return want;
                         });
}

TEST(Gemm, DgemmMatchesReference) {
  for (const Case& c : kCases) check<double>(c);
}

// The host's thread setting bounds oneDNN's team for the call (as it bounds
// compiled kernels'), and the caller's OpenMP setting is restored after.
TEST(Gemm, HostThreadSettingBoundsTheLibraryAndIsUndone) {
  const int64_t m = kStreamGemmMaxRows + 4, n = 300, k = 700;  // past the small and the streaming loops
  std::vector<float> a(m * k), b(k * n), one(m * n), bounded(m * n);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (auto& v : a) v = dist(rng);
  for (auto& v : b) v = dist(rng);
  const int caller = omp_get_max_threads();
  omp_set_num_threads(1);
  sgemm(0, 0, m, n, k, a.data(), k, b.data(), n, one.data(), n);
  omp_set_num_threads(caller);
  set_num_threads(1);
  sgemm(0, 0, m, n, k, a.data(), k, b.data(), n, bounded.data(), n);
  set_num_threads(0);
  EXPECT_EQ(omp_get_max_threads(), caller);
  EXPECT_EQ(bounded, one);  // one thread either way: the same split, the same bits
}

TEST(Gemm, EmptyOutputWritesNothing) {
  float a = 1, b = 1, c = 42;
  sgemm(0, 0, 0, 1, 1, &a, 1, &b, 1, &c, 1);
  sgemm(0, 0, 1, 0, 1, &a, 1, &b, 1, &c, 1);
  EXPECT_EQ(c, 42);
}

}  // namespace
}  // namespace tf::runtime
