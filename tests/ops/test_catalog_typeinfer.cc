// Typeinfer of the catalog ops (Gather, InsertSlice, CacheUpdate, TopK,
// Concat, Stack, ShapeOf, Rank, Conv2D, LayerNorm, RoPE, ShapeExtract,
// ShapeCompose, activations, and the extensions Where, Clamp, Pow, Bitcast,
// Arange): an accept and a reject case for every reject
// rule of the op (docs/ir.md, docs/ops.md), through the sema driver. Test
// names spell the rule.
#include <gtest/gtest.h>

#include <limits>

#include "core/ir/error.h"
#include "core/ops/math/math.h"
#include "core/ops/nn/nn.h"
#include "core/ops/shape/shape.h"
#include "core/ops/tensor/tensor.h"
#include "core/sema/typeinfer.h"

using namespace tf;
using namespace tf::ir;
using namespace tf::ops;

namespace {

const ShapeDim N = ShapeDim::var("N", 1, 1024);
const ShapeDim CTX = ShapeDim::var("CTX", 1, 4097);  // upper bound 4096

ExprPtr param(const std::string& name, Shape s, DType d = DType::kF32) {
  return Var::make(name, TensorType::make(std::move(s), d));
}
ExprPtr tuple(std::vector<ExprPtr> fs) { return Tuple::make(std::move(fs)); }
ExprPtr lit(int64_t v, DType d = DType::kI64) { return Constant::make_int(v, d); }

TypePtr infer(OpPtr op, std::vector<ExprPtr> args) { return sema::make_op_call(std::move(op), std::move(args))->type(); }
std::string str(const TypePtr& t) { return t->to_string(); }

// Runs f, expects a type error whose message contains every fragment.
template <typename F>
void expect_type_error(F f, std::vector<std::string> fragments) {
  try {
    f();
    ADD_FAILURE() << "expected a type error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kType) << e.what();
    for (const auto& frag : fragments) EXPECT_NE(std::string(e.what()).find(frag), std::string::npos) << e.what();
  }
}

// ---- builders -------------------------------------------------------------------

TypePtr gather(ExprPtr x, ExprPtr idx, int64_t axis, int64_t b) {
  return infer(std::make_shared<Gather>(axis, b), {std::move(x), std::move(idx)});
}
// InsertSlice built the way the frontend builds it: literals from the operand.
TypePtr insert_slice(ExprPtr dst, ExprPtr up, ExprPtr offsets) {
  auto op = std::make_shared<InsertSlice>(insert_slice_literals(offsets));
  return infer(op, {std::move(dst), std::move(up), std::move(offsets)});
}
TypePtr cache_update(ExprPtr cache, ExprPtr pos, ExprPtr s, ExprPtr nw) {
  return infer(std::make_shared<CacheUpdate>(), {std::move(cache), std::move(pos), std::move(s), std::move(nw)});
}
TypePtr cache_scatter(ExprPtr cache, ExprPtr nw, ExprPtr pos) {
  return infer(std::make_shared<CacheScatter>(), {std::move(cache), std::move(nw), std::move(pos)});
}
TypePtr topk(ExprPtr x, ShapeDim k, int64_t axis = -1) {
  return infer(std::make_shared<TopK>(std::move(k), axis, true, true), {std::move(x)});
}
ExprPtr i32s(const std::string& name, Shape s = {}) { return param(name, std::move(s), DType::kI32); }

}  // namespace

// ---- Gather ---------------------------------------------------------------------

TEST(HirConformance, Gather_ResultShapeReplacesTheAxisByTheIndexShape) {
  EXPECT_EQ(str(gather(param("x", {4, 5, 6}), param("i", {2, 3}, DType::kI64), 1, 0)), "Tensor[(4, 2, 3, 6), f32]");
}

TEST(HirConformance, Gather_BatchDimsMustBeWithinZeroAndMinOfAxisAndIndexRank) {
  EXPECT_EQ(str(gather(param("x", {4, 5, 6}), param("i", {4, 3}, DType::kI32), 1, 1)), "Tensor[(4, 3, 6), f32]");
  expect_type_error([] { gather(param("x", {4, 5, 6}), param("i", {4, 3}, DType::kI32), 1, -1); },
                    {"'gather'", "batch_dims must satisfy 0 <= batch_dims <= min(axis, rank(indices))", "got -1"});
  // batch_dims > axis.
  expect_type_error([] { gather(param("x", {4, 5, 6}), param("i", {4, 5}, DType::kI32), 1, 2); },
                    {"'gather'", "batch_dims", "min(1, 2)", "got 2"});
  // batch_dims > rank(indices).
  expect_type_error([] { gather(param("x", {4, 5, 6}), param("i", {4}, DType::kI32), 2, 2); },
                    {"'gather'", "batch_dims", "min(2, 1)", "got 2"});
}

TEST(HirConformance, Gather_LeadingBatchDimsOfXAndIndexMustBeEqual) {
  EXPECT_EQ(str(gather(param("x", {N, 5}), param("i", {N, 2}, DType::kI64), 1, 1)), "Tensor[(N, 2), f32]");
  expect_type_error([] { gather(param("x", {4, 5, 6}), param("i", {3, 2}, DType::kI64), 1, 1); },
                    {"'gather' operand #1 (indices)", "equal to x on batch axis 0 (4)"});
}

TEST(HirConformance, Gather_NoImplicitBatchingWhenLeadingDimsCoincide) {
  // Same leading dim 4 on x and indices, batch_dims = 0: the whole index
  // shape is inserted at axis (not batched).
  EXPECT_EQ(str(gather(param("x", {4, 5}), param("i", {4, 3}, DType::kI64), 1, 0)), "Tensor[(4, 4, 3), f32]");
  EXPECT_EQ(str(gather(param("x", {4, 5}), param("i", {4, 3}, DType::kI64), 1, 1)), "Tensor[(4, 3), f32]");
}

