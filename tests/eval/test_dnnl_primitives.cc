// runtime::matmul_bf16 and runtime::conv2d_f32 (oneDNN primitives) against
// naive double-precision references, over the layouts and geometries the
// evaluator and the compiled kernels hand them: padded, transposed and
// channels-last operands, strides, padding, dilation, groups, a strided
// bias. Where oneDNN declines (a product too small to gain from it), the
// call must report it and leave the output as it was.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/runtime/dnnl_primitives.h"
#include "core/runtime/half.h"

namespace tf::runtime {
namespace {

// ---- MatMul bf16 -------------------------------------------------------------

uint16_t bf16(float v) { return BFloat16::from_float(v).bits; }
float f32(uint16_t b) { return BFloat16{b}.to_float(); }

// Does this CPU multiply bf16 natively (oneDNN's bf16 MatMul kernels)?
bool has_bf16_dot() { return __builtin_cpu_supports("avx512bf16"); }

struct MatmulCase {
  int64_t m, n, k;
  bool ta, tb;  // operand stored transposed (column-major)
};

std::string name(const MatmulCase& c) {
  return std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k) + (c.ta ? " A^T" : "") +
         (c.tb ? " B^T" : "");
}

// A and B with padded leading dimensions (a path that ignores one fails),
// C initialized to a sentinel.
struct Operands {
  std::vector<uint16_t> a, b, c;
  int64_t as0, as1, bs0, bs1;
};

Operands operands(const MatmulCase& c, unsigned seed) {
  constexpr int64_t kPad = 5;
  Operands o;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2, 2);
  const int64_t lda = (c.ta ? c.m : c.k) + kPad, ldb = (c.tb ? c.k : c.n) + kPad;
  o.a.resize(static_cast<size_t>((c.ta ? c.k : c.m) * lda));
  o.b.resize(static_cast<size_t>((c.tb ? c.n : c.k) * ldb));
  for (auto& v : o.a) v = bf16(dist(rng));
  for (auto& v : o.b) v = bf16(dist(rng));
  o.as0 = c.ta ? 1 : lda;
  o.as1 = c.ta ? lda : 1;
  o.bs0 = c.tb ? 1 : ldb;
  o.bs1 = c.tb ? ldb : 1;
  o.c.assign(static_cast<size_t>(c.m * c.n), bf16(std::numeric_limits<float>::quiet_NaN()));
  return o;
}

// Each result within one bf16 rounding (2^-8 relative) of the exact product,
// plus float accumulation error.
void expect_product(const MatmulCase& c, const Operands& o) {
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = 0; j < c.n; ++j) {
      double want = 0, mag = 0;
      for (int64_t p = 0; p < c.k; ++p) {
        const double x = f32(o.a[i * o.as0 + p * o.as1]), y = f32(o.b[p * o.bs0 + j * o.bs1]);
        want += x * y;
        mag += std::abs(x * y);
      }
      const double got = f32(o.c[i * c.n + j]);
      ASSERT_NEAR(got, want, std::abs(want) * 0x1p-8 + mag * c.k * 0x1p-24 + 1e-30)
          << name(c) << " at (" << i << ", " << j << ")";
    }
}

TEST(DnnlPrimitives, Bf16MatMulMatchesTheExactProduct) {
  const std::vector<MatmulCase> cases{{1, 512, 520, false, false}, {7, 333, 129, false, false},
                                      {64, 256, 512, false, false}, {33, 170, 50, true, false},
                                      {16, 96, 200, false, true},   {9, 400, 310, true, true}};
  unsigned seed = 1;
  for (const MatmulCase& c : cases) {
    Operands o = operands(c, seed++);
    const bool done =
        matmul_bf16(c.m, c.n, c.k, o.a.data(), o.as0, o.as1, o.b.data(), o.bs0, o.bs1, o.c.data());
    // On a CPU without bf16 dot products oneDNN may only have its reference
    // loops, which matmul_bf16 declines; where it has the instructions it must not.
    if (has_bf16_dot()) {
      EXPECT_TRUE(done) << name(c);
    }
    if (done) expect_product(c, o);
  }
}

