// Kernels a user writes from elementary ops fuse like the built-ins: a
// Reduce over the last axis read back along its row (mean of squares in
// RMSNorm, max and sum in softmax, the moments of LayerNorm) is computed
// inside the stage that reads it, so each composition is one loop nest,
// and it agrees with the evaluator.
#include "compiler_helpers.h"
#include "core/compiler/codegen.h"
#include "core/compiler/scalar_lowering.h"
#include "core/frontend/parser.h"
#include "core/ir/error.h"
#include "core/runtime/threads.h"

namespace tf::comptest {
namespace {

const char* kSource = R"(from tilefoundry.dsl import *

N = DimVar("N", 1, 1 << 20)
D = DimVar("D", 1, 1 << 16)
E = DimVar("E", 0, 1 << 16)

@func
def rms_f32(x: Tensor[(N, D), f32], w: Tensor[(D,), f32]) -> Tensor[(N, D), f32]:
    return x * rsqrt(mean(x * x, axes=-1) + 1e-6) * w

@func
def rms_bf16(x: Tensor[(N, D), bf16], w: Tensor[(D,), bf16]) -> Tensor[(N, D), bf16]:
    h = cast(x, f32)
    y = h * rsqrt(mean(h * h, axes=-1) + 1e-6)
    return cast(y, bf16) * w

@func
def softmax_composed(x: Tensor[(N, D), f32]) -> Tensor[(N, D), f32]:
    e = exp(x - amax(x, axes=-1))
    return e / sum(e, axes=-1)

@func
def exp_share(x: Tensor[(N, D), f32]) -> Tensor[(N, D), f32]:
    e = exp(x)
    return e / sum(e, axes=-1)

@func
def centred_share(x: Tensor[(N, D), f32]) -> Tensor[(N, D), f32]:
    c = exp(x) - 1.0
    return c / sum(c, axes=-1)

@func
def softmax_builtin_f64(x: Tensor[(N, D), f64]) -> Tensor[(N, D), f64]:
    return softmax(x, axis=-1)

@func
def layer_norm_composed(x: Tensor[(N, D), f32], w: Tensor[(D,), f32], b: Tensor[(D,), f32]) -> Tensor[(N, D), f32]:
    d = x - mean(x, axes=-1)
    return d * rsqrt(mean(d * d, axes=-1) + 1e-5) * w + b

@func
def layer_norm_pow(x: Tensor[(N, D), f32], w: Tensor[(D,), f32], b: Tensor[(D,), f32]) -> Tensor[(N, D), f32]:
    d = x - mean(x, axes=-1)
    return d * rsqrt(mean(d ** 2, axes=-1) + 1e-5) * w + b

@func
def layer_norm_square(x: Tensor[(N, D), f32], w: Tensor[(D,), f32], b: Tensor[(D,), f32]) -> Tensor[(N, D), f32]:
    d = x - mean(x, axes=-1)
    return d * rsqrt(mean(square(d), axes=-1) + 1e-5) * w + b

@func
def layer_norm_builtin(x: Tensor[(N, D), f32], w: Tensor[(D,), f32], b: Tensor[(D,), f32]) -> Tensor[(N, D), f32]:
    return layer_norm(x, w, b, eps=1e-5)

@func
def variance(x: Tensor[(N, D), f32]) -> Tensor[(N, 1), f32]:
    d = x - mean(x, axes=-1)
    return mean(d * d, axes=-1)

@func
def mean_past_variance(x: Tensor[(N, D), f32], y: Tensor[(N, D), f32]) -> Tensor[(N, D), f32]:
    m = mean(x, axes=-1)
    d = x - m
    v = mean(d * d, axes=-1)
    return where(v < 1e30, d, y + m)

@func
def not_a_variance(x: Tensor[(N, D), f32], y: Tensor[(N, D), f32]) -> tuple[Tensor[(N, 1), f32], Tensor[(N, 1), f32]]:
    d = x - mean(x, axes=-1)
    e = y - mean(x, axes=-1)
    return mean(d * e, axes=-1), mean(e * e, axes=-1)

@func
def two_softmaxes(x: Tensor[(N, D), f32]) -> Tensor[(N, D), f32]:
    return softmax(x, axis=-1) + softmax(x * 2.0, axis=-1)

@func
def two_softmaxes_bf16(x: Tensor[(N, D), bf16]) -> Tensor[(N, D), bf16]:
    return softmax(x, axis=-1) * softmax(x * 3.0, axis=-1)

@func
def softmax_in_its_own_condition(p0: Tensor[(D,), f32], p1: Tensor[(N, D), f32]) -> Tensor[(N, D), f32]:
    return where(p0 >= softmax(p0 + p1, axis=-1) + 0.775, pow(abs(p0) + 0.5, -1.6), softmax(p0 + p1, axis=-1))

@func
def one_exp_two_sums(x: Tensor[(N, D), f32]) -> Tensor[(N, D), f32]:
    e = exp(x - amax(x, axes=-1))
    return e / sum(e, axes=-1) + e / sum(e, axes=-1)

@func
def row_scalars(x: Tensor[(N, D), f32]) -> tuple[Tensor[(N, 1), f32], Tensor[(N, 1), f32]]:
    m = mean(x, axes=-1)
    return m + mean(x * x, axes=-1), cast(cast(m, f64) + 1.0, f32)

@func
def row_max_nan(x: Tensor[(N, D), f32]) -> Tensor[(N, D), f32]:
    return x - amax(x, axes=-1) + abs_max(x, axes=-1)

@func
def reduce_output(x: Tensor[(N, D), f32]) -> tuple[Tensor[(N, D), f32], Tensor[(N, 1), f32]]:
    s = sum(x, axes=-1)
    return x / s, s

@func
def broadcast_past_rows(x: Tensor[(N, D), f32], z: Tensor[(2, N, D), f32]) -> Tensor[(2, N, D), f32]:
    return (x - mean(x, axes=-1)) + z

@func
def floor_below_max(p: Tensor[(D,), f64], x: Tensor[(N, D), f64]) -> Tensor[(N, D), f64]:
    t = cast(cast(p, f32), f64) * x
    return floor(t - amax(t, axes=-1))

@func
def empty_rows(x: Tensor[(N, D), f32]) -> Tensor[(N, D), f32]:
    return x - mean(x, axes=-1)

@func
def softmax_builtin(x: Tensor[(N, D), f32]) -> Tensor[(N, D), f32]:
    return softmax(x, axis=-1)

@func
def rms_builtin(x: Tensor[(N, D), f32], w: Tensor[(D,), f32]) -> Tensor[(N, D), f32]:
    return rms_norm(x, w, eps=1e-6)

@func
def rms_builtin_bf16(x: Tensor[(N, D), bf16], w: Tensor[(D,), bf16]) -> Tensor[(N, D), bf16]:
    return rms_norm(x, w, eps=1e-6)

@func
def row_ops_of_empty_rows(x: Tensor[(N, E), f32], w: Tensor[(E,), f32]) -> tuple[Tensor[(N, E), f32], Tensor[(N, E), f32], Tensor[(N, E), f32]]:
    return rms_norm(x, w, eps=1e-6), layer_norm(x, w, w, eps=1e-5), softmax(x, axis=-1)

@func
def quant_fp8(x: Tensor[(N, D), f32], s: Tensor[(N, 1), f32]) -> tuple[Tensor[(N, D), fp8e4m3], Tensor[(N, D), f32]]:
    q = cast(x * s, fp8e4m3)
    return q, cast(q, f32) * s

@func
def centred_then_rms_norm(x: Tensor[(N, D), f32], w: Tensor[(D,), f32]) -> tuple[Tensor[(N, D), f32], Tensor[(N, D), f32]]:
    c = x - sum(x, axes=-1)
    return rms_norm(c, w, eps=1e-5), c
)";

class ComposedKernels : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { module_ = frontend::parse_module(kSource, "composed.py"); }
  static ir::ModulePtr module_;

