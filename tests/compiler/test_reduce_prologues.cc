// A Reduce stage computes its elementwise operand where it reads each
// element (core/compiler/inline_operand.h) instead of a stage storing the
// operand for it to read back: one stage per reduction, its leaves read at
// their own strides (broadcast ones at stride 0), in each schedule (rows,
// columns, dense columns), through a Transpose, on every team size, against
// the evaluator; operands something else needs stored still are.
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
def mse(a: Tensor[(N, D), f32], b: Tensor[(N, D), f32]) -> Tensor[(), f32]:
    d = a - b
    return mean(d * d, axes=(0, 1), keepdim=False)

@func
def sq_rows(x: Tensor[(N, D), f32]) -> Tensor[(N, 1), f32]:
    return sum(x * x, axes=-1)

@func
def bias_grad(g: Tensor[(N, D), f32], m: Tensor[(N, D), f32]) -> Tensor[(D,), f32]:
    return sum(g * m + 1.0, axes=0, keepdim=False)

@func
def broadcast(x: Tensor[(N, D), f64], s: Tensor[(N, 1), f64], w: Tensor[(1, D), f64],
              c: Tensor[(D,), f64]) -> tuple[Tensor[(D,), f64], Tensor[(N,), f64]]:
    y = (x - w) * s + c
    return sum(y, axes=0, keepdim=False), amax(y, axes=-1, keepdim=False)

@func
def nan_max(x: Tensor[(N, D), f32]) -> tuple[Tensor[(D,), f32], Tensor[(N,), f32]]:
    return amax(sqrt(x), axes=0, keepdim=False), abs_max(log(x), axes=-1, keepdim=False)

@func
def int_ops(a: Tensor[(N, D), i32], b: Tensor[(N, D), i32]) -> tuple[Tensor[(D,), i32], Tensor[(N,), i32]]:
    return sum(a * b, axes=0, keepdim=False), sum(a / b, axes=-1, keepdim=False)

@func
def half_mean(a: Tensor[(B, N, D), f16], b: Tensor[(B, N, D), f16]) -> Tensor[(B, D), f16]:
    return mean(a * b - a, axes=1, keepdim=False)

@func
def any_above(x: Tensor[(N, D), f32]) -> Tensor[(D,), bool]:
    return amax(x > 0.5, axes=0, keepdim=False)

@func
def t_prod(x: Tensor[(N, D), f32], y: Tensor[(N, D), f32]) -> Tensor[(D,), f32]:
    return sum(transpose(x * y, (1, 0)), axes=-1, keepdim=False)

@func
def returned(x: Tensor[(N, D), f32]) -> tuple[Tensor[(D,), f32], Tensor[(N, D), f32]]:
    y = exp(x) * 2.0
    return sum(y, axes=0, keepdim=False), y

@func
def long_tree(x: Tensor[(N, D), f32]) -> Tensor[(D,), f32]:
    y = x * 1.5 + 1.0
    y = y * 0.5 - 2.0
    y = y * 1.25 + 3.0
    y = y * 0.75 - 1.0
    y = y * 1.5 + 1.0
    y = y * 0.5 - 2.0
    y = y * 1.25 + 3.0
    y = y * 0.75 - 1.0
    y = y * 1.5 + 1.0
    return sum(y, axes=0, keepdim=False)

@func
def through_view(x: Tensor[(N, D), f32]) -> Tensor[(D, 1), f32]:
    return sum(reshape(x, (N, D, 1)) * 2.0, axes=0, keepdim=False)
)";

class ReducePrologues : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { module_ = frontend::parse_module(kSource, "reduce_prologues.tf"); }
  static const ir::Function& fn(const std::string& name) { return *module_->lookup(name); }
  static std::string tir(const std::string& name) { return compiler::generate(fn(name)).tir; }
  void check(const std::string& name, const std::vector<NDArray>& in, const std::string& what) {
    expect_agree(*compiler::compile(fn(name)), *module_, fn(name), in, name + " " + what);
  }
  static std::string shape_text(const std::vector<int64_t>& s) {
    std::string t = "[";
    for (size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
    return t + "]";
  }
  static ir::ModulePtr module_;
  std::mt19937 rng_{83};
};
ir::ModulePtr ReducePrologues::module_;