TEST(DnnlPrimitives, Bf16MatMulPropagatesNaNAndInfinity) {
  const MatmulCase c{4, 480, 400, false, false};
  Operands o = operands(c, 7);
  o.a[1 * o.as0 + 3] = bf16(std::numeric_limits<float>::quiet_NaN());  // row 1: NaN everywhere
  o.a[2 * o.as0 + 5] = bf16(std::numeric_limits<float>::infinity());  // row 2: +-inf (or NaN where b is 0)
  if (!matmul_bf16(c.m, c.n, c.k, o.a.data(), o.as0, o.as1, o.b.data(), o.bs0, o.bs1, o.c.data())) {
    ASSERT_FALSE(has_bf16_dot());
    return;
  }
  for (int64_t j = 0; j < c.n; ++j) {
    EXPECT_TRUE(std::isnan(f32(o.c[1 * c.n + j]))) << j;
    const float b = f32(o.b[5 * o.bs0 + j]);
    EXPECT_TRUE(b == 0 ? std::isnan(f32(o.c[2 * c.n + j])) : std::isinf(f32(o.c[2 * c.n + j]))) << j;
    EXPECT_TRUE(std::isfinite(f32(o.c[0 * c.n + j]))) << j;
  }
}

TEST(DnnlPrimitives, Bf16MatMulPacksStridedOperands) {
  // A every other element of a padded row, B every third row: neither row-
  // nor column-major, so both are packed before the product.
  const MatmulCase c{48, 160, 100, false, false};
  Operands o = operands(MatmulCase{48, 160, 200, false, false}, 9);
  Operands wide_b = operands(MatmulCase{48, 160, 300, false, false}, 10);
  o.as1 = 2;
  o.b = wide_b.b;
  o.bs0 = 3 * wide_b.bs0;
  const bool done = matmul_bf16(c.m, c.n, c.k, o.a.data(), o.as0, o.as1, o.b.data(), o.bs0, o.bs1, o.c.data());
  if (has_bf16_dot()) {
    EXPECT_TRUE(done);
  }
  if (done) expect_product(c, o);
}

TEST(DnnlPrimitives, Bf16MatMulDeclinesSmallAndEmptyProducts) {
  // An empty product: the caller zero-fills.
  const MatmulCase c{64, 160, 128, false, false};
  Operands o = operands(c, 3);
  const std::vector<uint16_t> before = o.c;
  EXPECT_FALSE(matmul_bf16(c.m, c.n, 0, o.a.data(), o.as0, o.as1, o.b.data(), o.bs0, o.bs1, o.c.data()));
  EXPECT_EQ(o.c, before);
  // Below kDnnlMatmulMinMacs the caller's widened product is faster; at it,
  // oneDNN serves.
  const MatmulCase at{8, 16, kDnnlMatmulMinMacs / 128, false, false}, below{8, 16, at.k - 1, false, false};
  Operands p = operands(below, 4);
  const std::vector<uint16_t> untouched = p.c;
  EXPECT_FALSE(matmul_bf16(below.m, below.n, below.k, p.a.data(), p.as0, p.as1, p.b.data(), p.bs0, p.bs1, p.c.data()));
  EXPECT_EQ(p.c, untouched);
  Operands q = operands(at, 5);
  const bool done = matmul_bf16(at.m, at.n, at.k, q.a.data(), q.as0, q.as1, q.b.data(), q.bs0, q.bs1, q.c.data());
  if (has_bf16_dot()) {
    EXPECT_TRUE(done);
  }
  if (done) expect_product(at, q);
}

