#include <gtest/gtest.h>

#include "core/ir/error.h"
#include "core/ir/shape.h"

using namespace tf::ir;

TEST(ShapeDim, ConstantsFoldThroughEveryDimOp) {
  EXPECT_EQ((ShapeDim(3) + 4).value(), 7);
  EXPECT_EQ((ShapeDim(3) - 4).value(), -1);
  EXPECT_EQ((ShapeDim(3) * 4).value(), 12);
  EXPECT_EQ(dim_floordiv(-7, 2).value(), -4);  // floor, like Python
  EXPECT_EQ(dim_mod(-7, 2).value(), 1);
  EXPECT_EQ(dim_min(5, 9).value(), 5);
  EXPECT_EQ(dim_max(5, 9).value(), 9);
}

TEST(ShapeDim, DimVarRangeIsHalfOpen) {
  ShapeDim n = ShapeDim::var("N", 1, 64);
  EXPECT_FALSE(n.is_static());
  EXPECT_EQ(n.upper_bound(), 63);
  EXPECT_THROW(ShapeDim::var("N", 5, 5), Error);
}

TEST(ShapeDim, SymbolicExpressionsPrintInDslSyntaxAndEvaluate) {
  ShapeDim ctx = ShapeDim::var("CTX", 1, 4096);
  ShapeDim k = dim_min(512, dim_floordiv(ctx, 4));
  EXPECT_EQ(k.to_string(), "dim_min(512, CTX // 4)");
  EXPECT_EQ(k.evaluate({{"CTX", 100}}), 25);
  EXPECT_EQ(k.evaluate({{"CTX", 4000}}), 512);
  EXPECT_EQ(k.upper_bound(), 512);
  EXPECT_EQ(((ctx + 1) * 2).to_string(), "(CTX * 2) + 2");
}

TEST(ShapeDim, IdentitiesKeepTheOperand) {
  ShapeDim n = ShapeDim::var("N", 1, 8);
  EXPECT_TRUE((n + 0).structural_equal(n));
  EXPECT_TRUE((n * 1).structural_equal(n));
  EXPECT_TRUE(dim_floordiv(n, 1).structural_equal(n));
}

TEST(ShapeDim, UpperBoundFailsOpenThroughSubAndSymbolicDivisor) {
  ShapeDim a = ShapeDim::var("A", 1, 10), b = ShapeDim::var("B", 1, 10);
  EXPECT_FALSE((a - 1).upper_bound().has_value());
  EXPECT_FALSE(dim_floordiv(a, b).upper_bound().has_value());
  EXPECT_EQ((a * 2).upper_bound(), 18);
}

TEST(ShapeDim, UnboundDimVarIsARuntimeError) {
  ShapeDim n = ShapeDim::var("N", 1, 8);
  try {
    n.evaluate({});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kRuntime);
    EXPECT_NE(std::string(e.what()).find("'N'"), std::string::npos);
  }
}

TEST(ShapeDim, EqualityAndHashAreStructural) {
  ShapeDim a = ShapeDim::var("N", 1, 8) * 2, b = ShapeDim::var("N", 1, 8) * 2;
  EXPECT_TRUE(a.structural_equal(b));
  EXPECT_EQ(a.structural_hash(), b.structural_hash());
  EXPECT_FALSE(a.structural_equal(ShapeDim::var("N", 1, 9) * 2));  // bounds count
  EXPECT_FALSE(a.structural_equal(ShapeDim::var("N", 1, 8) * 3));
}

TEST(ShapeDim, SubstituteReplacesByNameAndRefolds) {
  ShapeDim n = ShapeDim::var("N", 1, 8);
  ShapeDim e = substitute(n * 4 + 1, {{"N", ShapeDim(3)}});
  ASSERT_TRUE(e.is_static());
  EXPECT_EQ(e.value(), 13);
}

TEST(ShapeDim, SumsAreCanonicalSoEqualSumsCompareEqual) {
  ShapeDim n = ShapeDim::var("N", 1, 64), m = ShapeDim::var("M", 1, 64);
  EXPECT_TRUE(((n - 1) - n).is_static());
  EXPECT_EQ(((n - 1) - n).value(), -1);
  EXPECT_TRUE((n * 2 + n).structural_equal(n * 3));
  EXPECT_TRUE((m + n).structural_equal(n + m));
  EXPECT_EQ((n - (n + -1)).value(), 1);  // a Python slice x[-1:] on an N axis
  EXPECT_EQ((ShapeDim(0) - n).to_string(), "0 - N");
  EXPECT_EQ((n - m + 3).to_string(), "(N - M) + 3");
  EXPECT_EQ((n - 5).evaluate({{"N", 9}}), 4);
  // Non-linear subterms are atoms of the sum.
  EXPECT_TRUE((dim_floordiv(n, 2) + 1 - 1).structural_equal(dim_floordiv(n, 2)));
}