TEST(HirConformance, Gather_IndicesMustBeIntegers) {
  EXPECT_EQ(str(gather(param("x", {5}), param("i", {2}, DType::kI32), 0, 0)), "Tensor[(2,), f32]");
  expect_type_error([] { gather(param("x", {5}), param("i", {2}, DType::kF32), 0, 0); },
                    {"'gather' operand #1 (indices)", "i32 or i64", "Tensor[(2,), f32]"});
}

TEST(HirConformance, Gather_AxisMustBeInRange) {
  expect_type_error([] { gather(param("x", {5, 2}), param("i", {2}, DType::kI32), 2, 0); },
                    {"'gather'", "axis 2 is out of range for rank 2"});
}

// ---- InsertSlice ----------------------------------------------------------------

TEST(HirConformance, InsertSlice_UpdateHasTheRankAndDtypeOfDst) {
  EXPECT_EQ(str(insert_slice(param("d", {8, 4}), param("u", {2, 4}), tuple({lit(0), lit(0)}))), "Tensor[(8, 4), f32]");
  expect_type_error([] { insert_slice(param("d", {8, 4}), param("u", {2}), tuple({lit(0), lit(0)})); },
                    {"'insert_slice' operand #1 (update)", "of dst's rank (2)"});
  expect_type_error([] { insert_slice(param("d", {8, 4}), param("u", {2, 4}, DType::kBF16), tuple({lit(0), lit(0)})); },
                    {"'insert_slice' operand #1 (update)", "of dst's dtype (f32)"});
}

TEST(HirConformance, InsertSlice_RankOneDstAcceptsABareScalarOffset) {
  EXPECT_EQ(str(insert_slice(param("d", {8}), param("u", {3}), lit(5))), "Tensor[(8,), f32]");
  EXPECT_EQ(str(insert_slice(param("d", {8}), param("u", {3}), i32s("o"))), "Tensor[(8,), f32]");
  expect_type_error([] { insert_slice(param("d", {8, 4}), param("u", {3, 4}), lit(0)); },
                    {"'insert_slice' operand #2 (offsets)", "a tuple of 2 integer scalars",
                     "a bare scalar offset is for a rank-1 dst only"});
}

TEST(HirConformance, InsertSlice_RankNDstRequiresAnOffsetTupleOfItsRank) {
  EXPECT_EQ(str(insert_slice(param("d", {8, 4, 2}), param("u", {1, 4, 2}), tuple({i32s("a"), lit(0), lit(0)}))),
            "Tensor[(8, 4, 2), f32]");
  expect_type_error([] { insert_slice(param("d", {8, 4}), param("u", {3, 4}), tuple({lit(0)})); },
                    {"'insert_slice' operand #2 (offsets)", "one offset per axis of dst (2)"});
}

TEST(HirConformance, InsertSlice_OffsetsMustBeIntegerScalars) {
  expect_type_error([] { insert_slice(param("d", {8}), param("u", {3}), tuple({param("o", {}, DType::kF32)})); },
                    {"'insert_slice' operand #2 (offsets)", "rank-0 i32 / i64 scalars"});
  expect_type_error([] { insert_slice(param("d", {8}), param("u", {3}), tuple({param("o", {2}, DType::kI64)})); },
                    {"'insert_slice' operand #2 (offsets)", "rank-0 i32 / i64 scalars"});
}

TEST(HirConformance, InsertSlice_LiteralOutOfBoundsWindowFailsNamingTheAxis) {
  // [5, 8) fits an extent of 8; [6, 9) does not.
  EXPECT_EQ(str(insert_slice(param("d", {4, 8}), param("u", {4, 3}), tuple({lit(0), lit(5)}))), "Tensor[(4, 8), f32]");
  expect_type_error([] { insert_slice(param("d", {4, 8}), param("u", {4, 3}), tuple({lit(0), lit(6)})); },
                    {"'insert_slice'", "window [6, 6 + 3)", "on axis 1", "out of bounds", "dst extent 8"});
  expect_type_error([] { insert_slice(param("d", {4, 8}), param("u", {2, 3}), tuple({lit(-1), lit(0)})); },
                    {"'insert_slice'", "window [-1, -1 + 2)", "on axis 0", "out of bounds"});
  expect_type_error([] { insert_slice(param("d", {8}), param("u", {3}), lit(6, DType::kI32)); },
                    {"'insert_slice'", "on axis 0", "out of bounds for dst extent 8"});
}

TEST(HirConformance, InsertSlice_RuntimeOffsetIsNotCheckedAtTypeinfer) {
  // A runtime offset with the same window extent types; eval checks it.
  EXPECT_EQ(str(insert_slice(param("d", {4, 8}), param("u", {4, 3}), tuple({lit(0), i32s("o")}))),
            "Tensor[(4, 8), f32]");
}

TEST(HirConformance, InsertSlice_UpdateMustFitDstOnEveryAxis) {
  expect_type_error([] { insert_slice(param("d", {4, 8}), param("u", {4, 9}), tuple({i32s("a"), i32s("b")})); },
                    {"'insert_slice' operand #1 (update)", "no longer than dst on axis 1 (8)"});
}

// ---- CacheUpdate ----------------------------------------------------------------