TEST(DnnlPrimitives, Bf16MatMulRunsOnManyThreadsAtOnce) {
  if (!has_bf16_dot()) GTEST_SKIP() << "this CPU has no bf16 dot products: oneDNN's bf16 MatMul is not used";
  const MatmulCase c{32, 128, 256, false, false};
  const Operands ref_in = operands(c, 11);
  Operands ref = ref_in;
  ASSERT_TRUE(matmul_bf16(c.m, c.n, c.k, ref.a.data(), ref.as0, ref.as1, ref.b.data(), ref.bs0, ref.bs1,
                          ref.c.data()));
  std::vector<Operands> outs(4, ref_in);
  std::vector<std::thread> threads;
  for (Operands& o : outs)
    threads.emplace_back([&c, &o] {
      for (int r = 0; r < 20; ++r)
        matmul_bf16(c.m, c.n, c.k, o.a.data(), o.as0, o.as1, o.b.data(), o.bs0, o.bs1, o.c.data());
    });
  for (std::thread& t : threads) t.join();
  for (const Operands& o : outs) EXPECT_EQ(o.c, ref.c);
}

// ---- Conv2D f32 ----------------------------------------------------------------

struct ConvCase {
  Conv2DGeometry g;
  bool channels_last = false;
  bool broadcast_batch = false;  // every image the same memory (stride 0)
  int64_t bias_stride = 0;  // 0: no bias
};

int64_t out_extent(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d) { return (in + 2 * p - d * (k - 1) - 1) / s + 1; }

ConvCase conv_case(int64_t n, int64_t c, int64_t h, int64_t w, int64_t o, int64_t kh, int64_t kw, int64_t groups,
                   std::array<int64_t, 2> s, std::array<int64_t, 2> p, std::array<int64_t, 2> d) {
  ConvCase cc;
  cc.g = Conv2DGeometry{n, c, h, w, o, kh, kw, out_extent(h, kh, s[0], p[0], d[0]), out_extent(w, kw, s[1], p[1], d[1]),
                        groups, {s[0], s[1]}, {p[0], p[1]}, {d[0], d[1]}};
  return cc;
}

std::string name(const ConvCase& c) {
  const Conv2DGeometry& g = c.g;
  return std::to_string(g.n) + "x" + std::to_string(g.c) + "x" + std::to_string(g.h) + "x" + std::to_string(g.w) +
         " o" + std::to_string(g.o) + " k" + std::to_string(g.kh) + "x" + std::to_string(g.kw) + " g" +
         std::to_string(g.groups) + " s" + std::to_string(g.stride[0]) + "," + std::to_string(g.stride[1]) + " p" +
         std::to_string(g.padding[0]) + "," + std::to_string(g.padding[1]) + " d" + std::to_string(g.dilation[0]) +
         "," + std::to_string(g.dilation[1]) + (c.channels_last ? " NHWC" : "") + (c.broadcast_batch ? " x broadcast" : "") +
         (c.bias_stride ? " bias/" + std::to_string(c.bias_stride) : "");
}

void check_conv(const ConvCase& c, unsigned seed) {
  const Conv2DGeometry& g = c.g;
  const int64_t cg = g.c / g.groups, og = g.o / g.groups;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> x(static_cast<size_t>(g.n * g.c * g.h * g.w)), w(static_cast<size_t>(g.o * cg * g.kh * g.kw)),
      bias(static_cast<size_t>(g.o * std::max<int64_t>(c.bias_stride, 1)));
  for (auto* v : {&x, &w, &bias})
    for (float& e : *v) e = dist(rng);
  const int64_t xs[4] = {c.broadcast_batch ? 0 : g.c * g.h * g.w, c.channels_last ? 1 : g.h * g.w, c.channels_last ? g.w * g.c : g.w,
                         c.channels_last ? g.c : 1};
  const int64_t ws[4] = {cg * g.kh * g.kw, g.kh * g.kw, g.kw, 1};
  std::vector<float> y(static_cast<size_t>(g.n * g.o * g.ho * g.wo), std::numeric_limits<float>::quiet_NaN());
  ASSERT_GE(conv2d_macs(g), kDnnlConvMinMacs) << name(c);
  ASSERT_TRUE(conv2d_f32(g, x.data(), xs, w.data(), ws, c.bias_stride ? bias.data() : nullptr, c.bias_stride, y.data()))
      << name(c);
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t o = 0; o < g.o; ++o)
      for (int64_t oh = 0; oh < g.ho; ++oh)
        for (int64_t ow = 0; ow < g.wo; ++ow) {
          double want = c.bias_stride ? bias[o * c.bias_stride] : 0.0, mag = std::abs(want);
          const int64_t grp = o / og;
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t i = 0; i < g.kh; ++i)
              for (int64_t j = 0; j < g.kw; ++j) {
                const int64_t ih = oh * g.stride[0] - g.padding[0] + i * g.dilation[0];
                const int64_t iw = ow * g.stride[1] - g.padding[1] + j * g.dilation[1];
                if (ih < 0 || ih >= g.h || iw < 0 || iw >= g.w) continue;
                const double v = double(x[n * xs[0] + (grp * cg + ci) * xs[1] + ih * xs[2] + iw * xs[3]]) *
                                 w[o * ws[0] + ci * ws[1] + i * ws[2] + j * ws[3]];
                want += v;
                mag += std::abs(v);
              }
          const float got = y[((n * g.o + o) * g.ho + oh) * g.wo + ow];
          ASSERT_NEAR(got, want, mag * 1e-5 + 1e-30) << name(c) << " at " << n << "," << o << "," << oh << "," << ow;
        }
}

