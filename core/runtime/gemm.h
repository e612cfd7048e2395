// The project's one GEMM entry: C = op(A) @ op(B), row-major, beta = 0.
// The evaluator's MatMul / Conv2D and the native backend's runtime table
// (core/compiler) both call it, so both backends compute a product in the
// same order and agree bit for bit.
//
// Which code computes a product (measured on the development machine, an
// AVX-512 Xeon, with bench/gemm_libs.cc; the table is in docs/internals.md):
//  * f32, operands not transposed, B in L2 (k * n <= kSmallGemmB) and at most
//    kSmallGemmMacs multiply-adds (64^3): a register-blocked loop (8 x 32
//    tiles of C, 64 columns for blocks of 1-2 rows, remainders as 16 / 8 /
//    4 / 2 / 1-column tiles; k innermost, one FMA per product, compiled for
//    AVX-512 / AVX2 / baseline and chosen at load time). No call overhead and no
//    threads: up to 64^3 it matches or beats oneDNN on one core (tiny
//    products 2-4x, where oneDNN's ~1 us per call dominates); past it oneDNN
//    is as fast on one thread and uses the others.
//  * f32 with m <= kStreamGemmMaxRows (decode shapes): a loop that streams B
//    a few rows at a time, front to back, with C's rows in registers per
//    strip, the columns split across the host's threads: the product is
//    bound by reading B once, which the column-strip tiles above (one page
//    per row of B) and oneDNN's packing do not reach.
//  * f32 with B transposed and m <= kStreamGemmMaxRows (a linear layer's
//    x @ W.T at decode: W row-major [n, k]): a loop of dot products that
//    reads W once, four rows at a time front to back, against four rows of
//    A, with the rows of W split across the host's threads (oneDNN's sgemm
//    read W at 8 GB/s there).
//  * every other f32 product: oneDNN's sgemm (AVX-512 kernels chosen from
//    CPUID; threads from GNU OpenMP, bounded by runtime/threads.h). On this
//    machine Debian's OpenBLAS 0.3.21 does not know the CPU model and runs
//    its SSE3 kernel (~30 GFLOP/s at 1024^3 against oneDNN's ~155 per core);
//    even with its AVX-512 kernel forced it packs all of B: 1.3-4x slower
//    than oneDNN on decode shapes (M <= 16, K = N = 4096; 4x at M = 1).
//  * f64: OpenBLAS (oneDNN has no f64 GEMM); also f32 when oneDNN refuses
//    the arguments.
// oneDNN may split k across threads, so a product's rounding can depend on
// the thread count; both backends call this with the same one in a process.
#pragma once

#include <cstdint>

namespace tf::runtime {

constexpr int64_t kSmallGemmB = int64_t{1} << 17;     // k * n floats: 512 KiB of B
constexpr int64_t kSmallGemmMacs = int64_t{1} << 18;  // m * n * k: 64^3
constexpr int64_t kStreamGemmMaxRows = 16;             // decode shapes: m <= this

// ta / tb: 1 when A (m x k) / B (k x n) is given transposed (column-major).
void sgemm(int ta, int tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
           int64_t ldb, float* c, int64_t ldc);
void dgemm(int ta, int tb, int64_t m, int64_t n, int64_t k, const double* a, int64_t lda, const double* b,
           int64_t ldb, double* c, int64_t ldc);

}  // namespace tf::runtime
