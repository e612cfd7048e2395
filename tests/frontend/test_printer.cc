// Printer and round trip: canonical text that reparses to a structurally
// equal module and prints byte-identically again.
#include <gtest/gtest.h>

#include <iostream>

#include "core/sema/typeinfer.h"
#include "core/sema/verify.h"
#include "core/ops/math/math.h"
#include "core/ops/surface.h"
#include "frontend/round_trip.h"

namespace tf::frontend {
namespace {

using testing::expect_round_trip;
using testing::kHeader;
using testing::parse_rt;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(Printer, SignatureSpelling) {
  auto m = parse_rt(std::string(kHeader) +
                    "@func\ndef rmsnorm(x: Tensor[(N, D), f32], w: Tensor[(D,), f32]) -> Tensor[(N, D), f32]:\n"
                    "    return rms_norm(x, w, eps=1e-6)\n");
  // The spelling documented in printer.h.
  EXPECT_EQ(print_signature(*m->functions()[0]),
            "def rmsnorm(x: Tensor[(N, 4096), f32], w: Tensor[(4096,), f32]) -> Tensor[(N, 4096), f32]");
}

TEST(Printer, ModuleHeaderTargetAndDimVars) {
  auto m = parse_rt(R"(
TARGET = Target("cpu", topology=(("device", 1), ("cta", 4)))
S = DimVar("S", 1, 4096)
N = DimVar("N", 1, 1 << 20)
Unused = DimVar("Unused", 1, 8)

@func
def f(x: Tensor[(S, N), f32]) -> Tensor[(S, N), f32]:
    return x
)");
  std::string text = print_module(*m);
  EXPECT_EQ(text.rfind("from tilefoundry.dsl import *\n", 0), 0u);
  EXPECT_TRUE(contains(text, "TARGET = Target(\"cpu\", topology=((\"device\", 1), (\"cta\", 4)))\n"));
  size_t n = text.find("N = DimVar(\"N\", 1, 1048576)\n");
  size_t s = text.find("S = DimVar(\"S\", 1, 4096)\n");
  ASSERT_NE(n, std::string::npos) << text;
  ASSERT_NE(s, std::string::npos) << text;
  EXPECT_LT(n, s) << "DimVars are sorted by name";
  EXPECT_FALSE(contains(text, "Unused")) << "only DimVars the module uses are printed";
}

TEST(Printer, SharedNodeGetsAName) {
  auto m = parse_rt(std::string(kHeader) + R"(
@func
def resnorm(x: Tensor[(N, D), f32], r: Tensor[(N, D), f32], w: Tensor[(D,), f32]
            ) -> tuple[Tensor[(N, D), f32], Tensor[(N, D), f32]]:
    h = x + r
    return h, rms_norm(h, w, eps=1e-6)
)");
  std::string text = print_module(*m);
  EXPECT_TRUE(contains(text, "    t0 = x + r\n")) << text;
  EXPECT_TRUE(contains(text, "rms_norm(t0, w, eps=")) << text;
}

TEST(Printer, SingleUseNodesNestInline) {
  auto m = parse_rt(std::string(kHeader) + R"(
@func
def f(a: Tensor[(N,), f32], b: Tensor[(N,), f32]) -> Tensor[(N,), f32]:
    s = a + b
    e = exp(s)
    return e * b
)");
  std::string text = print_module(*m);
  EXPECT_TRUE(contains(text, "    return exp(a + b) * b\n")) << text;
  std::string body = text.substr(text.find("@func"));
  EXPECT_FALSE(contains(body, " = ")) << "no temporaries when nothing is shared:\n" << text;
}

TEST(Printer, NestedOperatorsAreParenthesized) {
  auto m = parse_rt(std::string(kHeader) + R"(
@func
def f(a: Tensor[(N,), f32], b: Tensor[(N,), f32], c: Tensor[(N,), f32]) -> Tensor[(N,), bool]:
    return ((a + b) * c - a / (b - c) < a) | (b == c)
)");
  std::string text = print_module(*m);
  EXPECT_TRUE(contains(text, "(a + b) * c")) << text;
  EXPECT_TRUE(contains(text, "a / (b - c)")) << text;
}

TEST(Printer, SharingIsPreservedAndDistinguished) {
  std::string shared = std::string(kHeader) + R"(
@func
def f(x: Tensor[(N,), f32], r: Tensor[(N,), f32]) -> Tensor[(N,), f32]:
    h = x + r
    return h * h
)";
  std::string unshared = std::string(kHeader) + R"(
@func
def f(x: Tensor[(N,), f32], r: Tensor[(N,), f32]) -> Tensor[(N,), f32]:
    return (x + r) * (x + r)
)";
  auto a = parse_rt(shared);
  auto b = parse_rt(unshared);
  EXPECT_FALSE(ir::structural_equal(*a, *b)) << "sharing is part of structure";
  EXPECT_NE(print_module(*a), print_module(*b));
}

