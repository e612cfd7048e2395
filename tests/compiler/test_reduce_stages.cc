// Reduce as a stage of its own (core/compiler/lower_reduce.cc), compiled
// against the evaluator in both schedules: rows (the last axis reduced at
// unit stride, or no kept axis at unit stride) and columns (a kept axis at
// unit stride: each task folds a tile of it over every reduced index; the
// last kept axis, or another where the reduced last axis is strided, as in
// a Transpose the stage reads in place). Every kind, the float, half and
// integer types, tiles around the chunk and the vector width, NaN and
// infinities, empty axes, strided operands, and the forms that make each
// vectorize.
#include <cmath>
#include <limits>

#include "compiler_helpers.h"
#include "core/compiler/codegen.h"
#include "core/frontend/parser.h"
#include "core/runtime/threads.h"

namespace tf::comptest {
namespace {

const char* kSource = R"(from tilefoundry.dsl import *

N = DimVar("N", 0, 1 << 20)
D = DimVar("D", 0, 1 << 16)
B = DimVar("B", 1, 64)

@func
def col_sum(x: Tensor[(N, D), f32]) -> Tensor[(D,), f32]:
    return sum(x, axes=0, keepdim=False)

@func
def col_mean64(x: Tensor[(N, D), f64]) -> Tensor[(1, D), f64]:
    return mean(x, axes=0)

@func
def col_max(x: Tensor[(N, D), f32]) -> tuple[Tensor[(D,), f32], Tensor[(D,), f32]]:
    return amax(x, axes=0, keepdim=False), abs_max(x, axes=0, keepdim=False)

@func
def col_int(x: Tensor[(N, D), i32], y: Tensor[(N, D), i64]) -> tuple[Tensor[(D,), i32], Tensor[(D,), i64]]:
    return sum(x, axes=0, keepdim=False), abs_max(y, axes=0, keepdim=False)

@func
def mid_sum16(x: Tensor[(B, N, D), f16]) -> Tensor[(B, D), f16]:
    return sum(x, axes=1, keepdim=False)

@func
def mid_maxb16(x: Tensor[(B, N, D), bf16]) -> Tensor[(D,), bf16]:
    return amax(x, axes=(0, 1), keepdim=False)

@func
def sm0(x: Tensor[(N, D), f32]) -> Tensor[(N, D), f32]:
    return softmax(x, axis=0)

@func
def sm_mid(x: Tensor[(B, N, D), bf16]) -> Tensor[(B, N, D), bf16]:
    return softmax(x, axis=1)

@func
def sm_neg2(x: Tensor[(B, N, D), f64]) -> Tensor[(B, N, D), f64]:
    return softmax(x * 2.0, axis=-2)

@func
def full(x: Tensor[(N, D), f32], k: Tensor[(B, N, D), i32]) -> tuple[Tensor[(), f32], Tensor[(1, 1), f32],
                                                                       Tensor[(), f32], Tensor[(), i32]]:
    return (sum(x, axes=(0, 1), keepdim=False), amax(x, axes=(0, 1)), mean(x, axes=(0, 1), keepdim=False),
            sum(k, axes=(0, 1, 2), keepdim=False))

@func
def vec(x: Tensor[(N,), f32], k: Tensor[(N,), i64]) -> tuple[Tensor[(), f32], Tensor[(), f32], Tensor[(), f32],
                                                               Tensor[(), i64]]:
    return (sum(x, axes=0, keepdim=False), amax(x, axes=0, keepdim=False), mean(x, axes=0, keepdim=False),
            sum(k, axes=0, keepdim=False))

@func
def per_batch(x: Tensor[(B, N, D), f32]) -> tuple[Tensor[(B,), f32], Tensor[(B,), f32]]:
    return sum(x, axes=(1, 2), keepdim=False), amax(x, axes=(-2, -1), keepdim=False)

@func
def row_max(x: Tensor[(N, D), f32]) -> tuple[Tensor[(N,), f32], Tensor[(N,), f32], Tensor[(N,), f32]]:
    return amax(x, axes=-1, keepdim=False), abs_max(x, axes=-1, keepdim=False), sum(x, axes=-1, keepdim=False)

@func
def t_sum(x: Tensor[(N, D), f32]) -> tuple[Tensor[(D,), f32], Tensor[(D, 1), f32]]:
    return sum(transpose(x, (1, 0)), axes=-1, keepdim=False), amax(transpose(x, (1, 0)), axes=-1)

@func
def t_mid(x: Tensor[(B, N, D), f16], y: Tensor[(B, N, D), i32]) -> tuple[Tensor[(B, D), f16], Tensor[(D, B), i32]]:
    return mean(transpose(x, (0, 2, 1)), axes=-1, keepdim=False), sum(transpose(y, (2, 0, 1)), axes=-1, keepdim=False)

@func
def t_shared(x: Tensor[(N, D), f32]) -> tuple[Tensor[(D,), f32], Tensor[(D, N), f32]]:
    t = transpose(x, (1, 0))
    return sum(t, axes=-1, keepdim=False), t

@func
def t_twice(x: Tensor[(N, D), f32]) -> tuple[Tensor[(D,), f32], Tensor[(D,), f32]]:
    t = transpose(x * 2.0, (1, 0))
    return sum(t, axes=-1, keepdim=False), amax(t, axes=-1, keepdim=False)

@func
def sink_sum(x: Tensor[(N, D), f32], y: Tensor[(N, D), f32]) -> Tensor[(D,), f32]:
    return sum(exp(transpose(x, (1, 0))) * 2.0 - transpose(y, (-1, 0)), axes=-1, keepdim=False)

@func
def sink_col(x: Tensor[(N, D), f32], w: Tensor[(1, 1), f32]) -> Tensor[(N,), f32]:
    return amax(transpose(x, (1, 0)) * w, axes=0, keepdim=False)

@func
def sink_3d(x: Tensor[(B, N, D), f16]) -> Tensor[(D, B, 1), f64]:
    return mean(cast(transpose(x, (2, 0, 1)), f64), axes=-1)

@func
def sink_under_rms(x: Tensor[(N, D), f32], w: Tensor[(N,), f32]) -> Tensor[(1, N), f32]:
    return rms_norm(sum(transpose(x, (1, 0)) * 2.0, axes=0), w, eps=1e-6)

@func
def keep_shared(x: Tensor[(N, D), f32]) -> tuple[Tensor[(D,), f32], Tensor[(D, N), f32]]:
    y = transpose(x, (1, 0)) * 2.0
    return sum(y, axes=-1, keepdim=False), y

@func
def keep_mixed(x: Tensor[(N, D), f32], z: Tensor[(D, N), f32]) -> Tensor[(D,), f32]:
    return sum(transpose(x, (1, 0)) * z, axes=-1, keepdim=False)

@func
def keep_row(x: Tensor[(N, D), f32]) -> Tensor[(D, N), f32]:
    y = transpose(x, (1, 0)) * 2.0
    return y / sum(y, axes=-1)
)";

class ReduceStages : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { module_ = frontend::parse_module(kSource, "reduce_stages.tf"); }
  static const ir::Function& fn(const std::string& name) { return *module_->lookup(name); }
  void check(const std::string& name, const std::vector<NDArray>& in, const std::string& what) {
    expect_agree(*compiler::compile(fn(name)), *module_, fn(name), in, name + " " + what);
  }
  static ir::ModulePtr module_;
  std::mt19937 rng_{71};
};
ir::ModulePtr ReduceStages::module_;

