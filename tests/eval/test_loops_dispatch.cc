// Shape dispatch at run time and GridRegionExpr execution (docs/ir.md),
// end to end: DSL source -> parse -> evaluate.
#include <numeric>

#include "core/frontend/parser.h"
#include "core/ops/math/math.h"
#include "eval_helpers.h"

namespace tf::evaltest {
namespace {

using ops::Binary;
using ops::BinaryKind;

std::vector<double> iota(size_t n) {
  std::vector<double> v(n);
  std::iota(v.begin(), v.end(), 0.0);
  return v;
}

constexpr const char* kLoops = R"(from tilefoundry.dsl import *
K = DimVar("K", 1, 1 << 16)
B = DimVar("B", 1, 64)

@func
def rowsum(x: Tensor[(4, K), f32]) -> Tensor[(4,), f32]:
    acc = zeros((4,), f32)
    for i in tile(K, step=4):
        acc = acc + sum(x[:, i], axes=(1,), keepdim=False)
    return acc

@func
def repeat(x: Tensor[(B, 3), f32]) -> Tensor[(B, 3), f32]:
    y = x
    for j in range(1, B, 2):
        y = y + x
    return y

@func
def nested(x: Tensor[(2,), f32]) -> tuple[Tensor[(2,), f32], Tensor[(2,), f32]]:
    a = x
    b = x
    for i in range(3):
        for j in tile(2):
            a = a + x
        b = b * 2.0
    return a, b
)";

TEST(HirConformance, Loop_AccumulatorExampleMatchesAReference) {
  ir::ModulePtr m = frontend::parse_module(kLoops, "loops.tf");
  std::vector<double> in = iota(4 * 12);
  auto out = eval::evaluate(*m, *m->lookup("rowsum"), {f32({4, 12}, in)});
  std::vector<double> want(4, 0.0);
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 12; ++c) want[r] += in[r * 12 + c];
  EXPECT_EQ(values<float>(out[0]), want);
}

TEST(HirConformance, Loop_ShapeDimDomainResolvesAtCallTime) {
  ir::ModulePtr m = frontend::parse_module(kLoops, "loops.tf");
  // range(1, B, 2) runs (B - 1 + 1) / 2 times: B = 6 -> j = 1, 3, 5.
  auto out = eval::evaluate(*m, *m->lookup("repeat"), {f32({6, 3}, std::vector<double>(18, 1.0))});
  EXPECT_EQ(values<float>(out[0]), std::vector<double>(18, 4.0));
  out = eval::evaluate(*m, *m->lookup("repeat"), {f32({1, 3}, {1, 2, 3})});  // empty domain: the init
  EXPECT_EQ(values<float>(out[0]), (std::vector<double>{1, 2, 3}));
}

