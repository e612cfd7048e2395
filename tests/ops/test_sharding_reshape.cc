// Conformance: Reshape of a genuine ShardLayout (docs/sharding.md, "Reshape:
// views and the Split-divide") — the Split-divide carry-through case and the regroups that MUST
// fail closed. The view-rule cases are in test_sharding_layouts.cc; each
// accepted case here is also run on the virtual mesh
// (tests/eval/test_virtual_mesh_reshape.cc).
//
// Expected layouts are derived by hand from the Split-divide rule: a Split-bound
// position (E):(s) bound to a mesh axis of extent m, divided as outer O and
// inner I = E / O with m | O, becomes (m, O/m):(s*I*O/m, s*I) and (I):(s).
// Where the input is C-order the result must equal the canonical layout of
// the new shape, an oracle independent of the rule.
#include "core/ops/tensor/tensor.h"
#include "tests/ops/sharding_helpers.h"

namespace tf {
namespace {
using namespace testing_shard;
using V = std::vector<int64_t>;

// A verbose ShardLayout: positions named directly (shape == positions, so each
// tensor axis is one position), shared-engine C-order strides unless given.
ir::ExprPtr verbose(const ir::Shape& shape, const ir::MeshPtr& mesh, std::vector<ir::ShardAttr> attrs,
                    std::optional<ir::Shape> strides = std::nullopt) {
  if (!strides) strides = ops::shard::c_order(shape);
  auto l = ir::ShardLayout::make(mesh, std::move(attrs), shape, strides);
  return var("x", ir::TensorType::make(shape, ir::DType::kF32, l));
}
ir::ShardAttr at(int64_t pos) { return ir::ShardAttr::split(pos); }

const ir::ShardLayout& reshaped(const ir::ExprPtr& x, ir::Shape s) {
  static std::vector<ir::ExprPtr> keep;  // the layout lives as long as its Call
  keep.push_back(call<ops::Reshape>({x}, std::move(s)));
  const ir::ShardLayout* l = layout_of(keep.back());
  if (!l) throw std::runtime_error("the reshape result is not sharded");
  return *l;
}

void expect_canonical(const ir::ShardLayout& got, const ir::MeshPtr& mesh, std::vector<ir::ShardAttr> logical,
                      const ir::Shape& shape) {
  auto want = ops::shard::canonical_layout(mesh, logical, shape);
  EXPECT_TRUE(got.structural_equal(*want)) << "got " << got.to_string() << "\nwant " << want->to_string();
}

// ---- accepted: a Split-bound position divides across one new-axis boundary --

TEST(HirConformance, Reshape_SplitDivideAcrossBoundary) {
  // (8, 16) as (8S, 16) on x=4: each instance owns 2 rows. 8 = 4 | 2 and 4 | 4.
  auto x = verbose({8, 16}, mesh_x(), {at(0)});
  expect_canonical(reshaped(x, {4, 2, 16}), mesh_x(), {split_axis(0)}, {4, 2, 16});  // (4S, 1 | 2 | 16)
  // (16, 8) as (16S, 8): 16 = 8 | 2 -> (4S, 2 | 2 | 8).
  auto y = verbose({16, 8}, mesh_x(), {at(0)});
  expect_canonical(reshaped(y, {8, 2, 8}), mesh_x(), {split_axis(0)}, {8, 2, 8});
}

TEST(HirConformance, Reshape_SplitDivideOuterSubFactorFactorsIntoMeshExtAndRest) {
  // The outer sub-factor 8 of (16S, 8) -> (8, 2, 8) is (4 Split-bound, 8 / 4 = 2 plain);
  // the inner residual 2 is its own plain position.
  const ir::ShardLayout& l = reshaped(verbose({16, 8}, mesh_x(), {at(0)}), {8, 2, 8});
  EXPECT_TRUE(ir::shape_equal(l.shape(), ir::Shape{4, 2, 2, 8}));
  EXPECT_TRUE(l.attrs()[0] == at(0));
}

TEST(HirConformance, Reshape_SplitDivideInnerResidualMergesIntoTheNextAxis) {
  // (8S, 16) -> (4, 32): axis 1 is the inner residual 2 times the whole 16.
  const ir::ShardLayout& l = reshaped(verbose({8, 16}, mesh_x(), {at(0)}), {4, 32});
  EXPECT_TRUE(ir::shape_equal(l.shape(), ir::Shape{4, 1, 2, 16}));
  EXPECT_TRUE(l.attrs()[0] == at(0));
  EXPECT_EQ(*l.strides(), (ir::Shape{32, 32, 16, 1}));
}

TEST(HirConformance, Reshape_SplitDivideVerboseStridesFollowTheDivide) {
  // Column-major (8S, 16):(1, 8) -> (4, 2, 16): 8:(1) = (4, 1):(2, 2) | (2):(1); 16 keeps 8.
  const ir::ShardLayout& l = reshaped(verbose({8, 16}, mesh_x(), {at(0)}, ir::Shape{1, 8}), {4, 2, 16});
  EXPECT_TRUE(ir::shape_equal(l.shape(), ir::Shape{4, 1, 2, 16}));
  EXPECT_EQ(*l.strides(), (ir::Shape{2, 2, 1, 8}));
}

TEST(HirConformance, Reshape_SplitDivideEverySplitBoundDimKeepsLocalExtentOne) {
  for (ir::Shape s : {ir::Shape{4, 2, 16}, ir::Shape{4, 32}, ir::Shape{4, 1, 2, 16}, ir::Shape{1, 4, 1, 2, 16}}) {
    const ir::ShardLayout& l = reshaped(verbose({8, 16}, mesh_x(), {at(0)}), s);
    const ir::ShardAttr& a = l.attrs()[0];
    ASSERT_TRUE(a.is_split()) << ir::shape_to_string(s);
    EXPECT_EQ(l.shape()[a.pos].value(), 4) << l.to_string();  // extent == mesh extent: local extent 1
  }
}

TEST(HirConformance, Reshape_SplitDivideOuterAfterWholePositionsInTheSameAxis) {
  // (2, 8S, 16) -> (8, 2, 16): axis 0 = 2 * outer 4; the Split remaps to position 1.
  auto x = verbose({2, 8, 16}, mesh_x(), {at(1)});
  const ir::ShardLayout& l = reshaped(x, {8, 2, 16});
  EXPECT_TRUE(ir::shape_equal(l.shape(), ir::Shape{2, 4, 1, 2, 16}));
  EXPECT_TRUE(l.attrs()[0] == at(1));
  EXPECT_EQ(*l.strides(), ops::shard::c_order({2, 4, 1, 2, 16}));
}

TEST(HirConformance, Reshape_SplitDividePartialAndBroadcastCarryThroughUnchanged) {
  auto x = verbose({8, 16}, mesh_xy(), {at(0), partial(ir::Reduction::kMax)});
  const ir::ShardLayout& l = reshaped(x, {4, 2, 16});
  EXPECT_TRUE(l.attrs()[0] == at(0));
  EXPECT_TRUE(l.attrs()[1] == partial(ir::Reduction::kMax));
  auto y = verbose({8, 16}, mesh_xy(), {bcast(), at(0)});
  const ir::ShardLayout& m = reshaped(y, {2, 4, 16});  // y = 2 divides the outer 2
  EXPECT_TRUE(m.attrs()[0] == bcast());
  EXPECT_TRUE(m.attrs()[1] == at(0));
  EXPECT_TRUE(ir::shape_equal(m.shape(), ir::Shape{2, 1, 4, 16}));
}

TEST(HirConformance, Reshape_SplitDivideNextToAWholeSplitInAnotherRegroup) {
  // Mesh (x, y) = (2, 2), (8Sx, 8Sy) -> (4, 2, 8): regroups {8Sx} -> {4, 2} and {8Sy} -> {8}.
  auto x = verbose({8, 8}, mesh_xy(), {at(0), at(1)});
  const ir::ShardLayout& l = reshaped(x, {4, 2, 8});
  EXPECT_TRUE(ir::shape_equal(l.shape(), ir::Shape{2, 2, 2, 8}));
  EXPECT_TRUE(l.attrs()[0] == at(0));
  EXPECT_TRUE(l.attrs()[1] == at(3));
}

// ---- MUST fail closed ---------------------------------------------------------

TEST(HirConformance, Reshape_SplitDivideAtAPointTheMeshExtentDoesNotDivideFailsClosed) {
  // (8S, 16) -> (2, 4, 16): outer 2, mesh 4: instance c's 2 rows are half of one outer index.
  expect_rejected([] { call<ops::Reshape>({verbose({8, 16}, mesh_x(), {at(0)})}, ir::Shape{2, 4, 16}); },
                  {"fail closed", "outer sub-factor 2", "mesh extent 4", "does not evenly divide"});
  // Canonical (4S, 2, 16) -> (2, 64): 4S = 2 | 2.
  auto c = var("x", sharded({8, 16}, mesh_x(), {split_axis(0)}));
  expect_rejected([&] { call<ops::Reshape>({c}, ir::Shape{2, 64}); }, {"fail closed", "does not evenly divide"});
}

TEST(HirConformance, Reshape_SplitSpanningMoreThanOneDivideFailsClosed) {
  // (16S, 8) -> (4, 2, 2, 8): 16S = 4 | 2 | 2, two boundaries inside one Split-bound position.
  expect_rejected([] { call<ops::Reshape>({verbose({16, 8}, mesh_x(), {at(0)})}, ir::Shape{4, 2, 2, 8}); },
                  {"fail closed", "more than one new-axis boundary", "deeper than one divide"});
  // Even though 4 divides the outer piece: (32S) -> (8, 2, 2) is 32S = 8 | 2 | 2.
  expect_rejected([] { call<ops::Reshape>({verbose({32}, mesh_x(), {at(0)})}, ir::Shape{8, 2, 2}); },
                  {"deeper than one divide"});
}

TEST(HirConformance, Reshape_TwoSplitsInOneRegroupFailClosed) {
  // Mesh (x, y) = (2, 2), (8Sx, 8Sy) -> (4, 16): regroup {8Sx, 8Sy} -> {4, 16}.
  expect_rejected([] { call<ops::Reshape>({verbose({8, 8}, mesh_xy(), {at(0), at(1)})}, ir::Shape{4, 16}); },
                  {"fail closed", "two or more Split-bound positions", "same regroup"});
  // Two mesh axes bound to the one divided position.
  expect_rejected([] { call<ops::Reshape>({verbose({8, 16}, mesh_xy(), {at(0), at(0)})}, ir::Shape{4, 2, 16}); },
                  {"two or more Split-bound positions"});
}

TEST(HirConformance, Reshape_PlainPositionDividingIsNotExpressibleAndFailsClosed) {
  // Canonical (4S, 2, 16) -> (8, 4, 4): the plain 16 would divide; no layout is fabricated.
  auto c = var("x", sharded({8, 16}, mesh_x(), {split_axis(0)}));
  expect_rejected([&] { call<ops::Reshape>({c}, ir::Shape{8, 4, 4}); },
                  {"fail closed", "view over", "is not Split-bound but divides"});
  // A boundary at no integral point of a position: (12S, 2) -> (8, 3) does not factor at all.
  expect_rejected([] { call<ops::Reshape>({verbose({12, 2}, mesh_x(), {at(0)})}, ir::Shape{8, 3}); },
                  {"fail closed", "view over"});
}

}  // namespace
}  // namespace tf
