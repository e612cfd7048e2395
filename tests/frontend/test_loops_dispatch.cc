// Calls, elaboration, shape dispatch and loops (GridRegionExpr), docs/ir.md:
// parsing, printing and the conformance rules checked at construction.
#include "core/ir/expr.h"
#include "core/ir/shard.h"
#include "core/sema/dispatch.h"
#include "core/sema/elaborate.h"
#include "core/sema/typeinfer.h"
#include "core/sema/verify.h"
#include "round_trip.h"

namespace tf::frontend::testing {
namespace {

using ir::ErrorKind;

const char* kHeader = "from tilefoundry.dsl import *\nS = DimVar(\"S\", 1, 4096)\nK = DimVar(\"K\", 1, 1 << 20)\n";

std::string src(const std::string& body) { return std::string(kHeader) + body; }

const std::string kDecode = src(R"(
@func
def decode(q: Tensor[(S, 8), f32]) -> Tensor[(S, 8), f32]:
    pass

@decode.specialize(S=(1, 64))
def decode_small(q: Tensor[(S, 8), f32]) -> Tensor[(S, 8), f32]:
    return softmax(q, axis=-1)

@decode.specialize(S=(64, 4096))
def decode_large(q: Tensor[(S, 8), f32]) -> Tensor[(S, 8), f32]:
    return q * 2.0
)");

const ir::GridRegionExpr* region_of(const ir::ExprPtr& e) { return ir::expr_as<ir::GridRegionExpr>(e); }

// --- loops ---

TEST(HirConformance, Loop_TileWithStepLowersToOneGridRegionWithACarry) {
  auto m = parse_rt(src(R"(
@func
def rowsum(x: Tensor[(4, 16), f32]) -> Tensor[(4,), f32]:
    acc = zeros((4,), f32)
    for i in tile(16, step=4):
        acc = acc + sum(x[:, i], axes=(1,), keepdim=False)
    return acc
)"));
  const auto* g = region_of(m->lookup("rowsum")->body());
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->fields().carried_args.size(), 1u);
  EXPECT_EQ(g->fields().extent, ir::ShapeDim(16));
  EXPECT_EQ(g->fields().step, ir::ShapeDim(4));
  EXPECT_EQ(g->fields().start, ir::ShapeDim(0));
  // init_args are self-contained: the pre-loop zeros, not a name.
  EXPECT_NE(ir::expr_as<ir::Call>(g->fields().init_args[0]), nullptr);
  EXPECT_EQ(g->fields().body, g->fields().yield_values[0]);
}

TEST(HirConformance, Loop_RangeIsNotUnrolledAndSetsStart) {
  auto m = parse_rt(src(R"(
@func
def f(x: Tensor[(4,), f32]) -> Tensor[(4,), f32]:
    y = x
    for j in range(2, 10, 3):
        y = y + x
    return y
)"));
  const auto* g = region_of(m->lookup("f")->body());
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->fields().start, ir::ShapeDim(2));
  EXPECT_EQ(g->fields().extent, ir::ShapeDim(10));
  EXPECT_EQ(g->fields().step, ir::ShapeDim(3));
}

TEST(HirConformance, Loop_MultiCarryRebindsThroughTupleGetItem) {
  auto m = parse_rt(src(R"(
@func
def f(x: Tensor[(K,), f32]) -> tuple[Tensor[(K,), f32], Tensor[(K,), f32]]:
    a = x
    b = x * 2.0
    for i in tile(K):
        a = a + b
        b = b * a
    return a, b
)"));
  const auto* t = ir::expr_as<ir::Tuple>(m->lookup("f")->body());
  ASSERT_NE(t, nullptr);
  const auto* g0 = ir::expr_as<ir::TupleGetItem>(t->fields()[0]);
  const auto* g1 = ir::expr_as<ir::TupleGetItem>(t->fields()[1]);
  ASSERT_TRUE(g0 && g1);
  EXPECT_EQ(g0->tuple(), g1->tuple());
  const auto* g = region_of(g0->tuple());
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->fields().carried_args.size(), 2u);
  EXPECT_EQ(g->fields().extent, ir::ShapeDim::var("K", 1, 1 << 20));
  EXPECT_NE(ir::as_tuple(g->type()), nullptr);
}

TEST(HirConformance, Loop_NestedLoopsAndInvariantSharedNodesRoundTrip) {
  parse_rt(src(R"(
@func
def f(x: Tensor[(8, 8), f32]) -> Tensor[(8, 8), f32]:
    s = x * 2.0
    acc = x
    for i in tile(8, step=2):
        for j in range(4):
            t = s + acc
            acc = t * t
    return acc + s
)"));
}

TEST(HirConformance, Loop_CarryMustKeepItsType) {
  expect_error(src(R"(
@func
def f(x: Tensor[(8,), f32]) -> Tensor[(8,), f32]:
    acc = x
    for i in tile(8, step=2):
        acc = acc[i]
    return acc
)"),
               ErrorKind::kType, 8, 5, {"loop-carried 'acc'", "keeps its type"});
}

TEST(HirConformance, Loop_NonPositiveStaticStepIsRejected) {
  expect_error(src("@func\ndef f(x: Tensor[(8,), f32]) -> Tensor[(8,), f32]:\n    for i in range(0, 8, 0):\n"
                   "        x = x + x\n    return x\n"),
               ErrorKind::kParse, 6, 14, {"step must be positive"});
}

TEST(HirConformance, Loop_WithoutCarryIsRejected) {
  expect_error(src("@func\ndef f(x: Tensor[(8,), f32]) -> Tensor[(8,), f32]:\n    for i in range(8):\n"
                   "        y = x + x\n    return x\n"),
               ErrorKind::kParse, 6, 5, {"no effect"});
}

// --- dispatch ---

TEST(HirConformance, Dispatch_SpecializeBuildsAPrototypeWithLabelledVariants) {
  auto m = parse_rt(kDecode);
  auto f = m->lookup("decode");
  ASSERT_TRUE(f->is_prototype());
  EXPECT_EQ(f->body(), nullptr);
  ASSERT_EQ(f->variants().size(), 2u);
  EXPECT_EQ(f->variants()[0]->label(), "decode_small");
  EXPECT_EQ(f->variants()[0]->name(), "decode");
  EXPECT_EQ(f->variants()[0]->canonical_signature(), "S$1_64");
  EXPECT_NE(print_module(*m).find("def decode_large(q"), std::string::npos);
}

TEST(HirConformance, Dispatch_LabelsNeverAffectEquality) {
  std::string renamed = kDecode;
  renamed.replace(renamed.find("decode_small"), 12, "tiny_version");
  auto a = parse_module(kDecode, "a.tf");
  auto b = parse_module(renamed, "b.tf");
  EXPECT_TRUE(ir::structural_equal(*a, *b));
  EXPECT_EQ(ir::structural_hash(*a), ir::structural_hash(*b));
}

TEST(HirConformance, Dispatch_VariantsPartitionTheEnvelope_Gap) {
  std::string s = kDecode;
  s.replace(s.find("S=(64, 4096)"), 12, "S=(65, 4096)");
  expect_error(s, ErrorKind::kVerify, 6, 1, {"do not cover S in [64, 65)", "partition"});
}

TEST(HirConformance, Dispatch_VariantsPartitionTheEnvelope_Overlap) {
  std::string s = kDecode;
  s.replace(s.find("S=(64, 4096)"), 12, "S=(60, 4096)");
  expect_error(s, ErrorKind::kVerify, 6, 1, {"overlaps", "[60, 64)", "disjoint"});
}

TEST(HirConformance, Dispatch_VariantsPartitionTheEnvelope_Incomplete) {
  std::string s = kDecode;
  s.replace(s.find("S=(64, 4096)"), 12, "S=(64, 4000)");
  expect_error(s, ErrorKind::kVerify, 6, 1, {"[4000, 4096)"});
}

TEST(HirConformance, Dispatch_VariantAnchorsToAnInputDimVarInsideItsEnvelope) {
  std::string s = kDecode;
  s.replace(s.find("S=(1, 64)"), 9, "K=(1, 64)");
  expect_error(s, ErrorKind::kVerify, 6, 1, {"'K'", "not a DimVar of an input parameter"});
  s = kDecode;
  s.replace(s.find("S=(64, 4096)"), 12, "S=(64, 5000)");
  expect_error(s, ErrorKind::kVerify, 6, 1, {"inside the envelope [1, 4096)"});
}

TEST(HirConformance, Dispatch_DistinctCanonicalSignatures) {
  std::string s = kDecode;
  s.replace(s.find("S=(64, 4096)"), 12, "S=(1, 64)");
  expect_error(s, ErrorKind::kVerify, 6, 1, {"canonical signature 'S$1_64'", "distinct"});
}

TEST(HirConformance, Dispatch_VariantsShareNameParamsAndReturnType) {
  std::string s = kDecode;
  s.replace(s.find("def decode_large(q"), 18, "def decode_large(z");
  s.replace(s.find("return q * 2.0"), 14, "return z * 2.0");
  expect_error(s, ErrorKind::kVerify, 6, 1, {"MUST share the base's params"});
}

TEST(HirConformance, Dispatch_ALaterVariantAfterSealingIsRejected) {
  std::string s = kDecode + R"(
@func
def user(q: Tensor[(S, 8), f32]) -> Tensor[(S, 8), f32]:
    return decode(q)

@decode.specialize(S=(1, 2))
def late(q: Tensor[(S, 8), f32]) -> Tensor[(S, 8), f32]:
    return q
)";
  expect_error(s, ErrorKind::kVerify, 21, 2, {"sealed", "'late'"});
}

TEST(HirConformance, Dispatch_PrototypeWithoutVariantsIsRejected) {
  expect_error(src("@func\ndef f(x: Tensor[(8,), f32]) -> Tensor[(8,), f32]:\n    pass\n"), ErrorKind::kVerify, 5, 1,
               {"no body and no variants"});
}

TEST(HirConformance, Dispatch_TopLevelVariantIsAVerifierError) {
  auto m = parse_module(kDecode, "t.tf");
  try {
    sema::seal(ir::Target::default_cpu(), {m->lookup("decode")->variants()[0]});
    ADD_FAILURE() << "expected a verifier error";
  } catch (const ir::Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kVerify);
    EXPECT_NE(std::string(e.what()).find("MUST NOT be a variant"), std::string::npos) << e.what();
  }
}

TEST(HirConformance, Dispatch_CallToAPrototypeHasTheDeclaredReturnType) {
  auto m = parse_rt(kDecode + R"(
@func
def user(q: Tensor[(5, 8), f32]) -> Tensor[(5, 8), f32]:
    return decode(q)
)");
  const auto* c = ir::expr_as<ir::Call>(m->lookup("user")->body());
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->callee(), m->lookup("decode"));  // a prototype is not elaborated
  EXPECT_EQ(c->type()->to_string(), "Tensor[(5, 8), f32]");
}

