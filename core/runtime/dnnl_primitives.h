// oneDNN primitives for the products the GEMM entry (gemm.h) serves badly:
// a bf16 MatMul (oneDNN multiplies bf16 pairs in the CPU's bf16 dot-product
// instructions; widening both operands to float and calling sgemm reads and
// multiplies twice the bytes) and an f32 Conv2D (oneDNN's direct
// convolution over channel-blocked copies of the operands; im2col + GEMM
// writes and reads a column matrix kh * kw times the image). These are the
// kernels eager PyTorch calls for the same ops on the CPU.
//
// Both return false, before writing anything, when oneDNN has no optimized
// kernel for the arguments (a CPU without the instructions, a geometry it
// does not take) or the product
// is too small to gain from it (below): the caller
// then computes the product its own way. The evaluator and the native
// backend call the same function with the same arguments, so both take the
// same path and agree bit for bit.
//
// Below a size oneDNN's per-call cost (memory objects, a stream wait, for a
// convolution two reorders) outweighs its speed, and the callers' own loops
// win: measured through torch.ops, one thread (AMD Zen 5), a bf16 MatMul
// M = N = K 32 / 48 / 64 / 96 took 3.0 / 3.3 / 3.9 / 6.5 us with oneDNN
// and 1.8 / 2.7 / 4.1 / 9.7 widened; a 3x3 Conv2D of one 8x8 image with 3
// / 4 / 8 / 16 channels 5.1 / 7.4 / 5.7 / 6.9 us with oneDNN and
// 3.6 / 4.5 / 9.6 / 26.3 through im2col. So both decline below these many
// multiply-adds.
//
// Primitives are created once per geometry and kept (a bounded cache);
// execution is thread-safe: every call brings its own memory objects and
// scratch memory. Threads: the host's setting (threads.h), as sgemm.
#pragma once

#include <cstdint>

namespace tf::runtime {

constexpr int64_t kDnnlMatmulMinMacs = int64_t{1} << 18;  // 64^3
constexpr int64_t kDnnlConvMinMacs = int64_t{1} << 15;


// C = A @ B for bf16 storage (bits in uint16_t): A is m x k at strides
// (as0, as1), B k x n at (bs0, bs1), C row-major m x n. Products are
// accumulated in float and each result is rounded to bf16 once. A row- or
// column-major operand is read in place; any other is packed first.
bool matmul_bf16(int64_t m, int64_t n, int64_t k, const uint16_t* a, int64_t as0, int64_t as1,
                 const uint16_t* b, int64_t bs0, int64_t bs1, uint16_t* c);

// torch.nn.functional.conv2d's geometry: x [n, c, h, w], weight
// [o, c / groups, kh, kw], y [n, o, ho, wo].
struct Conv2DGeometry {
  int64_t n, c, h, w, o, kh, kw, ho, wo, groups;
  int64_t stride[2], padding[2], dilation[2];
};

// y (dense NCHW) = conv2d(x, weight) + bias, f32. x and weight at the given
// element strides (NCHW / OIHW order); bias null or o values bs apart.
bool conv2d_f32(const Conv2DGeometry& g, const float* x, const int64_t xs[4], const float* weight,
                const int64_t ws[4], const float* bias, int64_t bs, float* y);

// n * o * ho * wo * (c / groups) * kh * kw.
int64_t conv2d_macs(const Conv2DGeometry& g);

// How many calls oneDNN has served since the process started (matmul_bf16
// and conv2d_f32 returning true): lets tests see which path a kernel took.
uint64_t dnnl_primitive_runs();

}  // namespace tf::runtime
