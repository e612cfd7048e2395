// Parser: the rmsnorm / swiglu / resnorm examples, precedence, calls, keyword
// arguments, subscripts, literals. Every module also goes through the round
// trip (parse_rt).
#include <gtest/gtest.h>

#include "core/ops/math/math.h"
#include "core/ops/nn/nn.h"
#include "core/ops/tensor/tensor.h"
#include "frontend/round_trip.h"

namespace tf::frontend {
namespace {

using testing::kHeader;
using testing::parse_rt;

const ir::Call& as_call(const ir::ExprPtr& e) {
  auto* c = ir::expr_as<ir::Call>(e);
  if (!c) throw std::runtime_error("expected a Call");
  return *c;
}

// The surface name of a Call's op ("add", "rms_norm"), or the callee's name.
std::string op_of(const ir::ExprPtr& e) {
  auto& c = as_call(e);
  return c.op() ? c.op()->surface_name() : "call:" + c.callee()->name();
}

const ir::ExprPtr& arg(const ir::ExprPtr& e, size_t i) { return as_call(e).args().at(i); }

std::string type_of(const ir::ExprPtr& e) { return e->type()->to_string(); }

const char* kExamples = R"(
@func
def rmsnorm(x: Tensor[(N, D), f32], w: Tensor[(D,), f32]) -> Tensor[(N, D), f32]:
    return rms_norm(x, w, eps=1e-6)

@func
def swiglu(a: Tensor[(N, D), bf16], b: Tensor[(N, D), bf16]) -> Tensor[(N, D), bf16]:
    return silu(a) * b

@func
def resnorm(x: Tensor[(N, D), f32], r: Tensor[(N, D), f32], w: Tensor[(D,), f32]
            ) -> tuple[Tensor[(N, D), f32], Tensor[(N, D), f32]]:
    h = x + r                            # shared: one Call node, two uses
    return h, rms_norm(h, w, eps=1e-6)   # a TupleType return
)";

TEST(Parser, RmsNormAndSwiGluParseToTheirOpsAndTypes) {
  auto m = parse_rt(std::string(kHeader) + kExamples);
  ASSERT_EQ(m->functions().size(), 3u);

  auto rms = m->lookup("rmsnorm");
  ASSERT_TRUE(rms);
  ASSERT_EQ(rms->params().size(), 2u);
  auto* xt = ir::as_tensor(rms->params()[0]->type());
  ASSERT_TRUE(xt);
  ASSERT_EQ(xt->shape()[0].kind(), ir::DimKind::kVar);
  EXPECT_EQ(xt->shape()[0].var_name(), "N");
  EXPECT_EQ(xt->shape()[0].var_lo(), 1);
  EXPECT_EQ(xt->shape()[0].var_hi(), 1 << 20);
  EXPECT_EQ(xt->shape()[1], ir::ShapeDim(4096));
  EXPECT_EQ(op_of(rms->body()), "rms_norm");
  auto* norm = dynamic_cast<const ops::RMSNorm*>(as_call(rms->body()).op().get());
  ASSERT_TRUE(norm);
  EXPECT_DOUBLE_EQ(norm->eps, 1e-6);
  EXPECT_EQ(arg(rms->body(), 0), rms->params()[0]);
  EXPECT_EQ(arg(rms->body(), 1), rms->params()[1]);

  auto sw = m->lookup("swiglu");
  EXPECT_EQ(op_of(sw->body()), "mul");
  EXPECT_EQ(op_of(arg(sw->body(), 0)), "silu");
  EXPECT_EQ(arg(arg(sw->body(), 0), 0), sw->params()[0]);
  EXPECT_EQ(arg(sw->body(), 1), sw->params()[1]);
  EXPECT_EQ(type_of(sw->body()), "Tensor[(N, 4096), bf16]");
}

TEST(Parser, BoundNameSharesOneNode) {
  auto m = parse_rt(std::string(kHeader) + kExamples);
  auto f = m->lookup("resnorm");
  auto* tuple = ir::expr_as<ir::Tuple>(f->body());
  ASSERT_TRUE(tuple);
  ASSERT_EQ(tuple->fields().size(), 2u);
  const ir::ExprPtr& h = tuple->fields()[0];
  EXPECT_EQ(op_of(h), "add");
  EXPECT_EQ(op_of(tuple->fields()[1]), "rms_norm");
  EXPECT_EQ(arg(tuple->fields()[1], 0).get(), h.get()) << "both uses of h must be the same node";
  EXPECT_EQ(type_of(f->body()), "tuple[Tensor[(N, 4096), f32], Tensor[(N, 4096), f32]]");
}

TEST(Parser, InlineRepetitionBuildsDistinctNodes) {
  auto m = parse_rt(std::string(kHeader) + R"(
@func
def f(x: Tensor[(N,), f32], r: Tensor[(N,), f32]) -> Tensor[(N,), f32]:
    return (x + r) * (x + r)
)");
  const auto& body = m->functions()[0]->body();
  EXPECT_NE(arg(body, 0).get(), arg(body, 1).get());
}

TEST(Parser, RebindingUsesTheLatestBinding) {
  auto m = parse_rt(std::string(kHeader) + R"(
@func
def f(x: Tensor[(N,), f32], r: Tensor[(N,), f32]) -> Tensor[(N,), f32]:
    h = x + r
    h = h * h
    return h - x
)");
  const auto& fn = *m->functions()[0];
  EXPECT_EQ(op_of(fn.body()), "sub");
  const auto& sq = arg(fn.body(), 0);
  EXPECT_EQ(op_of(sq), "mul");
  EXPECT_EQ(arg(sq, 0).get(), arg(sq, 1).get());
  EXPECT_EQ(op_of(arg(sq, 0)), "add");
}

TEST(Parser, OperatorPrecedence) {
  auto m = parse_rt(std::string(kHeader) + R"(
@func
def p1(a: Tensor[(4,), f32], b: Tensor[(4,), f32], c: Tensor[(4,), f32]) -> Tensor[(4,), f32]:
    return a + b * c
@func
def p2(a: Tensor[(4,), f32], b: Tensor[(4,), f32], c: Tensor[(4,), f32]) -> Tensor[(4,), f32]:
    return (a + b) * c
@func
def p3(a: Tensor[(4,), f32], b: Tensor[(4,), f32], c: Tensor[(4,), f32]) -> Tensor[(4,), f32]:
    return a - b - c
@func
def p4(a: Tensor[(4,), f32], b: Tensor[(4,), f32], c: Tensor[(4,), f32]) -> Tensor[(4,), bool]:
    return a + b < c * a
@func
def p5(a: Tensor[(4,), f32], b: Tensor[(4,), f32], c: Tensor[(4,), f32]) -> Tensor[(4,), bool]:
    return (a < b) & (b >= c) | ~(a == c)
@func
def p6(a: Tensor[(4,), f32], b: Tensor[(4,), f32], c: Tensor[(4,), f32]) -> Tensor[(4,), f32]:
    return -a * b / c
)");
  auto body = [&](const char* n) { return m->lookup(n)->body(); };
  EXPECT_EQ(op_of(body("p1")), "add");
  EXPECT_EQ(op_of(arg(body("p1"), 1)), "mul");
  EXPECT_EQ(op_of(body("p2")), "mul");
  EXPECT_EQ(op_of(arg(body("p2"), 0)), "add");
  EXPECT_EQ(op_of(body("p3")), "sub");
  EXPECT_EQ(op_of(arg(body("p3"), 0)), "sub");  // left-associative
  EXPECT_EQ(op_of(body("p4")), "cmp_lt");
  EXPECT_EQ(op_of(arg(body("p4"), 0)), "add");
  EXPECT_EQ(op_of(arg(body("p4"), 1)), "mul");
  EXPECT_EQ(op_of(body("p5")), "logical_or");  // & binds tighter than |
  EXPECT_EQ(op_of(arg(body("p5"), 0)), "logical_and");
  EXPECT_EQ(op_of(arg(body("p5"), 1)), "logical_not");
  EXPECT_EQ(op_of(arg(arg(body("p5"), 0), 1)), "cmp_ge");
  EXPECT_EQ(op_of(body("p6")), "div");  // (-a * b) / c
  EXPECT_EQ(op_of(arg(body("p6"), 0)), "mul");
  EXPECT_EQ(op_of(arg(arg(body("p6"), 0), 0)), "neg");
}

TEST(Parser, MatmulOperator) {
  auto m = parse_rt(std::string(kHeader) + R"(
@func
def mm(a: Tensor[(N, 64), f32], b: Tensor[(64, 32), f32], c: Tensor[(N, 32), f32]) -> Tensor[(N, 32), f32]:
    return a @ b + c
)");
  const auto& body = m->functions()[0]->body();
  EXPECT_EQ(op_of(body), "add");
  EXPECT_EQ(op_of(arg(body, 0)), "matmul");
  EXPECT_EQ(type_of(arg(body, 0)), "Tensor[(N, 32), f32]");
}

TEST(Parser, KeywordArgumentsAndDefaults) {
  auto m = parse_rt(std::string(kHeader) + R"(
@func
def k(x: Tensor[(N, 8), f32]) -> tuple[Tensor[(N,), f32], Tensor[(N, 1), f32], Tensor[(N, 8), f32], Tensor[(N, 8), f32]]:
    a = sum(x, axes=1, keepdim=False)
    b = reduce(x, 1, True, "max")
    c = softmax(x)
    d = gelu(x=x, approximate="none")
    return a, b, c, d
)");
  auto* t = ir::expr_as<ir::Tuple>(m->functions()[0]->body());
  ASSERT_TRUE(t);
  auto* a = dynamic_cast<const ops::Reduce*>(as_call(t->fields()[0]).op().get());
  ASSERT_TRUE(a);
  EXPECT_EQ(a->axes, std::vector<int64_t>{1});
  EXPECT_FALSE(a->keepdim);
  EXPECT_EQ(a->kind, ops::ReduceKind::kSum);
  auto* b = dynamic_cast<const ops::Reduce*>(as_call(t->fields()[1]).op().get());
  ASSERT_TRUE(b);
  EXPECT_TRUE(b->keepdim);
  EXPECT_EQ(b->kind, ops::ReduceKind::kMax);
  auto* c = dynamic_cast<const ops::SoftMax*>(as_call(t->fields()[2]).op().get());
  ASSERT_TRUE(c);
  EXPECT_EQ(c->axis, -1);  // the default
  auto* d = dynamic_cast<const ops::Gelu*>(as_call(t->fields()[3]).op().get());
  ASSERT_TRUE(d);
  EXPECT_EQ(d->approximate, "none");
}

TEST(Parser, AttributeLiterals) {
  auto m = parse_rt(std::string(kHeader) + R"(
@func
def a(x: Tensor[(N, 8), f32]) -> Tensor[(8, N), bf16]:
    y = cast(transpose(x, (1, 0)), bf16)
    z = reshape(y, (4, 2, N))
    return reshape(z, shape=(8, N))
)");
  const auto& body = m->functions()[0]->body();
  auto* r = dynamic_cast<const ops::Reshape*>(as_call(body).op().get());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->new_shape.size(), 2u);
  EXPECT_EQ(r->new_shape[1].kind(), ir::DimKind::kVar);  // a tuple holding a DimVar is a Shape
  auto* c = dynamic_cast<const ops::Cast*>(as_call(arg(arg(body, 0), 0)).op().get());
  ASSERT_TRUE(c);
  EXPECT_EQ(c->dtype, ir::DType::kBF16);
}