TEST(DnnlPrimitives, Conv2DMatchesTheExactConvolution) {
  std::vector<ConvCase> cases{
      conv_case(2, 8, 13, 11, 12, 3, 3, 1, {1, 1}, {1, 1}, {1, 1}),
      conv_case(1, 16, 15, 17, 32, 3, 3, 1, {2, 2}, {1, 1}, {1, 1}),  // right padding below the left
      conv_case(2, 6, 12, 10, 8, 3, 2, 1, {1, 2}, {2, 0}, {2, 1}),    // dilation, asymmetric everything
      conv_case(1, 8, 15, 15, 12, 3, 3, 4, {1, 1}, {1, 1}, {1, 1}),   // groups
      conv_case(3, 32, 7, 7, 16, 1, 1, 1, {1, 1}, {0, 0}, {1, 1}),    // 1x1
      conv_case(1, 3, 20, 20, 16, 5, 5, 1, {1, 1}, {2, 2}, {1, 1}),   // few input channels
      conv_case(2, 16, 12, 12, 16, 3, 3, 16, {1, 1}, {1, 1}, {1, 1}), // depthwise
  };
  ConvCase nhwc = conv_case(2, 16, 9, 10, 8, 3, 3, 1, {1, 1}, {1, 1}, {1, 1});
  nhwc.channels_last = true;
  cases.push_back(nhwc);
  ConvCase broadcast = conv_case(3, 8, 9, 9, 8, 3, 3, 1, {1, 1}, {1, 1}, {1, 1});
  broadcast.broadcast_batch = true;
  cases.push_back(broadcast);
  ConvCase biased = conv_case(2, 8, 10, 10, 12, 3, 3, 2, {1, 1}, {1, 1}, {1, 1});
  biased.bias_stride = 1;
  cases.push_back(biased);
  ConvCase strided_bias = biased;
  strided_bias.bias_stride = 3;
  cases.push_back(strided_bias);
  unsigned seed = 100;
  for (const ConvCase& c : cases) check_conv(c, seed++);
}

TEST(DnnlPrimitives, Conv2DDeclinesSmallConvolutions) {
  // 1 x 4 x 8 x 8 by 4 x 4 x 3 x 3: 9216 multiply-adds, below kDnnlConvMinMacs.
  const ConvCase c = conv_case(1, 4, 8, 8, 4, 3, 3, 1, {1, 1}, {1, 1}, {1, 1});
  ASSERT_LT(conv2d_macs(c.g), kDnnlConvMinMacs);
  std::vector<float> x(256, 1.0f), w(144, 1.0f), y(256, -7.0f);
  const int64_t xs[4] = {256, 64, 8, 1}, ws[4] = {36, 9, 3, 1};
  EXPECT_FALSE(conv2d_f32(c.g, x.data(), xs, w.data(), ws, nullptr, 0, y.data()));
  EXPECT_EQ(y, std::vector<float>(256, -7.0f));
}

}  // namespace
}  // namespace tf::runtime
