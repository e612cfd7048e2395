#include <gtest/gtest.h>

#include "core/ir/error.h"
#include "core/ir/shard.h"
#include "core/ir/type.h"

using namespace tf::ir;

namespace {
MeshPtr cta(std::vector<int64_t> shape = {4}, std::vector<std::string> axes = {"x"}) {
  return std::make_shared<const Mesh>(Mesh{"cta", "cta", std::move(shape), std::move(axes)});
}
}  // namespace

TEST(ShardLayout, PrintsItsMeshAttrsAndPositions) {
  auto l = ShardLayout::make(cta(), {ShardAttr::split(0)}, {4, 2, 16}, Shape{0, 16, 1});
  EXPECT_EQ(l->to_string(), "ShardLayout(cta, (Split(pos=0),), layout=Layout((4, 2, 16), strides=(0, 16, 1)))");
  EXPECT_EQ(cta({2, 4}, {"x", "y"})->to_string(), "Mesh(topology=\"cta\", shape=(2, 4), axes=(\"x\", \"y\"))");
}

TEST(ShardLayout, NeedsOneAttrPerMeshAxisAndSplitPositionsInRange) {
  EXPECT_THROW(ShardLayout::make(cta({2, 2}, {"x", "y"}), {ShardAttr::broadcast()}, {4}, std::nullopt), Error);
  EXPECT_THROW(ShardLayout::make(cta(), {ShardAttr::split(3)}, {4, 2}, std::nullopt), Error);
}

TEST(ShardLayout, EqualityCoversMeshAttrsReductionAndStridesButNotTheBindingName) {
  auto a = ShardLayout::make(cta(), {ShardAttr::partial(Reduction::kSum)}, {8}, Shape{1});
  auto renamed = std::make_shared<const Mesh>(Mesh{"other", "cta", {4}, {"x"}});
  auto b = ShardLayout::make(renamed, {ShardAttr::partial(Reduction::kSum)}, {8}, Shape{1});
  EXPECT_TRUE(a->structural_equal(*b));
  EXPECT_EQ(a->structural_hash(), b->structural_hash());
  EXPECT_TRUE(a->has_partial());
  auto c = ShardLayout::make(cta(), {ShardAttr::partial(Reduction::kMax)}, {8}, Shape{1});
  EXPECT_FALSE(a->structural_equal(*c));
  EXPECT_FALSE(a->structural_equal(Layout({8}, Shape{1})));
  EXPECT_FALSE(Layout({8}, Shape{1}).structural_equal(*a));
  // Through TensorType equality.
  auto t1 = TensorType::make({8}, DType::kF32, a), t2 = TensorType::make({8}, DType::kF32, c);
  EXPECT_FALSE(t1->structural_equal(*t2));
  EXPECT_EQ(as_shard_layout(t1->layout()), a.get());
}