TEST(HirConformance, CacheUpdate_CacheAndNewMustBeRank4) {
  EXPECT_EQ(str(cache_update(param("c", {2, 16, 4, 8}), i32s("p"), i32s("s"), param("n", {2, 3, 4, 8}))),
            "Tensor[(2, 16, 4, 8), f32]");
  expect_type_error([] { cache_update(param("c", {2, 16, 32}), i32s("p"), i32s("s"), param("n", {2, 3, 4, 8})); },
                    {"'cache_update' operand #0 (cache)", "rank-4 [B, len, kv_heads, head_dim]"});
  expect_type_error([] { cache_update(param("c", {2, 16, 4, 8}), i32s("p"), i32s("s"), param("n", {2, 3, 32})); },
                    {"'cache_update' operand #3 (new)", "rank-4"});
}

TEST(HirConformance, CacheUpdate_NewMustHaveTheCacheDtype) {
  expect_type_error(
      [] { cache_update(param("c", {2, 16, 4, 8}), i32s("p"), i32s("s"), param("n", {2, 3, 4, 8}, DType::kBF16)); },
      {"'cache_update' operand #3 (new)", "of cache's dtype (f32)"});
}

TEST(HirConformance, CacheUpdate_BKvHeadsAndHeadDimMustBeEqual) {
  EXPECT_EQ(str(cache_update(param("c", {N, 16, 4, 8}), i32s("p"), i32s("s"), param("n", {N, 1, 4, 8}))),
            "Tensor[(N, 16, 4, 8), f32]");
  expect_type_error([] { cache_update(param("c", {2, 16, 4, 8}), i32s("p"), i32s("s"), param("n", {3, 1, 4, 8})); },
                    {"'cache_update' operand #3 (new)", "equal to cache on B (2)"});
  expect_type_error([] { cache_update(param("c", {2, 16, 4, 8}), i32s("p"), i32s("s"), param("n", {2, 1, 5, 8})); },
                    {"'cache_update' operand #3 (new)", "equal to cache on kv_heads (4)"});
  expect_type_error([] { cache_update(param("c", {2, 16, 4, 8}), i32s("p"), i32s("s"), param("n", {2, 1, 4, 9})); },
                    {"'cache_update' operand #3 (new)", "equal to cache on head_dim (8)"});
}

TEST(HirConformance, CacheUpdate_StaticNewLenMustNotExceedCacheLen) {
  EXPECT_EQ(str(cache_update(param("c", {2, 16, 4, 8}), i32s("p"), i32s("s"), param("n", {2, 16, 4, 8}))),
            "Tensor[(2, 16, 4, 8), f32]");
  expect_type_error([] { cache_update(param("c", {2, 16, 4, 8}), i32s("p"), i32s("s"), param("n", {2, 17, 4, 8})); },
                    {"'cache_update' operand #3 (new)", "no longer than cache on len (16)"});
  // A symbolic new.len is not checked at typeinfer; the result keeps cache's shape.
  EXPECT_EQ(str(cache_update(param("c", {2, 16, 4, 8}), i32s("p"), i32s("s"), param("n", {2, N, 4, 8}))),
            "Tensor[(2, 16, 4, 8), f32]");
}

TEST(HirConformance, CacheUpdate_CurPosAndSMustBeI32Scalars) {
  // A scalar is rank-0 or has only literal size-1 dims.
  EXPECT_EQ(str(cache_update(param("c", {2, 16, 4, 8}), i32s("p", {1}), i32s("s", {1, 1}), param("n", {2, 3, 4, 8}))),
            "Tensor[(2, 16, 4, 8), f32]");
  expect_type_error(
      [] { cache_update(param("c", {2, 16, 4, 8}), param("p", {}, DType::kI64), i32s("s"), param("n", {2, 3, 4, 8})); },
      {"'cache_update' operand #1 (cur_pos)", "an i32 scalar tensor"});
  expect_type_error([] { cache_update(param("c", {2, 16, 4, 8}), i32s("p"), i32s("s", {2}), param("n", {2, 3, 4, 8})); },
                    {"'cache_update' operand #2 (s)", "an i32 scalar tensor"});
  expect_type_error([] { cache_update(param("c", {2, 16, 4, 8}), i32s("p", {N}), i32s("s"), param("n", {2, 3, 4, 8})); },
                    {"'cache_update' operand #1 (cur_pos)", "an i32 scalar tensor"});
}

// ---- TopK -----------------------------------------------------------------------

TEST(HirConformance, TopK_ResultIsValuesAndI64IndicesWithTheAxisShrunkToK) {
  EXPECT_EQ(str(topk(param("x", {3, 10}), 4)), "tuple[Tensor[(3, 4), f32], Tensor[(3, 4), i64]]");
  EXPECT_EQ(str(topk(param("x", {CTX, 8}), dim_min(512, dim_floordiv(CTX, 4)), 0)),
            "tuple[Tensor[(dim_min(512, CTX // 4), 8), f32], Tensor[(dim_min(512, CTX // 4), 8), i64]]");
}

TEST(HirConformance, TopK_KMustBeNonNegative) {
  EXPECT_EQ(str(topk(param("x", {10}), 0)), "tuple[Tensor[(0,), f32], Tensor[(0,), i64]]");
  expect_type_error([] { topk(param("x", {10}), -1); }, {"'topk'", "k must be non-negative", "got -1"});
}

TEST(HirConformance, TopK_KMustNotExceedTheSelectedAxisLength) {
  EXPECT_EQ(str(topk(param("x", {2, 10}), 10)), "tuple[Tensor[(2, 10), f32], Tensor[(2, 10), i64]]");
  expect_type_error([] { topk(param("x", {2, 10}), 11); }, {"'topk'", "must not exceed the length 10 of axis 1"});
  expect_type_error([] { topk(param("x", {12, 10}), 13, 0); }, {"'topk'", "must not exceed", "of axis 0"});
}

