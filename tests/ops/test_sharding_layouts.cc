// Conformance (docs/sharding.md): sharded layouts through ops (Reduce, Reshape, Gather,
// TopK, InsertSlice, CacheUpdate, RoPE, Conv2D), the sharding ops (Reshard
// stride resolution, Local) and the Function boundary.
#include "core/ops/math/math.h"
#include "core/ops/nn/nn.h"
#include "core/ops/sharding/sharding.h"
#include "core/ops/tensor/tensor.h"
#include "tests/ops/sharding_helpers.h"

namespace tf {
namespace {
using namespace testing_shard;
using ir::Reduction;
using V = std::vector<int64_t>;

ir::ExprPtr split_rows() { return var("x", sharded({8, 16}, mesh_x(), {split_axis(0)})); }

// ---- Reduce -----------------------------------------------------------------

TEST(HirConformance, Reduce_SplitPositionOfReducedAxisCollapsesToBroadcastSize1Stride0) {
  auto c = call<ops::Reduce>({split_rows()}, V{0}, true, ops::ReduceKind::kSum);
  const ir::ShardLayout* l = layout_of(c);
  ASSERT_TRUE(l);
  EXPECT_TRUE(l->attrs()[0] == bcast());
  EXPECT_TRUE(ir::shape_equal(l->shape(), ir::Shape{1, 16}));
  EXPECT_EQ((*l->strides())[0], 0);
  EXPECT_EQ((*l->strides())[1], 1);
}

TEST(HirConformance, Reduce_SplitOfKeptAxisIsRenumbered) {
  auto x = var("x", sharded({8, 16}, mesh_x(), {split_axis(1)}));
  auto c = call<ops::Reduce>({x}, V{0}, false, ops::ReduceKind::kMax);
  const ir::ShardLayout* l = layout_of(c);
  EXPECT_TRUE(l->attrs()[0] == ir::ShardAttr::split(0));
  EXPECT_TRUE(ir::shape_equal(l->shape(), ir::Shape{4, 4}));
}

TEST(HirConformance, Reduce_NonDefaultStrideShardedInputWithoutProducerStridesRejected) {
  auto l = ir::ShardLayout::make(mesh_x(), {ir::ShardAttr::split(0)}, {4, 2, 16}, std::nullopt);
  auto x = var("x", ir::TensorType::make({8, 16}, ir::DType::kF32, l));
  expect_rejected([&] { call<ops::Reduce>({x}, V{1}, true, ops::ReduceKind::kSum); }, {"explicit producer strides"});
}

// ---- Reshape ----------------------------------------------------------------

TEST(HirConformance, Reshape_FullyBroadcastInputReshapesToPlainOutput) {
  auto x = var("x", sharded({8, 16}, mesh_x(), {bcast()}));
  auto c = call<ops::Reshape>({x}, ir::Shape{128});
  EXPECT_EQ(ir::as_tensor(c->type())->layout(), nullptr);
}

TEST(HirConformance, Reshape_ViewOverWholeLayoutPositionsCarriesSplit) {
  // (8, 16) split rows: positions (4, 2, 16) -> (4, 32): 4 | 2*16; -> (4, 2, 4, 4) fails (16 is one position).
  auto c = call<ops::Reshape>({split_rows()}, ir::Shape{4, 32});
  const ir::ShardLayout* l = layout_of(c);
  ASSERT_TRUE(l);
  EXPECT_TRUE(l->attrs()[0] == ir::ShardAttr::split(0));
  EXPECT_TRUE(ir::shape_equal(l->shape(), ir::Shape{4, 2, 16}));
  auto d = call<ops::Reshape>({split_rows()}, ir::Shape{1, 8, 16, 1});  // size-1 axes insert freely
  EXPECT_TRUE(layout_of(d)->attrs()[0] == ir::ShardAttr::split(1));
}

TEST(HirConformance, Reshape_NotExpressibleFailsClosedRatherThanFabricate) {
  expect_rejected([] { call<ops::Reshape>({split_rows()}, ir::Shape{8, 4, 4}); }, {"fail closed", "view over"});
  expect_rejected([] { call<ops::Reshape>({split_rows()}, ir::Shape{2, 64}); }, {"fail closed"});
}

TEST(HirConformance, Reshape_PartialCarriesThroughUnchanged) {
  auto x = var("x", sharded({8, 16}, mesh_x(), {partial()}));
  EXPECT_TRUE(layout_of(call<ops::Reshape>({x}, ir::Shape{128}))->attrs()[0] == partial());
}

// ---- Gather -----------------------------------------------------------------

ir::ExprPtr idx(ir::Shape s) { return var("i", plain(std::move(s), ir::DType::kI64)); }

TEST(HirConformance, Gather_SplitOnGatheredAxisBecomesPartialSum) {
  auto c = call<ops::Gather>({split_rows(), idx({3})}, 0, 0);
  EXPECT_TRUE(layout_of(c)->attrs()[0] == partial(Reduction::kSum));
}

TEST(HirConformance, Gather_SplitOnOtherAxisIsRenumbered) {
  auto x = var("x", sharded({8, 16, 4}, mesh_x(), {split_axis(2)}));
  auto c = call<ops::Gather>({x, idx({2, 3})}, 0, 0);  // out (2, 3, 16, 4): axis 2 -> 3
  auto logical = ops::shard::to_logical(ir::as_tensor(c->type())->shape(), *layout_of(c));
  ASSERT_TRUE(logical);
  EXPECT_EQ((*logical)[0].pos, 3);
}

TEST(HirConformance, Gather_OutputLayoutIsNaturalContiguousNotInherited) {
  auto l = ir::ShardLayout::make(mesh_x(), {ir::ShardAttr::split(1)}, {16, 4, 1}, ir::Shape{1, 16, 0});
  auto x = var("x", ir::TensorType::make({16, 4}, ir::DType::kF32, l));
  auto c = call<ops::Gather>({x, idx({5})}, 0, 0);
  const ir::ShardLayout* o = layout_of(c);
  EXPECT_EQ(*o->strides(), (ir::Shape{4, 1, 1}));
}

TEST(HirConformance, Gather_BroadcastAndPartialCarryThrough) {
  auto x = var("x", sharded({8, 16}, mesh_xy(), {bcast(), partial(Reduction::kMax)}));
  auto c = call<ops::Gather>({x, idx({3})}, 1, 0);
  EXPECT_TRUE(layout_of(c)->attrs()[0] == bcast());
  EXPECT_TRUE(layout_of(c)->attrs()[1] == partial(Reduction::kMax));
}

TEST(HirConformance, Gather_MultipleSplitsWithGatheredAxisFailClosed) {
  auto x = var("x", sharded({8, 16}, mesh_xy(), {split_axis(0), split_axis(1)}));
  expect_rejected([&] { call<ops::Gather>({x, idx({3})}, 0, 0); }, {"multiple Splits", "fail closed"});
}

TEST(HirConformance, Gather_ComposedLayoutFailsClosed) {
  auto l = ir::ShardLayout::make(mesh_x(), {ir::ShardAttr::split(1)}, {2, 4, 16}, ir::Shape{64, 16, 1});
  auto x = var("x", ir::TensorType::make({8, 16}, ir::DType::kF32, l));
  expect_rejected([&] { call<ops::Gather>({x, idx({3})}, 0, 0); }, {"composed layout", "fail closed"});
}

TEST(HirConformance, Gather_BatchDimsWithValueCarryingShardLayoutFailsClosed) {
  auto x = var("x", sharded({2, 8}, mesh_x(2), {split_axis(1)}));
  expect_rejected([&] { call<ops::Gather>({x, idx({2, 3})}, 1, 1); }, {"batch_dims > 0", "fail closed"});
}

// ---- TopK -------------------------------------------------------------------

TEST(HirConformance, TopK_SplitSelectedAxisRejected) {
  auto x = var("x", sharded({8, 16}, mesh_x(), {split_axis(1)}));
  expect_rejected([&] { call<ops::TopK>({x}, ir::ShapeDim(3), -1, true, true); }, {"not Split on the selected axis"});
}

TEST(HirConformance, TopK_PartialInputRejectedRegardlessOfReduction) {
  for (Reduction r : {Reduction::kSum, Reduction::kMax, Reduction::kMin}) {
    auto x = var("x", sharded({8, 16}, mesh_x(), {partial(r)}));
    expect_rejected([&] { call<ops::TopK>({x}, ir::ShapeDim(3), -1, true, true); }, {"indices identify", "Partial"});
  }
}

TEST(HirConformance, TopK_LayoutExtentOfSelectedAxisBecomesK) {
  auto c = call<ops::TopK>({split_rows()}, ir::ShapeDim(3), 1, true, true);
  for (const auto& f : ir::as_tuple(c->type())->fields()) {
    const ir::ShardLayout* l = ir::as_shard_layout(ir::as_tensor(f)->layout());
    ASSERT_TRUE(l);
    EXPECT_TRUE(ir::shape_equal(l->shape(), ir::Shape{4, 2, 3}));
    EXPECT_TRUE(l->attrs()[0] == ir::ShardAttr::split(0));
  }
}

// ---- InsertSlice / CacheUpdate ------------------------------------------------

TEST(HirConformance, InsertSlice_PartialDstRequiresIdenticalUpdateState) {
  auto dst = var("d", sharded({8}, mesh_x(), {partial()}));
  auto off = ir::Constant::make_int(0, ir::DType::kI64);
  auto up = var("u", sharded({2}, mesh_x(), {partial()}));
  EXPECT_TRUE(layout_of(call<ops::InsertSlice>({dst, up, off}, std::vector<std::optional<int64_t>>{0})));
  expect_rejected([&] { call<ops::InsertSlice>({dst, var("u", plain({2})), off}, std::vector<std::optional<int64_t>>{0}); },
                  {"operand #1 (update)", "identical mesh and per-mesh-axis"});
}

TEST(HirConformance, InsertSlice_CompleteDstRejectsPartialUpdate) {
  auto off = ir::Constant::make_int(0, ir::DType::kI64);
  auto up = var("u", sharded({2}, mesh_x(), {partial()}));
  expect_rejected([&] { call<ops::InsertSlice>({var("d", plain({8})), up, off}, std::vector<std::optional<int64_t>>{0}); },
                  {"operand #1 (update)", "cannot preserve a Partial", "Reshard to Broadcast"});
}

ir::ExprPtr i32s(const char* n) { return var(n, plain({}, ir::DType::kI32)); }

TEST(HirConformance, CacheUpdate_PartialCacheRequiresIdenticalNewState) {
  auto cache = var("c", sharded({1, 8, 2, 4}, mesh_x(), {partial()}));
  auto nw = var("n", sharded({1, 2, 2, 4}, mesh_x(), {partial()}));
  EXPECT_TRUE(layout_of(call<ops::CacheUpdate>({cache, i32s("p"), i32s("s"), nw})));
  expect_rejected([&] { call<ops::CacheUpdate>({cache, i32s("p"), i32s("s"), var("n", plain({1, 2, 2, 4}))}); },
                  {"operand #3 (new)", "identical mesh"});
}

TEST(HirConformance, CacheUpdate_CompleteCacheRejectsPartialNew) {
  auto nw = var("n", sharded({1, 2, 2, 4}, mesh_x(), {partial()}));
  expect_rejected([&] { call<ops::CacheUpdate>({var("c", plain({1, 8, 2, 4})), i32s("p"), i32s("s"), nw}); },
                  {"operand #3 (new)", "cannot preserve a Partial"});
}

// ---- RoPE / Conv2D ------------------------------------------------------------

TEST(HirConformance, RoPE_BranchPreservesOnePartialSumWhenCachesReplicated) {
  auto q = var("q", sharded({1, 4, 2, 8}, mesh_x(), {partial()}));
  auto k = var("k", plain({1, 4, 2, 8}));
  auto cs = var("cos", plain({16, 8})), sn = var("sin", plain({16, 8}));
  auto pos = var("pos", plain({1, 4}, ir::DType::kI64));
  auto c = call<ops::RoPE>({q, k, cs, sn, pos});
  auto fq = ir::as_tensor(ir::as_tuple(c->type())->fields()[0]);
  EXPECT_TRUE(ir::as_shard_layout(fq->layout())->attrs()[0] == partial());
  EXPECT_EQ(ir::as_tensor(ir::as_tuple(c->type())->fields()[1])->layout(), nullptr);
}

TEST(HirConformance, RoPE_NonSumOrSecondaryPartialRejected) {
  auto k = var("k", plain({1, 4, 2, 8}));
  auto cs = var("cos", plain({16, 8})), sn = var("sin", plain({16, 8}));
  auto pos = var("pos", plain({1, 4}, ir::DType::kI64));
  auto qm = var("q", sharded({1, 4, 2, 8}, mesh_x(), {partial(Reduction::kMax)}));
  expect_rejected([&] { call<ops::RoPE>({qm, k, cs, sn, pos}); }, {"operand #0 (q)", "Reshard to Broadcast"});
  auto pc = var("cos", sharded({16, 8}, mesh_x(), {partial()}));
  expect_rejected([&] { call<ops::RoPE>({var("q", plain({1, 4, 2, 8})), k, pc, sn, pos}); },
                  {"operand #2", "secondary cache"});
}

TEST(HirConformance, Conv2D_PartialSumInputPreservedOnlyWithReplicatedWeight) {
  auto x = var("x", sharded({1, 2, 5, 5}, mesh_x(), {partial()}));
  auto w = var("w", plain({3, 2, 3, 3}));
  auto none = ir::Tuple::make({});
  auto c = call<ops::Conv2D>({x, w, none}, V{1, 1}, V{0, 0}, V{1, 1}, 1);
  EXPECT_TRUE(layout_of(c)->attrs()[0] == partial());
  auto pw = var("w", sharded({3, 2, 3, 3}, mesh_x(), {partial()}));
  expect_rejected([&] { call<ops::Conv2D>({var("x", plain({1, 2, 5, 5})), pw, none}, V{1, 1}, V{0, 0}, V{1, 1}, 1); },
                  {"operand #1", "secondary Partial on weight"});
}

TEST(HirConformance, Conv2D_PartialSumInputWithABiasRejected) {
  // conv(x, w) + b is affine in x: the per-instance results would each add b.
  auto x = var("x", sharded({1, 2, 5, 5}, mesh_x(), {partial()}));
  auto w = var("w", plain({3, 2, 3, 3}));
  auto b = var("b", plain({3}));
  expect_rejected([&] { call<ops::Conv2D>({x, w, ir::Tuple::make({b})}, V{1, 1}, V{0, 0}, V{1, 1}, 1); },
                  {"operand #0 (x)", "Partial(\"sum\")", "affine", "Reshard to Broadcast"});
}

TEST(HirConformance, Cast_KeepsTheLayoutAndOnlyPartialsTheConversionCommutesWith) {
  auto ps = var("x", sharded({8}, mesh_x(), {partial()}));
  auto pm = var("y", sharded({8}, mesh_x(), {partial(ir::Reduction::kMax)}));
  // Identity in layout: f32 -> f64 keeps Partial(sum); f32 -> i32 keeps Partial(max).
  EXPECT_TRUE(layout_of(call<ops::Cast>({ps}, ir::DType::kF64))->attrs()[0] == partial());
  EXPECT_TRUE(layout_of(call<ops::Cast>({pm}, ir::DType::kI32))->attrs()[0] == partial(ir::Reduction::kMax));
  expect_rejected([&] { call<ops::Cast>({ps}, ir::DType::kI32); }, {"operand #0 (x)", "truncates each share"});
  expect_rejected([&] { call<ops::Cast>({pm}, ir::DType::kBool); }, {"cast to bool"});
  auto pi = var("z", sharded({8}, mesh_x(), {partial(ir::Reduction::kMax)}, ir::DType::kI64));
  expect_rejected([&] { call<ops::Cast>({pi}, ir::DType::kI32); }, {"narrowing int cast wraps"});
}

// ---- Reshard ----------------------------------------------------------------

ir::ShardLayoutPtr sugar_rows() {  // ShardLayout(cta, (Split(axis=0),)) with strides=None
  auto l = ops::shard::canonical_layout(mesh_x(), {split_axis(0)}, {8, 16});
  return ir::ShardLayout::make(l->mesh(), l->attrs(), l->shape(), std::nullopt);
}
std::vector<int64_t> strides_of(const ir::CallPtr& c) {
  std::vector<int64_t> s;
  for (const auto& d : *layout_of(c)->strides()) s.push_back(d.value());
  return s;
}

TEST(HirConformance, Reshard_LayoutNoneStorageUnchangedIsNoOp) {
  auto x = split_rows();
  auto c = call<ops::Reshard>({x}, nullptr, std::nullopt);
  EXPECT_TRUE(ir::type_equal(c->type(), x->type()));
}

TEST(HirConformance, Reshard_StorageChangeWithoutLayoutRejected) {
  expect_rejected([] { call<ops::Reshard>({split_rows()}, nullptr, ir::StorageKind::kSmem); },
                  {"storage change MUST carry an explicit layout="});
}

TEST(HirConformance, Reshard_DestinationStorageUnmaterializedRejected) {
  expect_rejected([] { call<ops::Reshard>({split_rows()}, sugar_rows(), ir::StorageKind::kUnmaterialized); },
                  {"concrete", "unmaterialized"});
}

TEST(HirConformance, Reshard_SugarStorageUnchangedFollowsSourceForm) {
  auto plain_x = var("p", plain({8, 16}));  // x.layout None: shared-engine C-order
  EXPECT_EQ(strides_of(call<ops::Reshard>({plain_x}, sugar_rows(), std::nullopt)), (V{32, 16, 1}));
  // A Split-axes-zero source is per-instance form.
  auto pi = ir::ShardLayout::make(mesh_x(), {ir::ShardAttr::split(0)}, {4, 2, 16}, ir::Shape{0, 16, 1});
  auto x = var("x", ir::TensorType::make({8, 16}, ir::DType::kF32, pi));
  EXPECT_EQ(strides_of(call<ops::Reshard>({x}, sugar_rows(), std::nullopt)), (V{0, 16, 1}));
}

TEST(HirConformance, Reshard_SugarLowToHighIsSharedEngineCOrder) {
  auto x = var("x", ir::TensorType::make({8, 16}, ir::DType::kF32, nullptr, ir::StorageKind::kSmem));
  auto c = call<ops::Reshard>({x}, sugar_rows(), ir::StorageKind::kGmem);
  EXPECT_EQ(strides_of(c), (V{32, 16, 1}));
  EXPECT_EQ(ir::as_tensor(c->type())->storage(), ir::StorageKind::kGmem);
}

TEST(HirConformance, Reshard_SugarHighToLowIsPerInstanceForm) {
  auto l = ops::shard::canonical_layout(mesh_x(), {split_axis(0)}, {8, 1});
  auto sug = ir::ShardLayout::make(l->mesh(), l->attrs(), l->shape(), std::nullopt);
  auto c = call<ops::Reshard>({var("p", plain({8, 1}))}, sug, ir::StorageKind::kRmem);
  EXPECT_EQ(strides_of(c), (V{0, 1, 0}));  // positions (4, 2, 1): Split -> 0, local C-order, size-1 -> 0
  EXPECT_EQ(strides_of(call<ops::Reshard>({split_rows()}, sugar_rows(), ir::StorageKind::kSmem)), (V{0, 16, 1}));
}

TEST(HirConformance, Reshard_VerboseStridesTakenVerbatim) {
  auto v = ir::ShardLayout::make(mesh_x(), {ir::ShardAttr::split(0)}, {4, 2, 16}, ir::Shape{2, 1, 8});
  EXPECT_EQ(strides_of(call<ops::Reshard>({split_rows()}, v, ir::StorageKind::kRmem)), (V{2, 1, 8}));
}

TEST(HirConformance, Reshard_PreservesLogicalShapeAndCompletesPartial) {
  auto x = var("x", sharded({8, 16}, mesh_x(), {partial()}));
  auto bl = ops::shard::canonical_layout(mesh_x(), {bcast()}, {8, 16});
  auto c = call<ops::Reshard>({x}, bl, std::nullopt);
  EXPECT_TRUE(ir::shape_equal(ir::as_tensor(c->type())->shape(), ir::Shape{8, 16}));
  EXPECT_FALSE(layout_of(c)->has_partial());
}

TEST(HirConformance, Reshard_CrossCtaOwnershipChangeRecordsGridBarrier) {
  ir::TypePtr from_t = split_rows()->type(), to_t = sharded({8, 16}, mesh_x(), {split_axis(1)});
  const ir::TensorType* from = ir::as_tensor(from_t);
  const ir::TensorType* to = ir::as_tensor(to_t);
  EXPECT_TRUE(ops::reshard_needs_grid_barrier(*from, *to));
  EXPECT_FALSE(ops::reshard_needs_grid_barrier(*from, *from));
}

// ---- Local ------------------------------------------------------------------

TEST(HirConformance, Local_ContractsEachSplitAxisByMeshExtent) {
  auto c = call<ops::Local>({split_rows()});
  const ir::TensorType* t = ir::as_tensor(c->type());
  EXPECT_TRUE(ir::shape_equal(t->shape(), ir::Shape{2, 16}));
  EXPECT_EQ(t->dtype(), ir::DType::kF32);
  EXPECT_FALSE(t->layout()->is_shard());  // the shard wrapper is stripped
}

TEST(HirConformance, Local_VerboseSplitPositionKeepsItsBlockPerInstance) {
  // (8, 16) as positions (8S, 16) on a 4-wide axis: each instance owns 2 rows.
  auto l = ir::ShardLayout::make(mesh_x(), {ir::ShardAttr::split(0)}, {8, 16}, ir::Shape{16, 1});
  auto c = call<ops::Local>({var("x", ir::TensorType::make({8, 16}, ir::DType::kF32, l))});
  const ir::TensorType* t = ir::as_tensor(c->type());
  EXPECT_TRUE(ir::shape_equal(t->shape(), ir::Shape{2, 16})) << t->to_string();
  EXPECT_EQ(t->layout()->strides(), (ir::Shape{16, 1}));
  // A Split-bound position that is not a multiple of its mesh extent has no block form.
  auto bad = ir::ShardLayout::make(mesh_x(), {ir::ShardAttr::split(0)}, {6, 16}, ir::Shape{16, 1});
  expect_rejected([&] { call<ops::Local>({var("y", ir::TensorType::make({6, 16}, ir::DType::kF32, bad))}); },
                  {"'local' operand #0 (x)", "multiple of its mesh extent 4"});
}

TEST(HirConformance, Local_RequiresShardLayout) {
  expect_rejected([] { call<ops::Local>({var("p", plain({8}))}); }, {"'local' operand #0 (x)", "ShardLayout"});
}

// ---- Function boundary ---------------------------------------------------------

TEST(HirConformance, FunctionBoundary_PartialReturnTypeAllowedAndPreservedInTuple) {
  auto a = var("a", sharded({8, 16}, mesh_x(), {partial()}));
  auto b = var("b", sharded({8, 16}, mesh_x(), {partial()}));
  auto sum = call<ops::Binary>({a, b}, ops::BinaryKind::kAdd);
  auto tup = ir::Tuple::make({sum, a});
  ir::Function::Fields f;
  f.name = "f";
  f.params = {std::static_pointer_cast<const ir::Var>(a), std::static_pointer_cast<const ir::Var>(b)};
  f.body = tup;
  f.return_type = tup->type();
  auto fn = ir::Function::make(std::move(f));
  auto ret = ir::as_tuple(fn->return_type());
  for (const auto& fld : ret->fields())
    EXPECT_TRUE(ir::as_shard_layout(ir::as_tensor(fld)->layout())->attrs()[0] == partial());
}

}  // namespace
}  // namespace tf