void set_f32(NDArray& a, int64_t i, float v) { static_cast<float*>(a.data())[i] = v; }

TEST_F(ReduceStages, ColumnsAgreeWithTheEvaluator) {
  for (int64_t d : {1, 15, 16, 17, 255, 256, 257, 700}) {
    for (int64_t n : {1, 5, 33}) {
      const std::string what = "[" + std::to_string(n) + ", " + std::to_string(d) + "]";
      check("col_sum", {random_array(DType::kF32, {n, d}, rng_)}, what);
      check("col_mean64", {random_array(DType::kF64, {n, d}, rng_)}, what);
      check("col_max", {random_array(DType::kF32, {n, d}, rng_)}, what);
      check("col_int", {random_array(DType::kI32, {n, d}, rng_, 1000.0), random_array(DType::kI64, {n, d}, rng_, 1000.0)},
            what);
    }
  }
  // Reduced axes on both sides of a kept one, and around the last kept axis.
  check("mid_sum16", {random_array(DType::kF16, {3, 7, 300}, rng_)}, "[3, 7, 300]");
  check("mid_maxb16", {random_array(DType::kBF16, {4, 9, 513}, rng_)}, "[4, 9, 513]");
  // Large enough for the tasks to run in parallel.
  check("col_sum", {random_array(DType::kF32, {300, 1000}, rng_)}, "[300, 1000]");
}