// The upper bound of a DimVar-derived k composes through DimMin / DimMax /
// DimAdd / DimMul / DimFloorDiv / DimMod (CTX's bound is 4096).
TEST(HirConformance, TopK_KMustNotExceedTheSelectedAxisLength_ThroughDimVarArithmetic) {
  auto x_ok = [] { return param("x", {CTX, 4096}); };  // axis 1 is 4096
  auto x_small = [] { return param("x", {CTX, 100}); };
  // DimMin: min(50, CTX) <= 50 <= 100.
  EXPECT_NO_THROW(topk(x_small(), dim_min(50, CTX)));
  expect_type_error([] { topk(param("x", {CTX, 100}), dim_min(512, dim_floordiv(CTX, 4))); },
                    {"'topk'", "k (dim_min(512, CTX // 4), at most 512)", "must not exceed the length 100 of axis 1"});
  // DimMax.
  EXPECT_NO_THROW(topk(x_ok(), dim_max(8, CTX)));
  expect_type_error([] { topk(param("x", {CTX, 100}), dim_max(8, CTX)); }, {"'topk'", "at most 4096", "length 100"});
  // DimAdd.
  EXPECT_NO_THROW(topk(param("x", {CTX, 4097}), CTX + 1));
  expect_type_error([] { topk(param("x", {CTX, 4096}), CTX + 1); }, {"'topk'", "at most 4097", "length 4096"});
  // DimMul.
  EXPECT_NO_THROW(topk(param("x", {CTX, 8192}), CTX * 2));
  expect_type_error([] { topk(param("x", {CTX, 8191}), CTX * 2); }, {"'topk'", "at most 8192", "length 8191"});
  // DimFloorDiv by a constant.
  EXPECT_NO_THROW(topk(param("x", {CTX, 1024}), dim_floordiv(CTX, 4)));
  expect_type_error([] { topk(param("x", {CTX, 1023}), dim_floordiv(CTX, 4)); }, {"'topk'", "at most 1024", "length 1023"});
  // DimMod by a constant: CTX % 16 <= 15.
  EXPECT_NO_THROW(topk(param("x", {CTX, 15}), dim_mod(CTX, 16)));
  expect_type_error([] { topk(param("x", {CTX, 14}), dim_mod(CTX, 16)); }, {"'topk'", "at most 15", "length 14"});
}

TEST(HirConformance, TopK_UpperBoundFailsOpenThroughDimSubAndSymbolicDivisors) {
  const ShapeDim M = ShapeDim::var("M", 1, 4097);
  // k = 4096 - CTX has no composed upper bound (DimSub): not checked.
  EXPECT_NO_THROW(topk(param("x", {CTX, 4}), ShapeDim(4096) - CTX));
  // Symbolic divisor / modulus: not checked.
  EXPECT_NO_THROW(topk(param("x", {CTX, M, 4}), dim_floordiv(CTX, M)));
  EXPECT_NO_THROW(topk(param("x", {CTX, M, 4}), dim_mod(CTX, M)));
  // Symbolic k against a symbolic axis length: not checked.
  EXPECT_NO_THROW(topk(param("x", {CTX, N}), CTX));
  // The same k through a checked composition does reject (so the above are
  // open because of the rule, not because nothing is checked).
  expect_type_error([] { topk(param("x", {CTX, 4}), dim_floordiv(CTX, 2)); }, {"'topk'", "must not exceed"});
}

TEST(HirConformance, TopK_KDimVarsMustBeResolvableFromXsShape) {
  EXPECT_NO_THROW(topk(param("x", {CTX, 4096}), dim_floordiv(CTX, 4)));
  expect_type_error([] { topk(param("x", {N, 4096}), dim_floordiv(CTX, 4)); },
                    {"'topk'", "uses DimVar CTX", "does not appear in x's shape (N, 4096)", "resolvable from x"});
}

TEST(HirConformance, TopK_XMustBeANumericTensorOfRankAtLeastOne) {
  expect_type_error([] { topk(param("x", {}), 1); }, {"'topk' operand #0 (x)", "of rank >= 1"});
  expect_type_error([] { topk(param("x", {4}, DType::kBool), 1); }, {"'topk' operand #0 (x)", "numeric (non-bool)"});
  expect_type_error([] { topk(param("x", {4}), 1, 1); }, {"'topk'", "axis 1 is out of range for rank 1"});
}

// ---- Concat / Stack -------------------------------------------------------------

TEST(HirConformance, Concat_InputsMustShareRankDtypeAndOffAxisDims) {
  auto concat = [](std::vector<ExprPtr> xs, int64_t axis) {
    return infer(std::make_shared<Concat>(axis), {tuple(std::move(xs))});
  };
  EXPECT_EQ(str(concat({param("a", {2, N}), param("b", {3, N})}, 0)), "Tensor[(5, N), f32]");
  EXPECT_EQ(str(concat({param("a", {2, 3}), param("b", {2, 4})}, -1)), "Tensor[(2, 7), f32]");
  expect_type_error([&] { concat({param("a", {2, 3}), param("b", {2, 3}, DType::kI32)}, 0); },
                    {"'concat' operand #0 (inputs)", "one dtype", "input 1 is i32"});
  expect_type_error([&] { concat({param("a", {2, 3}), param("b", {2})}, 0); },
                    {"'concat' operand #0 (inputs)", "one rank", "input 1 has rank 1"});
  expect_type_error([&] { concat({param("a", {2, 3}), param("b", {2, 4})}, 0); },
                    {"'concat' operand #0 (inputs)", "equal off the concat axis", "on axis 1"});
  expect_type_error([&] { concat({param("a", {2, 3})}, 2); }, {"'concat'", "axis 2 is out of range for rank 2"});
  expect_type_error([&] { concat({}, 0); }, {"'concat' operand #0 (inputs)", "at least one tensor"});
  expect_type_error([&] { concat({param("a", {}), param("b", {})}, 0); }, {"'concat' operand #0 (inputs)", "rank >= 1"});
  expect_type_error([] { infer(std::make_shared<Concat>(0), {param("a", {2})}); },
                    {"'concat' operand #0 (inputs)", "a tuple of tensors"});
}

