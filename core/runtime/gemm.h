// The project's one GEMM entry: C = op(A) @ op(B), row-major, beta = 0.
// The evaluator's MatMul / Conv2D and the native backend's runtime table
// (core/compiler) both call it, so both backends compute a product in the
// same order and agree bit for bit.
//
// f32 products whose B fits in L2 (k * n <= kSmallGemmB) and whose operands
// are not transposed run a register-blocked loop (8 x 32 tiles of C, k
// innermost, one FMA per product, compiled for AVX-512 / AVX2 / baseline
// and chosen at load time); every other product goes to the BLAS. Why:
// Debian's OpenBLAS 0.3.21 runs its AVX2 (Haswell) kernel on AVX-512 CPUs
// and its per-call setup dominates small products — on one core of the
// development machine it reaches ~110 GFLOP/s from 64^3 to 256^3, where the
// tiled loop reaches ~230-250.
#pragma once

#include <cstdint>

namespace tf::runtime {

constexpr int64_t kSmallGemmB = int64_t{1} << 17;  // k * n floats: 512 KiB of B

// ta / tb: 1 when A (m x k) / B (k x n) is given transposed (column-major).
void sgemm(int ta, int tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
           int64_t ldb, float* c, int64_t ldc);
void dgemm(int ta, int tb, int64_t m, int64_t n, int64_t k, const double* a, int64_t lda, const double* b,
           int64_t ldb, double* c, int64_t ldc);

}  // namespace tf::runtime