  const ir::Function& fn(const std::string& name) { return *module_->lookup(name); }

  // How many loop nests the generated entry has.
  int stages(const std::string& name) {
    const std::string body = compiler::generate(fn(name)).body;
    int n = 0;
    for (size_t p = body.find("// stage:"); p != std::string::npos; p = body.find("// stage:", p + 1)) ++n;
    return n;
  }
  // The TIR of a function whose every stage lowers through it.
  std::string tir(const std::string& name) { return compiler::generate(fn(name)).tir; }

  void agree(const std::string& name, const std::vector<std::vector<int64_t>>& shapes, double scale = 2.0) {
    auto k = compiler::compile(fn(name));
    std::mt19937 rng(11);
    std::vector<NDArray> in;
    for (size_t i = 0; i < shapes.size(); ++i) {
      auto t = std::static_pointer_cast<const ir::TensorType>(fn(name).params()[i]->type());
      in.push_back(random_array(t->dtype(), shapes[i], rng, scale));
    }
    expect_agree(*k, *module_, fn(name), in, name);
  }
};
ir::ModulePtr ComposedKernels::module_;

TEST_F(ComposedKernels, RmsNormFromMeanOfSquaresIsOneLoopNest) {
  EXPECT_EQ(stages("rms_f32"), 1);
  EXPECT_EQ(stages("rms_bf16"), 1);
  for (auto d : {3, 64, 1000, 4096}) {
    agree("rms_f32", {{5, d}, {d}});
    agree("rms_bf16", {{5, d}, {d}});
  }
}