// A tile is as wide as the call's threads allow (a multiple of 256, at
// most 1024) and folds 8 rows per pass, the rest one at a time: widths of
// one tile, of several with a short last one, and of the widest, with row
// counts below, at and past a pass, on one thread, two and three.
TEST_F(ReduceStages, ColumnTilesFollowTheThreads) {
  for (int threads : team_sizes()) {
    runtime::set_num_threads(threads);
    for (int64_t d : {300, 1024, 2500})
      for (int64_t n : {7, 8, 17}) {
        const std::string what = "[" + std::to_string(n) + ", " + std::to_string(d) + "] on " +
                                 std::to_string(threads) + " thread(s)";
        check("col_sum", {random_array(DType::kF32, {n, d}, rng_)}, what);
        check("col_max", {random_array(DType::kF32, {n, d}, rng_)}, what);
      }
    // Tiles of the middle axis of every batch, which gives the threads
    // tasks of its own.
    check("mid_sum16", {random_array(DType::kF16, {3, 21, 1500}, rng_)}, "[3, 21, 1500]");
  }
  runtime::set_num_threads(0);
}

// One kept axis of at most 1024 elements over dense rows: runs of
// 1024 / len rows, 4 per pass, split among the threads, each part's groups
// folded together, the parts then, and the rows after the last run. Shapes with
// one run, many, parts of unequal length and rows left over (fewer than a
// pass and more), reduced axes on both sides of nothing else, a transposed
// operand, integers, a mean; rows at a larger stride take the general
// schedule.
TEST_F(ReduceStages, DenseColumnsSplitTheRowsAmongTheThreads) {
  for (int threads : team_sizes()) {
    runtime::set_num_threads(threads);
    const std::string on = " on " + std::to_string(threads) + " thread(s)";
    for (const auto& shape : std::vector<std::vector<int64_t>>{{4009, 100}, {4003, 100}, {2000, 1024}, {70, 513}, {5000, 1}, {3, 7}}) {
      const std::string what = "[" + std::to_string(shape[0]) + ", " + std::to_string(shape[1]) + "]" + on;
      check("col_sum", {random_array(DType::kF32, shape, rng_)}, what);
      check("col_max", {random_array(DType::kF32, shape, rng_)}, what);
      check("col_mean64", {random_array(DType::kF64, shape, rng_)}, what);
      check("col_int", {random_array(DType::kI32, shape, rng_, 1000.0), random_array(DType::kI64, shape, rng_, 1000.0)}, what);
    }
    check("mid_maxb16", {random_array(DType::kBF16, {8, 300, 200}, rng_)}, "[8, 300, 200]" + on);
    check("t_sum", {random_array(DType::kF32, {4009, 100}, rng_)}, "x.T of [4009, 100]" + on);
    NDArray big = random_array(DType::kF32, {3000, 200}, rng_);
    check("col_sum", {NDArray::view(big, {3000, 150}, {200, 1})}, "rows at a stride of 200" + on);
  }
  runtime::set_num_threads(0);
}