// --- elaboration ---

TEST(HirConformance, Elaborate_IdenticalCallSitesResolveToTheIdenticalInstance) {
  auto m = parse_module(src(R"(
@func
def g(x: Tensor[(K,), f32]) -> Tensor[(K,), f32]:
    return x + x

@func
def f(a: Tensor[(K,), f32], b: Tensor[(K,), f32]) -> Tensor[(K,), f32]:
    return g(a) * g(b)
)"),
                        "t.tf");
  const auto* mul = ir::expr_as<ir::Call>(m->lookup("f")->body());
  const auto* c0 = ir::expr_as<ir::Call>(mul->args()[0]);
  const auto* c1 = ir::expr_as<ir::Call>(mul->args()[1]);
  EXPECT_EQ(c0->callee(), c1->callee());
  // Dedup: nothing changed, so the instance is the callee itself.
  EXPECT_EQ(c0->callee(), m->lookup("g"));
}

TEST(HirConformance, Elaborate_ATemplateParameterSpecializesPerCallSite) {
  ir::FunctionPtr g = parse_module(src(R"(
@func
def g(x: Tensor[(K,), f32]) -> Tensor[(K,), f32]:
    return x + x
)"),
                                   "t.tf")
                          ->lookup("g");
  // An rmem argument binds the layout-less (wildcard) parameter's storage.
  auto rmem = ir::Var::make("r", ir::TensorType::make({8}, ir::DType::kF32, nullptr, ir::StorageKind::kRmem));
  auto gmem = ir::Var::make("q", ir::TensorType::make({8}, ir::DType::kF32));
  sema::ElaborationSession session;
  auto c_rmem = sema::make_function_call(g, {rmem});
  auto c_rmem2 = sema::make_function_call(g, {rmem});
  auto c_gmem = sema::make_function_call(g, {gmem});
  EXPECT_NE(c_rmem->callee(), g);
  EXPECT_EQ(c_rmem->callee(), c_rmem2->callee());  // memoized in the session
  EXPECT_EQ(c_gmem->callee(), g);                  // dedup
  EXPECT_EQ(ir::as_tensor(c_rmem->callee()->params()[0]->type())->storage(), ir::StorageKind::kRmem);
  // The shape keeps its DimVar: elaboration does not monomorphize.
  EXPECT_EQ(ir::as_tensor(c_rmem->callee()->params()[0]->type())->shape()[0], ir::ShapeDim::var("K", 1, 1 << 20));
  // The Call's type is the re-derived body type, K bound to 8.
  EXPECT_EQ(c_rmem->type()->to_string(), "Tensor[(8,), f32, \"rmem\"]");
  EXPECT_TRUE(ir::type_equal(c_rmem->callee()->return_type(), c_rmem->callee()->body()->type()));
}