TEST_F(ComposedKernels, TheRowStageRunsOnePassPerLevelOfReductions) {
  // rmsnorm: the mean of squares, then the store; softmax: the max, the sum
  // of exponentials, then the store. Each pass is a vectorized loop, or a
  // prelude routine over each chunk.
  const std::string rms = tir("rms_f32"), sm = tir("softmax_composed");
  EXPECT_EQ(count(rms, "// stage:"), 1) << rms;
  // The row loop, one copy per value of its unit-stride and streaming
  // flags (unswitched), and its one-thread twin (below the size threshold).
  EXPECT_EQ(count(rms, "(row, 0, outer) parallel {"), 4) << rms;
  EXPECT_EQ(count(rms, "(row, 0, outer) serial {"), 1) << rms;
  // One loop per pass: in each parallel copy, and per stride case (unit or
  // general) in the twin. softmax has two forms of its row (below: in place
  // in the output row, or in a scratch row streamed out), chosen by the
  // flag `deferred`: the streamed form runs in tasks of rows, its first row
  // peeled, so it appears twice per copy (12 max passes: 2 + 2 in the
  // streamed parallel copies, 1 + 1 in the in-place ones, 4 + 2 in the
  // twin).
  EXPECT_EQ(count(rms, "vectorized reduce(+: acc0)"), 6) << rms;
  EXPECT_EQ(count(sm, "vectorized reduce(max: acc0) reduce(+: nans0)"), 12) << sm;
  EXPECT_EQ(count(sm, "vectorized reduce(+: acc1)"), 0) << sm;  // the routine's sum (below)
  // softmax's exp(x - max) is computed once, a chunk at a time by the
  // prelude's routine, in the output row: the sum's pass fills the row with
  // x - max, exponentiates it there and sums it in the same sweep (a chunk
  // in float, the chunks in double, as a Reduce sums: the composition's
  // row sum is not the built-in's float sum), and the store pass divides
  // it there.
  EXPECT_EQ(count(sm, "y[j] = (x0[j] - r0)"), 2) << sm;
  EXPECT_EQ(count(sm, "var acc1: f64"), 12) << sm;
  EXPECT_EQ(count(sm, "acc1 = (acc1 + f64(tf_exp_sum_n(&y[c0], "), 4) << sm;
  EXPECT_EQ(count(sm, "tf_exp_n("), 0) << sm;
  // The sum pass (the last before the store) prefetches the next row into
  // L2, not L1: the row, the next one and the store pass's other rows do
  // not all fit in L1.
  EXPECT_EQ(count(sm, "@__builtin_prefetch(&x0[(bs0_0 + (c0 + (p * 16)))], i32(0), i32(2))"), 8) << sm;
  EXPECT_EQ(count(sm, "@__builtin_prefetch(&x0[(bs0_0 + (c0 + (p_1 * 16)))], i32(0), i32(2))"), 4) << sm;
  EXPECT_EQ(count(sm, "@__builtin_prefetch("), 12) << sm;
  EXPECT_EQ(count(sm, "tf_exp("), 0) << sm;
  // The built-in's float sum is the routine's own.
  const std::string builtin = tir("softmax_builtin");
  EXPECT_EQ(count(builtin, "acc1 = (acc1 + tf_exp_sum_n(&y[c0], "), 4) << builtin;
  // The division by the row's sum is the prelude's exact one, in place in
  // the row (the divider's throughput is a quarter of the multiplier's),
  // one call for the whole row.
  EXPECT_EQ(count(sm, "@tf_div_by_sum_n(&y[0], inner, r1)"), 4) << sm;
  EXPECT_EQ(count(sm, " / r1"), 0) << sm;
  // A large tensor's rows (the streaming flag, rows up to the scratch
  // row's length) keep the cached values in a scratch row instead, and the
  // result is streamed out: the output is written once, not read for
  // ownership and written twice. The store pass leaves the result in the
  // scratch row, and the next row's sum pass streams each of its values
  // out just before the exp that overwrites it (tf_exp_sum_drain_n, which
  // reads x - max from a chunk buffer: the writes spread over that pass's
  // exps); rows go in tasks of 16 sharing one scratch row, each task
  // streaming its last row at its end and fencing once.
  EXPECT_EQ(count(sm, "let deferred: bool = (nt && (inner <= 8192))"), 1) << sm;

  // A task's first row (unit strides: 2 copies) fills the scratch row.
  EXPECT_EQ(count(sm, "sb[j] = (x0[j] - r0)"), 2) << sm;
  EXPECT_EQ(count(sm, "td[(j - c0)] = (x0[j] - r0)"), 2) << sm;
  EXPECT_EQ(count(sm, "acc1 = (acc1 + f64(tf_exp_sum_n(&sb[c0], "), 4) << sm;
  const std::string drain = "tf_exp_sum_drain_n(&sb[c0], td, (c1_1 - c0), &B1[(((row - 1) * inner) + c0)])";
  EXPECT_EQ(count(sm, "acc1 = (acc1 + f64(" + drain + "))"), 4) << sm;
  EXPECT_EQ(count(sm, "@tf_div_by_sum_n(&sb[c0], (c1_2 - c0), r1)"), 8) << sm;
  EXPECT_EQ(count(sm, "sb[j] = sb[j]"), 0) << sm;  // the division left it there
  EXPECT_EQ(count(sm, "tf_div_by_sum_n("), 12) << sm;
  EXPECT_EQ(count(builtin, "acc1 = (acc1 + tf_exp_sum_n(&sb[c0], "), 4) << builtin;
  EXPECT_EQ(count(builtin, "acc1 = (acc1 + " + drain + ")"), 4) << builtin;
  EXPECT_EQ(count(builtin, "sb[j] = (sb[j] * (1.0f / r1))"), 8) << builtin;
  for (const std::string& t : {sm, builtin}) {
    EXPECT_EQ(count(t, "let tr: i64 = select(deferred, 16, 1)"), 1) << t;
    // A task loop per copy (four parallel ones: unit stride or not,
    // deferred or not; the serial twin), the rows after the first only
    // where deferred.
    EXPECT_EQ(count(t, "allocate sb: f32[8192] local {"), 5) << t;
    EXPECT_EQ(count(t, "for (row, (lo + 1), ((hi - lo) - 1)) serial {"), 3) << t;
    // Only those rows stream the previous one (4: per stride case), from
    // inside the sum pass's routine, which writes the chunk's exps over it
    // from the buffer the statement before it fills; nothing else writes
    // the scratch row in that pass. Every streamed task ends with its last
    // row and one fence.
    for (size_t at = t.find(drain); at != std::string::npos; at = t.find(drain, at + 1)) {
      const size_t loop = t.rfind("for (j, c0, (c1_1 - c0)) vectorized {\n", at);
      ASSERT_NE(loop, std::string::npos) << t.substr(0, at);
      const std::string between = t.substr(loop, at - loop);
      EXPECT_EQ(count(between, "td[(j - c0)] = (x0["), 1) << between;
      EXPECT_EQ(count(between, "sb["), 0) << between;
    }
    EXPECT_EQ(count(t, "@tf_stream(&B1[((hi - 1) * inner)], sb, inner)"), 3) << t;
    EXPECT_EQ(count(t, "@tf_stream("), 3) << t;
    EXPECT_EQ(count(t, "@tf_stream_fence()"), 3) << t;
  }
  // Both forms agree with the evaluator (a streamed shape: 4096 x 2048 f32;
  // 4097 rows end with a task of one row, which only streams its own).
  agree("softmax_composed", {{4096, 2048}}, 20.0);
  agree("softmax_builtin", {{4096, 2048}}, 20.0);
  agree("softmax_builtin", {{4097, 2048}}, 20.0);
  // And on one thread (the serial twin of the task loop).
  runtime::set_num_threads(1);
  agree("softmax_builtin", {{4097, 2048}}, 20.0);
  runtime::set_num_threads(0);
  const std::string f64 = tir("softmax_builtin_f64");
  EXPECT_EQ(count(f64, "allocate sb: f64[8192] local {"), 5) << f64;
  agree("softmax_builtin_f64", {{1024, 2048}}, 20.0);
}