// A column's NaN in the first part, in the last and in the rows after the
// last run makes its max NaN, whichever part holds it.
TEST_F(ReduceStages, DenseColumnMaximaPropagateNaNFromEveryPart) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  NDArray x = random_array(DType::kF32, {4009, 100}, rng_);
  set_f32(x, 10 * 100 + 1, nan);
  set_f32(x, 3000 * 100 + 2, nan);
  set_f32(x, 4005 * 100 + 3, nan);
  for (int threads : team_sizes()) {
    runtime::set_num_threads(threads);
    auto got = run_native(*compiler::compile(fn("col_max")), fn("col_max"), {x});
    for (const NDArray& g : got) {
      const float* y = static_cast<const float*>(g.data());
      EXPECT_TRUE(std::isnan(y[1]) && std::isnan(y[2]) && std::isnan(y[3])) << threads;
      EXPECT_FALSE(std::isnan(y[0]) || std::isnan(y[4])) << threads;
    }
    check("col_max", {x}, "NaN on " + std::to_string(threads) + " thread(s)");
  }
  runtime::set_num_threads(0);
}

// A NaN anywhere in a column makes its max NaN, in the first tile and past
// it; infinities are values.
// (Rows 2 and 13 are folded in passes of 8 rows, row 17 alone; columns
// 300 and 2100 lie past the first tile of any width.)
TEST_F(ReduceStages, ColumnMaximaPropagateNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const int64_t d = 2200;
  NDArray x = random_array(DType::kF32, {18, d}, rng_);
  set_f32(x, 2 * d + 3, nan);
  set_f32(x, 13 * d + 300, nan);
  set_f32(x, 17 * d + 2100, nan);
  set_f32(x, 0 * d + 301, -inf);
  set_f32(x, 4 * d + 302, inf);
  auto got = run_native(*compiler::compile(fn("col_max")), fn("col_max"), {x});
  for (const NDArray& g : got) {
    const float* y = static_cast<const float*>(g.data());
    EXPECT_TRUE(std::isnan(y[3]) && std::isnan(y[300]) && std::isnan(y[2100]));
    EXPECT_FALSE(std::isnan(y[4]) || std::isnan(y[299]) || std::isnan(y[301]) || std::isnan(y[2099]));
    EXPECT_EQ(y[302], inf);
  }
  check("col_max", {x}, "NaN and infinities");
}

// The same in the rows schedule, with rows long enough for its lane
// partials (blocks of 32) and a remainder.
TEST_F(ReduceStages, RowMaximaPropagateNaN) {
  NDArray x = random_array(DType::kF32, {4, 1000}, rng_);
  set_f32(x, 1 * 1000 + 500, std::numeric_limits<float>::quiet_NaN());
  set_f32(x, 2 * 1000 + 999, std::numeric_limits<float>::quiet_NaN());  // in the remainder
  auto got = run_native(*compiler::compile(fn("row_max")), fn("row_max"), {x});
  for (const NDArray& g : got) {
    const float* y = static_cast<const float*>(g.data());
    EXPECT_FALSE(std::isnan(y[0]) || std::isnan(y[3]));
    EXPECT_TRUE(std::isnan(y[1]) && std::isnan(y[2]));
  }
  check("row_max", {x}, "NaN");
  for (int64_t d : {1, 31, 32, 33, 4103}) check("row_max", {random_array(DType::kF32, {3, d}, rng_)}, std::to_string(d));
}