TEST(HirConformance, Stack_InputsMustShareShapeAndDtypeAndAxisCountsTheNewAxis) {
  auto stack = [](std::vector<ExprPtr> xs, int64_t axis) {
    return infer(std::make_shared<Stack>(axis), {tuple(std::move(xs))});
  };
  EXPECT_EQ(str(stack({param("a", {2, 3}), param("b", {2, 3})}, 2)), "Tensor[(2, 3, 2), f32]");
  EXPECT_EQ(str(stack({param("a", {2, 3}), param("b", {2, 3}), param("c", {2, 3})}, -3)), "Tensor[(3, 2, 3), f32]");
  expect_type_error([&] { stack({param("a", {2, 3}), param("b", {3, 2})}, 0); },
                    {"'stack' operand #0 (inputs)", "one shape", "input 1 is (3, 2)"});
  expect_type_error([&] { stack({param("a", {2}), param("b", {2}, DType::kF16)}, 0); },
                    {"'stack' operand #0 (inputs)", "one dtype"});
  expect_type_error([&] { stack({param("a", {2}), param("b", {2})}, 2); }, {"'stack'", "axis 2 is out of range for rank 2"});
}

TEST(HirConformance, ShapeOfAndRank_AreI64) {
  EXPECT_EQ(str(infer(std::make_shared<ShapeOf>(), {param("x", {N, 3, 2})})), "Tensor[(3,), i64]");
  EXPECT_EQ(str(infer(std::make_shared<Rank>(), {param("x", {N, 3})})), "Tensor[(), i64]");
  expect_type_error([] { infer(std::make_shared<Rank>(), {tuple({param("x", {2})})}); }, {"'rank' operand #0 (x)", "a tensor"});
}

// ---- Conv2D ---------------------------------------------------------------------

namespace {
TypePtr conv(Shape x, Shape w, ExprPtr bias, int64_t groups = 1, std::vector<int64_t> stride = {1, 1},
             std::vector<int64_t> pad = {0, 0}, std::vector<int64_t> dil = {1, 1}) {
  return infer(std::make_shared<Conv2D>(stride, pad, dil, groups),
               {param("x", std::move(x)), param("w", std::move(w)), std::move(bias)});
}
ExprPtr no_bias() { return tuple({}); }
}  // namespace

TEST(HirConformance, Conv2D_OutputExtentFollowsStridePaddingDilation) {
  EXPECT_EQ(str(conv({1, 3, 8, 8}, {6, 3, 3, 3}, param("b", {6}), 1, {2, 2}, {1, 1})), "Tensor[(1, 6, 4, 4), f32]");
  EXPECT_EQ(str(conv({1, 3, 8, 8}, {6, 3, 3, 3}, no_bias(), 1, {1, 1}, {0, 0}, {2, 2})), "Tensor[(1, 6, 4, 4), f32]");
  expect_type_error([] { conv({1, 3, 4, 4}, {6, 3, 5, 5}, no_bias()); },
                    {"'conv2d'", "dilated kernel is larger than the padded input on axis H"});
}

TEST(HirConformance, Conv2D_XAndWeightMustBeRank4OfOneFloatDtype) {
  expect_type_error([] { conv({3, 8, 8}, {6, 3, 3, 3}, no_bias()); }, {"'conv2d' operand #0 (x)", "rank-4 NCHW"});
  expect_type_error([] { conv({1, 3, 8, 8}, {6, 3, 3}, no_bias()); }, {"'conv2d' operand #1 (weight)", "rank-4 OIHW"});
  expect_type_error([] { infer(std::make_shared<Conv2D>(std::vector<int64_t>{1, 1}, std::vector<int64_t>{0, 0},
                                                        std::vector<int64_t>{1, 1}, 1),
                               {param("x", {1, 3, 8, 8}), param("w", {6, 3, 3, 3}, DType::kBF16), no_bias()}); },
                    {"'conv2d' operand #1 (weight)", "of x's dtype (f32)"});
  expect_type_error([] { infer(std::make_shared<Conv2D>(std::vector<int64_t>{1, 1}, std::vector<int64_t>{0, 0},
                                                        std::vector<int64_t>{1, 1}, 1),
                               {param("x", {1, 3, 8, 8}, DType::kI32), param("w", {6, 3, 3, 3}), no_bias()}); },
                    {"'conv2d' operand #0 (x)", "floating-point"});
}

TEST(HirConformance, Conv2D_ChannelsAndGroupsMustAgree) {
  EXPECT_EQ(str(conv({1, 4, 5, 5}, {6, 2, 1, 1}, no_bias(), 2)), "Tensor[(1, 6, 5, 5), f32]");
  expect_type_error([] { conv({1, 3, 5, 5}, {6, 1, 1, 1}, no_bias(), 2); },
                    {"'conv2d' operand #0 (x)", "channels (3) divisible by groups (2)"});
  expect_type_error([] { conv({1, 4, 5, 5}, {5, 2, 1, 1}, no_bias(), 2); },
                    {"'conv2d' operand #1 (weight)", "out-channels (5) divisible by groups (2)"});
  expect_type_error([] { conv({1, 4, 5, 5}, {6, 4, 1, 1}, no_bias(), 2); },
                    {"'conv2d' operand #1 (weight)", "[O, C / groups, kh, kw]", "4 / 2"});
  expect_type_error([] { conv({1, 4, 5, 5}, {6, 4, 1, 1}, no_bias(), 0); }, {"'conv2d'", "groups must be positive"});
}