TEST_F(ComposedKernels, OnlyAProductInTheDoubleAccumulatorFusesIntoTheSum) {
  // The built-in LayerNorm squares its shifted elements in double: the
  // square and the add are one FMA. A user's f32 square is rounded to f32
  // first, as the evaluator's f32 tensor of squares is, then added.
  const std::string ln = tir("row_ops_of_empty_rows"), rms = tir("rms_f32");
  EXPECT_GT(count(ln, "= __builtin_fma("), 0) << ln;
  EXPECT_EQ(count(rms, "__builtin_fma("), 0) << rms;
  EXPECT_EQ(count(rms, "acc0 = (acc0 + f64((x0[j] * x0[j])))"), 3) << rms;  // unit stride: 2 copies + twin
  for (auto d : {1, 5, 300}) agree("row_ops_of_empty_rows", {{3, d}, {d}});
}

TEST_F(ComposedKernels, AnFp8StoreRoundsOnce) {
  // The cast's rounding is the store's own: no tf_rfp8e4m3 before it (three
  // conversions per element were twice the work of one).
  const std::string t = tir("quant_fp8");
  EXPECT_EQ(count(t, "tf_rfp8e4m3"), 0) << t;
  agree("quant_fp8", {{5, 300}, {5, 1}}, 300.0);  // subnormal, normal and NaN-bound codes
}