TEST(Printer, OpsWithAttributesPrintEveryKeyword) {
  auto m = parse_rt(std::string(kHeader) + R"(
@func
def f(x: Tensor[(N, 8), f32]) -> Tensor[(N, 1), f32]:
    return sum(softmax(x), 1)
)");
  std::string text = print_module(*m);
  EXPECT_TRUE(contains(text, "softmax(x, axis=-1)")) << text;
  EXPECT_TRUE(contains(text, "axes=(1,)")) << text;
  EXPECT_TRUE(contains(text, "keepdim=True")) << text;
}

TEST(RoundTrip, ConstantsKeepTheirDtype) {
  parse_rt(std::string(kHeader) + R"(
@func
def f(x: Tensor[(N,), bf16], i: Tensor[(N,), i64], b: Tensor[(N,), bool]) -> tuple[Tensor[(N,), bf16], Tensor[(N,), i64], Tensor[(N,), bool]]:
    return 0.1 * x - -2.5e-07, i * -3 + 7, b | False
)");
}

TEST(RoundTrip, ExtensionOpsAndTheirAttributes) {
  auto m = parse_rt(std::string(kHeader) + R"(
@func
def f(x: Tensor[(N, 8), f32], c: Tensor[(N, 8), bool]) -> tuple[Tensor[(N, 8), f32], Tensor[(N, 8), f32], Tensor[(N,), i32], Tensor[(N, 8), i32]]:
    y = where(c, x, -inf) + where(c, 0.5, x)
    z = clamp(pow(abs(x) + 1.0, x), max=6.0)
    return y, z, arange(N, start=-2, step=3, dtype=i32), bitcast(x, i32)
)");
  const std::string text = print_module(*m);
  EXPECT_TRUE(contains(text, "where(c, x, -inf)")) << text;    // the literal took x's dtype, not cond's
  EXPECT_TRUE(contains(text, "where(c, 0.5, x)")) << text;
  EXPECT_TRUE(contains(text, "clamp(pow(")) << text;
  EXPECT_TRUE(contains(text, "min=-inf, max=6.0)")) << text;  // the default prints as the open bound
  EXPECT_TRUE(contains(text, "arange(n=(N,), start=-2.0, step=3.0, dtype=i32)")) << text;
  EXPECT_TRUE(contains(text, "bitcast(x, dtype=i32)")) << text;
}

TEST(RoundTrip, InfinityAndNanAreLiterals) {
  auto m = parse_rt(std::string(kHeader) + R"(
@func
def f(x: Tensor[(N,), f32]) -> Tensor[(N,), f32]:
    return maximum(x, -inf) + minimum(x, inf) * nan
)");
  const std::string text = print_module(*m);
  EXPECT_TRUE(contains(text, "maximum(x, -inf)")) << text;
  EXPECT_TRUE(contains(text, "minimum(x, inf)")) << text;
  EXPECT_TRUE(contains(text, "* nan")) << text;
}

TEST(RoundTrip, EverythingInScope) {
  auto m = parse_rt(std::string(kHeader) + R"(
TARGET = Target("cpu", topology=(("device", 1),))
M = DimVar("M", 1, 64)

@func
def g(x: Tensor[(M, 16), f32]) -> tuple[Tensor[(M, 16), f32], Tensor[(M, 16), f32]]:
    return silu(x), gelu(x, approximate="none")

@func
def f(x: Tensor[(M, 16), f32], w: Tensor[(16, 8), f32]) -> tuple[Tensor[(M, 8), bf16], Tensor[(M,), f32], Tensor[(M, 16), f32]]:
    a, b = g(x)
    y = cast(a @ w, bf16)
    z = reshape(transpose(b, (1, 0)), (16, M))
    s = mean(x[:, 0:8:2], axes=(1,), keepdim=False)
    t = g(x)
    u = zeros((M, 16), f32, storage="rmem")
    return y, s + amax(z[0:2, :], axes=0, keepdim=False)[0:1] * 0.0 + abs_max(x, 1, False), t[1] + u + minimum(a, b)
)");
  if (::testing::Test::HasFailure()) std::cerr << print_module(*m);
}

// Every Binary and Unary surface name reads back through the printer,
// whether it prints as an operator or as a call.
TEST(RoundTrip, EveryElementwiseSurface) {
#define TF_X(e, name, sym, cls)                                                                  \
  {                                                                                            \
    std::string in = cls == 'l' ? "bool" : "f32", out = cls == 'a' || cls == 'f' ? "f32" : "bool";            \
    SCOPED_TRACE(name);                                                                        \
    parse_rt("@func\ndef f(a: Tensor[(4,), " + in + "], b: Tensor[(4,), " + in +                \
             "]) -> Tensor[(4,), " + out + "]:\n    return " + name + "(a, b)\n");             \
  }
  TF_BINARY_KIND_LIST(TF_X)
#undef TF_X
#define TF_X(e, name, cls)                                                                     \
  {                                                                                            \
    std::string t = cls == 'l' ? "bool" : "f32";                                               \
    SCOPED_TRACE(name);                                                                        \
    parse_rt("@func\ndef f(a: Tensor[(4,), " + t + "]) -> Tensor[(4,), " + t + "]:\n    return " + \
             name + "(a)\n");                                                                 \
  }
  TF_UNARY_KIND_LIST(TF_X)
#undef TF_X
}

