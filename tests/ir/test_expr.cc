// IR nodes, structural equality / hashing (DAG-aware) and the identity-
// preserving visitor / mutator. Calls are built with explicit types here,
// since ir cannot depend on the typeinfer of sema.
#include <gtest/gtest.h>

#include "core/ir/error.h"
#include "core/ir/module.h"
#include "core/ir/structural.h"
#include "core/ir/visitor.h"

using namespace tf::ir;

namespace {

struct TestOp final : Op {
  explicit TestOp(std::string k) : kind(std::move(k)) {}
  std::string kind;
  std::string_view name() const override { return "TestOp"; }
  std::string surface_name() const override { return kind; }
  std::vector<Attr> attrs() const override { return {{"kind", kind}}; }
};

TypePtr f32(Shape s) { return TensorType::make(std::move(s), DType::kF32); }

CallPtr call(const std::string& kind, std::vector<ExprPtr> args) {
  return Call::make_op(std::make_shared<TestOp>(kind), std::move(args), args.empty() ? f32({4}) : args[0]->type());
}

// f(a, b) = (a + b) * (a + b), the product either sharing one add or not.
FunctionPtr square_of_sum(bool shared) {
  VarPtr a = Var::make("a", f32({4})), b = Var::make("b", f32({4}));
  ExprPtr s1 = call("add", {a, b});
  ExprPtr s2 = shared ? s1 : call("add", {a, b});
  return Function::make({"f", {a, b}, call("mul", {s1, s2}), f32({4}), {}, {}, "", {}});
}

}  // namespace

TEST(Function, TypeIsTheCallableTypeFixedAtConstruction) {
  FunctionPtr f = square_of_sum(true);
  const CallableType& t = f->callable_type();
  ASSERT_EQ(t.params().size(), 2u);
  EXPECT_TRUE(t.ret()->structural_equal(*f32({4})));
}

TEST(Function, ThreeShapesAreEnforcedAtConstruction) {
  VarPtr a = Var::make("a", f32({4}));
  FunctionPtr normal = Function::make({"g", {a}, a, f32({4}), {}, {}, "", {}});
  EXPECT_FALSE(normal->is_prototype());
  // A variant must not carry variants.
  EXPECT_THROW(Function::make({"g", {a}, a, f32({4}), {{"N", 1, 4}}, {normal}, "", {}}), Error);
  // A real body combined with variants is invalid.
  FunctionPtr variant = Function::make({"g", {a}, a, f32({4}), {{"N", 1, 4}}, {}, "small", {}});
  EXPECT_EQ(variant->canonical_signature(), "N$1_4");
  EXPECT_THROW(Function::make({"g", {a}, a, f32({4}), {}, {variant}, "", {}}), Error);
  FunctionPtr proto = Function::make({"g", {a}, nullptr, f32({4}), {}, {variant}, "", {}});
  EXPECT_TRUE(proto->is_prototype());
}

TEST(Function, ParamsMustBeDistinctVars) {
  VarPtr a = Var::make("a", f32({4}));
  EXPECT_THROW(Function::make({"g", {a, a}, a, f32({4}), {}, {}, "", {}}), Error);
  EXPECT_THROW(Function::make({"g", {nullptr}, a, f32({4}), {}, {}, "", {}}), Error);
}

TEST(Structural, EqualModuloVarIdentityAndSensitiveToSharing) {
  EXPECT_TRUE(structural_equal(square_of_sum(true), square_of_sum(true)));
  EXPECT_TRUE(structural_equal(square_of_sum(false), square_of_sum(false)));
  EXPECT_FALSE(structural_equal(square_of_sum(true), square_of_sum(false)));
  EXPECT_EQ(structural_hash(square_of_sum(true)), structural_hash(square_of_sum(true)));
  EXPECT_NE(structural_hash(square_of_sum(true)), structural_hash(square_of_sum(false)));
}