TEST_F(ComposedKernels, SoftmaxFromMaxExpSumIsOneLoopNest) {
  EXPECT_EQ(stages("softmax_composed"), 1);
  for (auto d : {1, 7, 256, 3000}) agree("softmax_composed", {{4, d}}, 20.0);
}

TEST_F(ComposedKernels, ADivisionOfExpsByTheirSumTestsOnlyTheBottomOfTheRange) {
  // Exps are never negative and each is a term of its row's sum, so no
  // dividend lies above the divisor: the routine for that case leaves out
  // the top of the exact division's range test.
  const std::string sm = tir("softmax_composed"), e = tir("exp_share"), c = tir("centred_share");
  // (In the in-place and the streamed forms of each copy: see above.)
  EXPECT_EQ(count(sm, "tf_div_by_sum_n("), 12) << sm;
  EXPECT_EQ(count(e, "tf_div_by_sum_n("), 12) << e;
  // exp(x) - 1 can be negative: its sum may lie far below a term.
  EXPECT_EQ(count(c, "tf_div_by_sum_n("), 0) << c;
  EXPECT_EQ(count(c, "tf_div_n("), 12) << c;
  for (auto d : {5, 64, 100, 4096}) {
    // Inputs to +-300: zeros and exps under 2^-100 times the sum in most
    // blocks of four vectors (they divide).
    agree("softmax_composed", {{3, d}}, 300.0);
    // exp(x) for x up to 100 overflows: the sum is infinite, every lane divides.
    agree("exp_share", {{3, d}}, 100.0);
    agree("exp_share", {{3, d}}, 10.0);
    agree("centred_share", {{3, d}}, 3.0);
  }
}

TEST_F(ComposedKernels, LayerNormFromMeansIsOneLoopNest) {
  EXPECT_EQ(stages("layer_norm_composed"), 1);
  for (auto d : {2, 33, 2048}) agree("layer_norm_composed", {{3, d}, {d}, {d}});
}