// Fewer rows than threads split each row's walks among them, each part
// into an accumulator of its own, joined in order: full reductions (one
// row) and two or three rows of a reduction over two axes, a NaN in one
// part, parts of unequal length, walks too short to split, an integer sum
// that wraps. A reduction over the last axis alone (a vector's total) is
// one walk per row: its elements are split, in ranges of whole lane
// blocks, the last one short.
TEST_F(ReduceStages, FewRowsSplitTheirWalksAmongTheThreads) {
  for (int threads : team_sizes()) {
    runtime::set_num_threads(threads);
    const std::string on = " on " + std::to_string(threads) + " thread(s)";
    for (const auto& s : std::vector<std::vector<int64_t>>{{4001, 300}, {257, 128}, {3, 5}, {70000, 1}}) {
      const std::string what = "[" + std::to_string(s[0]) + ", " + std::to_string(s[1]) + "]" + on;
      check("full", {random_array(DType::kF32, s, rng_), random_array(DType::kI32, {2, s[0], s[1]}, rng_, 1e8)}, what);
    }
    for (int64_t b : {2, 3})
      check("per_batch", {random_array(DType::kF32, {b, 301, 500}, rng_)}, std::to_string(b) + " rows" + on);
    for (int64_t n : {300001, 131077, 65536, 1000}) {
      NDArray v = random_array(DType::kF32, {n}, rng_);
      check("vec", {v, random_array(DType::kI64, {n}, rng_, 1e17)}, "[" + std::to_string(n) + "]" + on);
      static_cast<float*>(v.data())[n - 2] = std::numeric_limits<float>::quiet_NaN();  // in the last part
      const NDArray k = random_array(DType::kI64, {n}, rng_);
      const auto got = run_native(*compiler::compile(fn("vec")), fn("vec"), {v, k});
      EXPECT_TRUE(std::isnan(static_cast<const float*>(got[1].data())[0])) << n << on;
      check("vec", {v, k}, "NaN in [" + std::to_string(n) + "]" + on);
    }
    NDArray x = random_array(DType::kF32, {4001, 300}, rng_);
    set_f32(x, 3900 * 300 + 7, std::numeric_limits<float>::quiet_NaN());  // in the last part
    const NDArray k = random_array(DType::kI32, {1, 4001, 300}, rng_);
    auto got = run_native(*compiler::compile(fn("full")), fn("full"), {x, k});
    EXPECT_TRUE(std::isnan(static_cast<const float*>(got[1].data())[0])) << on;
    check("full", {x, random_array(DType::kI32, {1, 4001, 300}, rng_, 1e8)}, "NaN" + on);
  }
  runtime::set_num_threads(0);
  const std::string t = compiler::generate(fn("full")).tir;
  EXPECT_GT(count(t, "partial[t] = (partial[t] + partial[((p * outer) + t)])"), 0) << t;
  EXPECT_GT(count(t, "partial_nans[t] = (partial_nans[t] + partial_nans[((p * outer) + t)])"), 0) << t;
  const std::string v = compiler::generate(fn("vec")).tir;
  EXPECT_GT(count(v, "let pq: i64 = max(1, min(parts, rout))"), 0) << v;
  EXPECT_GT(count(v, "let j0: i64 = min(inner, ((s / pq) * per_j))"), 0) << v;
}

// A last axis not at unit stride takes the rows schedule; a transposed
// operand's reduced axis is then the contiguous one.
TEST_F(ReduceStages, StridedOperands) {
  NDArray big = random_array(DType::kF32, {40, 600}, rng_);
  check("col_sum", {NDArray::view(big, {20, 300}, {1200, 2})}, "step-2 columns");
  check("col_sum", {NDArray::view(big, {600, 40}, {1, 600})}, "transposed");
  check("col_max", {NDArray::view(big, {600, 40}, {1, 600})}, "transposed");
  check("row_max", {NDArray::view(big, {40, 300}, {600, 2})}, "step-2 rows");
}

TEST_F(ReduceStages, EmptyAxes) {
  check("col_sum", {NDArray::empty(DType::kF32, {0, 5})}, "no rows");  // zeros
  check("col_sum", {NDArray::empty(DType::kF32, {4, 0})}, "no columns");
  check("col_max", {NDArray::empty(DType::kF32, {0, 5})}, "no rows");  // -inf and 0
  auto k = compiler::compile(fn("col_mean64"));
  expect_runtime_error([&] { run_native(*k, fn("col_mean64"), {NDArray::empty(DType::kF64, {0, 5})}); },
                       "mean over an empty axis");
  check("col_mean64", {NDArray::empty(DType::kF64, {3, 0})}, "no columns");  // nothing to divide: no error
}