TEST(Printer, UnprintableConstantIsInternalError) {
  // A function whose body is a bare Constant has no DSL spelling.
  ir::Function::Fields f;
  f.name = "c";
  f.body = ir::Constant::make_float(1.0, ir::DType::kF32);
  f.return_type = f.body->type();
  auto m = sema::seal(ir::Target::default_cpu(), {ir::Function::make(f)});
  try {
    print_module(*m);
    ADD_FAILURE() << "expected an error";
  } catch (const ir::Error& e) {
    EXPECT_EQ(e.kind(), ir::ErrorKind::kInternal);
    EXPECT_TRUE(contains(e.what(), "Constant")) << e.what();
  }
}

TEST(RoundTrip, HandBuiltModule) {
  // A module built through sema directly (not by the parser) round-trips too.
  auto n = ir::ShapeDim::var("N", 1, 100);
  auto t = ir::TensorType::make({n, 4}, ir::DType::kF32);
  auto x = ir::Var::make("x", t);
  auto add = ops::find_surface("add")->make({});
  auto mul = ops::find_surface("mul")->make({});
  auto s = sema::make_op_call(add, {x, x});
  auto body = sema::make_op_call(mul, {s, sema::make_op_call(add, {s, ir::Constant::make_float(0.5, ir::DType::kF32)})});
  ir::Function::Fields f;
  f.name = "h";
  f.params = {x};
  f.body = body;
  f.return_type = body->type();
  auto m = sema::seal(ir::Target::default_cpu(), {ir::Function::make(f)});
  expect_round_trip(*m);
  EXPECT_TRUE(contains(print_module(*m), "t0 = x + x")) << print_module(*m);
}

// @func(inplace=...) prints as written (a one-result function's name alone,
// a tuple with None for a fresh result), and reparses to the same pairing.
TEST(Printer, InPlaceResultsRoundTrip) {
  auto m = parse_rt(std::string(kHeader) +
                    "@func(inplace=\"c\")\n"
                    "def one(c: Tensor[(N, 8), f32], u: Tensor[(1, 8), f32], o: Tensor[(), i32]) -> Tensor[(N, 8), f32]:\n"
                    "    return insert_slice(c, u, (o, 0))\n\n"
                    "@func(inplace=(None, \"b\"))\n"
                    "def two(a: Tensor[(N, 8), f32], b: Tensor[(N, 8), f32]) -> tuple[Tensor[(N, 8), f32], Tensor[(N, 8), f32]]:\n"
                    "    return a + b, a * b\n");
  const std::string text = print_module(*m);
  EXPECT_TRUE(contains(text, "@func(inplace=\"c\")\ndef one(")) << text;
  EXPECT_TRUE(contains(text, "@func(inplace=(None, \"b\"))\ndef two(")) << text;
  EXPECT_EQ(m->lookup("one")->inplace(), (std::vector<int64_t>{0}));
  EXPECT_EQ(m->lookup("two")->inplace(), (std::vector<int64_t>{-1, 1}));
  // All None is no in-place result at all: plain @func.
  auto plain = parse_rt(std::string(kHeader) +
                        "@func(inplace=(None,))\ndef f(a: Tensor[(N, 8), f32]) -> tuple[Tensor[(N, 8), f32]]:\n"
                        "    return (a * 2.0,)\n");
  EXPECT_TRUE(plain->lookup("f")->inplace().empty());
}

// x ** y is pow(x, y) with Python's grouping: tighter than a unary minus on
// its left, right-associative, a signed exponent allowed.
TEST(Printer, PowerOperatorGroupsLikePython) {
  auto body = [](const std::string& e) {
    auto m = parse_rt(std::string(kHeader) + "@func\ndef f(x: Tensor[(N, 8), f32], y: Tensor[(N, 8), f32]) -> "
                                             "Tensor[(N, 8), f32]:\n    return " + e + "\n");
    const std::string text = print_module(*m);
    const size_t at = text.find("return ");
    return text.substr(at + 7, text.find('\n', at) - at - 7);
  };
  EXPECT_EQ(body("x ** 2"), "pow(x, 2.0)");
  EXPECT_EQ(body("-x ** 2"), "neg(pow(x, 2.0))");
  EXPECT_EQ(body("x ** -y"), "pow(x, neg(y))");
  EXPECT_EQ(body("x ** y ** 2.0"), "pow(x, pow(y, 2.0))");
  EXPECT_EQ(body("2.0 * x ** 3 + y"), "(2.0 * pow(x, 3.0)) + y");
}

}  // namespace
}  // namespace tf::frontend