TEST_F(ComposedKernels, AVarianceFromMeansTakesTheMeansPass) {
  // mean(d * d) (d ** 2, square(d)) of d = x - mean(x) is computed from the row's moments about
  // its first element in the mean's own pass (one_pass_variance.h): the
  // composed LayerNorm reads its row as often as the built-in does, its
  // shifted squares are FMAs in double, as the built-in's, and its mean is
  // derived from the shifted sum.
  const std::string builtin = tir("layer_norm_builtin");
  for (const char* f : {"layer_norm_composed", "layer_norm_pow", "layer_norm_square"}) {
    const std::string t = tir(f);
    EXPECT_EQ(count(t, "vectorized reduce("), count(builtin, "vectorized reduce(")) << t;
    EXPECT_EQ(count(t, "for (c_2, 0, "), 0) << t;  // no third pass over the row's chunks
    EXPECT_GT(count(t, "= __builtin_fma("), 0) << t;
    // The user's mean sums nothing of its own: its sum is the shifted sum
    // plus n times the shift, so the pass keeps the built-in's two
    // accumulators.
    EXPECT_EQ(count(t, "var acc"), count(builtin, "var acc")) << t;
    EXPECT_EQ(count(t, "+ f64(x0[j]))"), 0) << t;
    EXPECT_GT(count(t, "(f64(inner) * tf_where<f64>("), 0) << t;  // n times the finite shift
    for (auto d : {1, 2, 33, 2048}) agree(f, {{3, d}, {d}, {d}});
  }
  // A mean of products of two deviations, or of a deviation from another
  // row's mean, is not a variance of its row: computed as written.
  const std::string other = tir("not_a_variance");
  EXPECT_EQ(count(other, "__builtin_fma("), 0) << other;
  agree("not_a_variance", {{3, 100}, {3, 100}});
}

TEST_F(ComposedKernels, AOnePassVarianceIsTheExactMeanOfSquaresRoundedOnce) {
  // Rows whose literal two-pass form loses digits or whose one-pass form
  // could cancel: a tiny spread far from zero, an outlier as the first
  // element (the shift), a constant row, and uniform noise. The one-pass
  // result is within an ulp of the exact mean of squared deviations from
  // the mean as computed (rounded to f32, as d subtracts it), and agrees
  // with the evaluator's literal form.
  const int64_t n = 4096;
  std::vector<std::vector<float>> rows(4, std::vector<float>(n));
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (int64_t j = 0; j < n; ++j) {
    rows[0][j] = 1000.0f + 1e-3f * u(rng);
    rows[1][j] = j == 0 ? 3e4f : u(rng);
    rows[2][j] = -7.25f;
    rows[3][j] = u(rng);
  }
  NDArray x = NDArray::empty(DType::kF32, {4, n});
  for (int64_t r = 0; r < 4; ++r) std::copy(rows[r].begin(), rows[r].end(), static_cast<float*>(x.data()) + r * n);
  auto k = compiler::compile(fn("variance"));
  const NDArray got = run_native(*k, fn("variance"), {x})[0];
  const NDArray want = eval::evaluate(*module_, fn("variance"), {x})[0];
  EXPECT_EQ(compare(got, want, tolerance(DType::kF32)), "");
  for (int64_t r = 0; r < 4; ++r) {
    double sum = 0;
    for (float v : rows[r]) sum += v;
    const float mean = static_cast<float>(sum) / static_cast<float>(n);
    long double sq = 0;
    for (float v : rows[r]) sq += (static_cast<long double>(v) - mean) * (static_cast<long double>(v) - mean);
    const float exact = static_cast<float>(sq / n);
    const float g = static_cast<const float*>(got.data())[r];
    EXPECT_LE(std::abs(g - exact), std::abs(std::nextafter(exact, INFINITY) - exact)) << "row " << r;
  }
  EXPECT_EQ(static_cast<const float*>(got.data())[2], 0.0f);
  // NaN and infinities propagate as in the literal form, to the variance
  // and to the mean beside it (whose sum is derived from the shifted one:
  // an infinite first element is no shift).
  float* p = static_cast<float*>(x.data());
  p[0] = NAN;
  p[n + 5] = INFINITY;
  p[2 * n] = -INFINITY;
  p[3 * n] = INFINITY;
  expect_agree(*k, *module_, fn("variance"), {x}, "variance of rows with NaN and inf");
  // A row whose variance is NaN shows its mean (y + m, in the same stage:
  // one loop nest).
  EXPECT_EQ(stages("mean_past_variance"), 1);
  auto past = compiler::compile(fn("mean_past_variance"));
  const NDArray y = NDArray::empty(DType::kF32, {4, n});  // zeros
  expect_agree(*past, *module_, fn("mean_past_variance"), {x, y}, "the mean of rows with NaN and inf");
  const NDArray shown = run_native(*past, fn("mean_past_variance"), {x, y})[0];
  EXPECT_EQ(static_cast<const float*>(shown.data())[2 * n + 1], -INFINITY);
  EXPECT_EQ(static_cast<const float*>(shown.data())[3 * n + 1], INFINITY);
}