TEST(Structural, OpAttributesAndVariantLabelsCountAsSpecified) {
  VarPtr a = Var::make("a", f32({4}));
  auto mk = [&](const std::string& kind) { return Function::make({"g", {a}, call(kind, {a}), f32({4}), {}, {}, "", {}}); };
  EXPECT_FALSE(structural_equal(mk("exp"), mk("log")));
  // Labels are non-canonical metadata.
  FunctionPtr v1 = Function::make({"g", {a}, a, f32({4}), {{"N", 1, 4}}, {}, "small", {}});
  FunctionPtr v2 = Function::make({"g", {a}, a, f32({4}), {{"N", 1, 4}}, {}, "tiny", {}});
  EXPECT_TRUE(structural_equal(v1, v2));
  EXPECT_EQ(structural_hash(v1), structural_hash(v2));
}

TEST(Structural, ModulesCompareTargetsAndFunctionsInOrder) {
  auto m1 = Module::make(Target{"cpu", {{"device", 1}, {"cta", 2}}}, {square_of_sum(true)});
  auto m2 = Module::make(Target{"cpu", {{"device", 1}, {"cta", 2}}}, {square_of_sum(true)});
  auto m3 = Module::make(Target{"cpu", {{"device", 1}, {"cta", 4}}}, {square_of_sum(true)});
  EXPECT_TRUE(structural_equal(*m1, *m2));
  EXPECT_EQ(structural_hash(*m1), structural_hash(*m2));
  EXPECT_FALSE(structural_equal(*m1, *m3));
  EXPECT_EQ(m1->lookup("f"), m1->functions()[0]);
  EXPECT_EQ(m1->lookup("nope"), nullptr);
  EXPECT_THROW(Module::make(Target{}, {square_of_sum(true), square_of_sum(false)}), Error);
}

TEST(TupleGetItem, TypesFromTheTupleAndRejectsOutOfRange) {
  VarPtr a = Var::make("a", f32({4}));
  auto t = Tuple::make({a, call("exp", {a})});
  EXPECT_TRUE(TupleGetItem::make(t, 1)->type()->structural_equal(*f32({4})));
  EXPECT_THROW(TupleGetItem::make(t, 2), Error);
  EXPECT_THROW(TupleGetItem::make(a, 0), Error);
}

namespace {
struct CallCounter : ExprVisitor {
  int calls = 0;
  void visit_call(const Call&) override { ++calls; }
};
struct RenameExp : ExprMutator {
  ExprPtr mutate_call(const CallPtr& c) override {
    auto* op = dynamic_cast<const TestOp*>(c->op().get());
    if (op && op->kind == "exp") return call("log", {mutate(c->args()[0])});
    return ExprMutator::mutate_call(c);
  }
};
}  // namespace

TEST(Visitor, VisitsASharedNodeOnce) {
  CallCounter shared, unshared;
  shared.visit(square_of_sum(true)->body());
  unshared.visit(square_of_sum(false)->body());
  EXPECT_EQ(shared.calls, 2);
  EXPECT_EQ(unshared.calls, 3);
}

TEST(Mutator, PreservesIdentityWhenNothingChanges) {
  FunctionPtr f = square_of_sum(true);
  RenameExp m;
  EXPECT_EQ(m.mutate(f), f);  // no exp inside: the very same node
}

TEST(Mutator, RebuildsOnlyThePathToAChangeAndKeepsSharing) {
  VarPtr a = Var::make("a", f32({4}));
  ExprPtr e = call("exp", {a});
  ExprPtr untouched = call("neg", {a});
  ExprPtr body = call("add", {call("mul", {e, e}), untouched});
  RenameExp m;
  ExprPtr out = m.mutate(body);
  ASSERT_NE(out, body);
  auto* add = expr_as<Call>(out);
  EXPECT_EQ(add->args()[1], untouched);  // unchanged subtree keeps identity
  auto* mul = expr_as<Call>(add->args()[0]);
  EXPECT_EQ(mul->args()[0], mul->args()[1]);  // the shared node is rewritten once
  EXPECT_EQ(static_cast<const TestOp&>(*expr_as<Call>(mul->args()[0])->op()).kind, "log");
}
