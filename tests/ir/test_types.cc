#include <gtest/gtest.h>

#include "core/ir/error.h"
#include "core/ir/type.h"

using namespace tf::ir;

TEST(DType, TableRoundTripsNamesAndSizes) {
  for (DType d : {DType::kBool, DType::kI8, DType::kI32, DType::kI64, DType::kF16, DType::kBF16, DType::kF32,
                  DType::kF64, DType::kFP8E4M3, DType::kF8E8M0, DType::kF4E2M1}) {
    auto back = dtype_from_name(dtype_name(d));
    ASSERT_TRUE(back.has_value()) << dtype_name(d);
    EXPECT_EQ(*back, d);
  }
  EXPECT_FALSE(dtype_from_name("float32").has_value());
  EXPECT_EQ(dtype_bytes(DType::kBF16), 2);
  EXPECT_TRUE(is_float(DType::kFP8E4M3));
  EXPECT_TRUE(is_int(DType::kI64));
  EXPECT_TRUE(is_bool(DType::kBool));
}

TEST(TensorType, PrintsInDslSyntax) {
  auto t = TensorType::make({ShapeDim::var("N", 1, 8), 4096}, DType::kF32);
  EXPECT_EQ(t->to_string(), "Tensor[(N, 4096), f32]");
  EXPECT_EQ(TensorType::make({4}, DType::kBF16)->to_string(), "Tensor[(4,), bf16]");
  EXPECT_EQ(TensorType::make({4}, DType::kF32, nullptr, StorageKind::kRmem)->to_string(),
            "Tensor[(4,), f32, \"rmem\"]");
}

TEST(TensorType, RejectsNegativeExtent) { EXPECT_THROW(TensorType::make({-1}, DType::kF32), Error); }

TEST(Type, StructuralEqualityCoversDtypeShapeStorageAndNesting) {
  auto a = TensorType::make({2, 3}, DType::kF32);
  auto b = TensorType::make({2, 3}, DType::kF32);
  EXPECT_TRUE(a->structural_equal(*b));
  EXPECT_EQ(a->structural_hash(), b->structural_hash());
  EXPECT_FALSE(a->structural_equal(*TensorType::make({2, 3}, DType::kF16)));
  EXPECT_FALSE(a->structural_equal(*TensorType::make({3, 2}, DType::kF32)));
  EXPECT_FALSE(a->structural_equal(*TensorType::make({2, 3}, DType::kF32, nullptr, StorageKind::kSmem)));
  auto t1 = TupleType::make({a, b});
  auto t2 = TupleType::make({b, a});
  EXPECT_TRUE(t1->structural_equal(*t2));
  EXPECT_FALSE(t1->structural_equal(*TupleType::make({a})));
  EXPECT_EQ(t1->to_string(), "tuple[Tensor[(2, 3), f32], Tensor[(2, 3), f32]]");
  EXPECT_EQ(flatten_tensor_types(t1).size(), 2u);
}

TEST(Layout, PrintsAndComparesStrides) {
  Layout l({4, 8}, Shape{8, 1});
  EXPECT_EQ(l.to_string(), "Layout((4, 8), strides=(8, 1))");
  EXPECT_FALSE(l.structural_equal(Layout({4, 8}, std::nullopt)));
  EXPECT_EQ(c_order_strides({2, 3, 4}), (std::vector<int64_t>{12, 4, 1}));
}