TEST_F(ComposedKernels, AReturnedValueOfRowReductionsReadsThemFromMemory) {
  // An (N, 1) output computed from reductions over (N, D) rows is a stage
  // over rows of one element: the reductions are computed before it (they
  // once ran inside it, over one element of each row).
  for (auto d : {1, 3, 100, 4096}) agree("row_scalars", {{5, d}});
}

TEST_F(ComposedKernels, TwoExpsOfTheLastPassDoNotShareTheOutputRow) {
  // The output row (or an f16 / bf16 output's float row) caches one value
  // of the last reduction pass per element. Two softmaxes in one stage once
  // both cached their exps there, each reading the other's, and one of the
  // sums was never accumulated: inf everywhere. (Found by the random
  // programs: softmax in its own where's condition.)
  for (auto rows : std::vector<std::vector<int64_t>>{{3, 37}, {64, 600}, {2, 3000}}) {
    agree("two_softmaxes", {rows});
    agree("two_softmaxes_bf16", {rows});
    agree("softmax_in_its_own_condition", {{rows[1]}, rows});
  }
}

TEST_F(ComposedKernels, TwoSumsOfOneExpEachSumIt) {
  // The first sum takes the exp routine's sweep (tf_exp_sum_n); the second
  // once replaced it and left the first at 0.
  for (auto d : {5, 300, 3000}) agree("one_exp_two_sums", {{4, d}});
}

TEST_F(ComposedKernels, FusedMaxPropagatesNaNAsTheEvaluator) {
  auto k = compiler::compile(fn("row_max_nan"));
  std::mt19937 rng(3);
  // A NaN in a row's first block of partials, and one in its second chunk.
  for (const auto& [d, at] : std::vector<std::pair<int64_t, int64_t>>{{40, 17}, {600, 300}}) {
    NDArray x = random_array(DType::kF32, {3, d}, rng);
    static_cast<float*>(x.data())[d + at] = std::nanf("");  // row 1 only
    expect_agree(*k, *module_, fn("row_max_nan"), {x}, "row_max_nan");
    std::vector<NDArray> got = run_native(*k, fn("row_max_nan"), {x});
    EXPECT_TRUE(std::isnan(element(got[0], d))) << d;
    EXPECT_FALSE(std::isnan(element(got[0], 0))) << d;
  }
}

TEST_F(ComposedKernels, AReductionThatIsAlsoAnOutputIsStoredOnce) {
  // The sum is materialized (its own stage) and read back by the division.
  EXPECT_EQ(stages("reduce_output"), 2);
  agree("reduce_output", {{6, 50}});
}

TEST_F(ComposedKernels, AReductionBroadcastPastItsRowsIsNotFused) {
  // (N, D) rows are not the rows of the (2, N, D) result: the mean is
  // computed by a reduce stage and read as a leaf.
  EXPECT_EQ(stages("broadcast_past_rows"), 2);
  agree("broadcast_past_rows", {{3, 20}, {2, 3, 20}});
}

TEST_F(ComposedKernels, EmptyRowsAreCheckedBeforeAnythingIsWritten) {
  // The mean's empty-row check reads shapes only: it runs first, so the
  // kernel does not count as one that can fail after writing (callers then
  // let it write their outputs directly).
  const compiler::Program p = compiler::generate(fn("rms_f32"));
  EXPECT_FALSE(p.may_fail);
  EXPECT_LT(p.body.find("precheck: mean over an empty row"), p.body.find("// stage:"));
}

