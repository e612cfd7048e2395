// Compiled vs evaluator for GridRegionExpr loops (docs/ir.md): the tile
// accumulator (the induction variable as a window subscript), ShapeDim
// bounds resolved per call, nested loops with several carries (and an outer
// body whose value is the inner loop's), a loop whose result feeds more
// computation, the evaluator's errors for bad bounds and
// for a window past the axis, and the caller's inputs left untouched.
#include <functional>

#include "compiler_helpers.h"
#include "core/frontend/parser.h"
#include "core/ir/error.h"
#include "core/ops/math/math.h"
#include "core/sema/typeinfer.h"
#include "core/sema/verify.h"

namespace tf::comptest {
namespace {

const char* kSource = R"(from tilefoundry.dsl import *

N = DimVar("N", 1, 1 << 12)
D = DimVar("D", 0, 1 << 16)
B = DimVar("B", 1, 64)

@func
def accum(x: Tensor[(N, D), f32]) -> Tensor[(N,), f32]:
    acc = zeros((N,), f32)
    for i in tile(D, step=256):
        acc = acc + sum(x[:, i], axes=(1,), keepdim=False)
    return acc

@func
def repeat(x: Tensor[(B, 3), f64]) -> Tensor[(B, 3), f64]:
    y = x
    for j in range(1, B, 2):
        y = y * 0.5 + x
    return y

@func
def nested(x: Tensor[(N, 5), f32]) -> tuple[Tensor[(N, 5), f32], Tensor[(N, 5), f32]]:
    a = x
    b = x
    for i in range(3):
        for j in tile(2):
            a = a + x
        b = b * 2.0 + a
    return a, b

@func
def rotate(x: Tensor[(N, 5), f32]) -> Tensor[(N, 5), f32]:
    a = x
    for i in range(2):
        for j in range(3):
            a = concat((a[:, 1:5], a[:, 0:1]), axis=1) * 0.5 + x
    return a

@func
def after(x: Tensor[(N, D), f32]) -> Tensor[(N, 1), f32]:
    acc = zeros((N,), f32)
    for i in tile(D, step=4):
        acc = acc + amax(exp(x[:, i]), axes=(1,), keepdim=False)
    return softmax(reshape(acc, (N, 1)) * 2.0, axis=-1) + 1.0
)";

class Loops : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { module_ = frontend::parse_module(kSource, "loops.tf"); }
  static ir::ModulePtr module_;
  const ir::Function& fn(const std::string& name) { return *module_->lookup(name); }
  void check(const std::string& name, DType d, const std::vector<std::vector<int64_t>>& shapes) {
    const ir::Function& f = fn(name);
    auto k = compiler::compile(f);
    const int64_t before = compiler::compiler_invocations();
    std::mt19937 rng(3);
    for (const auto& s : shapes) expect_agree(*k, *module_, f, {random_array(d, s, rng)}, name);
    EXPECT_EQ(compiler::compiler_invocations(), before) << name << " recompiled for new extents";
  }
};
ir::ModulePtr Loops::module_;

// Both backends throw kRuntime with the same message containing `words`.
void expect_same_error(const std::function<void()>& native, const std::function<void()>& reference,
                       const std::string& words) {
  std::string msgs[2];
  int i = 0;
  for (const auto& run : {native, reference}) {
    try {
      run();
      ADD_FAILURE() << (i == 0 ? "native" : "evaluator") << " did not throw";
    } catch (const ir::Error& e) {
      EXPECT_EQ(e.kind(), ir::ErrorKind::kRuntime) << e.what();
      msgs[i] = e.what();
    }
    ++i;
  }
  EXPECT_EQ(msgs[0], msgs[1]);
  EXPECT_NE(msgs[0].find(words), std::string::npos) << msgs[0];
}

TEST_F(Loops, AccumulatorOverTileWindows) { check("accum", DType::kF32, {{4, 256}, {3, 1024}, {7, 0}}); }
TEST_F(Loops, ShapeDimRangeBoundsResolvePerCall) { check("repeat", DType::kF64, {{1, 3}, {2, 3}, {9, 3}}); }
TEST_F(Loops, NestedLoopsWithTwoCarries) { check("nested", DType::kF32, {{1, 5}, {33, 5}}); }
TEST_F(Loops, OuterBodyYieldingTheInnerLoopsResult) { check("rotate", DType::kF32, {{1, 5}, {6, 5}}); }
TEST_F(Loops, ComputationAfterTheLoop) { check("after", DType::kF32, {{2, 8}, {65, 400}, {3, 0}}); }

TEST_F(Loops, LoopCarriedBuffersNeverWriteTheCallersInit) {
  // repeat's carry starts as the parameter x itself: iterations write the
  // loop-carried buffers, never x.
  const ir::Function& f = fn("repeat");
  auto k = compiler::compile(f);
  std::mt19937 rng(8);
  NDArray x = random_array(DType::kF64, {7, 3}, rng);
  std::vector<double> before(static_cast<const double*>(x.data()), static_cast<const double*>(x.data()) + 21);
  std::vector<NDArray> want = eval::evaluate(*module_, f, {x});
  std::vector<NDArray> got = run_native(*k, f, {x});
  EXPECT_EQ(compare(got[0], want[0], tolerance(DType::kF64)), "");
  EXPECT_EQ(std::vector<double>(static_cast<const double*>(x.data()), static_cast<const double*>(x.data()) + 21),
            before);
}