// SoftMax over an axis other than the last compiles to Reduce stages over
// that axis (its max and its sum) around elementwise ones; a NaN in a
// column makes the column NaN, a column of -inf and finite values keeps
// its finite part.
TEST_F(ReduceStages, SoftMaxOverAnotherAxis) {
  for (const char* name : {"sm0", "sm_mid", "sm_neg2"})
    EXPECT_EQ(count(compiler::generate(fn(name)).tir, "// stage: reduce"), 2) << name;
  for (int64_t d : {1, 17, 300}) check("sm0", {random_array(DType::kF32, {33, d}, rng_, 20.0)}, std::to_string(d));
  NDArray x = random_array(DType::kF32, {6, 500}, rng_, 20.0);
  set_f32(x, 3 * 500 + 7, std::numeric_limits<float>::quiet_NaN());
  for (int64_t r = 0; r < 5; ++r) set_f32(x, r * 500 + 400, -std::numeric_limits<float>::infinity());
  auto got = run_native(*compiler::compile(fn("sm0")), fn("sm0"), {x});
  const float* y = static_cast<const float*>(got[0].data());
  EXPECT_TRUE(std::isnan(y[7]) && std::isnan(y[5 * 500 + 7]));
  EXPECT_EQ(y[5 * 500 + 400], 1.0f);  // the column's one finite value
  check("sm0", {x}, "NaN and -inf");
  check("sm_mid", {random_array(DType::kBF16, {3, 9, 300}, rng_, 8.0)}, "[3, 9, 300]");
  check("sm_neg2", {random_array(DType::kF64, {2, 40, 257}, rng_, 8.0)}, "[2, 40, 257]");
}

// The forms: columns fold a tile of accumulators with contiguous loads
// under a unit-stride test; rows have a unit-stride loop of their own; a
// float max is a vectorized max beside a NaN count, not tf_max.
TEST_F(ReduceStages, EachScheduleVectorizes) {
  const std::string c = compiler::generate(fn("col_max")).tir;
  EXPECT_GT(count(c, "if ((st0[1] == 1))"), 0) << c;
  // Passes of rows combined pairwise, then the rest of the rows one per
  // pass: 4 per pass in the dense schedule's parts and its rows after the
  // last run, 8 in the tiles of the general one (the parts and the tiles
  // twice: each parallel loop has a serial twin).
  EXPECT_EQ(count(c, "max(x_2"), 5) << c;
  EXPECT_EQ(count(c, "max(x_6"), 2) << c;
  EXPECT_GT(count(c, "i32((x_3[t] != x_3[t]))"), 0) << c;
  EXPECT_GT(count(c, "ms[t] = max(ms[t], x[t])"), 0) << c;
  EXPECT_GT(count(c, "nans[t] = (nans[t] + i32((x[t] != x[t])))"), 0) << c;
  EXPECT_EQ(count(c, "tf_max("), 0) << c;
  // The dense schedule's parts meet in the first row of `partial`.
  EXPECT_GT(count(c, "if ((((sh0[1] > 0) && (sh0[1] <= 1024)) && (st0[0] == sh0[1])))"), 0) << c;
  EXPECT_GT(count(c, "partial[t] = max(partial[t], partial[((q * len) + t)])"), 0) << c;
  EXPECT_GT(count(c, "partial_nans[t] = (partial_nans[t] + partial_nans[((q * len) + t)])"), 0) << c;
  const std::string s = compiler::generate(fn("col_sum")).tir;
  EXPECT_EQ(count(s, "(f64(x_2"), 5) << s;
  EXPECT_EQ(count(s, "(f64(x_6"), 2) << s;
  EXPECT_GT(count(s, "accs[t] = (accs[t] + f64(x[t]))"), 0) << s;
  EXPECT_GT(count(s, "partial[t] = (partial[t] + partial[((q * len) + t)])"), 0) << s;
  const std::string r = compiler::generate(fn("row_max")).tir;
  EXPECT_GT(count(r, "if ((is == 1))"), 0) << r;
  EXPECT_GT(count(r, "reduce(max: m"), 0) << r;
  EXPECT_GT(count(r, "[j]"), 0) << r;  // the rows' loads (the columns' are [t])
  EXPECT_GT(count(r, "[(j * is)]"), 0) << r;
  EXPECT_EQ(count(r, "tf_max("), 0) << r;
  // The rows of a transposed view fold as columns of its first axis.
  EXPECT_GT(count(r, "if (((st0[0] == 1) && (st0[1] != 1)))"), 0) << r;
}

