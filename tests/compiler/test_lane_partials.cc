// The lane-partials rewrite of a chunked row reduction: which loops it
// takes (sums and float maxima of accumulators bound outside the chunk
// loop, read nowhere else in it), the form it gives them, and the loops
// it leaves alone. Compiled kernels that use it are checked against the
// evaluator in test_fused_kernels.cc.
#include <gtest/gtest.h>

#include <string>

#include "core/compiler/lane_partials.h"
#include "core/tir/op.h"
#include "core/tir/printer.h"

namespace tf::comptest {
namespace {

using namespace tir;

const Type kI64 = Type::scalar(DType::kI64);

// for (c, 0, n / 256) serial { for (j, c * 256, 256) vectorized reduce(op: acc) { acc = update(acc, x[j]) } }
struct ChunkedReduction {
  VarPtr x = Var::make("x", Type::pointer(DType::kF32));
  VarPtr n = Var::make("n", kI64);
  VarPtr acc;
  VarPtr c = Var::make("c", kI64), j = Var::make("j", kI64);

  explicit ChunkedReduction(DType acc_type) : acc(Var::make("acc", Type::scalar(acc_type), true)) {}

  StmtPtr loop(BinaryOp op, const std::vector<StmtPtr>& also = {}) const {
    const ExprPtr value = cast(acc->dtype(), load(x, j));
    const StmtPtr update = Assign::make(acc, op == BinaryOp::kAdd ? add(acc, value) : max(acc, value));
    const StmtPtr inner = For::make(j, mul(c, i64(256)), i64(256), ForKind::kVectorized, update, {{acc, op}});
    std::vector<StmtPtr> body = also;
    body.push_back(inner);
    return For::make(c, i64(0), div(n, i64(256)), ForKind::kSerial, Seq::make(std::move(body)));
  }
};

TEST(LanePartials, ASumKeepsItsPartialsAcrossTheChunksAndFoldsThemOnce) {
  ChunkedReduction r(DType::kF64);
  const VarPtr m = Var::make("m", kI64);
  const std::string n = std::to_string(compiler::reduce_lanes());
  const std::string t =
      to_string(compiler::carry_lane_partials(r.loop(BinaryOp::kAdd), ge(m, i64(compiler::reduce_lanes()))));
  // The partials start at 0 before the chunks...
  EXPECT_NE(t.find("allocate acc_lanes: f64[" + n + "] local {"), std::string::npos) << t;
  EXPECT_NE(t.find("acc_lanes[l] = 0.0"), std::string::npos) << t;
  // ...each chunk adds whole blocks into them, lane by lane...
  EXPECT_NE(t.find("let nb: i64 = " + std::to_string(256 / compiler::reduce_lanes())), std::string::npos) << t;
  EXPECT_NE(t.find("acc_lanes[(j - jl)] = (acc_lanes[(j - jl)] + f64(x[j]))"), std::string::npos) << t;
  // ...and only a remainder, where there is one, into the accumulator.
  EXPECT_NE(t.find("if ((jr < ((c * 256) + 256))) {"), std::string::npos) << t;
  EXPECT_NE(t.find("vectorized reduce(+: acc)"), std::string::npos) << t;
  // The fold runs once, after the chunks, where a block may have run.
  EXPECT_NE(t.find("if ((m >= " + n + ")) {\n    acc = (acc + tf_lanes_add(&acc_lanes[0], " + n + "))"),
            std::string::npos)
      << t;
  EXPECT_LT(t.find("for (c, 0, (n / 256)) serial"), t.find("tf_lanes_add")) << t;
}

TEST(LanePartials, AFloatMaximumStartsItsPartialsAtMinusInfinity) {
  ChunkedReduction r(DType::kF32);
  const std::string n = std::to_string(compiler::reduce_lanes());
  const std::string t = to_string(compiler::carry_lane_partials(r.loop(BinaryOp::kMax), boolean(true)));
  EXPECT_NE(t.find("acc_lanes[l] = -inff"), std::string::npos) << t;
  EXPECT_NE(t.find("acc = max(acc, tf_lanes_max(&acc_lanes[0], " + n + "))"), std::string::npos) << t;
}

TEST(LanePartials, LoopsThePartialsCannotStandForAreLeftAlone) {
  // An integer maximum: no identity the rewrite spells.
  ChunkedReduction ints(DType::kI32);
  const StmtPtr imax = ints.loop(BinaryOp::kMax);
  EXPECT_EQ(compiler::carry_lane_partials(imax, boolean(true)), imax);
  // The running value read between chunks (it would see a partial sum).
  ChunkedReduction read(DType::kF64);
  const VarPtr y = Var::make("y", Type::pointer(DType::kF64));
  const StmtPtr reads = read.loop(BinaryOp::kAdd, {Store::make(y, read.c, read.acc)});
  EXPECT_EQ(compiler::carry_lane_partials(reads, boolean(true)), reads);
  // The accumulator set between chunks.
  ChunkedReduction set(DType::kF64);
  const StmtPtr sets = set.loop(BinaryOp::kAdd, {Assign::make(set.acc, imm(DType::kF64, 0))});
  EXPECT_EQ(compiler::carry_lane_partials(sets, boolean(true)), sets);
  // An accumulator bound inside the loop: each chunk's own reduction.
  ChunkedReduction inside(DType::kF64);
  const StmtPtr own = For::make(Var::make("k", kI64), i64(0), i64(4), ForKind::kSerial,
                                LetStmt::make(inside.acc, imm(DType::kF64, 0), inside.loop(BinaryOp::kAdd)));
  EXPECT_EQ(compiler::carry_lane_partials(own, boolean(true)), own);
  // Not a loop.
  const StmtPtr seq = Seq::make({});
  EXPECT_EQ(compiler::carry_lane_partials(seq, boolean(true)), seq);
  // Rows known never to hold a whole block.
  ChunkedReduction short_rows(DType::kF64);
  const StmtPtr never = short_rows.loop(BinaryOp::kAdd);
  EXPECT_EQ(compiler::carry_lane_partials(never, boolean(false)), never);
}

}  // namespace
}  // namespace tf::comptest