TEST(Parser, ModuleConstantsAndDimArithmetic) {
  auto m = parse_rt(R"(
from tilefoundry.dsl import *
import tilefoundry

N = DimVar("N", 2, 1 << 10)
H = 64
D = H * 2 + (1 << 3) - 8 // 4 % 3
W = 2

@func
def f(x: Tensor[(N * W, D), f32]) -> Tensor[(N * 2, D), f32]:
    """Docstrings are ignored."""
    return x

@func
def g(x: Tensor[(dim_min(N, 512), N // 4 + 1), f32]) -> Tensor[(dim_min(N, 512), N // 4 + 1), f32]: return -x
)");
  auto* t = ir::as_tensor(m->lookup("f")->params()[0]->type());
  EXPECT_EQ(t->shape()[1], ir::ShapeDim(64 * 2 + 8 - 8 / 4 % 3));
  EXPECT_EQ(t->shape()[0].kind(), ir::DimKind::kMul);
  EXPECT_EQ(t->shape()[0].to_string(), "N * 2");
  auto* g = ir::as_tensor(m->lookup("g")->params()[0]->type());
  EXPECT_EQ(g->shape()[0].kind(), ir::DimKind::kMin);
  EXPECT_EQ(g->shape()[1].kind(), ir::DimKind::kAdd);
  EXPECT_EQ(op_of(m->lookup("g")->body()), "neg");
}

TEST(Parser, TargetDeclaration) {
  auto m = parse_rt(R"(
TARGET = Target("cpu", topology=(("device", 1), ("cta", 4)))

@func
def f(x: Tensor[(4,), f32]) -> Tensor[(4,), f32]:
    return x
)");
  EXPECT_EQ(m->target().name, "cpu");
  std::vector<std::pair<std::string, int64_t>> topo{{"device", 1}, {"cta", 4}};
  EXPECT_EQ(m->target().topology, topo);
  auto d = parse_rt("@func\ndef f(x: Tensor[(4,), f32]) -> Tensor[(4,), f32]:\n    return x\n");
  EXPECT_EQ(d->target(), ir::Target::default_cpu());
}

TEST(Parser, Subscripts) {
  auto m = parse_rt(std::string(kHeader) + R"(
@func
def s(x: Tensor[(N, 8), f32]) -> tuple[Tensor[(N, 2), f32], Tensor[(8,), f32], Tensor[(N, 4), f32], Tensor[(N,), f32]]:
    return x[:, 1:3], x[0], x[:, ::2], x[:, -1]
)");
  auto* t = ir::expr_as<ir::Tuple>(m->functions()[0]->body());
  ASSERT_TRUE(t);
  const auto& s0 = t->fields()[0];
  auto* sl = dynamic_cast<const ops::Slice*>(as_call(s0).op().get());
  ASSERT_TRUE(sl);
  EXPECT_TRUE(ir::shape_equal(sl->begin, ir::Shape{0, 1}));
  EXPECT_TRUE(ir::shape_equal(sl->end, ir::Shape{ir::ShapeDim::var("N", 1, 1 << 20), 3}));
  EXPECT_EQ(sl->strides, (std::vector<int64_t>{1, 1}));
  // An integer index slices [i, i + 1) and a Reshape drops the axis.
  EXPECT_EQ(op_of(t->fields()[1]), "reshape");
  EXPECT_EQ(op_of(arg(t->fields()[1], 0)), "slice");
  EXPECT_EQ(type_of(t->fields()[1]), "Tensor[(8,), f32]");
  auto* st = dynamic_cast<const ops::Slice*>(as_call(t->fields()[2]).op().get());
  ASSERT_TRUE(st);
  EXPECT_EQ(st->strides, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(type_of(t->fields()[3]), "Tensor[(N,), f32]");
}

TEST(Parser, CallsBetweenFunctionsAndTupleIndexing) {
  auto m = parse_rt(std::string(kHeader) + R"(
@func
def pair(x: Tensor[(N, D), f32]) -> tuple[Tensor[(N, D), f32], Tensor[(N, D), f32]]:
    return x * 2.0, exp(x)

@func
def use(x: Tensor[(N, D), f32]) -> Tensor[(N, D), f32]:
    p = pair(x)
    a, b = pair(x=x)
    return p[0] + p[1] + a * b
)");
  auto pair = m->lookup("pair");
  auto use = m->lookup("use");
  const auto& body = use->body();
  EXPECT_EQ(op_of(body), "add");
  const auto& lhs = arg(body, 0);  // p[0] + p[1]
  auto* g0 = ir::expr_as<ir::TupleGetItem>(arg(lhs, 0));
  auto* g1 = ir::expr_as<ir::TupleGetItem>(arg(lhs, 1));
  ASSERT_TRUE(g0 && g1);
  EXPECT_EQ(g0->index(), 0);
  EXPECT_EQ(g1->index(), 1);
  EXPECT_EQ(g0->tuple().get(), g1->tuple().get()) << "p is one Call node";
  auto& call = as_call(g0->tuple());
  EXPECT_EQ(call.callee().get(), pair.get()) << "the callee is the module's function";
  auto* ga = ir::expr_as<ir::TupleGetItem>(arg(arg(body, 1), 0));
  ASSERT_TRUE(ga);
  EXPECT_NE(ga->tuple().get(), g0->tuple().get()) << "a second call is a second node";
}

TEST(Parser, LiteralOperandsTakeThePartnerDtype) {
  auto m = parse_rt(std::string(kHeader) + R"(
@func
def f(x: Tensor[(4,), bf16], i: Tensor[(4,), i32], b: Tensor[(4,), bool]) -> tuple[Tensor[(4,), bf16], Tensor[(4,), bf16], Tensor[(4,), i32], Tensor[(4,), bool], Tensor[(4,), bf16]]:
    return x * 2.5, 1 + x, i - 3, b & True, maximum(x, -0.5)
)");
  auto* t = ir::expr_as<ir::Tuple>(m->functions()[0]->body());
  ASSERT_TRUE(t);
  auto* c0 = ir::expr_as<ir::Constant>(arg(t->fields()[0], 1));
  ASSERT_TRUE(c0);
  EXPECT_EQ(c0->dtype(), ir::DType::kBF16);
  EXPECT_DOUBLE_EQ(c0->value(), 2.5);
  auto* c1 = ir::expr_as<ir::Constant>(arg(t->fields()[1], 0));  // int literal, float partner
  ASSERT_TRUE(c1);
  EXPECT_EQ(c1->dtype(), ir::DType::kBF16);
  EXPECT_DOUBLE_EQ(c1->value(), 1.0);
  auto* c2 = ir::expr_as<ir::Constant>(arg(t->fields()[2], 1));
  ASSERT_TRUE(c2);
  EXPECT_EQ(c2->dtype(), ir::DType::kI32);
  EXPECT_EQ(c2->int_value(), 3);
  auto* c3 = ir::expr_as<ir::Constant>(arg(t->fields()[3], 1));
  ASSERT_TRUE(c3);
  EXPECT_EQ(c3->dtype(), ir::DType::kBool);
  auto* c4 = ir::expr_as<ir::Constant>(arg(t->fields()[4], 1));  // through a surface call
  ASSERT_TRUE(c4);
  EXPECT_EQ(c4->dtype(), ir::DType::kBF16);
  EXPECT_DOUBLE_EQ(c4->value(), -0.5);
}

TEST(Parser, SpansPointAtTheSource) {
  auto m = parse_module(std::string(kHeader) + kExamples, "ex.tf");
  auto body = m->lookup("swiglu")->body();
  ASSERT_TRUE(body->span().file);
  EXPECT_EQ(*body->span().file, "ex.tf");
  // `    return silu(a) * b` is line 13 of kHeader + kExamples; '*' is column 20.
  EXPECT_EQ(body->span().line, 13);
  EXPECT_EQ(body->span().col, 20);
  EXPECT_EQ(arg(body, 0)->span().col, 12);  // silu
}

}  // namespace
}  // namespace tf::frontend
