// Conformance: each op's rule for a "ShardLayout operand carrying
// Partial(reduction)" (docs/sharding.md, the Partial rules; math, tensor and
// nn ops). One test per MUST / rejects; the
// accepted cases are also executed on the virtual mesh in
// tests/eval/test_virtual_mesh.cc.
#include "core/ops/math/math.h"
#include "core/ops/nn/nn.h"
#include "core/ops/tensor/tensor.h"
#include "tests/ops/sharding_helpers.h"

namespace tf {
namespace {
using namespace testing_shard;
using ir::Reduction;
using ops::BinaryKind;
using ops::UnaryKind;

ir::ExprPtr P(const char* n, Reduction r = Reduction::kSum) { return var(n, sharded({8, 16}, mesh_x(), {partial(r)})); }
ir::ExprPtr B(const char* n) { return var(n, sharded({8, 16}, mesh_x(), {bcast()})); }
ir::ExprPtr X(const char* n) { return var(n, plain({8, 16})); }

// ---- Binary -----------------------------------------------------------------

TEST(HirConformance, Binary_AddBothPartialSumPasses) {
  auto c = call<ops::Binary>({P("a"), P("b")}, BinaryKind::kAdd);
  ASSERT_TRUE(layout_of(c));
  EXPECT_TRUE(layout_of(c)->attrs()[0] == partial(Reduction::kSum));
}

TEST(HirConformance, Binary_AddBothPartialMaxRejected) {
  expect_rejected([] { call<ops::Binary>({P("a", Reduction::kMax), P("b", Reduction::kMax)}, BinaryKind::kAdd); },
                  {"'add' operand", "Partial(\"max\")", "max(x)+max(y) is not max(x+y)", "Reshard to Broadcast"});
}

TEST(HirConformance, Binary_AddOnePartialMaxOrMinWithBroadcastPasses) {
  for (Reduction r : {Reduction::kMax, Reduction::kMin}) {
    auto c = call<ops::Binary>({P("a", r), B("b")}, BinaryKind::kAdd);
    EXPECT_TRUE(layout_of(c)->attrs()[0] == partial(r));
    auto c2 = call<ops::Binary>({X("p"), P("a", r)}, BinaryKind::kAdd);  // plain operand = replicated
    EXPECT_TRUE(layout_of(c2)->attrs()[0] == partial(r));
  }
}

TEST(HirConformance, Binary_AddOnePartialSumWithPlainRejected) {
  expect_rejected([] { call<ops::Binary>({P("a"), X("b")}, BinaryKind::kAdd); },
                  {"operand #0 (lhs)", "Partial(\"sum\")", "sum(x)+b != sum(x+b)", "Reshard to Broadcast"});
}

TEST(HirConformance, Binary_MulOnePartialSumPasses) {
  auto c = call<ops::Binary>({B("b"), P("a")}, BinaryKind::kMul);
  EXPECT_TRUE(layout_of(c)->attrs()[0] == partial(Reduction::kSum));
}

TEST(HirConformance, Binary_MulOnePartialMaxMinRejected) {
  for (Reduction r : {Reduction::kMax, Reduction::kMin})
    expect_rejected([&] { call<ops::Binary>({P("a", r), X("b")}, BinaryKind::kMul); },
                    {"operand #0", "negative scale flips max to min", "Reshard to Broadcast"});
}

TEST(HirConformance, Binary_MulBothPartialRejected) {
  expect_rejected([] { call<ops::Binary>({P("a"), P("b")}, BinaryKind::kMul); },
                  {"Partial", "not proven to commute with any reduction"});
}

TEST(HirConformance, Binary_EveryOtherKindWithPartialRejected) {
  for (BinaryKind k : {BinaryKind::kSub, BinaryKind::kDiv, BinaryKind::kMaximum, BinaryKind::kLt})
    expect_rejected([&] { call<ops::Binary>({P("a"), X("b")}, k); }, {"not proven to commute", "Reshard to Broadcast"});
}

TEST(HirConformance, Binary_AddTwoPartialsOnDifferentAxesRejected) {
  auto a = var("a", sharded({8, 16}, mesh_xy(), {partial(), bcast()}));
  auto b = var("b", sharded({8, 16}, mesh_xy(), {bcast(), partial()}));
  expect_rejected([&] { call<ops::Binary>({a, b}, BinaryKind::kAdd); }, {"different mesh axes", "mesh axis \"y\""});
  // Decisions are made independently for each mesh axis: same axes pass.
  auto c = var("c", sharded({8, 16}, mesh_xy(), {partial(), bcast()}));
  auto ok = call<ops::Binary>({a, c}, BinaryKind::kAdd);
  EXPECT_TRUE(layout_of(ok)->attrs()[0] == partial() && layout_of(ok)->attrs()[1] == bcast());
}

TEST(HirConformance, Binary_SplitOperandsPropagateSplit) {
  auto a = var("a", sharded({8, 16}, mesh_x(), {split_axis(0)}));
  auto c = call<ops::Binary>({a, X("b")}, BinaryKind::kSub);
  ASSERT_TRUE(layout_of(c));
  EXPECT_TRUE(layout_of(c)->attrs()[0].is_split());
  EXPECT_TRUE(ir::shape_equal(layout_of(c)->shape(), ir::Shape{4, 2, 16}));
}

// ---- Where, Clamp, Bitcast ----------------------------------------------------

TEST(HirConformance, Where_SplitOperandsAlignAndPartialIsRejected) {
  auto a = var("a", sharded({8, 16}, mesh_x(), {split_axis(0)}));
  auto m = call<ops::Binary>({X("x"), X("y")}, BinaryKind::kLt);
  auto c = call<ops::Where>({m, a, X("b")});
  ASSERT_TRUE(layout_of(c));
  EXPECT_TRUE(layout_of(c)->attrs()[0].is_split());
  auto ms = call<ops::Binary>({a, X("y")}, BinaryKind::kLt);  // a Split mask with a replicated value
  ASSERT_TRUE(layout_of(call<ops::Where>({ms, X("x"), X("b")})));
  for (Reduction r : {Reduction::kSum, Reduction::kMax})
    expect_rejected([&] { call<ops::Where>({m, P("p", r), X("b")}); }, {"'where' operand #1", "select", "Reshard to Broadcast"});
  auto cols = var("c", sharded({8, 16}, mesh_x(), {split_axis(1)}));
  expect_rejected([&] { call<ops::Where>({m, a, cols}); }, {"'where' operand #2", "the same layout positions as operand #1"});
}

TEST(HirConformance, Clamp_MonotoneCommutesWithMaxMinNotSum) {
  for (Reduction r : {Reduction::kMax, Reduction::kMin})
    EXPECT_TRUE(layout_of(call<ops::Clamp>({P("a", r)}, -1.0, 2.0)));
  expect_rejected([] { call<ops::Clamp>({P("a")}, 0.0, 6.0); }, {"'clamp' operand #0", "monotone non-decreasing"});
}

TEST(HirConformance, Bitcast_KeepsSplitRejectsEveryPartial) {
  auto a = var("a", sharded({8, 16}, mesh_x(), {split_axis(0)}));
  EXPECT_TRUE(layout_of(call<ops::Bitcast>({a}, ir::DType::kI32))->structural_equal(*layout_of(a)));
  for (Reduction r : {Reduction::kSum, Reduction::kMax, Reduction::kMin})
    expect_rejected([&] { call<ops::Bitcast>({P("a", r)}, ir::DType::kI32); }, {"'bitcast' operand #0", "not monotone"});
}

// ---- Unary ------------------------------------------------------------------

TEST(HirConformance, Unary_MonotoneCommutesWithMaxMinNotSum) {
  for (UnaryKind k : {UnaryKind::kExp, UnaryKind::kLog, UnaryKind::kRelu, UnaryKind::kCeil, UnaryKind::kRound,
                      UnaryKind::kExp2, UnaryKind::kLog2}) {
    EXPECT_TRUE(layout_of(call<ops::Unary>({P("a", Reduction::kMax)}, k)));
    EXPECT_TRUE(layout_of(call<ops::Unary>({P("a", Reduction::kMin)}, k)));
    expect_rejected([&] { call<ops::Unary>({P("a")}, k); }, {"monotone non-decreasing", "Reshard to Broadcast"});
  }
}

TEST(HirConformance, Unary_NegIsLinearCommutesWithSumNotMaxMin) {
  EXPECT_TRUE(layout_of(call<ops::Unary>({P("a")}, UnaryKind::kNeg)));
  expect_rejected([] { call<ops::Unary>({P("a", Reduction::kMax)}, UnaryKind::kNeg); }, {"negation reverses order"});
}

TEST(HirConformance, Unary_AbsSquareRsqrtLogicalNotRejectPartialUnconditionally) {
  for (Reduction r : {Reduction::kSum, Reduction::kMax, Reduction::kMin}) {
    for (UnaryKind k : {UnaryKind::kAbs, UnaryKind::kSquare, UnaryKind::kRsqrt})
      expect_rejected([&] { call<ops::Unary>({P("a", r)}, k); }, {"not proven to commute with any reduction"});
    auto b = var("b", sharded({8}, mesh_x(), {partial(r)}, ir::DType::kBool));
    expect_rejected([&] { call<ops::Unary>({b}, UnaryKind::kLogicalNot); }, {"not proven to commute"});
  }
}

// ---- Reduce -----------------------------------------------------------------

TEST(HirConformance, Reduce_SumMeanCommuteWithSumOnly) {
  for (auto k : {ops::ReduceKind::kSum, ops::ReduceKind::kMean}) {
    auto c = call<ops::Reduce>({P("a")}, std::vector<int64_t>{1}, false, k);
    EXPECT_TRUE(layout_of(c)->attrs()[0] == partial());
    expect_rejected([&] { call<ops::Reduce>({P("a", Reduction::kMax)}, std::vector<int64_t>{1}, false, k); },
                    {"does not commute with reduction \"max\"", "Reshard to Broadcast"});
  }
}

TEST(HirConformance, Reduce_MaxCommutesWithMaxOnly) {
  auto c = call<ops::Reduce>({P("a", Reduction::kMax)}, std::vector<int64_t>{0}, true, ops::ReduceKind::kMax);
  EXPECT_TRUE(layout_of(c)->attrs()[0] == partial(Reduction::kMax));
  for (Reduction r : {Reduction::kSum, Reduction::kMin})
    expect_rejected([&] { call<ops::Reduce>({P("a", r)}, std::vector<int64_t>{0}, true, ops::ReduceKind::kMax); },
                    {"Reduce kind=\"max\" does not commute"});
}

TEST(HirConformance, Reduce_AbsMaxCommutesWithNoReduction) {
  for (Reduction r : {Reduction::kSum, Reduction::kMax, Reduction::kMin})
    expect_rejected([&] { call<ops::Reduce>({P("a", r)}, std::vector<int64_t>{1}, true, ops::ReduceKind::kAbsMax); },
                    {"abs_max", "Reshard to Broadcast"});
}

// ---- MatMul -----------------------------------------------------------------

TEST(HirConformance, MatMul_OnePartialSumWithReplicatedOtherPasses) {
  auto a = var("a", sharded({8, 16}, mesh_x(), {partial()}));
  auto b = var("b", plain({16, 4}));
  EXPECT_TRUE(layout_of(call<ops::MatMul>({a, b}))->attrs()[0] == partial());
  EXPECT_TRUE(layout_of(call<ops::MatMul>({var("c", plain({2, 8})), a}))->attrs()[0] == partial());
}

TEST(HirConformance, MatMul_DoublePartialInputRejected) {
  auto a = var("a", sharded({8, 16}, mesh_x(), {partial()}));
  auto b = var("b", sharded({16, 4}, mesh_x(), {partial()}));
  expect_rejected([&] { call<ops::MatMul>({a, b}); }, {"double-Partial", "Reshard to Broadcast"});
}

TEST(HirConformance, MatMul_NonSumReductionRejected) {
  auto a = var("a", sharded({8, 16}, mesh_x(), {partial(Reduction::kMax)}));
  expect_rejected([&] { call<ops::MatMul>({a, var("b", plain({16, 4}))}); }, {"non-sum reduction", "Partial(\"max\")"});
}

TEST(HirConformance, MatMul_SplitRowsAndKSplitPropagate) {
  auto a = var("a", sharded({8, 16}, mesh_x(), {split_axis(0)}));
  auto r = call<ops::MatMul>({a, var("b", plain({16, 4}))});
  EXPECT_TRUE(ir::shape_equal(layout_of(r)->shape(), ir::Shape{4, 2, 4}));
  auto ak = var("ak", sharded({8, 16}, mesh_x(), {split_axis(1)}));
  auto bk = var("bk", sharded({16, 4}, mesh_x(), {split_axis(0)}));
  EXPECT_TRUE(layout_of(call<ops::MatMul>({ak, bk}))->attrs()[0] == partial());
}

// ---- nn elementwise and normalizations ----------------------------------------

TEST(HirConformance, ReLUSigmoidTanh_MonotoneCommuteWithMaxMinNotSum) {
  auto a = P("a", Reduction::kMax);
  EXPECT_TRUE(layout_of(call<ops::ReLU>({a})));
  EXPECT_TRUE(layout_of(call<ops::Sigmoid>({P("m", Reduction::kMin)})));
  EXPECT_TRUE(layout_of(call<ops::Tanh>({a})));
  expect_rejected([] { call<ops::Sigmoid>({P("s")}); }, {"monotone non-decreasing", "not sum"});
  expect_rejected([] { call<ops::Tanh>({P("s")}); }, {"Reshard to Broadcast"});
  expect_rejected([] { call<ops::ReLU>({P("s")}); }, {"Partial(\"sum\")"});
}

TEST(HirConformance, Gelu_NotMonotoneRejectsAnyPartial) {
  for (Reduction r : {Reduction::kSum, Reduction::kMax, Reduction::kMin})
    expect_rejected([&] { call<ops::Gelu>({P("a", r)}, "tanh"); }, {"'gelu' operand #0", "not monotone", "Reshard to Broadcast"});
  EXPECT_TRUE(layout_of(call<ops::Gelu>({B("b")}, "tanh")));  // layout is x's
}

TEST(HirConformance, Silu_NotMonotoneRejectsAnyPartial) {
  for (Reduction r : {Reduction::kSum, Reduction::kMax, Reduction::kMin})
    expect_rejected([&] { call<ops::Silu>({P("a", r)}); }, {"'silu'", "not monotone", "Reshard to Broadcast"});
  auto s = var("s", sharded({8, 16}, mesh_x(), {split_axis(0)}));
  EXPECT_TRUE(layout_of(call<ops::Silu>({s}))->structural_equal(*layout_of(s)));
}

TEST(HirConformance, SoftMax_RejectsAnyPartialOperand) {
  for (Reduction r : {Reduction::kSum, Reduction::kMax, Reduction::kMin})
    expect_rejected([&] { call<ops::SoftMax>({P("a", r)}, -1); }, {"normalizes across an axis", "Reshard to Broadcast"});
}

TEST(HirConformance, LayerNorm_RejectsAnyPartialIncludingSecondaryAffineInputs) {
  auto w = var("w", plain({16})), b = var("b", plain({16}));
  expect_rejected([&] { call<ops::LayerNorm>({P("x"), w, b}, 1e-5); }, {"normalizes across an axis"});
  auto pw = var("pw", sharded({16}, mesh_x(), {partial()}));
  expect_rejected([&] { call<ops::LayerNorm>({X("x"), pw, b}, 1e-5); }, {"operand #1", "Partial(\"sum\")"});
}

TEST(HirConformance, RMSNorm_RejectsAnyPartialOperand) {
  auto w = var("w", plain({16}));
  expect_rejected([&] { call<ops::RMSNorm>({P("x"), w}, 1e-6); }, {"'rms_norm' operand #0", "Reshard to Broadcast"});
  auto pw = var("pw", sharded({16}, mesh_x(), {partial()}));
  expect_rejected([&] { call<ops::RMSNorm>({X("x"), pw}, 1e-6); }, {"operand #1 (weight)", "Partial"});
  auto s = var("s", sharded({8, 16}, mesh_x(), {split_axis(0)}));  // rows split: each row whole
  EXPECT_TRUE(layout_of(call<ops::RMSNorm>({s, w}, 1e-6)));
}

// ---- Fail closed: an op with no sharding rule ---------------------------------

TEST(HirConformance, Sharding_OpWithoutRuleRejectsShardLayoutOperand) {
  auto s = var("s", sharded({8, 16}, mesh_x(), {split_axis(0)}));
  expect_rejected([&] { call<ops::Transpose>({s}, std::vector<int64_t>{1, 0}); },
                  {"'transpose' operand #0", "no sharding rule", "fail closed", "Broadcast"});
}

}  // namespace
}  // namespace tf