TEST(HirConformance, Loop_NestedLoopsWithMultipleCarries) {
  ir::ModulePtr m = frontend::parse_module(kLoops, "loops.tf");
  auto out = eval::evaluate(*m, *m->lookup("nested"), {f32({2}, {1, 2})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(values<float>(out[0]), (std::vector<double>{7, 14}));  // 1 + 3 * 2 additions
  EXPECT_EQ(values<float>(out[1]), (std::vector<double>{8, 16}));
}

ir::ModulePtr hand_loop(ir::ShapeDim start, ir::ShapeDim extent, ir::ShapeDim step) {
  auto x = param("x", {ir::ShapeDim::var("N", 1, 100)}, DType::kF32);
  ir::GridRegionExpr::Fields g;
  g.induction_var = ir::Var::make("i", ir::TensorType::make({}, DType::kI64));
  auto acc = param("acc", {ir::ShapeDim::var("N", 1, 100)}, DType::kF32);
  g.carried_args = {acc};
  g.init_args = {x};
  auto next = call<Binary>({acc, x}, BinaryKind::kAdd);
  g.body = next;
  g.yield_values = {next};
  g.start = start;
  g.extent = extent;
  g.step = step;
  return sema::seal(ir::Target::default_cpu(), {function("f", {x}, ir::GridRegionExpr::make(g))});
}

TEST(HirConformance, Loop_ResolvedStartAndExtentMustBeNonNegative) {
  auto n = ir::ShapeDim::var("N", 1, 100);
  auto m = hand_loop(n - ir::ShapeDim(5), 4, 1);
  expect_error([&] { eval::evaluate(*m, *m->lookup("f"), {f32({2}, {1, 2})}); }, ir::ErrorKind::kRuntime,
               "must be non-negative");
  m = hand_loop(0, n - ir::ShapeDim(5), 1);
  expect_error([&] { eval::evaluate(*m, *m->lookup("f"), {f32({2}, {1, 2})}); }, ir::ErrorKind::kRuntime,
               "must be non-negative");
}

TEST(HirConformance, Loop_ResolvedStepMustBePositive) {
  auto n = ir::ShapeDim::var("N", 1, 100);
  auto m = hand_loop(0, 4, n - ir::ShapeDim(2));
  expect_error([&] { eval::evaluate(*m, *m->lookup("f"), {f32({2}, {1, 2})}); }, ir::ErrorKind::kRuntime,
               "must be positive");
}

TEST(HirConformance, Loop_UnboundDimVarRaises) {
  expect_error([&] { hand_loop(0, ir::ShapeDim::var("Q", 1, 9), 1); }, ir::ErrorKind::kVerify,
               "DimVar 'Q' is not bound by a parameter shape");
}

constexpr const char* kDecode = R"(from tilefoundry.dsl import *
S = DimVar("S", 1, 4096)

@func
def decode(q: Tensor[(S, 2), f32]) -> Tensor[(S, 2), f32]:
    pass

@decode.specialize(S=(1, 64))
def decode_small(q: Tensor[(S, 2), f32]) -> Tensor[(S, 2), f32]:
    return q + 1.0

@decode.specialize(S=(64, 4096))
def decode_large(q: Tensor[(S, 2), f32]) -> Tensor[(S, 2), f32]:
    return q * 2.0

@func
def user(q: Tensor[(S, 2), f32]) -> Tensor[(S, 2), f32]:
    return decode(q)
)";

TEST(HirConformance, Dispatch_ConcreteShapeSelectsExactlyOneVariant) {
  ir::ModulePtr m = frontend::parse_module(kDecode, "decode.tf");
  for (const char* entry : {"decode", "user"}) {
    auto small = eval::evaluate(*m, *m->lookup(entry), {f32({63, 2}, std::vector<double>(126, 3.0))});
    EXPECT_EQ(values<float>(small[0]), std::vector<double>(126, 4.0)) << entry;
    auto large = eval::evaluate(*m, *m->lookup(entry), {f32({64, 2}, std::vector<double>(128, 3.0))});
    EXPECT_EQ(values<float>(large[0]), std::vector<double>(128, 6.0)) << entry;  // boundary: [64, ...)
  }
}

TEST(HirConformance, Dispatch_OutOfEnvelopeShapeIsAClearError) {
  ir::ModulePtr m = frontend::parse_module(kDecode, "decode.tf");
  expect_error([&] { eval::evaluate(*m, *m->lookup("decode"), {f32({4096, 2}, std::vector<double>(8192, 0.0))}); },
               ir::ErrorKind::kInvalidArgument, "S");
}

TEST(HirConformance, Elaborate_CallChainRunsEachSpecialization) {
  ir::ModulePtr m = frontend::parse_module(R"(from tilefoundry.dsl import *
K = DimVar("K", 1, 1024)

@func
def h(x: Tensor[(K,), f32]) -> Tensor[(K,), f32]:
    return x * x

@func
def g(x: Tensor[(K,), f32]) -> Tensor[(K,), f32]:
    return h(x) + x

@func
def f(a: Tensor[(K,), f32], b: Tensor[(3,), f32]) -> tuple[Tensor[(K,), f32], Tensor[(3,), f32]]:
    return g(a), g(b)
)",
                                           "chain.tf");
  auto out = eval::evaluate(*m, *m->lookup("f"), {f32({2}, {1, 2}), f32({3}, {3, 4, 5})});
  EXPECT_EQ(values<float>(out[0]), (std::vector<double>{2, 6}));
  EXPECT_EQ(values<float>(out[1]), (std::vector<double>{12, 20, 30}));
}

}  // namespace
}  // namespace tf::evaltest