// A Reduce of a Transpose is one stage that reads the Transpose's operand
// in place: a sum over the last axis of x.T folds tiles of x's rows (the
// columns schedule over a kept axis that is not the last), instead of
// storing the transposed copy and summing its rows. Every tile edge, the
// kinds, f16 and i32, a batch axis kept before or after the tiled one,
// keepdim; NaN in a column. A Transpose of x * 2 read by two reduce
// stages is read in place by both, each computing x * 2 where it reads it
// (nothing else is stored); one that is also an output is stored and read
// from its slot.
TEST_F(ReduceStages, ATransposeIsReadInPlace) {
  for (const char* f : {"t_sum", "t_mid"}) {
    const std::string t = compiler::generate(fn(f)).tir;
    EXPECT_EQ(count(t, "// stage: Transpose"), 0) << f << "\n" << t;
    EXPECT_EQ(count(t, "// stage: reduce"), 2) << f << "\n" << t;
  }
  const std::string shared = compiler::generate(fn("t_shared")).tir;
  EXPECT_EQ(count(shared, "// stage:"), 2) << shared;
  const std::string twice = compiler::generate(fn("t_twice")).tir;
  EXPECT_EQ(count(twice, "// stage:"), 2) << twice;
  EXPECT_EQ(count(twice, "// stage: reduce"), 2) << twice;
  EXPECT_EQ(count(twice, "// stage: Transpose"), 0) << twice;
  for (int64_t d : {1, 15, 16, 17, 255, 256, 257, 700})
    for (int64_t n : {1, 5, 33}) {
      const std::string what = "[" + std::to_string(n) + ", " + std::to_string(d) + "]";
      check("t_sum", {random_array(DType::kF32, {n, d}, rng_)}, what);
      check("t_shared", {random_array(DType::kF32, {n, d}, rng_)}, what);
      check("t_twice", {random_array(DType::kF32, {n, d}, rng_)}, what);
    }
  check("t_mid", {random_array(DType::kF16, {3, 7, 300}, rng_), random_array(DType::kI32, {3, 7, 300}, rng_, 1000.0)},
        "[3, 7, 300]");
  check("t_mid", {random_array(DType::kF16, {2, 40, 9}, rng_), random_array(DType::kI32, {2, 40, 9}, rng_, 1000.0)},
        "[2, 40, 9]");
  // Large enough for the tasks to run in parallel.
  check("t_sum", {random_array(DType::kF32, {300, 1000}, rng_)}, "[300, 1000]");
  NDArray x = random_array(DType::kF32, {6, 700}, rng_);
  set_f32(x, 2 * 700 + 3, std::numeric_limits<float>::quiet_NaN());
  set_f32(x, 5 * 700 + 300, std::numeric_limits<float>::quiet_NaN());
  auto got = run_native(*compiler::compile(fn("t_sum")), fn("t_sum"), {x});
  const float* mx = static_cast<const float*>(got[1].data());
  EXPECT_TRUE(std::isnan(mx[3]) && std::isnan(mx[300]));
  EXPECT_FALSE(std::isnan(mx[4]) || std::isnan(mx[299]) || std::isnan(mx[301]));
  check("t_sum", {x}, "NaN");
}

