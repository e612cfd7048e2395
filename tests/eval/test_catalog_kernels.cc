// The 8-bit float conversions against their format definitions (torch 1.13
// has neither dtype), the Reduce empty-axis identities, runtime checks of
// CacheUpdate / InsertSlice / TopK, fused Silu vs Sigmoid-then-mul at bf16,
// and RoPE rotate-half vs the interleaved form.
#include <gtest/gtest.h>

#include <cmath>

#include "core/ops/math/math.h"
#include "core/runtime/float8.h"
#include "core/ops/nn/nn.h"
#include "core/ops/tensor/tensor.h"
#include "eval/eval_helpers.h"

namespace tf::evaltest {
namespace {

using runtime::Float8E4M3;
using runtime::Float8E8M0;

// e4m3fn by definition: (-1)^s * 2^(e-7) * (1 + m/8), subnormal 2^-6 * m/8.
double e4m3_definition(int code) {
  int s = code >> 7, e = (code >> 3) & 15, m = code & 7;
  if (e == 15 && m == 7) return NAN;
  double v = e == 0 ? std::ldexp(m / 8.0, -6) : std::ldexp(1 + m / 8.0, e - 7);
  return s ? -v : v;
}

TEST(Float8, E4M3DecodesEveryCodeByDefinition) {
  for (int c = 0; c < 256; ++c) {
    double want = e4m3_definition(c), got = Float8E4M3{static_cast<uint8_t>(c)}.to_float();
    if (std::isnan(want)) EXPECT_TRUE(std::isnan(got)) << c;
    else EXPECT_EQ(got, want) << c;
  }
}

TEST(Float8, E4M3EncodeRoundTripsEveryCodeAndRoundsHalfToEven) {
  for (int c = 0; c < 256; ++c) {
    float v = Float8E4M3{static_cast<uint8_t>(c)}.to_float();
    if (std::isnan(v)) continue;
    if (c == 0x80) continue;  // -0 encodes to 0x80 too; checked below
    EXPECT_EQ(Float8E4M3::from_float(v).bits, c) << v;
  }
  EXPECT_EQ(Float8E4M3::from_float(-0.0f).bits, 0x80);
  // 1.0625 is halfway between 1 (m=0, even) and 1.125 (m=1): ties to even.
  EXPECT_EQ(Float8E4M3::from_float(1.0625f).to_float(), 1.0f);
  EXPECT_EQ(Float8E4M3::from_float(1.1875f).to_float(), 1.25f);  // tie between 1.125 and 1.25 -> 1.25 (even)
  EXPECT_EQ(Float8E4M3::from_float(1.07f).to_float(), 1.125f);
  // Subnormal halfway 2^-10 between 0 and 2^-9: to even (0).
  EXPECT_EQ(Float8E4M3::from_float(std::ldexp(1.0f, -10)).bits, 0);
  EXPECT_EQ(Float8E4M3::from_float(std::ldexp(3.0f, -10)).to_float(), std::ldexp(2.0f, -9));
}

TEST(Float8, E4M3OverflowIsNaNNotSaturated) {
  EXPECT_EQ(Float8E4M3::from_float(448.0f).to_float(), 448.0f);
  EXPECT_EQ(Float8E4M3::from_float(464.0f).to_float(), 448.0f);  // the tie with the NaN code: to even
  EXPECT_TRUE(std::isnan(Float8E4M3::from_float(465.0f).to_float()));  // rounds onto S.1111.111
  EXPECT_TRUE(std::isnan(Float8E4M3::from_float(480.0f).to_float()));
  EXPECT_TRUE(std::isnan(Float8E4M3::from_float(1e6f).to_float()));
  EXPECT_EQ(Float8E4M3::from_float(-INFINITY).bits, 0xFF);
  EXPECT_EQ(Float8E4M3::from_float(NAN).bits & 0x7F, 0x7F);
}

TEST(Float8, E8M0DecodesEveryCodeAsAPowerOfTwo) {
  for (int c = 0; c < 255; ++c) EXPECT_EQ(Float8E8M0{static_cast<uint8_t>(c)}.to_float(), std::ldexp(1.0, c - 127)) << c;
  EXPECT_TRUE(std::isnan(Float8E8M0{0xFF}.to_float()));
}

TEST(Float8, E8M0EncodeRoundsTheMantissaAndIgnoresSign) {
  for (int c = 1; c < 255; ++c) EXPECT_EQ(Float8E8M0::from_float(std::ldexp(1.0f, c - 127)).bits, c);
  EXPECT_EQ(Float8E8M0::from_float(1.49f).bits, 127);  // below the 1.5 tie: 2^0
  EXPECT_EQ(Float8E8M0::from_float(1.5f).bits, 128);   // tie rounds up (the implied bit is odd)
  EXPECT_EQ(Float8E8M0::from_float(-4.0f).bits, 129);  // sign ignored
  EXPECT_EQ(Float8E8M0::from_float(0.0f).bits, 0);
  EXPECT_EQ(Float8E8M0::from_float(INFINITY).bits, 0xFF);
  EXPECT_EQ(Float8E8M0::from_float(NAN).bits, 0xFF);
}

TEST(Float8, CastThroughTheEvaluatorAndF4E2M1IsUnsupported) {
  auto x = param("x", {3}, DType::kF32);
  Program p = program({x}, call<ops::Cast>({call<ops::Cast>({x}, DType::kFP8E4M3)}, DType::kF32));
  std::vector<double> got = values<float>(p.run({f32({3}, {1.0625, 460, -0.3})})[0]);
  EXPECT_EQ(got[0], 1.0);
  EXPECT_EQ(got[1], 448.0);
  EXPECT_EQ(got[2], Float8E4M3::from_float(-0.3f).to_float());
  Program q = program({x}, call<ops::Cast>({x}, DType::kF4E2M1));  // typeinfer accepts it
  expect_error([&] { q.run({f32({3}, {1, 2, 3})}); }, ir::ErrorKind::kUnsupported, "unsupported dtype f4e2m1");
}

TEST(ReduceIdentities, EmptyAxisGivesEachKindsIdentity) {
  auto run = [](DType d, ops::ReduceKind k) {
    auto x = param("x", {2, 0}, d);
    return program({x}, call<ops::Reduce>({x}, std::vector<int64_t>{1}, false, k)).run({NDArray::empty(d, {2, 0})})[0];
  };
  EXPECT_EQ(values<float>(run(DType::kF32, ops::ReduceKind::kMax))[0], -INFINITY);
  EXPECT_EQ(values<int32_t>(run(DType::kI32, ops::ReduceKind::kMax))[0], -2147483648.0);
  EXPECT_EQ(values<bool>(run(DType::kBool, ops::ReduceKind::kMax))[0], 0.0);
  EXPECT_EQ(static_cast<const Float8E4M3*>(run(DType::kFP8E4M3, ops::ReduceKind::kMax).data())->to_float(), -448.0f);
  EXPECT_EQ(values<float>(run(DType::kF32, ops::ReduceKind::kAbsMax))[0], 0.0);
  EXPECT_EQ(values<int64_t>(run(DType::kI64, ops::ReduceKind::kSum))[0], 0.0);
  expect_error([&] { run(DType::kF32, ops::ReduceKind::kMean); }, ir::ErrorKind::kRuntime, "empty axis");
}

TEST(RuntimeChecks, CacheUpdateRejectsBadPositionsAndInsertSliceBadOffsets) {
  auto cache = param("c", {1, 4, 1, 1}, DType::kF32), pos = param("p", {}, DType::kI32), s = param("s", {}, DType::kI32);
  auto nw = param("n", {1, 2, 1, 1}, DType::kF32);
  Program p = program({cache, pos, s, nw}, call<ops::CacheUpdate>({cache, pos, s, nw}));
  NDArray c = f32({1, 4, 1, 1}, {0, 0, 0, 0}), n = f32({1, 2, 1, 1}, {7, 8});
  auto scalar = [](int v) { return i32({}, {double(v)}); };
  EXPECT_EQ(values<float>(p.run({c, scalar(2), scalar(2), n})[0]), (std::vector<double>{0, 0, 7, 8}));
  expect_error([&] { p.run({c, scalar(-1), scalar(1), n}); }, ir::ErrorKind::kRuntime, "cur_pos must be >= 0");
  expect_error([&] { p.run({c, scalar(0), scalar(3), n}); }, ir::ErrorKind::kRuntime, "s must be in [1");
  expect_error([&] { p.run({c, scalar(3), scalar(2), n}); }, ir::ErrorKind::kRuntime, "must not exceed cache.len");
  EXPECT_EQ(values<float>(c), (std::vector<double>{0, 0, 0, 0}));  // nothing written

  auto dst = param("d", {4}, DType::kF32), up = param("u", {2}, DType::kF32), off = param("o", {}, DType::kI32);
  Program q = program({dst, up, off}, call<ops::InsertSlice>({dst, up, off}));
  expect_error([&] { q.run({f32({4}, {0, 0, 0, 0}), f32({2}, {1, 2}), scalar(3)}); }, ir::ErrorKind::kRuntime,
               "on axis 0 is out of bounds");
}

TEST(TopKSymbolic, KFromADimVarOfX) {
  ir::ShapeDim n = ir::ShapeDim::var("N", 1, 64);
  auto x = param("x", {n}, DType::kF32);
  ir::ShapeDim k = dim_min(ir::ShapeDim(2), dim_floordiv(n, 2));
  Program p = program({x}, ir::TupleGetItem::make(call<ops::TopK>({x}, k, -1, true, true), 1));
  EXPECT_EQ(values<int64_t>(p.run({f32({5}, {3, 9, 1, 7, 5})})[0]), (std::vector<double>{1, 3}));
  EXPECT_EQ(values<int64_t>(p.run({f32({3}, {3, 9, 1})})[0]), (std::vector<double>{1}));
}

// Fused silu does not round sigmoid(x) to bf16; sigmoid-then-mul does. They
// differ somewhere, and never by more than 1 bf16 ULP.
TEST(SiluFused, DiffersFromSigmoidThenMulByAtMostOneUlpAtBf16) {
  const int n = 2000;
  std::vector<double> xs;
  for (int i = 0; i < n; ++i) xs.push_back(-8.0 + 16.0 * i / n);
  NDArray in = array<runtime::BFloat16>(DType::kBF16, {n}, xs);
  auto x = param("x", {n}, DType::kBF16);
  auto fused = values<runtime::BFloat16>(program({x}, call<ops::Silu>({x})).run({in})[0]);
  auto split = values<runtime::BFloat16>(
      program({x}, call<ops::Binary>({x, call<ops::Sigmoid>({x})}, ops::BinaryKind::kMul)).run({in})[0]);
  int differ = 0;
  for (int i = 0; i < n; ++i) {
    if (fused[i] == split[i]) continue;
    ++differ;
    double ulp = std::ldexp(1.0, std::ilogb(std::max(std::abs(fused[i]), std::abs(split[i]))) - 7);
    EXPECT_LE(std::abs(fused[i] - split[i]), ulp) << xs[i];
  }
  EXPECT_GT(differ, 0);
}

TEST(RoPE, RotateHalfDiffersFromInterleaved) {
  // One head of D = 4 at position 0 with cos = 0, sin = 1: rotate-half maps
  // (a, b, c, d) to (-c, -d, a, b); interleaved would give (-b, a, -d, c).
  auto q = param("q", {1, 1, 1, 4}, DType::kF32), cs = param("c", {1, 4}, DType::kF32);
  auto sn = param("s", {1, 4}, DType::kF32), pos = param("p", {1, 1}, DType::kI32);
  Program p = program({q, cs, sn, pos}, ir::TupleGetItem::make(call<ops::RoPE>({q, q, cs, sn, pos}), 0));
  auto got = values<float>(p.run({f32({1, 1, 1, 4}, {1, 2, 3, 4}), f32({1, 4}, {0, 0, 0, 0}), f32({1, 4}, {1, 1, 1, 1}),
                                  i32({1, 1}, {0})})[0]);
  EXPECT_EQ(got, (std::vector<double>{-3, -4, 1, 2}));
  EXPECT_NE(got, (std::vector<double>{-2, 1, -4, 3}));
}

}  // namespace
}  // namespace tf::evaltest