TEST_F(ComposedKernels, ProductsRoundBeforeTheyAreSubtracted) {
  // t - max(t) is exactly 0 at the maximum, as in the evaluator; a fused
  // multiply-subtract gave t's rounding error there, and its floor -1.
  // (Found by the random programs.)
  auto k = compiler::compile(fn("floor_below_max"));
  std::mt19937 rng(5);
  // About one row in 500 had its maximum come out below itself.
  for (int trial = 0; trial < 100; ++trial) {
    NDArray p = random_array(DType::kF64, {44}, rng), x = random_array(DType::kF64, {32, 44}, rng);
    std::vector<NDArray> got = run_native(*k, fn("floor_below_max"), {p, x});
    std::vector<NDArray> want = eval::evaluate(*module_, fn("floor_below_max"), {p, x});
    ASSERT_EQ(compare(got[0], want[0], {0, 0}), "") << "trial " << trial;
  }
}

TEST_F(ComposedKernels, ABuiltInRowOpReadsAFusedProducerFromMemory) {
  // c (an output) is a row stage of its own; RMSNorm reads it back rather
  // than computing it in its first pass: c's own value needs its row's sum
  // first. (Found by the random programs.)
  EXPECT_EQ(stages("centred_then_rms_norm"), 2);
  agree("centred_then_rms_norm", {{4, 30}, {30}});
}

TEST_F(ComposedKernels, BuiltInRowOpsLowerAsTheirCompositions) {
  // rms_norm is decomposed into the ops a user writes for it, rounding
  // points included: the built-in and the composition are the same loop
  // nest (only the composition's mean checks for empty rows first).
  auto stage = [&](const std::string& name) {
    const std::string t = tir(name);
    return t.substr(t.find("// stage:"));
  };
  EXPECT_TRUE(stage("rms_builtin") == stage("rms_f32")) << stage("rms_builtin") << "\n---\n" << stage("rms_f32");
  EXPECT_TRUE(stage("rms_builtin_bf16") == stage("rms_bf16"));
  for (const char* name : {"rms_builtin", "rms_builtin_bf16"}) EXPECT_EQ(stages(name), 1) << name;
}

TEST_F(ComposedKernels, BuiltInRowOpsOfEmptyRowsAreEmpty) {
  // A decomposition's mean over a zero-length row is not an error (the
  // built-ins return an empty result), and LayerNorm's shift by the row's
  // first element reads nothing.
  const compiler::Program p = compiler::generate(fn("row_ops_of_empty_rows"));
  EXPECT_EQ(p.body.find("precheck: mean over an empty row"), std::string::npos);
  auto k = compiler::compile(fn("row_ops_of_empty_rows"));
  NDArray x = NDArray::empty(DType::kF32, {3, 0}), w = NDArray::empty(DType::kF32, {0});
  EXPECT_EQ(eval::evaluate(*module_, fn("row_ops_of_empty_rows"), {x, w}).size(), 3u);
  std::vector<NDArray> got = run_native(*k, fn("row_ops_of_empty_rows"), {x, w});
  ASSERT_EQ(got.size(), 3u);
  for (const NDArray& g : got) EXPECT_EQ(g.shape(), (std::vector<int64_t>{3, 0}));
  agree("row_ops_of_empty_rows", {{3, 17}, {17}});
}

TEST(ScalarLowerings, ASecondFormForAnOpIsRefused) {
  const compiler::ScalarLowering* binary = compiler::find_scalar_lowering("Binary");
  ASSERT_TRUE(binary);
  try {
    compiler::register_scalar_lowering("Binary", *binary);
    FAIL() << "a second scalar lowering for Binary was accepted";
  } catch (const ir::Error& e) {
    EXPECT_EQ(e.kind(), ir::ErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("op 'Binary' already has a scalar lowering"), std::string::npos) << e.what();
  }
  EXPECT_EQ(compiler::find_scalar_lowering("Binary"), binary);
  EXPECT_EQ(compiler::find_scalar_lowering("MatMul"), nullptr);
}

TEST_F(ComposedKernels, MeanOverEmptyRowsFailsAsTheEvaluator) {
  auto k = compiler::compile(fn("empty_rows"));
  NDArray x = NDArray::empty(DType::kF32, {3, 0});
  std::string want, got;
  try {
    eval::evaluate(*module_, fn("empty_rows"), {x});
  } catch (const ir::Error& e) {
    want = e.what();
  }
  try {
    run_native(*k, fn("empty_rows"), {x});
  } catch (const ir::Error& e) {
    got = e.what();
  }
  EXPECT_NE(want, "");
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace tf::comptest