TEST(HirConformance, Elaborate_MemoIsSessionLocal) {
  ir::FunctionPtr g = parse_module(src("@func\ndef g(x: Tensor[(K,), f32]) -> Tensor[(K,), f32]:\n    return x + x\n"),
                                   "t.tf")
                          ->lookup("g");
  auto rmem = ir::Var::make("r", ir::TensorType::make({8}, ir::DType::kF32, nullptr, ir::StorageKind::kRmem));
  ir::FunctionPtr first, second;
  {
    sema::ElaborationSession s;
    first = sema::make_function_call(g, {rmem})->callee();
  }
  {
    sema::ElaborationSession s;
    second = sema::make_function_call(g, {rmem})->callee();
  }
  EXPECT_NE(first, second);
  EXPECT_TRUE(ir::structural_equal(ir::ExprPtr(first), ir::ExprPtr(second)));
}

TEST(HirConformance, Elaborate_ArityMustMatch) {
  expect_error(src(R"(
@func
def g(x: Tensor[(K,), f32]) -> Tensor[(K,), f32]:
    return x

@func
def f(a: Tensor[(K,), f32]) -> Tensor[(K,), f32]:
    return g(a, a)
)"),
               ErrorKind::kParse, 11, 17, {"'g' takes 1"});
}

TEST(HirConformance, Elaborate_DtypeAndShapeMustMatch) {
  expect_error(src(R"(
@func
def g(x: Tensor[(4,), f32]) -> Tensor[(4,), f32]:
    return x

@func
def f(a: Tensor[(5,), f32]) -> Tensor[(5,), f32]:
    return g(a)
)"),
               ErrorKind::kType, 11, 12, {"call to 'g'", "argument #0 (x)", "axis 0"});
}