TEST(HirConformance, Conv2D_StridePaddingDilationMustBeValid) {
  expect_type_error([] { conv({1, 3, 8, 8}, {6, 3, 3, 3}, no_bias(), 1, {0, 1}); }, {"'conv2d'", "stride must be positive"});
  expect_type_error([] { conv({1, 3, 8, 8}, {6, 3, 3, 3}, no_bias(), 1, {1, 1}, {-1, 0}); },
                    {"'conv2d'", "padding must be non-negative"});
  expect_type_error([] { conv({1, 3, 8, 8}, {6, 3, 3, 3}, no_bias(), 1, {1, 1}, {0, 0}, {1, 0}); },
                    {"'conv2d'", "dilation must be positive"});
}

TEST(HirConformance, Conv2D_BiasIsRank1OutChannelsOrOmitted) {
  EXPECT_EQ(str(conv({1, 3, 8, 8}, {6, 3, 3, 3}, param("b", {6}))), "Tensor[(1, 6, 6, 6), f32]");
  EXPECT_EQ(str(conv({1, 3, 8, 8}, {6, 3, 3, 3}, no_bias())), "Tensor[(1, 6, 6, 6), f32]");
  expect_type_error([] { conv({1, 3, 8, 8}, {6, 3, 3, 3}, param("b", {5})); },
                    {"'conv2d' operand #2 (bias)", "rank-1 with the out-channels of weight (6)"});
  expect_type_error([] { conv({1, 3, 8, 8}, {6, 3, 3, 3}, param("b", {6}, DType::kF16)); },
                    {"'conv2d' operand #2 (bias)", "of x's dtype (f32)"});
  expect_type_error([] { conv({1, 3, 8, 8}, {6, 3, 3, 3}, tuple({param("b", {6}), param("c", {6})})); },
                    {"'conv2d' operand #2 (bias)", "() for no bias"});
}

// ---- LayerNorm / RoPE / activations ---------------------------------------------

TEST(HirConformance, LayerNorm_WeightAndBiasAreRank1OverTheLastAxis) {
  auto ln = [](ExprPtr x, ExprPtr w, ExprPtr b, double eps = 1e-5) {
    return infer(std::make_shared<LayerNorm>(eps), {std::move(x), std::move(w), std::move(b)});
  };
  EXPECT_EQ(str(ln(param("x", {N, 8}), param("w", {8}), param("b", {8}))), "Tensor[(N, 8), f32]");
  expect_type_error([&] { ln(param("x", {N, 8}), param("w", {4}), param("b", {8})); },
                    {"'layer_norm' operand #1 (weight)", "rank-1 with the length of x's last axis (8)"});
  expect_type_error([&] { ln(param("x", {N, 8}), param("w", {8}), param("b", {1, 8})); },
                    {"'layer_norm' operand #2 (bias)", "rank-1 with the length of x's last axis (8)"});
  expect_type_error([&] { ln(param("x", {N, 8}), param("w", {8}, DType::kBF16), param("b", {8})); },
                    {"'layer_norm' operand #1 (weight)", "of x's dtype (f32)"});
  expect_type_error([&] { ln(param("x", {8}, DType::kI32), param("w", {8}), param("b", {8})); },
                    {"'layer_norm' operand #0 (x)", "floating-point"});
  expect_type_error([&] { ln(param("x", {}), param("w", {1}), param("b", {1})); }, {"'layer_norm' operand #0 (x)", "rank >= 1"});
  expect_type_error([&] { ln(param("x", {8}), param("w", {8}), param("b", {8}), -1.0); }, {"'layer_norm'", "eps must be non-negative"});
}

namespace {
TypePtr rope(Shape q, Shape k, Shape c, Shape s, Shape p, DType pd = DType::kI64) {
  return infer(std::make_shared<RoPE>(), {param("q", std::move(q)), param("k", std::move(k)), param("c", std::move(c)),
                                          param("s", std::move(s)), param("p", std::move(p), pd)});
}
}  // namespace

TEST(HirConformance, RoPE_ShapesOfQKCachesAndPosIds) {
  EXPECT_EQ(str(rope({2, N, 4, 8}, {2, N, 1, 8}, {64, 8}, {64, 8}, {2, N})),
            "tuple[Tensor[(2, N, 4, 8), f32], Tensor[(2, N, 1, 8), f32]]");
  expect_type_error([] { rope({2, 3, 8}, {2, 3, 1, 8}, {64, 8}, {64, 8}, {2, 3}); }, {"'rope' operand #0 (q)", "rank-4 [B, S, H, D]"});
  expect_type_error([] { rope({2, 3, 4, 8}, {2, 3, 8}, {64, 8}, {64, 8}, {2, 3}); }, {"'rope' operand #1 (k)", "rank-4"});
  expect_type_error([] { rope({2, 3, 4, 7}, {2, 3, 1, 7}, {64, 7}, {64, 7}, {2, 3}); }, {"'rope' operand #0 (q)", "even head dim"});
  expect_type_error([] { rope({2, 3, 4, 8}, {2, 4, 1, 8}, {64, 8}, {64, 8}, {2, 3}); },
                    {"'rope' operand #1 (k)", "equal to q on axis 1 (3)"});
  expect_type_error([] { rope({2, 3, 4, 8}, {2, 3, 1, 8}, {64, 4}, {64, 8}, {2, 3}); },
                    {"'rope' operand #2 (cos_cache)", "rank-2 [P, D] with D = 8"});
  expect_type_error([] { rope({2, 3, 4, 8}, {2, 3, 1, 8}, {64, 8}, {32, 8}, {2, 3}); },
                    {"'rope' operand #3 (sin_cache)", "of cos_cache's length P (64)"});
  expect_type_error([] { rope({2, 3, 4, 8}, {2, 3, 1, 8}, {64, 8}, {64, 8}, {2, 3}, DType::kF32); },
                    {"'rope' operand #4 (pos_ids)", "i32 or i64"});
  expect_type_error([] { rope({2, 3, 4, 8}, {2, 3, 1, 8}, {64, 8}, {64, 8}, {3, 2}); },
                    {"'rope' operand #4 (pos_ids)", "rank-2 [B, S] = (2, 3)"});
}

