#include "core/ops/math/math.h"
#include "core/ops/tensor/tensor.h"
#include "eval_helpers.h"

namespace tf::evaltest {
namespace {

using ops::Binary;
using ops::BinaryKind;

TEST(Evaluator, ReturningAParameterCopiesIt) {
  auto x = param("x", {3}, DType::kF32);
  Program p = program({x}, x);
  NDArray in = f32({3}, {1, 2, 3});
  auto out = p.run({in});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_NE(out[0].data(), in.data());
  EXPECT_EQ(values<float>(out[0]), (std::vector<double>{1, 2, 3}));
}

TEST(Evaluator, SharedNodeFeedsBothOperands) {
  // h = x + x; return h * h  — one Call node used twice.
  auto x = param("x", {2}, DType::kF32);
  auto h = call<Binary>({x, x}, BinaryKind::kAdd);
  Program p = program({x}, call<Binary>({h, h}, BinaryKind::kMul));
  EXPECT_EQ(values<float>(p.run({f32({2}, {1, 3})})[0]), (std::vector<double>{4, 36}));
}

TEST(Evaluator, TupleReturnFlattensLeavesAndNeverAliases) {
  auto x = param("x", {2}, DType::kF32);
  auto y = param("y", {2}, DType::kF32);
  auto s = call<Binary>({x, y}, BinaryKind::kSub);
  ir::ExprPtr tup = ir::Tuple::make({s, ir::Tuple::make({x, s})});
  Program p = program({x, y}, tup);
  NDArray a = f32({2}, {5, 7}), b = f32({2}, {1, 2});
  auto out = p.run({a, b});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(values<float>(out[0]), (std::vector<double>{4, 5}));
  EXPECT_EQ(values<float>(out[1]), (std::vector<double>{5, 7}));
  EXPECT_EQ(values<float>(out[2]), (std::vector<double>{4, 5}));
  EXPECT_NE(out[0].data(), out[2].data());
  EXPECT_NE(out[1].data(), a.data());
}

TEST(Evaluator, TupleGetItemSelectsAField) {
  auto x = param("x", {1}, DType::kF32);
  auto y = param("y", {1}, DType::kF32);
  ir::ExprPtr t = ir::Tuple::make({x, y});
  Program p = program({x, y}, ir::TupleGetItem::make(t, 1));
  EXPECT_EQ(values<float>(p.run({f32({1}, {1}), f32({1}, {2})})[0]), (std::vector<double>{2}));
}

TEST(Evaluator, ConstantIsARankZeroArrayThatBroadcasts) {
  auto x = param("x", {3}, DType::kF32);
  auto c = ir::Constant::make_float(0.5, DType::kF32);
  Program p = program({x}, call<Binary>({x, c}, BinaryKind::kMul));
  EXPECT_EQ(values<float>(p.run({f32({3}, {2, 4, 6})})[0]), (std::vector<double>{1, 2, 3}));
  auto i = param("i", {2}, DType::kI32);
  Program q = program({i}, call<Binary>({i, ir::Constant::make_int(10, DType::kI32)}, BinaryKind::kAdd));
  EXPECT_EQ(values<int32_t>(q.run({i32({2}, {1, -1})})[0]), (std::vector<double>{11, 9}));
}

TEST(Evaluator, CallToAFunctionEvaluatesTheCalleeWithItsArguments) {
  auto a = param("a", {2}, DType::kF32);
  auto b = param("b", {2}, DType::kF32);
  ir::FunctionPtr g = function("g", {a, b}, call<Binary>({a, b}, BinaryKind::kSub));
  auto x = param("x", {2}, DType::kF32);
  auto y = param("y", {2}, DType::kF32);
  ir::ExprPtr body = sema::make_function_call(g, {y, x});  // note the swapped order
  Program p = program({x, y}, body, {g});
  EXPECT_EQ(values<float>(p.run({f32({2}, {1, 2}), f32({2}, {10, 20})})[0]),
            (std::vector<double>{9, 18}));
}

TEST(Evaluator, DimVarShapesBindFromInputs) {
  ir::ShapeDim n = ir::ShapeDim::var("N", 1, 100);
  auto x = param("x", {n, 2}, DType::kF32);
  auto z = call<ops::Zeros>({}, ir::Shape{n, 2}, DType::kF32, ir::StorageKind::kGmem);
  Program p = program({x}, call<Binary>({x, z}, BinaryKind::kAdd));
  auto out = p.run({f32({3, 2}, {1, 2, 3, 4, 5, 6})});
  EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(values<float>(out[0]), (std::vector<double>{1, 2, 3, 4, 5, 6}));
}

TEST(Evaluator, InputsAreValidatedByBindArguments) {
  auto x = param("x", {2}, DType::kF32);
  Program p = program({x}, x);
  expect_error([&] { p.run({}); }, ir::ErrorKind::kInvalidArgument, "takes 1 input");
  expect_error([&] { p.run({f32({3}, {1, 2, 3})}); }, ir::ErrorKind::kInvalidArgument, "x");
  expect_error([&] { p.run({i32({2}, {1, 2})}); }, ir::ErrorKind::kInvalidArgument, "x");
}

TEST(Evaluator, InputsAreNeverWritten) {
  auto x = param("x", {2, 2}, DType::kF32);
  Program p = program({x}, call<ops::Transpose>({x}, std::vector<int64_t>{1, 0}));
  NDArray in = f32({2, 2}, {1, 2, 3, 4});
  auto out = p.run({in});
  EXPECT_EQ(values<float>(out[0]), (std::vector<double>{1, 3, 2, 4}));
  EXPECT_EQ(values<float>(in), (std::vector<double>{1, 2, 3, 4}));
}

TEST(Evaluator, GridRegionRunsItsCarryChain) {
  auto x = param("x", {2}, DType::kF32);
  ir::GridRegionExpr::Fields g;
  g.induction_var = ir::Var::make("i", ir::TensorType::make({}, DType::kI64));
  auto acc = param("acc", {2}, DType::kF32);
  g.carried_args = {acc};
  g.init_args = {x};
  auto next = call<Binary>({acc, x}, BinaryKind::kAdd);
  g.body = next;
  g.yield_values = {next};
  g.start = 1;
  g.extent = 8;
  g.step = 3;  // i = 1, 4, 7: three iterations
  ir::ExprPtr loop = ir::GridRegionExpr::make(g);
  ir::FunctionPtr fn = function("f", {x}, loop);
  ir::ModulePtr m = sema::seal(ir::Target::default_cpu(), {fn});
  auto out = eval::evaluate(*m, *m->lookup("f"), {f32({2}, {1, 2})});
  EXPECT_EQ(values<float>(out[0]), (std::vector<double>{4, 8}));
}

}  // namespace
}  // namespace tf::evaltest
