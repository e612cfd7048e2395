// The catalog ops from DSL text: each of Gather, InsertSlice, CacheUpdate,
// TopK, Concat, Stack, ShapeOf, Rank, Conv2D, ReLU, Sigmoid, Tanh, LayerNorm,
// RoPE, ShapeExtract, ShapeCompose parses (tuple operands, bare / literal
// offsets, omitted or None bias, DimVar-expression k), round-trips through
// the printer, and a few evaluate to hand-computed values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/eval/evaluator.h"
#include "core/ops/tensor/tensor.h"
#include "eval/eval_helpers.h"
#include "frontend/round_trip.h"

namespace tf::frontend {
namespace {

using evaltest::f32;
using evaltest::i32;
using evaltest::values;
using testing::parse_rt;

const char* kCatalog = R"(from tilefoundry.dsl import *

N = DimVar("N", 1, 1024)
CTX = DimVar("CTX", 1, 4097)

@func
def gat(x: Tensor[(4, 5), f32], i: Tensor[(4, 2), i64]) -> Tensor[(4, 2), f32]:
    return gather(x, i, axis=1, batch_dims=1)

@func
def gat0(x: Tensor[(4, 5), f32], i: Tensor[(4, 2), i64]) -> Tensor[(4, 4, 2), f32]:
    return gather(x, i, 1)

@func
def ins1(d: Tensor[(8,), f32], u: Tensor[(3,), f32]) -> Tensor[(8,), f32]:
    return insert_slice(d, u, 5)

@func
def ins2(d: Tensor[(3, 4), f32], u: Tensor[(2, 2), f32], o: Tensor[(), i32]) -> Tensor[(3, 4), f32]:
    return insert_slice(d, u, (o, 2))

@func
def ins3(d: Tensor[(3, 4), f32], u: Tensor[(2, 2), f32]) -> Tensor[(3, 4), f32]:
    return insert_slice(d, u, offsets=(1, 0))

@func
def cu(c: Tensor[(1, 4, 1, 2), f32], p: Tensor[(), i32], s: Tensor[(), i32], n: Tensor[(1, 2, 1, 2), f32]) -> Tensor[(1, 4, 1, 2), f32]:
    return cache_update(c, p, s, n)

@func
def tk(x: Tensor[(1, 5), f32]) -> tuple[Tensor[(1, 2), f32], Tensor[(1, 2), i64]]:
    return topk(x, 2)

@func
def tkd(x: Tensor[(CTX, 8), f32]) -> tuple[Tensor[(dim_min(512, CTX // 4), 8), f32], Tensor[(dim_min(512, CTX // 4), 8), i64]]:
    return topk(x, k=dim_min(512, CTX // 4), axis=0, largest=False)

@func
def cat(a: Tensor[(2, 2), f32], b: Tensor[(1, 2), f32]) -> Tensor[(3, 2), f32]:
    return concat((a, b), axis=0)

@func
def stk(a: Tensor[(2,), f32], b: Tensor[(2,), f32]) -> Tensor[(2, 2), f32]:
    return stack((a, b), 1)

@func
def shp(x: Tensor[(N, 3), f32]) -> Tensor[(3,), i64]:
    s = shape_of(x)
    return shape_compose((shape_extract(s, index=1), shape_extract(s, 0), 7))

@func
def rk(x: Tensor[(N, 3), f32]) -> Tensor[(), i64]:
    return rank(x)

@func
def cv(x: Tensor[(1, 1, 3, 3), f32], w: Tensor[(1, 1, 2, 2), f32]) -> Tensor[(1, 1, 2, 2), f32]:
    return conv2d(x, w)

@func
def cvb(x: Tensor[(1, 1, 3, 3), f32], w: Tensor[(1, 1, 2, 2), f32], b: Tensor[(1,), f32]) -> Tensor[(1, 1, 2, 2), f32]:
    return conv2d(x, w, b, stride=1)

@func
def cvn(x: Tensor[(1, 1, 3, 3), f32], w: Tensor[(1, 1, 2, 2), f32]) -> Tensor[(1, 1, 2, 2), f32]:
    return conv2d(x, w, bias=None, stride=(2, 2), padding=1)

@func
def act(x: Tensor[(3,), f32]) -> tuple[Tensor[(3,), f32], Tensor[(3,), f32], Tensor[(3,), f32]]:
    return relu(x), sigmoid(x), tanh(x)

@func
def ln(x: Tensor[(1, 2), f32], w: Tensor[(2,), f32], b: Tensor[(2,), f32]) -> Tensor[(1, 2), f32]:
    return layer_norm(x, w, b, eps=0.0)

@func
def rot(q: Tensor[(1, 2, 1, 4), f32], k: Tensor[(1, 2, 1, 4), f32], c: Tensor[(8, 4), f32], s: Tensor[(8, 4), f32], p: Tensor[(1, 2), i64]) -> tuple[Tensor[(1, 2, 1, 4), f32], Tensor[(1, 2, 1, 4), f32]]:
    return rope(q, k, c, s, p)
)";

const ir::Call& body_call(const ir::Module& m, const std::string& fn) {
  auto* c = ir::expr_as<ir::Call>(m.lookup(fn)->body());
  if (!c) throw std::runtime_error(fn + ": body is not a Call");
  return *c;
}

std::vector<runtime::NDArray> run(const ir::Module& m, const std::string& fn, const std::vector<runtime::NDArray>& in) {
  return eval::evaluate(m, *m.lookup(fn), in);
}

// Parse text with one @func body; expects a type error with every word.
// `prelude` holds module-level lines (one each, newline-terminated).
void expect_type_error(const std::string& params, const std::string& ret, const std::string& body,
                       const std::vector<std::string>& words, const std::string& prelude = "") {
  std::string src = "from tilefoundry.dsl import *\n\n" + prelude + "@func\ndef f(" + params + ") -> " + ret +
                    ":\n    return " + body + "\n";
  const int line = 5 + static_cast<int>(std::count(prelude.begin(), prelude.end(), '\n'));
  try {
    parse_module(src, "t.tf");
    ADD_FAILURE() << "expected a type error for:\n" << src;
  } catch (const ir::Error& e) {
    EXPECT_EQ(e.kind(), ir::ErrorKind::kType) << e.what();
    const std::string at = "t.tf:" + std::to_string(line) + ":12: error:";
    EXPECT_NE(std::string(e.what()).find(at), std::string::npos) << at << " in " << e.what();
    for (const auto& w : words) EXPECT_NE(std::string(e.what()).find(w), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(CatalogParse, EveryCatalogOpParsesAndRoundTrips) {
  ir::ModulePtr m = parse_rt(kCatalog);
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"gat", "Gather"},     {"ins1", "InsertSlice"}, {"cu", "CacheUpdate"}, {"tk", "TopK"},
      {"cat", "Concat"},     {"stk", "Stack"},        {"shp", "ShapeCompose"}, {"rk", "Rank"},
      {"cv", "Conv2D"},      {"ln", "LayerNorm"},     {"rot", "RoPE"}};
  for (const auto& [fn, op] : expected) EXPECT_EQ(body_call(*m, fn).op()->name(), op) << fn;
  // The activations: relu is the Unary kind; sigmoid and tanh the nn ops.
  auto* t = ir::expr_as<ir::Tuple>(m->lookup("act")->body());
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(ir::expr_as<ir::Call>(t->fields()[0])->op()->surface_name(), "relu");
  EXPECT_EQ(ir::expr_as<ir::Call>(t->fields()[1])->op()->name(), "Sigmoid");
  EXPECT_EQ(ir::expr_as<ir::Call>(t->fields()[2])->op()->name(), "Tanh");
  // ShapeOf / ShapeExtract under ShapeCompose's tuple.
  auto& dims = *ir::expr_as<ir::Tuple>(body_call(*m, "shp").args()[0]);
  EXPECT_EQ(ir::expr_as<ir::Call>(dims.fields()[0])->op()->name(), "ShapeExtract");
  auto& so = *ir::expr_as<ir::Call>(ir::expr_as<ir::Call>(dims.fields()[0])->args()[0]);
  EXPECT_EQ(so.op()->name(), "ShapeOf");
}

TEST(CatalogParse, TupleOperandsAreOneTupleNode) {
  ir::ModulePtr m = parse_rt(kCatalog);
  for (const char* fn : {"cat", "stk"}) {
    auto& c = body_call(*m, fn);
    ASSERT_EQ(c.args().size(), 1u) << fn;
    auto* t = ir::expr_as<ir::Tuple>(c.args()[0]);
    ASSERT_NE(t, nullptr) << fn;
    EXPECT_EQ(t->fields().size(), 2u);
  }
  EXPECT_EQ(m->lookup("stk")->body()->type()->to_string(), "Tensor[(2, 2), f32]");
  // A literal dim inside shape_compose's tuple is an i64 Constant.
  auto& dims = *ir::expr_as<ir::Tuple>(body_call(*m, "shp").args()[0]);
  auto* seven = ir::expr_as<ir::Constant>(dims.fields()[2]);
  ASSERT_NE(seven, nullptr);
  EXPECT_EQ(seven->dtype(), ir::DType::kI64);
  EXPECT_EQ(seven->int_value(), 7);
}

TEST(CatalogParse, InsertSliceOffsetsBareScalarMixedTupleAndLiterals) {
  ir::ModulePtr m = parse_rt(kCatalog);
  // Bare literal offset: one i64 Constant, recorded as a literal on the op.
  auto& c1 = body_call(*m, "ins1");
  auto* off = ir::expr_as<ir::Constant>(c1.args()[2]);
  ASSERT_NE(off, nullptr);
  EXPECT_EQ(off->dtype(), ir::DType::kI64);
  auto& op1 = static_cast<const ops::InsertSlice&>(*c1.op());
  ASSERT_EQ(op1.literal.size(), 1u);
  EXPECT_EQ(op1.literal[0], std::optional<int64_t>(5));
  // Mixed tuple: the runtime offset stays a Var, the literal is known.
  auto& op2 = static_cast<const ops::InsertSlice&>(*body_call(*m, "ins2").op());
  ASSERT_EQ(op2.literal.size(), 2u);
  EXPECT_FALSE(op2.literal[0].has_value());
  EXPECT_EQ(op2.literal[1], std::optional<int64_t>(2));
}

TEST(CatalogParse, InsertSliceLiteralOutOfBoundsWindowFailsAtParseNamingTheAxis) {
  expect_type_error("d: Tensor[(8,), f32], u: Tensor[(3,), f32]", "Tensor[(8,), f32]", "insert_slice(d, u, 6)",
                    {"'insert_slice'", "window [6, 6 + 3)", "on axis 0", "out of bounds for dst extent 8"});
  expect_type_error("d: Tensor[(3, 4), f32], u: Tensor[(2, 2), f32]", "Tensor[(3, 4), f32]",
                    "insert_slice(d, u, (0, 3))", {"'insert_slice'", "on axis 1", "out of bounds"});
  expect_type_error("d: Tensor[(3, 4), f32], u: Tensor[(2, 2), f32]", "Tensor[(3, 4), f32]", "insert_slice(d, u, 1)",
                    {"'insert_slice' operand #2 (offsets)", "bare scalar offset is for a rank-1 dst only"});
}

TEST(CatalogParse, Conv2DBiasOmittedOrNoneIsTheEmptyTuple) {
  ir::ModulePtr m = parse_rt(kCatalog);
  for (const char* fn : {"cv", "cvn"}) {
    auto* t = ir::expr_as<ir::Tuple>(body_call(*m, fn).args()[2]);
    ASSERT_NE(t, nullptr) << fn;
    EXPECT_TRUE(t->fields().empty()) << fn;
  }
  EXPECT_EQ(body_call(*m, "cvb").args()[2]->kind(), ir::ExprKind::kVar);
  EXPECT_NE(print_module(*m).find("conv2d(x, w, None, stride=(2, 2), padding=(1, 1)"), std::string::npos)
      << print_module(*m);
}

TEST(CatalogParse, TopKTakesADimVarExpressionK) {
  ir::ModulePtr m = parse_rt(kCatalog);
  auto& op = static_cast<const ops::TopK&>(*body_call(*m, "tkd").op());
  EXPECT_EQ(op.k.to_string(), "dim_min(512, CTX // 4)");
  EXPECT_FALSE(op.largest);
  EXPECT_EQ(op.axis, 0);
  // A k whose DimVar is not in x's shape is rejected at the call.
  expect_type_error("x: Tensor[(4, 8), f32], y: Tensor[(M,), f32]", "tuple[Tensor[(4, 2), f32], Tensor[(4, 2), i64]]",
                    "topk(x, k=dim_min(2, M), axis=1)", {"'topk'", "uses DimVar M", "resolvable from x"},
                    "M = DimVar(\"M\", 1, 64)\n\n");
  // A k above a static axis length, through DimVar arithmetic.
  expect_type_error("x: Tensor[(CTX, 8), f32]", "tuple[Tensor[(CTX, 8), f32], Tensor[(CTX, 8), i64]]",
                    "topk(x, k=CTX // 4, axis=1)", {"'topk'", "at most 1024", "must not exceed the length 8 of axis 1"},
                    "CTX = DimVar(\"CTX\", 1, 4097)\n\n");
  // A float k is named as what it is, not as a bad shape tuple, at the k.
  try {
    parse_module("from tilefoundry.dsl import *\n\n@func\ndef f(x: Tensor[(4, 8), f32]) -> "
                 "tuple[Tensor[(4, 2), f32], Tensor[(4, 2), i64]]:\n    return topk(x, k=2.5, axis=1)\n",
                 "t.tf");
    ADD_FAILURE() << "a float k was accepted";
  } catch (const ir::Error& e) {
    EXPECT_EQ(e.kind(), ir::ErrorKind::kType) << e.what();
    EXPECT_NE(std::string(e.what()).find("t.tf:5:22: error: 'topk' argument 'k' must be an int or a dim expression"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("but got the float 2.5"), std::string::npos) << e.what();
  }
}

TEST(CatalogParse, MixedTupleOutsideATupleOperandIsStillRejected) {
  try {
    parse_module("from tilefoundry.dsl import *\n\n@func\ndef f(x: Tensor[(2,), f32]) -> Tensor[(2,), f32]:\n"
                 "    return x + (x, 1)\n",
                 "t.tf");
    ADD_FAILURE() << "expected an error";
  } catch (const ir::Error& e) {
    EXPECT_NE(std::string(e.what()).find("a tuple cannot mix tensor values and literals"), std::string::npos)
        << e.what();
  }
}

// ---- evaluation against hand-computed values ----------------------------------

TEST(CatalogParse, EvaluatesGatherConcatStackAndShapeOps) {
  ir::ModulePtr m = parse_module(kCatalog, "t.tf");
  std::vector<double> x(20);
  for (int i = 0; i < 20; ++i) x[i] = i;
  auto idx = evaltest::array<int64_t>(ir::DType::kI64, {4, 2}, {4, 0, 1, 1, 2, 3, 0, 4});
  // Batched: out[b, j] = x[b, idx[b, j]].
  EXPECT_EQ(values<float>(run(*m, "gat", {f32({4, 5}, x), idx})[0]), (std::vector<double>{4, 0, 6, 6, 12, 13, 15, 19}));
  // Unbatched: out[a, b, j] = x[a, idx[b, j]]; row a = 1 starts at 5.
  auto g0 = values<float>(run(*m, "gat0", {f32({4, 5}, x), idx})[0]);
  ASSERT_EQ(g0.size(), 32u);
  EXPECT_EQ(std::vector<double>(g0.begin() + 8, g0.begin() + 16), (std::vector<double>{9, 5, 6, 6, 7, 8, 5, 9}));

  EXPECT_EQ(values<float>(run(*m, "cat", {f32({2, 2}, {1, 2, 3, 4}), f32({1, 2}, {5, 6})})[0]),
            (std::vector<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(values<float>(run(*m, "stk", {f32({2}, {1, 2}), f32({2}, {3, 4})})[0]), (std::vector<double>{1, 3, 2, 4}));
  EXPECT_EQ(values<int64_t>(run(*m, "shp", {f32({2, 3}, std::vector<double>(6, 0))})[0]), (std::vector<double>{3, 2, 7}));
  EXPECT_EQ(values<int64_t>(run(*m, "rk", {f32({2, 3}, std::vector<double>(6, 0))})[0]), (std::vector<double>{2}));
}

TEST(CatalogParse, EvaluatesInsertSliceAndCacheUpdate) {
  ir::ModulePtr m = parse_module(kCatalog, "t.tf");
  EXPECT_EQ(values<float>(run(*m, "ins1", {f32({8}, std::vector<double>(8, 0)), f32({3}, {1, 2, 3})})[0]),
            (std::vector<double>{0, 0, 0, 0, 0, 1, 2, 3}));
  // offsets (o, 2) with o = 1: rows 1..2, columns 2..3.
  EXPECT_EQ(values<float>(run(*m, "ins2", {f32({3, 4}, std::vector<double>(12, 0)), f32({2, 2}, {1, 2, 3, 4}),
                                           i32({}, {1})})[0]),
            (std::vector<double>{0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 3, 4}));
  EXPECT_EQ(values<float>(run(*m, "ins3", {f32({3, 4}, std::vector<double>(12, 0)), f32({2, 2}, {1, 2, 3, 4})})[0]),
            (std::vector<double>{0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0, 0}));
  // cache_update(c, cur_pos=1, s=1, new): only new[:, :1] lands at position 1.
  auto out = run(*m, "cu", {f32({1, 4, 1, 2}, std::vector<double>(8, 0)), i32({}, {1}), i32({}, {1}),
                            f32({1, 2, 1, 2}, {1, 2, 3, 4})});
  EXPECT_EQ(values<float>(out[0]), (std::vector<double>{0, 0, 1, 2, 0, 0, 0, 0}));
}

TEST(CatalogParse, EvaluatesTopKConvActivationsAndLayerNorm) {
  ir::ModulePtr m = parse_module(kCatalog, "t.tf");
  auto tk = run(*m, "tk", {f32({1, 5}, {3, 1, 4, 1, 5})});
  ASSERT_EQ(tk.size(), 2u);
  EXPECT_EQ(values<float>(tk[0]), (std::vector<double>{5, 4}));
  EXPECT_EQ(values<int64_t>(tk[1]), (std::vector<double>{4, 2}));
  // k = dim_min(512, CTX // 4) = 2 for CTX = 8; the two smallest of column 0.
  std::vector<double> xs(64);
  for (int i = 0; i < 64; ++i) xs[i] = 63 - i;
  auto tkd = run(*m, "tkd", {f32({8, 8}, xs)});
  EXPECT_EQ(tkd[0].shape(), (std::vector<int64_t>{2, 8}));
  EXPECT_EQ(values<int64_t>(tkd[1])[0], 7);
  EXPECT_EQ(values<int64_t>(tkd[1])[8], 6);

  std::vector<double> x{1, 2, 3, 4, 5, 6, 7, 8, 9};
  std::vector<double> ones(4, 1.0);
  // 2x2 all-ones windows of 1..9.
  EXPECT_EQ(values<float>(run(*m, "cv", {f32({1, 1, 3, 3}, x), f32({1, 1, 2, 2}, ones)})[0]),
            (std::vector<double>{12, 16, 24, 28}));
  EXPECT_EQ(values<float>(run(*m, "cvb", {f32({1, 1, 3, 3}, x), f32({1, 1, 2, 2}, ones), f32({1}, {10})})[0]),
            (std::vector<double>{22, 26, 34, 38}));
  // padding 1, stride 2: windows at (-1,-1), (-1,1), (1,-1), (1,1).
  EXPECT_EQ(values<float>(run(*m, "cvn", {f32({1, 1, 3, 3}, x), f32({1, 1, 2, 2}, ones)})[0]),
            (std::vector<double>{1, 5, 11, 28}));

  auto act = run(*m, "act", {f32({3}, {-1, 0, 2})});
  EXPECT_EQ(values<float>(act[0]), (std::vector<double>{0, 0, 2}));
  EXPECT_NEAR(values<float>(act[1])[0], 1 / (1 + std::exp(1.0)), 1e-6);
  EXPECT_EQ(values<float>(act[1])[1], 0.5);
  EXPECT_NEAR(values<float>(act[2])[2], std::tanh(2.0), 1e-6);
  // mean 2, variance 1: (x - 2) / 1 * w + b.
  EXPECT_EQ(values<float>(run(*m, "ln", {f32({1, 2}, {1, 3}), f32({2}, {1, 2}), f32({2}, {0, 10})})[0]),
            (std::vector<double>{-1, 12}));
}

}  // namespace tf::frontend