TEST(HirConformance, Activations_SigmoidAndTanhNeedFloat) {
  EXPECT_EQ(str(infer(std::make_shared<Sigmoid>(), {param("x", {N})})), "Tensor[(N,), f32]");
  EXPECT_EQ(str(infer(std::make_shared<Tanh>(), {param("x", {N}, DType::kBF16)})), "Tensor[(N,), bf16]");
  expect_type_error([] { infer(std::make_shared<Sigmoid>(), {param("x", {4}, DType::kI32)}); },
                    {"'sigmoid' operand #0 (x)", "floating-point"});
  expect_type_error([] { infer(std::make_shared<Tanh>(), {param("x", {4}, DType::kI64)}); },
                    {"'tanh' operand #0 (x)", "floating-point"});
}

// ---- ShapeExtract / ShapeCompose ------------------------------------------------

TEST(HirConformance, ShapeExtract_IndexMustBeInRangeOfTheShapeValue) {
  auto ex = [](ExprPtr s, int64_t i) { return infer(std::make_shared<ShapeExtract>(i), {std::move(s)}); };
  EXPECT_EQ(str(ex(param("s", {3}, DType::kI64), 2)), "Tensor[(), i64]");
  EXPECT_EQ(str(ex(param("s", {3}, DType::kI64), -3)), "Tensor[(), i64]");
  expect_type_error([&] { ex(param("s", {3}, DType::kI64), 3); }, {"'shape_extract'", "index 3 is out of range for rank 3"});
  expect_type_error([&] { ex(param("s", {3}, DType::kI64), -4); }, {"'shape_extract'", "index -4 is out of range"});
  EXPECT_EQ(str(ex(param("s", {N}, DType::kI64), 5)), "Tensor[(), i64]");
  expect_type_error([&] { ex(param("s", {N}, DType::kI64), -1); }, {"'shape_extract'", "non-negative", "symbolic length N"});
  expect_type_error([&] { ex(param("s", {3}, DType::kI32), 0); }, {"'shape_extract' operand #0 (shape)", "rank-1 i64"});
}

TEST(HirConformance, ShapeCompose_DimsMustBeI64Scalars) {
  auto co = [](std::vector<ExprPtr> ds) { return infer(std::make_shared<ShapeCompose>(), {tuple(std::move(ds))}); };
  EXPECT_EQ(str(co({param("a", {}, DType::kI64), lit(4)})), "Tensor[(2,), i64]");
  expect_type_error([&] { co({param("a", {}, DType::kI32)}); }, {"'shape_compose' operand #0 (dims)", "rank-0 i64"});
  expect_type_error([&] { co({param("a", {2}, DType::kI64)}); }, {"'shape_compose' operand #0 (dims)", "rank-0 i64"});
}

// ---- Where, Clamp, Pow, Bitcast, Arange (extensions) ---------------------------------

TEST(HirConformance, Where_BroadcastsAllThreeAndKeepsTheValuesDtype) {
  auto t = infer(std::make_shared<Where>(), {param("c", {N, 1}, DType::kBool), param("a", {N, 8}), param("b", {8})});
  EXPECT_EQ(str(t), str(TensorType::make({N, 8}, DType::kF32)));
}

TEST(HirConformance, Where_CondMustBeBool) {
  expect_type_error([] { infer(std::make_shared<Where>(), {param("c", {4}), param("a", {4}), param("b", {4})}); },
                    {"'where' operand #0 (cond) must be a bool tensor", "where(m != 0, a, b)"});
}

TEST(HirConformance, Where_ValuesMustShareADtype) {
  expect_type_error([] {
    infer(std::make_shared<Where>(), {param("c", {4}, DType::kBool), param("a", {4}), param("b", {4}, DType::kF64)});
  }, {"operand #2 (b)", "same dtype as operand #1 (f32)"});
}

TEST(HirConformance, Where_ShapesMustBroadcast) {
  expect_type_error([] {
    infer(std::make_shared<Where>(), {param("c", {3}, DType::kBool), param("a", {4}), param("b", {4})});
  }, {"operand #0 (cond)", "broadcast-compatible"});
}

TEST(HirConformance, Clamp_IntegerTensorTakesIntegralBounds) {
  EXPECT_EQ(str(infer(std::make_shared<Clamp>(-3.0, 1e300), {param("x", {4}, DType::kI8)})),
            str(TensorType::make({4}, DType::kI8)));
  expect_type_error([] { infer(std::make_shared<Clamp>(0.5, 2.0), {param("x", {4}, DType::kI32)}); },
                    {"integral bounds", "0.5"});
  expect_type_error([] { infer(std::make_shared<Clamp>(0.0, 1.0), {param("x", {4}, DType::kBool)}); },
                    {"operand #0 (x)", "numeric"});
}