// A Reduce stage of an elementwise value of transposes reads the transpose
// of that value in its operands' layout, computing the value where it
// reads it: one stage, reading x and y in place (its tiles run along x's
// unit-stride axis), and no stage copies a transpose. Nested ops, two Transposes
// (one written with a negative axis), a scalar-like operand, a reduction
// over the first axis, a 3-D permutation with a cast. Left as written: a
// value also returned, an operand that is not a Transpose, and a row
// reduction read back along its rows (its Transpose is copied as planes
// and the elementwise ops fused into the row stage).
TEST_F(ReduceStages, ATransposeSinksBelowElementwiseOpsIntoAReduce) {
  const std::string swapped = "let bs0_0: i64 = select((sh0[1] == 1), 0, st0[1])";
  for (const char* f : {"sink_sum", "sink_col", "sink_3d"}) {
    const std::string t = compiler::generate(fn(f)).tir;
    EXPECT_EQ(count(t, "// stage:"), 1) << f << "\n" << t;
    EXPECT_EQ(count(t, "// stage: reduce"), 1) << f << "\n" << t;
  }
  const std::string in_place = compiler::generate(fn("sink_sum")).tir;
  EXPECT_GT(count(in_place, "if ((((st0[1] == 1) && (st1[1] == 1)) && ((st0[0] != 1) || (st1[0] != 1))))"), 0)
      << in_place;
  for (const char* f : {"keep_shared", "keep_mixed"}) {
    const std::string t = compiler::generate(fn(f)).tir;
    EXPECT_EQ(count(t, swapped), 1) << f << "\n" << t;
  }
  const std::string row = compiler::generate(fn("keep_row")).tir;
  EXPECT_EQ(count(row, "// stage: Transpose"), 1) << row;
  EXPECT_EQ(count(row, "// stage:"), 2) << row;
  for (int64_t d : {1, 17, 256, 257, 700})
    for (int64_t n : {1, 5, 33}) {
      const std::string what = "[" + std::to_string(n) + ", " + std::to_string(d) + "]";
      const NDArray x = random_array(DType::kF32, {n, d}, rng_), y = random_array(DType::kF32, {n, d}, rng_);
      check("sink_sum", {x, y}, what);
      check("sink_col", {x, random_array(DType::kF32, {1, 1}, rng_)}, what);
      check("keep_shared", {x}, what);
      check("keep_mixed", {x, random_array(DType::kF32, {d, n}, rng_)}, what);
      check("keep_row", {x}, what);
    }
  check("sink_3d", {random_array(DType::kF16, {3, 7, 300}, rng_)}, "[3, 7, 300]");
  // The rewrite rebuilds the readers of a sunk reduction and carries what
  // the decompositions noted of them: RMSNorm's mean is not checked for an
  // empty row (an RMSNorm of rows of length 0 is empty, not an error).
  const std::string rms = compiler::generate(fn("sink_under_rms")).tir;
  EXPECT_EQ(count(rms, "// stage:"), 2) << rms;
  EXPECT_EQ(count(rms, "// stage: reduce"), 1) << rms;
  for (int64_t n : {0, 1, 300})
    check("sink_under_rms", {random_array(DType::kF32, {n, 17}, rng_), random_array(DType::kF32, {n}, rng_)},
          "[" + std::to_string(n) + ", 17]");
  check("sink_sum", {random_array(DType::kF32, {300, 1000}, rng_), random_array(DType::kF32, {300, 1000}, rng_)},
        "[300, 1000]");
}

// The rows of a transposed view given as the operand (a kept axis at unit
// stride, the reduced last one strided) take the columns schedule too.
TEST_F(ReduceStages, RowsOfATransposedViewFoldAsColumns) {
  NDArray big = random_array(DType::kF32, {40, 600}, rng_);
  set_f32(big, 7 * 600 + 11, std::numeric_limits<float>::quiet_NaN());
  check("row_max", {NDArray::view(big, {600, 40}, {1, 600})}, "transposed");
  check("row_max", {NDArray::view(big, {600, 20}, {1, 1200})}, "transposed, every other row");
  check("row_max", {NDArray::view(big, {257, 40}, {1, 600})}, "transposed, a tile and one");
}

}  // namespace
}  // namespace tf::comptest