TEST_F(Loops, CompilesNativeCode) {
  // The loop function is not left to the evaluator: compile() succeeds and
  // names generated segments in its key.
  auto k = compiler::compile(fn("accum"));
  EXPECT_FALSE(k->key().empty());
}

TEST_F(Loops, WindowPastTheAxisIsTheEvaluatorsError) {
  const ir::Function& f = fn("accum");
  auto k = compiler::compile(f);
  std::mt19937 rng(2);
  NDArray x = random_array(DType::kF32, {2, 300}, rng);  // the second window has 44 columns
  std::vector<float> before(static_cast<const float*>(x.data()), static_cast<const float*>(x.data()) + 600);
  expect_same_error([&] { run_native(*k, f, {x}); }, [&] { eval::evaluate(*module_, f, {x}); }, "'slice' axis 1");
  EXPECT_EQ(std::vector<float>(static_cast<const float*>(x.data()), static_cast<const float*>(x.data()) + 600),
            before);
}

// f(x) = loop over [start, extent) by step of acc + x, acc starting at x.
ir::ModulePtr hand_loop(ir::ShapeDim start, ir::ShapeDim extent, ir::ShapeDim step) {
  auto n = ir::ShapeDim::var("N", 1, 100);
  auto x = ir::Var::make("x", ir::TensorType::make({n}, DType::kF32));
  auto acc = ir::Var::make("acc", ir::TensorType::make({n}, DType::kF32));
  ir::GridRegionExpr::Fields g;
  g.induction_var = ir::Var::make("i", ir::TensorType::make({}, DType::kI64));
  g.carried_args = {acc};
  g.init_args = {x};
  g.yield_values = {sema::make_op_call(std::make_shared<ops::Binary>(ops::BinaryKind::kAdd), {acc, x})};
  g.start = start;
  g.extent = extent;
  g.step = step;
  return loop_module({x}, g);
}

// f(x) = (a, b) after for i in range(0, 5): (a, b) = (i, a), both
// starting at x: each iteration carries the induction variable itself, and
// the value it had one iteration before (the DSL binds the variable as a
// dim; HIR also has it as a value).
ir::ModulePtr shifted_induction() {
  auto x = ir::Var::make("x", ir::TensorType::make({}, DType::kI64));
  auto a = ir::Var::make("a", ir::TensorType::make({}, DType::kI64));
  auto b = ir::Var::make("b", ir::TensorType::make({}, DType::kI64));
  ir::GridRegionExpr::Fields g;
  g.induction_var = ir::Var::make("i", ir::TensorType::make({}, DType::kI64));
  g.carried_args = {a, b};
  g.init_args = {x, x};
  g.yield_values = {g.induction_var, a};
  g.start = 0;
  g.extent = 5;
  g.step = 1;
  return loop_module({x}, g);
}

TEST(LoopValues, ACarryThatIsTheInductionVariableKeepsItsIteration) {
  const ir::ModulePtr m = shifted_induction();
  const ir::Function& f = *m->lookup("f");
  NDArray x = NDArray::empty(DType::kI64, {});
  *static_cast<int64_t*>(x.data()) = -1;
  const std::vector<NDArray> want = eval::evaluate(*m, f, {x});
  EXPECT_EQ(*static_cast<const int64_t*>(want[0].data()), 4);
  EXPECT_EQ(*static_cast<const int64_t*>(want[1].data()), 3);
  expect_agree(*compiler::compile(f), *m, f, {x}, "shifted induction");
}

TEST(LoopBounds, BadBoundsAreTheEvaluatorsErrors) {
  auto n = ir::ShapeDim::var("N", 1, 100);
  struct Case {
    ir::ModulePtr m;
    const char* words;
  } cases[] = {{hand_loop(n - ir::ShapeDim(5), 4, 1), "must be non-negative"},
               {hand_loop(0, n - ir::ShapeDim(5), 1), "must be non-negative"},
               {hand_loop(0, 4, n - ir::ShapeDim(2)), "must be positive"}};
  for (const Case& c : cases) {
    const ir::Function& f = *c.m->lookup("f");
    auto k = compiler::compile(f);
    NDArray x = NDArray::empty(DType::kF32, {2});
    static_cast<float*>(x.data())[0] = 1;
    static_cast<float*>(x.data())[1] = 2;
    expect_same_error([&] { run_native(*k, f, {x}); }, [&] { eval::evaluate(*c.m, f, {x}); }, c.words);
    // A binding that resolves: both agree (N = 9: start 4 / extent 4 / step 7).
    std::mt19937 rng(4);
    expect_agree(*k, *c.m, f, {random_array(DType::kF32, {9}, rng)}, c.words);
  }
}

}  // namespace
}  // namespace tf::comptest