TEST(HirConformance, Pow_IsFloatOnly) {
  EXPECT_EQ(str(infer(std::make_shared<Binary>(BinaryKind::kPow), {param("x", {4}, DType::kBF16), param("y", {1}, DType::kBF16)})),
            str(TensorType::make({4}, DType::kBF16)));
  expect_type_error([] {
    infer(std::make_shared<Binary>(BinaryKind::kPow), {param("x", {4}, DType::kI32), param("y", {4}, DType::kI32)});
  }, {"'pow' operand #0", "floating-point"});
}

TEST(HirConformance, Bitcast_KeepsTheWidthAndRefusesBoolAndSubByteDtypes) {
  EXPECT_EQ(str(infer(std::make_shared<Bitcast>(DType::kI32), {param("x", {N, 4})})), str(TensorType::make({N, 4}, DType::kI32)));
  EXPECT_EQ(str(infer(std::make_shared<Bitcast>(DType::kI8), {param("x", {2}, DType::kFP8E4M3)})),
            str(TensorType::make({2}, DType::kI8)));
  expect_type_error([] { infer(std::make_shared<Bitcast>(DType::kI64), {param("x", {4})}); },
                    {"keeps the element width", "f32 has 32 bits, i64 has 64"});
  expect_type_error([] { infer(std::make_shared<Bitcast>(DType::kI8), {param("x", {4}, DType::kBool)}); },
                    {"operand #0 (x)", "whole-byte non-bool"});
  expect_type_error([] { infer(std::make_shared<Bitcast>(DType::kBool), {param("x", {4}, DType::kI8)}); },
                    {"bitcast target", "bool"});
}

TEST(HirConformance, Arange_HasTheShapeOfItsCountAndADtype) {
  EXPECT_EQ(str(infer(std::make_shared<Arange>(CTX, 0.0, 1.0, DType::kI32), {})), str(TensorType::make({CTX}, DType::kI32)));
  expect_type_error([] { infer(std::make_shared<Arange>(ShapeDim(-1), 0.0, 1.0, DType::kI64), {}); },
                    {"n must be non-negative"});
  expect_type_error([] { infer(std::make_shared<Arange>(ShapeDim(4), 0.5, 1.0, DType::kI64), {}); },
                    {"integral start and step", "0.5"});
  expect_type_error([] { infer(std::make_shared<Arange>(ShapeDim(4), 0.0, 1.0, DType::kBool), {}); },
                    {"numeric dtype"});
  expect_type_error([] {
    infer(std::make_shared<Arange>(ShapeDim(4), 0.0, std::numeric_limits<double>::infinity(), DType::kF32), {});
  }, {"must be finite"});
}

// ---- CacheScatter (an extension: one position per batch row) ------------------

TEST(Extension, CacheScatter_KeepsTheCacheTypeOfAnyRankFromTwo) {
  EXPECT_EQ(str(cache_scatter(param("c", {N, 16, 4, 8}), param("n", {N, 1, 4, 8}), i32s("p", {N}))),
            "Tensor[(N, 16, 4, 8), f32]");
  EXPECT_EQ(str(cache_scatter(param("c", {3, CTX}, DType::kBF16), param("n", {3, 2}, DType::kBF16),
                              param("p", {3}, DType::kI64))),
            "Tensor[(3, CTX), bf16]");
  expect_type_error([] { cache_scatter(param("c", {16}), param("n", {1}), i32s("p", {1})); },
                    {"'cache_scatter' operand #0 (cache)", "of rank >= 2"});
  expect_type_error([] { cache_scatter(param("c", {2, 16, 4}), param("n", {2, 1}), i32s("p", {2})); },
                    {"'cache_scatter' operand #1 (new)", "of cache's rank (3)"});
}

TEST(Extension, CacheScatter_NewMatchesTheCacheButOnLen) {
  expect_type_error([] { cache_scatter(param("c", {2, 16, 4}), param("n", {2, 1, 4}, DType::kF16), i32s("p", {2})); },
                    {"'cache_scatter' operand #1 (new)", "of cache's dtype (f32)"});
  expect_type_error([] { cache_scatter(param("c", {2, 16, 4}), param("n", {3, 1, 4}), i32s("p", {2})); },
                    {"'cache_scatter' operand #1 (new)", "equal to cache on axis 0 (2)"});
  expect_type_error([] { cache_scatter(param("c", {2, 16, 4}), param("n", {2, 1, 5}), i32s("p", {2})); },
                    {"'cache_scatter' operand #1 (new)", "equal to cache on axis 2 (4)"});
  expect_type_error([] { cache_scatter(param("c", {2, 16, 4}), param("n", {2, 17, 4}), i32s("p", {2})); },
                    {"'cache_scatter' operand #1 (new)", "no longer than cache on len (16)"});
}

TEST(Extension, CacheScatter_PositionsAreOnePerBatchRowOfI32OrI64) {
  const char* want = "a rank-1 i32 / i64 tensor of one position per batch row [2]";
  expect_type_error([] { cache_scatter(param("c", {2, 16}), param("n", {2, 1}), i32s("p", {})); }, {want});
  expect_type_error([] { cache_scatter(param("c", {2, 16}), param("n", {2, 1}), i32s("p", {3})); }, {want});
  expect_type_error([] { cache_scatter(param("c", {2, 16}), param("n", {2, 1}), param("p", {2}, DType::kU8)); },
                    {"'cache_scatter' operand #2 (pos)", want});
  expect_type_error([] { cache_scatter(param("c", {2, 16}), param("n", {2, 1}), param("p", {2})); }, {want});
}
