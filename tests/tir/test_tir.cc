// TIR nodes, builders, printer, verifier and mutator.
#include <gtest/gtest.h>

#include "core/ir/error.h"
#include "core/tir/functor.h"
#include "core/tir/op.h"
#include "core/tir/printer.h"
#include "core/tir/transform.h"
#include "core/tir/verifier.h"

namespace tf::tir {
namespace {

const Type kI64 = Type::scalar(DType::kI64);
const Type kF32 = Type::scalar(DType::kF32);

// y[i] = x[i * s] + 1 over i < n, parallel above 65536 elements.
Function add_one() {
  VarPtr x = Var::make("x", Type::pointer(DType::kF32)), y = Var::make("y", Type::pointer(DType::kF32));
  VarPtr n = Var::make("n", kI64), s = Var::make("s", kI64), i = Var::make("i", kI64);
  StmtPtr body = Store::make(y, i, add(load(x, mul(i, s)), imm(DType::kF32, 1.0)));
  return Function{"add_one", {x, y, n, s}, For::make(i, i64(0), n, ForKind::kParallel, body, {}, ge(n, i64(65536)))};
}

TEST(Tir, BuildersFoldIndexArithmetic) {
  VarPtr i = Var::make("i", kI64);
  EXPECT_EQ(add(i, i64(0)).get(), i.get());
  EXPECT_EQ(mul(i, i64(1)).get(), i.get());
  EXPECT_TRUE(is_const_int(mul(i, i64(0)), 0));
  EXPECT_TRUE(is_const_int(add(i64(2), mul(i64(3), i64(4))), 14));
  EXPECT_TRUE(is_const_int(lt(i64(1), i64(2)), 1));
  EXPECT_EQ(select(boolean(false), i, i64(7))->kind(), ExprKind::kIntImm);
  EXPECT_EQ(land(boolean(true), lt(i, i64(3)))->kind(), ExprKind::kBinary);
  // Floats are not folded: x + 0.0 is not x for x = -0.0.
  VarPtr f = Var::make("f", kF32);
  EXPECT_EQ(add(f, imm(DType::kF32, 0.0))->kind(), ExprKind::kBinary);
}

TEST(Tir, FactoriesRejectMalformedNodes) {
  VarPtr i = Var::make("i", kI64), f = Var::make("f", kF32), p = Var::make("p", Type::pointer(DType::kF32));
  EXPECT_THROW(Binary::make(BinaryOp::kAdd, i, f), ir::Error);                 // mixed types
  EXPECT_THROW(Load::make(p, f), ir::Error);                                   // float index
  EXPECT_THROW(Load::make(i, i64(0)), ir::Error);                              // not a pointer
  EXPECT_THROW(Store::make(p, i64(0), i), ir::Error);                          // i64 into f32 memory
  EXPECT_THROW(Assign::make(f, imm(DType::kF32, 1)), ir::Error);               // immutable
  EXPECT_THROW(Select::make(i, f, f), ir::Error);                              // non-bool condition
  EXPECT_THROW(For::make(i, i64(0), i64(4), ForKind::kSerial, Seq::make({Comment::make("x")}),
                         {Reduction{Var::make("acc", kF32, true), BinaryOp::kAdd}}),
               ir::Error);  // reductions need a vectorized loop
}

TEST(Tir, PointersCompareForEqualityOnly) {
  VarPtr p = Var::make("p", Type::pointer(DType::kF32)), q = Var::make("q", Type::pointer(DType::kF32));
  EXPECT_EQ(ne(p, q)->type(), Type::scalar(DType::kBool));  // whether two slots share a buffer
  EXPECT_EQ(eq(p, q)->type(), Type::scalar(DType::kBool));
  EXPECT_THROW(Binary::make(BinaryOp::kLt, p, q), ir::Error);                                   // no ordering
  EXPECT_THROW(Binary::make(BinaryOp::kAdd, p, q), ir::Error);                                  // no arithmetic
  EXPECT_THROW(Binary::make(BinaryOp::kEq, p, Var::make("r", Type::pointer(DType::kI64))), ir::Error);  // types differ
}

TEST(Tir, AnOpaqueHandleIsOnlyPassedAlong) {
  VarPtr rt = Var::make("rt", Type::opaque_handle());
  EXPECT_EQ(type_name(rt->type()), "handle");
  EXPECT_NE(rt->type(), Type::pointer(DType::kI8));
  EXPECT_NO_THROW(Evaluate::make(extern_call("tf_gemm", {rt})));
  EXPECT_THROW(Load::make(rt, i64(0)), ir::Error);
  EXPECT_THROW(Address::make(rt, i64(0)), ir::Error);
  EXPECT_THROW(Store::make(rt, i64(0), IntImm::make(DType::kI8, 0)), ir::Error);
  EXPECT_THROW(Binary::make(BinaryOp::kEq, rt, rt), ir::Error);
  EXPECT_THROW(Allocate::make(Var::make("b", Type::opaque_handle()), i64(4), MemoryScope::kGlobal, Comment::make("x")),
               ir::Error);
}

TEST(Tir, PrinterShowsLoopsKindsAndTypes) {
  const std::string text = to_string(add_one());
  EXPECT_EQ(text,
            "func add_one(x: f32*, y: f32*, n: i64, s: i64) {\n"
            "  for (i, 0, n) parallel min_work((n >= 65536)) {\n"
            "    y[i] = (x[(i * s)] + 1.0f)\n"
            "  }\n"
            "}\n");
}

TEST(Tir, PrinterGivesDistinctVariablesDistinctNames) {
  VarPtr a = Var::make("v", kI64), b = Var::make("v", kI64);
  EXPECT_EQ(to_string(add(a, b)), "(v + v_1)");
}

TEST(Tir, VerifierAcceptsAWellFormedFunction) { EXPECT_NO_THROW(verify(add_one())); }

void expect_rejected(const Function& f, const std::string& words) {
  try {
    verify(f);
    FAIL() << "accepted:\n" << to_string(f);
  } catch (const ir::Error& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(Tir, VerifierRejectsAVariableOutsideItsScope) {
  VarPtr y = Var::make("y", Type::pointer(DType::kI64)), i = Var::make("i", kI64);
  StmtPtr loop = For::make(i, i64(0), i64(4), ForKind::kSerial, Store::make(y, i, i));
  expect_rejected(Function{"f", {y}, Seq::make({loop, Store::make(y, i64(0), i)})}, "'i' used outside");
}

TEST(Tir, VerifierRejectsABinderRebindingItself) {
  VarPtr y = Var::make("y", Type::pointer(DType::kI64)), i = Var::make("i", kI64);
  StmtPtr loop = For::make(i, i64(0), i64(4), ForKind::kSerial, Store::make(y, i, i));
  // The same loop twice in sequence (a specialization's two branches) is fine.
  EXPECT_NO_THROW(verify(Function{"f", {y}, Seq::make({loop, loop})}));
  expect_rejected(Function{"g", {y}, For::make(i, i64(0), i64(2), ForKind::kSerial, loop)}, "bound again");
}

TEST(Tir, VerifierRejectsArithmeticOnStorageTypes) {
  VarPtr x = Var::make("x", Type::pointer(DType::kF16)), y = Var::make("y", Type::pointer(DType::kF16));
  ExprPtr h = load(x, i64(0));
  expect_rejected(Function{"f", {x, y}, Store::make(y, i64(0), Binary::make(BinaryOp::kAdd, h, h))},
                  "storage type f16");
  // Widened first, it is fine.
  ExprPtr w = cast(DType::kF32, h);
  EXPECT_NO_THROW(verify(Function{"g", {x, y}, Store::make(y, i64(0), cast(DType::kF16, add(w, w)))}));
}

TEST(Tir, VerifierRejectsReturnInsideALoopAndAStrayBarrier) {
  VarPtr i = Var::make("i", kI64);
  expect_rejected(Function{"f", {}, For::make(i, i64(0), i64(2), ForKind::kSerial, Return::make(i32(1)))},
                  "return inside a loop");
  expect_rejected(Function{"g", {}, Barrier::make()}, "barrier outside");
}

TEST(Tir, VerifierRejectsReturnInsideAGlobalAllocation) {
  VarPtr n = Var::make("n", kI64), b = Var::make("b", Type::pointer(DType::kF32));
  StmtPtr fill = Store::make(b, i64(0), imm(DType::kF32, 0));
  EXPECT_NO_THROW(verify(Function{"ok", {n}, Allocate::make(b, n, MemoryScope::kGlobal, fill)}));
  expect_rejected(Function{"f", {n}, Allocate::make(b, n, MemoryScope::kGlobal, Seq::make({fill, Return::make(i32(1))}))},
                  "return inside a global allocation");
}

TEST(Tir, VerifierRejectsALocalAllocationOfRunTimeSize) {
  VarPtr n = Var::make("n", kI64), b = Var::make("b", Type::pointer(DType::kF32));
  expect_rejected(Function{"f", {n}, Allocate::make(b, n, MemoryScope::kLocal, Store::make(b, i64(0), imm(DType::kF32, 0)))},
                  "run-time extent");
}

TEST(Tir, VerifierRejectsAReductionOfALoopLocalVariable) {
  VarPtr i = Var::make("i", kI64), acc = Var::make("acc", kF32, true), x = Var::make("x", Type::pointer(DType::kF32));
  StmtPtr loop = For::make(i, i64(0), i64(8), ForKind::kVectorized, Assign::make(acc, add(acc, load(x, i))),
                           {Reduction{acc, BinaryOp::kAdd}});
  EXPECT_NO_THROW(verify(Function{"ok", {x}, LetStmt::make(acc, imm(DType::kF32, 0), loop)}));
  VarPtr acc2 = Var::make("acc", kF32, true);
  StmtPtr inner = LetStmt::make(acc2, imm(DType::kF32, 0), Assign::make(acc2, load(x, i)));
  VarPtr j = Var::make("j", kI64);
  expect_rejected(Function{"bad", {x}, For::make(j, i64(0), i64(8), ForKind::kVectorized,
                                                 For::make(i, i64(0), i64(1), ForKind::kSerial, inner),
                                                 {Reduction{acc2, BinaryOp::kAdd}})},
                  "not bound outside");
}

// Replaces one variable by an expression (uses only).
class Substitute final : public Mutator {
 public:
  Substitute(const Var* v, ExprPtr by) : v_(v), by_(std::move(by)) {}

 protected:
  ExprPtr mutate_Var(const Var& n, const ExprPtr& self) override { return &n == v_ ? by_ : self; }

 private:
  const Var* v_;
  ExprPtr by_;
};

TEST(Tir, MutatorRebuildsOnlyWhatChanged) {
  Function f = add_one();
  const Var* s = f.params[3].get();
  Var unrelated("z", kI64, false);
  EXPECT_EQ(Substitute(&unrelated, i64(1)).mutate(f.body).get(), f.body.get());
  StmtPtr unit = Substitute(s, i64(1)).mutate(f.body);
  EXPECT_NE(unit.get(), f.body.get());
  EXPECT_NE(to_string(unit).find("y[i] = (x[i] + 1.0f)"), std::string::npos) << to_string(unit);
}

TEST(Tir, SpecializeCopiesTheBodyUnderItsCondition) {
  Function f = add_one();
  VarPtr s = f.params[3];
  StmtPtr sp = specialize(f.body, eq(s, i64(1)), {{s.get(), i64(1)}});
  const std::string text = to_string(sp);
  EXPECT_NE(text.find("if ((s == 1)) {"), std::string::npos) << text;
  EXPECT_NE(text.find("y[i] = (x[i] + 1.0f)"), std::string::npos) << text;
  EXPECT_NE(text.find("y[i] = (x[(i * s)] + 1.0f)"), std::string::npos) << text;
  EXPECT_NO_THROW(verify(Function{"f", f.params, sp}));
  // A condition known at build time keeps one branch.
  EXPECT_EQ(specialize(f.body, boolean(false), {{s.get(), i64(1)}}).get(), f.body.get());
}

TEST(Tir, ParallelThresholdBecomesABranchWithASerialCopy) {
  Function f = add_one();
  const ExprPtr threads = Call::make(kI64, "tf_threads", {}, Call::kExtern);
  StmtPtr split = split_parallel_threshold(f.body, threads);
  auto* branch = as<IfThenElse>(split);
  ASSERT_TRUE(branch) << to_string(split);
  // Parallel only when the work is large enough and the team has more than
  // one thread.
  EXPECT_EQ(to_string(branch->cond()), "((n >= 65536) && (@tf_threads() > 1))");
  EXPECT_EQ(as<For>(branch->then_case())->for_kind(), ForKind::kParallel);
  EXPECT_FALSE(as<For>(branch->then_case())->min_work());
  EXPECT_EQ(as<For>(branch->else_case())->for_kind(), ForKind::kSerial);
  EXPECT_NO_THROW(verify(Function{"f", f.params, split}));
  // Nothing to split: the same tree back.
  EXPECT_EQ(split_parallel_threshold(split, threads).get(), split.get());
  // A threshold known at build time: always met leaves the team size to
  // decide, never met leaves the serial loop alone.
  auto* loop = as<For>(f.body);
  const StmtPtr always = For::make(loop->var(), loop->min(), loop->extent(), ForKind::kParallel, loop->body(), {},
                                   boolean(true));
  const StmtPtr split_always = split_parallel_threshold(always, threads);
  auto* team = as<IfThenElse>(split_always);
  ASSERT_TRUE(team);
  EXPECT_EQ(to_string(team->cond()), "(@tf_threads() > 1)");
  const StmtPtr never = For::make(loop->var(), loop->min(), loop->extent(), ForKind::kParallel, loop->body(), {},
                                  boolean(false));
  const StmtPtr split_never = split_parallel_threshold(never, threads);
  auto* serial = as<For>(split_never);
  ASSERT_TRUE(serial);
  EXPECT_EQ(serial->for_kind(), ForKind::kSerial);
}

TEST(Tir, ParallelLoopsAreCopiedPerBranchFlagBoundOutsideThem) {
  // for i parallel { if (fast) y[i] = 1 else y[i] = 2; if (nt) y[i] = 3;
  //                  let b = i < 3 { if (b) y[i] = 4 }; if (third) y[i] = 5 }
  const Type kBool = Type::scalar(DType::kBool);
  VarPtr y = Var::make("y", Type::pointer(DType::kF32)), n = Var::make("n", kI64), i = Var::make("i", kI64);
  VarPtr fast = Var::make("fast", kBool), nt = Var::make("nt", kBool), third = Var::make("third", kBool);
  VarPtr b = Var::make("b", kBool);
  auto put = [&](double v) { return Store::make(y, i, imm(DType::kF32, v)); };
  StmtPtr body = Seq::make({IfThenElse::make(fast, put(1), put(2)), IfThenElse::make(nt, put(3)),
                            LetStmt::make(b, lt(i, i64(3)), IfThenElse::make(b, put(4))),
                            IfThenElse::make(third, put(5))});
  StmtPtr loop = For::make(i, i64(0), n, ForKind::kParallel, body);
  StmtPtr out = unswitch_parallel_loops(loop);
  EXPECT_NO_THROW(verify(Function{"f", {y, n, fast, nt, third}, out}));
  // Two flags at most: fast, then nt; b is bound inside, third is the third.
  auto* on_fast = as<IfThenElse>(out);
  ASSERT_TRUE(on_fast) << to_string(out);
  EXPECT_EQ(on_fast->cond().get(), fast.get());
  auto* fast_nt = as<IfThenElse>(on_fast->then_case());
  auto* slow_nt = as<IfThenElse>(on_fast->else_case());
  ASSERT_TRUE(fast_nt && slow_nt) << to_string(out);
  const std::string both = to_string(fast_nt->then_case()), neither = to_string(slow_nt->else_case());
  EXPECT_EQ(as<For>(fast_nt->then_case())->for_kind(), ForKind::kParallel);
  EXPECT_NE(both.find("y[i] = 1.0f\n"), std::string::npos) << both;
  EXPECT_EQ(both.find("y[i] = 2.0f"), std::string::npos) << both;
  EXPECT_NE(both.find("y[i] = 3.0f"), std::string::npos) << both;
  EXPECT_NE(neither.find("y[i] = 2.0f\n"), std::string::npos) << neither;
  EXPECT_EQ(neither.find("y[i] = 1.0f"), std::string::npos) << neither;
  EXPECT_EQ(neither.find("y[i] = 3.0f"), std::string::npos) << neither;
  for (const std::string& copy : {both, neither}) {
    EXPECT_NE(copy.find("if (b) {"), std::string::npos) << copy;
    EXPECT_NE(copy.find("if (third) {"), std::string::npos) << copy;
    EXPECT_EQ(copy.find("fast"), std::string::npos) << copy;
  }
  // A serial loop, or a parallel one testing only what it binds, stays.
  StmtPtr serial = For::make(i, i64(0), n, ForKind::kSerial, body);
  EXPECT_EQ(unswitch_parallel_loops(serial).get(), serial.get());
  StmtPtr own = For::make(i, i64(0), n, ForKind::kParallel, LetStmt::make(b, lt(i, i64(3)), IfThenElse::make(b, put(4))));
  EXPECT_EQ(unswitch_parallel_loops(own).get(), own.get());
}

TEST(Tir, LoopInvariantCallsAreHoistedOutOfVectorizedLoops) {
  // y[j] = x[j] * (1 / sqrt(r + eps)) * w[j]; acc += x[j] * exp(r) in another.
  VarPtr x = Var::make("x", Type::pointer(DType::kF32)), y = Var::make("y", Type::pointer(DType::kF32));
  VarPtr n = Var::make("n", kI64), r = Var::make("r", kF32), j = Var::make("j", kI64);
  ExprPtr inv = div(imm(DType::kF32, 1), call(kF32, "std::sqrt", {add(r, imm(DType::kF32, 1e-6))}));
  StmtPtr store = For::make(j, i64(0), n, ForKind::kVectorized, Store::make(y, j, mul(load(x, j), inv)));
  VarPtr acc = Var::make("acc", kF32, true), k = Var::make("k", kI64);
  // exp(acc) changes with acc: it must stay.
  StmtPtr red = For::make(k, i64(0), n, ForKind::kVectorized,
                          Assign::make(acc, add(acc, call(kF32, "tf_exp", {acc}))), {Reduction{acc, BinaryOp::kAdd}});
  StmtPtr body = Seq::make({store, LetStmt::make(acc, imm(DType::kF32, 0), red)});
  StmtPtr out = hoist_loop_invariants(body);
  const std::string text = to_string(out);
  EXPECT_NE(text.find("let inv0: f32 = (1.0f / std::sqrt((r + 1e-06f)))\n"), std::string::npos) << text;
  EXPECT_NE(text.find("y[j] = (x[j] * inv0)"), std::string::npos) << text;
  EXPECT_NE(text.find("acc = (acc + tf_exp(acc))"), std::string::npos) << text;
  EXPECT_NO_THROW(verify(Function{"f", {x, y, n, r}, out}));
  // Nothing to hoist: the same tree.
  EXPECT_EQ(hoist_loop_invariants(out).get(), out.get());
}

TEST(Tir, HoistedValuesLeaveTheSerialLoopsAroundThem) {
  // for (c) for (l) { let b0 = ...; for (j, b0, 16) vectorized y[j] = x[j]
  // * 1 / sqrt(r + eps) * 1 / sqrt(l) }: the first value reads nothing the
  // serial loops bind and ends up before both; the second reads l and stays
  // in front of the vectorized loop.
  VarPtr x = Var::make("x", Type::pointer(DType::kF32)), y = Var::make("y", Type::pointer(DType::kF32));
  VarPtr n = Var::make("n", kI64), r = Var::make("r", kF32), j = Var::make("j", kI64);
  VarPtr c = Var::make("c", kI64), l = Var::make("l", kI64), b0 = Var::make("b0", kI64);
  ExprPtr inv = div(imm(DType::kF32, 1), call(kF32, "std::sqrt", {add(r, imm(DType::kF32, 1e-6))}));
  ExprPtr by_line = div(imm(DType::kF32, 1), call(kF32, "std::sqrt", {cast(DType::kF32, l)}));
  StmtPtr line = For::make(j, b0, i64(16), ForKind::kVectorized, Store::make(y, j, mul(mul(load(x, j), inv), by_line)));
  StmtPtr lines = For::make(l, i64(0), n, ForKind::kSerial,
                            LetStmt::make(b0, add(mul(c, i64(256)), mul(l, i64(16))), line));
  StmtPtr chunks = For::make(c, i64(0), n, ForKind::kSerial, lines);
  const std::string text = to_string(hoist_loop_invariants(chunks));
  const size_t first = text.find("let inv0: f32 = (1.0f / std::sqrt((r + 1e-06f)))\n");
  ASSERT_NE(first, std::string::npos) << text;
  EXPECT_LT(first, text.find("for (c, 0, n) serial {")) << text;
  const size_t second = text.find("let inv1: f32 = (1.0f / std::sqrt(f32(l)))\n");
  ASSERT_NE(second, std::string::npos) << text;
  EXPECT_GT(second, text.find("let b0: i64")) << text;
  EXPECT_NE(text.find("y[j] = ((x[j] * inv0) * inv1)"), std::string::npos) << text;
  EXPECT_NO_THROW(verify(Function{"f", {x, y, n, r}, hoist_loop_invariants(chunks)}));
}

TEST(Tir, ACallRepeatedInOneIterationIsComputedOnce) {
  // y[j] = exp(x[j]); acc += exp(x[j]) -> one exp per iteration. exp(y[j])
  // (y is stored in the body) and exp(acc) (assigned in it) stay where they are.
  VarPtr x = Var::make("x", Type::pointer(DType::kF32)), y = Var::make("y", Type::pointer(DType::kF32));
  VarPtr n = Var::make("n", kI64), j = Var::make("j", kI64), acc = Var::make("acc", kF32, true);
  auto exp_of = [](ExprPtr v) { return call(kF32, "tf_exp", {std::move(v)}); };
  StmtPtr loop = For::make(j, i64(0), n, ForKind::kVectorized,
                           Seq::make({Store::make(y, j, exp_of(load(x, j))),
                                      Assign::make(acc, add(acc, exp_of(load(x, j)))),
                                      Assign::make(acc, add(acc, exp_of(load(y, j)))),
                                      Assign::make(acc, add(acc, exp_of(load(y, j)))),
                                      Assign::make(acc, add(acc, exp_of(acc))),
                                      Assign::make(acc, add(acc, exp_of(acc)))}),
                           {Reduction{acc, BinaryOp::kAdd}});
  StmtPtr out = bind_common_calls(LetStmt::make(acc, imm(DType::kF32, 0), loop));
  const std::string text = to_string(out);
  EXPECT_NE(text.find("let e0: f32 = tf_exp(x[j])\n"), std::string::npos) << text;
  EXPECT_NE(text.find("y[j] = e0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("acc = (acc + e0)\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("let e1"), std::string::npos) << text;
  EXPECT_EQ(text.find("tf_exp(x[j])", text.find("tf_exp(x[j])") + 1), std::string::npos) << text;
  EXPECT_NO_THROW(verify(Function{"f", {x, y, n}, out}));
  EXPECT_EQ(bind_common_calls(out).get(), out.get());
}

TEST(Tir, BindingsNothingReadsAreRemoved) {
  // let a = n * 2 (read only by b); let b = a + 1 (read by nothing);
  // let c = n + 3 (read by the store); let d = an extern call (kept: it
  // has an effect); var m (assigned, never read: kept).
  VarPtr y = Var::make("y", Type::pointer(DType::kI64)), n = Var::make("n", kI64);
  VarPtr a = Var::make("a", kI64), b = Var::make("b", kI64), c = Var::make("c", kI64);
  VarPtr d = Var::make("d", Type::scalar(DType::kI32)), m = Var::make("m", kI64, true);
  StmtPtr inner = Seq::make({Store::make(y, i64(0), c), Assign::make(m, n)});
  StmtPtr s = LetStmt::make(
      a, mul(n, i64(2)),
      LetStmt::make(b, add(a, i64(1)),
                    LetStmt::make(c, add(n, i64(3)),
                                  LetStmt::make(d, extern_call("tf_probe", {n}),
                                                LetStmt::make(m, i64(0), inner)))));
  StmtPtr out = remove_unused_lets(s);
  const std::string text = to_string(out);
  EXPECT_EQ(text.find("let a"), std::string::npos) << text;
  EXPECT_EQ(text.find("let b"), std::string::npos) << text;
  EXPECT_NE(text.find("let c: i64 = (n + 3)"), std::string::npos) << text;
  EXPECT_NE(text.find("tf_probe(n)"), std::string::npos) << text;
  EXPECT_NE(text.find("var m: i64 = 0"), std::string::npos) << text;
  EXPECT_NO_THROW(verify(Function{"f", {y, n}, out}));
  // Nothing left to remove: the same tree.
  EXPECT_EQ(remove_unused_lets(out).get(), out.get());
}

}  // namespace
}  // namespace tf::tir