// Shapes for each schedule: rows of the rows schedule (a full reduction,
// rows reduced at unit stride), one kept axis of up to 1024 over dense rows
// (dense columns: one run, many, rows left over), wider kept axes (tiles),
// tiny and empty ones.
const std::vector<std::vector<int64_t>> kShapes{{1, 1},     {3, 5},     {33, 17},  {4009, 100}, {2000, 1024},
                                                 {70, 513},  {17, 2500}, {300, 1000}, {0, 7},     {5, 0}};

// Each reduction is one stage, which stores nothing but its result.
TEST_F(ReducePrologues, OneStagePerReduction) {
  for (const char* f : {"mse", "sq_rows", "bias_grad", "nan_max", "int_ops", "half_mean", "any_above", "t_prod"}) {
    const std::string t = tir(f);
    EXPECT_EQ(count(t, "// stage:"), count(t, "// stage: reduce")) << f << "\n" << t;
  }
  // Read by two reductions, y = (x - w) * s + c is computed by both.
  EXPECT_EQ(count(tir("broadcast"), "// stage:"), 2);
}

TEST_F(ReducePrologues, EachScheduleAgreesWithTheEvaluator) {
  for (int threads : team_sizes()) {
    runtime::set_num_threads(threads);
    const std::string on = " on " + std::to_string(threads) + " thread(s)";
    for (const auto& s : kShapes) {
      const std::string what = shape_text(s) + on;
      const NDArray a = random_array(DType::kF32, s, rng_), b = random_array(DType::kF32, s, rng_);
      if (s[0] * s[1] > 0) check("mse", {a, b}, what);  // a mean of nothing is an error
      check("sq_rows", {a}, what);
      check("bias_grad", {a, b}, what);
      check("t_prod", {a, b}, what);
      check("any_above", {a}, what);
      check("broadcast",
            {random_array(DType::kF64, s, rng_), random_array(DType::kF64, {s[0], 1}, rng_),
             random_array(DType::kF64, {1, s[1]}, rng_), random_array(DType::kF64, {s[1]}, rng_)},
            what);
      // Integers wrap; divisors are never 0 here (that error is tested below).
      NDArray q = random_array(DType::kI32, s, rng_, 1000.0);
      for (int64_t i = 0; i < q.numel(); ++i)
        if (static_cast<int32_t*>(q.data())[i] == 0) static_cast<int32_t*>(q.data())[i] = 7;
      check("int_ops", {random_array(DType::kI32, s, rng_, 1e5), q}, what);
    }
    check("half_mean", {random_array(DType::kF16, {3, 21, 1500}, rng_), random_array(DType::kF16, {3, 21, 1500}, rng_)},
          "[3, 21, 1500]" + on);
    check("half_mean", {random_array(DType::kF16, {2, 700, 40}, rng_), random_array(DType::kF16, {2, 700, 40}, rng_)},
          "[2, 700, 40]" + on);
  }
  runtime::set_num_threads(0);
}

// Leaves at their own strides: transposed and strided views of the
// inputs, one leaf contiguous beside a strided one (the unit-stride paths
// need every moving leaf at unit stride), and beside one whose rows are
// padded (the dense schedule needs every leaf's rows dense).
TEST_F(ReducePrologues, LeavesAtTheirOwnStrides) {
  for (const auto& s : std::vector<std::vector<int64_t>>{{40, 600}, {4009, 100}, {7, 3}}) {
    const std::string what = shape_text(s);
    NDArray at = random_array(DType::kF32, {s[1], s[0]}, rng_), b = random_array(DType::kF32, s, rng_);
    const NDArray a_t = NDArray::view(at, s, {1, s[0]});
    NDArray wide = random_array(DType::kF32, {s[0], 2 * s[1]}, rng_);
    const NDArray every_other = NDArray::view(wide, s, {2 * s[1], 2});
    NDArray roomy = random_array(DType::kF32, {s[0], s[1] + 50}, rng_);
    const NDArray padded = NDArray::view(roomy, s, {s[1] + 50, 1});
    for (const char* f : {"mse", "bias_grad", "t_prod"}) {
      check(f, {a_t, b}, what + ", a transposed");
      check(f, {b, a_t}, what + ", b transposed");
      check(f, {every_other, b}, what + ", a every other column");
      check(f, {b, padded}, what + ", b's rows padded");
    }
    check("sq_rows", {a_t}, what + " transposed");
    check("sq_rows", {every_other}, what + " every other column");
  }
}

