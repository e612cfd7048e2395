// The virtual mesh on Reshape's Split-divide rule (docs/sharding.md,
// "Reshape: views and the Split-divide"): each accepted case runs once per mesh instance on its local shard
// of a verbose input layout, and the reassembled result must equal the
// unsharded program's. Typing of the same cases: tests/ops/test_sharding_reshape.cc.
#include <gtest/gtest.h>

#include <functional>
#include <random>

#include "core/eval/evaluator.h"
#include "core/spmd/virtual_mesh.h"
#include "core/ops/math/math.h"
#include "core/ops/nn/nn.h"
#include "core/ops/sharding/shard_util.h"
#include "core/ops/tensor/tensor.h"
#include "core/sema/typeinfer.h"

namespace tf {
namespace {
using runtime::NDArray;
using Build = std::function<ir::ExprPtr(const ir::ExprPtr&)>;

ir::MeshPtr mesh_x() { return std::make_shared<const ir::Mesh>(ir::Mesh{"cta", "cta", {4}, {"x"}}); }
ir::MeshPtr mesh_xy() { return std::make_shared<const ir::Mesh>(ir::Mesh{"cta", "cta", {2, 2}, {"x", "y"}}); }

// The verbose input layout: one position per tensor axis, C-order strides.
ir::LayoutPtr verbose(const ir::Shape& shape, const ir::MeshPtr& mesh, std::vector<ir::ShardAttr> attrs) {
  return ir::ShardLayout::make(mesh, std::move(attrs), shape, ops::shard::c_order(shape));
}

ir::FunctionPtr make_fn(const ir::Shape& shape, ir::LayoutPtr layout, const Build& body) {
  auto x = ir::Var::make("x", ir::TensorType::make(shape, ir::DType::kF32, std::move(layout)));
  ir::Function::Fields f;
  f.name = "f";
  f.params = {x};
  f.body = body(x);
  f.return_type = f.body->type();
  return ir::Function::make(std::move(f));
}

ir::ExprPtr reshape(const ir::ExprPtr& x, ir::Shape s) {
  return sema::make_op_call(std::make_shared<const ops::Reshape>(std::move(s)), {x});
}

// Runs body over a sharded x on the virtual mesh and over a plain x on the
// evaluator; the results must match, and the sharded result must be sharded
// (so the virtual mesh really ran per instance on the rule's layout).
void check_same_answer(const ir::Shape& shape, const ir::LayoutPtr& layout, const Build& body) {
  auto sharded = make_fn(shape, layout, body);
  auto plain = make_fn(shape, nullptr, body);
  ASSERT_TRUE(ir::as_shard_layout(ir::as_tensor(sharded->body()->type())->layout()));
  auto m = ir::Module::make(ir::Target::default_cpu(), {sharded});
  auto mp = ir::Module::make(ir::Target::default_cpu(), {plain});
  std::vector<int64_t> dims;
  for (const auto& d : shape) dims.push_back(d.value());
  NDArray in = NDArray::empty(ir::DType::kF32, dims);
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-2.f, 2.f);
  for (int64_t i = 0; i < in.numel(); ++i) static_cast<float*>(in.data())[i] = u(rng);
  auto got = spmd::evaluate_virtual_mesh(*m, *sharded, {in});
  auto want = eval::evaluate(*mp, *plain, {in});
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(got[0].shape(), want[0].shape());
  for (int64_t i = 0; i < got[0].numel(); ++i)
    EXPECT_NEAR(static_cast<float*>(got[0].data())[i], static_cast<float*>(want[0].data())[i], 1e-5) << "at " << i;
}

const ir::ShardAttr kS0 = ir::ShardAttr::split(0);

TEST(VirtualMesh, Reshape_SplitDivideAcrossBoundary) {
  // (8S, 16) -> (4, 2, 16): instance c owns rows 2c, 2c+1 = new index c.
  check_same_answer({8, 16}, verbose({8, 16}, mesh_x(), {kS0}), [](auto& x) { return reshape(x, {4, 2, 16}); });
  // (16S, 8) -> (8, 2, 8): (4S, 2 | 2 | 8).
  check_same_answer({16, 8}, verbose({16, 8}, mesh_x(), {kS0}), [](auto& x) { return reshape(x, {8, 2, 8}); });
}

TEST(VirtualMesh, Reshape_SplitDivideInnerResidualMergesAndSize1AxesInsert) {
  check_same_answer({8, 16}, verbose({8, 16}, mesh_x(), {kS0}), [](auto& x) { return reshape(x, {4, 32}); });
  check_same_answer({8, 16}, verbose({8, 16}, mesh_x(), {kS0}), [](auto& x) { return reshape(x, {1, 4, 1, 2, 16}); });
}

TEST(VirtualMesh, Reshape_SplitDivideOnAnInnerTensorAxis) {
  ir::ShardAttr s1 = ir::ShardAttr::split(1);
  check_same_answer({3, 8, 4}, verbose({3, 8, 4}, mesh_x(), {s1}), [](auto& x) { return reshape(x, {3, 4, 8}); });
}

TEST(VirtualMesh, Reshape_SplitDivideNextToAWholeSplitOnATwoAxisMesh) {
  // (8Sx, 8Sy) -> (4, 2, 8) = (2Sx, 2 | 2 | 8Sy).
  check_same_answer({8, 8}, verbose({8, 8}, mesh_xy(), {kS0, ir::ShardAttr::split(1)}),
                    [](auto& x) { return reshape(x, {4, 2, 8}); });
}

TEST(VirtualMesh, Reshape_SplitDivideWithPartialSumCarriedThrough) {
  check_same_answer({8, 16}, verbose({8, 16}, mesh_xy(), {kS0, ir::ShardAttr::partial(ir::Reduction::kSum)}),
                    [](auto& x) { return reshape(x, {2, 4, 16}); });
}

TEST(VirtualMesh, Reshape_SplitDivideResultFeedsLaterOps) {
  // The divided layout is a real layout downstream: neg, then a sum over the
  // (unsplit) inner residual axis, then over the split axis (collapse).
  check_same_answer({8, 16}, verbose({8, 16}, mesh_x(), {kS0}), [](auto& x) {
    auto y = sema::make_op_call(std::make_shared<const ops::Unary>(ops::UnaryKind::kNeg), {reshape(x, {4, 2, 16})});
    return sema::make_op_call(std::make_shared<const ops::Reduce>(std::vector<int64_t>{1}, false, ops::ReduceKind::kSum),
                              {y});
  });
  check_same_answer({8, 16}, verbose({8, 16}, mesh_x(), {kS0}), [](auto& x) {
    return sema::make_op_call(std::make_shared<const ops::Reduce>(std::vector<int64_t>{0}, true, ops::ReduceKind::kMax),
                              {reshape(x, {4, 2, 16})});
  });
}

// Why the rejected divide fails closed, and evidence that the checks above can
// fail: (8S, 16) -> (2, 4, 16) has outer sub-factor 2, which mesh extent 4
// does not divide. Fabricating the nearest layout, Split on new axis 1
// ((2, 4S, 1, 16)), and running it anyway gives a different answer: instance
// c holds rows 2c, 2c+1, but that layout says it holds rows c and 4 + c.
TEST(VirtualMesh, Reshape_FabricatedLayoutForARejectedDivideGivesTheWrongAnswer) {
  ir::Shape in_shape{8, 16}, out_shape{2, 4, 16};
  auto x = ir::Var::make("x", ir::TensorType::make(in_shape, ir::DType::kF32, verbose(in_shape, mesh_x(), {kS0})));
  auto fabricated = ops::shard::canonical_layout(mesh_x(), {ir::ShardAttr::split(1)}, out_shape);
  auto body = ir::Call::make_op(std::make_shared<const ops::Reshape>(out_shape), {x},
                                ir::TensorType::make(out_shape, ir::DType::kF32, fabricated));
  ir::Function::Fields f;
  f.name = "f";
  f.params = {x};
  f.body = body;
  f.return_type = body->type();
  auto fn = ir::Function::make(std::move(f));
  auto m = ir::Module::make(ir::Target::default_cpu(), {fn});
  NDArray in = NDArray::empty(ir::DType::kF32, {8, 16});
  for (int64_t i = 0; i < in.numel(); ++i) static_cast<float*>(in.data())[i] = static_cast<float>(i);
  auto got = spmd::evaluate_virtual_mesh(*m, *fn, {in});
  int64_t differing = 0;
  for (int64_t i = 0; i < got[0].numel(); ++i) differing += static_cast<float*>(got[0].data())[i] != static_cast<float>(i);
  EXPECT_GT(differing, 0);
}

}  // namespace
}  // namespace tf