TEST(HirConformance, Elaborate_FailureIsReportedInsideTheCalleeWithTheCallSite) {
  // The loop carry is plain for the declared parameter; a Partial("sum")
  // argument makes it Partial, and exp does not commute with a sum: only the
  // re-typeinferred body can see that.
  ir::FunctionPtr g = parse_module(src(R"(
@func
def g(x: Tensor[(4,), f32]) -> Tensor[(4,), f32]:
    acc = x
    for i in tile(4):
        acc = exp(acc)
    return acc
)"),
                                   "callee.tf")
                          ->lookup("g");
  auto mesh = std::make_shared<const ir::Mesh>(ir::Mesh{"cta", "cta", {4}, {"x"}});
  auto partial = ir::ShardLayout::make(mesh, {ir::ShardAttr::partial(ir::Reduction::kSum)}, {4},
                                       ir::Shape{1});
  auto arg = ir::Var::make("r", ir::TensorType::make({4}, ir::DType::kF32, partial));
  try {
    sema::make_function_call(g, {arg}, ir::Span{std::make_shared<std::string>("caller.tf"), 3, 7});
    ADD_FAILURE() << "expected a type error inside the callee";
  } catch (const ir::Error& e) {
    std::string msg = e.what();
    EXPECT_EQ(e.kind(), ErrorKind::kType) << msg;
    EXPECT_EQ(msg.rfind("caller.tf:3:7: error: in call to 'g'", 0), 0u) << msg;
    EXPECT_NE(msg.find("callee.tf:"), std::string::npos) << msg;
    EXPECT_NE(msg.find("Partial"), std::string::npos) << msg;
  }
}

TEST(HirConformance, Elaborate_PrototypeCalleeIsNotElaborated) {
  auto m = parse_module(kDecode, "t.tf");
  auto rmem = ir::Var::make("r", ir::TensorType::make({8, 8}, ir::DType::kF32, nullptr, ir::StorageKind::kRmem));
  auto c = sema::make_function_call(m->lookup("decode"), {rmem});
  EXPECT_EQ(c->callee(), m->lookup("decode"));
  EXPECT_EQ(c->type()->to_string(), "Tensor[(8, 8), f32]");
}

}  // namespace
}  // namespace tf::frontend::testing