// NaN from the operand's own ops (sqrt and log of negatives) makes a max
// NaN in each schedule; an integer division by zero inside the operand is
// the evaluator's error.
TEST_F(ReducePrologues, ErrorsAndNaNOfTheOperandsOps) {
  for (const auto& s : std::vector<std::vector<int64_t>>{{4009, 100}, {17, 2500}, {33, 17}}) {
    NDArray x = uniform_array(DType::kF32, s, rng_, 0.5, 2.0);
    static_cast<float*>(x.data())[(s[0] - 1) * s[1] + 3] = -1.0f;
    static_cast<float*>(x.data())[2 * s[1]] = -1.0f;
    auto got = run_native(*compiler::compile(fn("nan_max")), fn("nan_max"), {x});
    const float* cols = static_cast<const float*>(got[0].data());
    const float* rows = static_cast<const float*>(got[1].data());
    EXPECT_TRUE(std::isnan(cols[3]) && std::isnan(cols[0])) << shape_text(s);
    EXPECT_FALSE(std::isnan(cols[1]) || std::isnan(cols[4])) << shape_text(s);
    EXPECT_TRUE(std::isnan(rows[2]) && std::isnan(rows[s[0] - 1])) << shape_text(s);
    EXPECT_FALSE(std::isnan(rows[1]) || std::isnan(rows[0])) << shape_text(s);
    check("nan_max", {x}, shape_text(s));
  }
  const ir::Function& f = fn("int_ops");
  auto k = compiler::compile(f);
  NDArray a = random_array(DType::kI32, {300, 400}, rng_, 1000.0);
  NDArray b = uniform_array(DType::kI32, {300, 400}, rng_, 1.0, 50.0);
  static_cast<int32_t*>(b.data())[b.numel() - 1] = 0;
  expect_runtime_error([&] { run_native(*k, f, {a, b}); }, "integer division by zero");
  expect_runtime_error([&] { eval::evaluate(*module_, f, {a, b}); }, "integer division by zero");
}

// Stored first, as before: an operand that is also returned, a tree of
// more ops than a stage inlines, and one reading a view.
TEST_F(ReducePrologues, OperandsOtherwiseNeededAreStored) {
  EXPECT_EQ(count(tir("returned"), "// stage:"), 2);
  EXPECT_EQ(count(tir("long_tree"), "// stage:"), 2);
  EXPECT_EQ(count(tir("through_view"), "// stage:"), 2);
  for (const auto& s : std::vector<std::vector<int64_t>>{{33, 17}, {4009, 100}}) {
    const NDArray x = random_array(DType::kF32, s, rng_);
    check("returned", {x}, shape_text(s));
    check("long_tree", {x}, shape_text(s));
    check("through_view", {x}, shape_text(s));
  }
}

// The unit-stride forms each schedule vectorizes need every moving leaf at
// unit stride; a leaf broadcast along the row or the tile is read at index
// 0 (no stride of its own there), and broadcast leaves leave out the dense
// schedule, whose runs address every leaf alike.
TEST_F(ReducePrologues, UnitStridePathsTestEveryMovingLeaf) {
  const std::string m = tir("mse");
  EXPECT_GT(count(m, "if (((is_l0 == 1) && (is_l1 == 1)))"), 0) << m;
  const std::string g = tir("bias_grad");
  EXPECT_GT(count(g, "if (((st0[1] == 1) && (st1[1] == 1)))"), 0) << g;
  EXPECT_GT(count(g, "(st0[0] == RS[1]) && (st1[0] == RS[1])"), 0) << g;
  const std::string b = tir("broadcast");
  // s ([N, 1]) is broadcast along the tile, w ([1, D]) and c ([D]) along the
  // rows: x and the two row-vectors move along the tile.
  EXPECT_GT(count(b, "if ((((st0[1] == 1) && (st2[1] == 1)) && (st3[0] == 1)))"), 0) << b;
  EXPECT_GT(count(g, "let runs: i64"), 0) << g;
  EXPECT_EQ(count(b, "let runs: i64"), 0) << b;
}

}  // namespace
}  // namespace tf::comptest
