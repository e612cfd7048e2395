// The sharding surface of the DSL (docs/sharding.md, "The DSL surface") and
// the Function rules the parser owns (docs/ir.md: Mesh scope, signature
// strides materialization, Partial at the function boundary). Every module a
// test builds goes through the print -> parse -> print round trip.
#include <gtest/gtest.h>

#include <functional>
#include <unordered_set>

#include "core/ir/shard.h"
#include "core/ops/sharding/sharding.h"
#include "frontend/round_trip.h"

namespace tf::frontend {
namespace {

using testing::expect_error;
using testing::parse_rt;

const char* kTarget =
    "from tilefoundry.dsl import *\n"
    "\n"
    "TARGET = Target(\"cpu\", topology=((\"device\", 1), (\"cta\", 4)))\n";

std::string with_target(const std::string& rest) { return std::string(kTarget) + rest; }

const ir::TensorType& param_type(const ir::Module& m, const std::string& fn, size_t i) {
  return *ir::as_tensor(m.lookup(fn)->params().at(i)->type());
}

// Every TensorType reachable from a function: signature and every node.
void for_each_tensor_type(const ir::Function& fn, const std::function<void(const ir::TensorType&)>& f) {
  auto visit_type = [&](const ir::TypePtr& t) {
    for (const auto& leaf : ir::flatten_tensor_types(t)) f(*leaf);
  };
  for (const auto& p : fn.params()) visit_type(p->type());
  visit_type(fn.return_type());
  std::vector<ir::ExprPtr> stack{fn.body()};
  std::unordered_set<const ir::Expr*> seen;
  while (!stack.empty()) {
    ir::ExprPtr e = stack.back();
    stack.pop_back();
    if (!e || !seen.insert(e.get()).second) continue;
    visit_type(e->type());
    if (auto* c = ir::expr_as<ir::Call>(e))
      for (const auto& a : c->args()) stack.push_back(a);
    if (auto* t = ir::expr_as<ir::Tuple>(e))
      for (const auto& a : t->fields()) stack.push_back(a);
    if (auto* g = ir::expr_as<ir::TupleGetItem>(e)) stack.push_back(g->tuple());
  }
}

// ---- surface --------------------------------------------------------------

TEST(ShardParse, SplitAxisSugarBuildsTheCanonicalPositions) {
  auto m = parse_rt(with_target(
      "cta = Mesh(topology=\"cta\", shape=(4,), axes=(\"x\",))\n"
      "\n"
      "@func\n"
      "def f(a: Tensor[(8, 16), f32, ShardLayout(cta, (Split(axis=0),))]) -> "
      "Tensor[(8, 16), f32, ShardLayout(cta, (Split(axis=0),))]:\n"
      "    return a + a\n"));
  const ir::ShardLayout* l = ir::as_shard_layout(param_type(*m, "f", 0).layout());
  ASSERT_NE(l, nullptr);
  // [8, 16] split on a 4-wide axis is positions (4, 2, 16) with Split(0).
  EXPECT_EQ(ir::shape_to_string(l->shape()), "(4, 2, 16)");
  ASSERT_EQ(l->attrs().size(), 1u);
  EXPECT_TRUE(l->attrs()[0] == ir::ShardAttr::split(0));
  EXPECT_EQ(l->mesh()->name, "cta");
  EXPECT_EQ(l->mesh()->level, "cta");
}

TEST(ShardParse, PartialAndBroadcastAnnotationsParse) {
  auto m = parse_rt(with_target(
      "m = Mesh(topology=\"cta\", shape=(2, 2), axes=(\"x\", \"y\"))\n"
      "\n"
      "@func\n"
      "def f(a: Tensor[(8, 16), f32, ShardLayout(m, (Partial(\"sum\"), Broadcast()))],\n"
      "      b: Tensor[(8, 16), f32, ShardLayout(m, (Partial(\"sum\"), Broadcast()))]\n"
      "      ) -> Tensor[(8, 16), f32, ShardLayout(m, (Partial(\"sum\"), Broadcast()))]:\n"
      "    return a + b\n"));
  const ir::ShardLayout* l = ir::as_shard_layout(param_type(*m, "f", 0).layout());
  ASSERT_NE(l, nullptr);
  EXPECT_TRUE(l->attrs()[0] == ir::ShardAttr::partial(ir::Reduction::kSum));
  EXPECT_TRUE(l->attrs()[1] == ir::ShardAttr::broadcast());
}

TEST(ShardParse, ReshardAndLocalParseAndPrintBack) {
  auto m = parse_rt(with_target(
      "@func\n"
      "def f(a: Tensor[(8, 16), f32]) -> Tensor[(2, 16), f32, Layout((1, 2, 16), strides=(0, 16, 1)), \"smem\"]:\n"
      "    with Mesh(topology=\"cta\", shape=(4,), axes=(\"x\",)) as m:\n"
      "        s = reshard(a, layout=ShardLayout(m, (Split(axis=0),)), storage=\"smem\")\n"
      "        y = local(s)\n"
      "    return y\n"));
  std::string printed = print_module(*m);
  EXPECT_NE(printed.find("m = Mesh(topology=\"cta\", shape=(4,), axes=(\"x\",))"), std::string::npos) << printed;
  EXPECT_NE(printed.find("reshard(a, layout=ShardLayout(m, (Split(pos=0),), layout=Layout((4, 2, 16))), "
                         "storage=\"smem\")"),
            std::string::npos)
      << printed;
  EXPECT_NE(printed.find("local("), std::string::npos) << printed;
}

TEST(ShardParse, ReshardLayoutIsAStructuralAttribute) {
  const std::string src = with_target(
      "@func\n"
      "def f(a: Tensor[(8, 16), f32]) -> Tensor[(8, 16), f32, ShardLayout(m, (Broadcast(),))]:\n"
      "    with Mesh(topology=\"cta\", shape=(4,), axes=(\"x\",)) as m:\n"
      "        y = reshard(a, layout=ShardLayout(m, (Broadcast(),)))\n"
      "    return y\n");
  // The signature names m, which is only bound inside the body: rejected.
  expect_error(src, ir::ErrorKind::kParse, 5, 68, {"undefined name 'm'"});
  auto a = parse_rt(with_target(
      "m = Mesh(topology=\"cta\", shape=(4,), axes=(\"x\",))\n"
      "@func\n"
      "def f(a: Tensor[(8, 16), f32]) -> Tensor[(8, 16), f32, ShardLayout(m, (Split(axis=1),))]:\n"
      "    return reshard(a, layout=ShardLayout(m, (Split(axis=1),)))\n"));
  auto b = parse_rt(with_target(
      "m = Mesh(topology=\"cta\", shape=(4,), axes=(\"x\",))\n"
      "@func\n"
      "def f(a: Tensor[(8, 16), f32]) -> Tensor[(8, 16), f32, ShardLayout(m, (Split(axis=0),))]:\n"
      "    return reshard(a, layout=ShardLayout(m, (Split(axis=0),)))\n"));
  auto* ca = ir::expr_as<ir::Call>(a->lookup("f")->body());
  auto* cb = ir::expr_as<ir::Call>(b->lookup("f")->body());
  ASSERT_TRUE(ca && cb);
  EXPECT_FALSE(ca->op()->structural_equal(*cb->op()));
  EXPECT_TRUE(ca->op()->structural_equal(*ca->op()));
}

TEST(ShardParse, SplitPosWithoutLayoutIsRejected) {
  expect_error(with_target("m = Mesh(topology=\"cta\", shape=(4,), axes=(\"x\",))\n"
                           "@func\n"
                           "def f(a: Tensor[(8, 16), f32, ShardLayout(m, (Split(pos=0),))]) -> Tensor[(8, 16), f32]:\n"
                           "    return a\n"),
               ir::ErrorKind::kParse, 6, 46, {"Split(pos=p) names a layout position", "Split(axis=k)"});
}

TEST(ShardParse, MeshInsideABodyNeedsAWithBlock) {
  expect_error(with_target("@func\n"
                           "def f(a: Tensor[(8,), f32]) -> Tensor[(8,), f32]:\n"
                           "    m = Mesh(topology=\"cta\", shape=(4,), axes=(\"x\",))\n"
                           "    return a\n"),
               ir::ErrorKind::kParse, 6, 9, {"with Mesh(...) as name:"});
}

TEST(ShardParse, TargetMustPrecedeMeshes) {
  expect_error("m = Mesh(topology=\"device\", shape=(1,), axes=(\"d\",))\n"
               "TARGET = Target(\"cpu\", topology=((\"device\", 1), (\"cta\", 4)))\n",
               ir::ErrorKind::kParse, 2, 1, {"TARGET must be declared before any Mesh"});
}

TEST(ShardParse, AttrCountMustMatchMeshAxes) {
  expect_error(with_target("m = Mesh(topology=\"cta\", shape=(2, 2), axes=(\"x\", \"y\"))\n"
                           "@func\n"
                           "def f(a: Tensor[(8,), f32, ShardLayout(m, (Broadcast(),))]) -> Tensor[(8,), f32]:\n"
                           "    return a\n"),
               ir::ErrorKind::kType, 6, 43, {"one ShardAttr per axis", "(2)"});
}

// ---- Function: Mesh scope -------------------------------------------------

TEST(HirConformance, Function_MeshMustNameADeclaredLevel) {
  expect_error(with_target("w = Mesh(topology=\"warp\", shape=(4,), axes=(\"x\",))\n"),
               ir::ErrorKind::kType, 4, 19,
               {"\"warp\" is not a level", "\"device\" (1), \"cta\" (4)", "MUST name one of the Module's Topology levels"});
  expect_error(with_target("@func\n"
                           "def f(a: Tensor[(8,), f32]) -> Tensor[(8,), f32]:\n"
                           "    with Mesh(topology=\"grid\", shape=(4,), axes=(\"x\",)) as m:\n"
                           "        y = a\n"
                           "    return y\n"),
               ir::ErrorKind::kType, 6, 24, {"\"grid\" is not a level", "MUST NOT create one"});
}

TEST(HirConformance, Function_MeshMustNotChangeAnExtent) {
  expect_error(with_target("c = Mesh(topology=\"cta\", shape=(8,), axes=(\"x\",))\n"),
               ir::ErrorKind::kType, 4, 32, {"has 8 instances", "extent 4", "MUST NOT change its extent"});
  expect_error(with_target("@func\n"
                           "def f(a: Tensor[(8,), f32]) -> Tensor[(8,), f32]:\n"
                           "    with Mesh(topology=\"cta\", shape=(2, 3), axes=(\"x\", \"y\")) as m:\n"
                           "        y = a\n"
                           "    return y\n"),
               ir::ErrorKind::kType, 6, 37, {"has 6 instances", "extent 4"});
}

TEST(HirConformance, Function_MeshMayReshapeALevelAndMapFewerLevels) {
  // (2, 2) reshapes the 4-wide cta level; a Mesh over "device" alone maps
  // fewer levels than the domain declares.
  auto m = parse_rt(with_target(
      "d = Mesh(topology=\"device\", shape=(1,), axes=(\"dev\",))\n"
      "@func\n"
      "def f(a: Tensor[(8, 16), f32, ShardLayout(d, (Broadcast(),))], b: Tensor[(8, 16), f32]\n"
      "      ) -> Tensor[(4, 8), f32, Layout((1, 4, 1, 8), strides=(0, 8, 0, 1))]:\n"
      "    with Mesh(topology=\"cta\", shape=(2, 2), axes=(\"x\", \"y\")) as m:\n"
      "        s = reshard(b, layout=ShardLayout(m, (Split(axis=0), Split(axis=1))))\n"
      "    return local(s)\n"));
  auto* s = ir::as_shard_layout(ir::as_tensor(ir::expr_as<ir::Call>(m->lookup("f")->body())->args()[0]->type())->layout());
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->mesh()->shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(ir::shape_to_string(s->shape()), "(2, 4, 2, 8)");
}

TEST(HirConformance, Function_ShardLayoutMeshMustBeActiveOnTheLexicalPath) {
  // After its with-block, the binding is no longer on the lexical path.
  expect_error(with_target("@func\n"
                           "def f(a: Tensor[(8, 16), f32]) -> Tensor[(8, 16), f32]:\n"
                           "    with Mesh(topology=\"cta\", shape=(4,), axes=(\"x\",)) as m:\n"
                           "        y = a + a\n"
                           "    return reshard(y, layout=ShardLayout(m, (Broadcast(),)))\n"),
               ir::ErrorKind::kParse, 8, 42,
               {"mesh 'm' is not active here", "MUST point at an active binding on the lexical path"});
  // A with-block of one function is not on another function's path.
  expect_error(with_target("@func\n"
                           "def f(a: Tensor[(8, 16), f32]) -> Tensor[(8, 16), f32]:\n"
                           "    with Mesh(topology=\"cta\", shape=(4,), axes=(\"x\",)) as m:\n"
                           "        y = a + a\n"
                           "    return y\n"
                           "@func\n"
                           "def g(a: Tensor[(8, 16), f32]) -> Tensor[(8, 16), f32]:\n"
                           "    return reshard(a, layout=ShardLayout(m, (Broadcast(),)))\n"),
               ir::ErrorKind::kParse, 11, 42, {"'m'"});
  // Something other than a mesh binding.
  expect_error(with_target("@func\n"
                           "def f(a: Tensor[(8, 16), f32]) -> Tensor[(8, 16), f32]:\n"
                           "    return reshard(a, layout=ShardLayout(a, (Broadcast(),)))\n"),
               ir::ErrorKind::kParse, 6, 42, {"must be an active Mesh binding"});
  // Inside the block it is active, and a nested block may shadow it.
  parse_rt(with_target("@func\n"
                       "def f(a: Tensor[(8, 16), f32]) -> Tensor[(8, 16), f32, Layout((8, 16))]:\n"
                       "    with Mesh(topology=\"cta\", shape=(4,), axes=(\"x\",)) as m:\n"
                       "        y = reshard(a, layout=ShardLayout(m, (Split(axis=0),)))\n"
                       "        z = reshard(y, layout=ShardLayout(m, (Broadcast(),)))\n"
                       "    return local(z)\n"));
}

// ---- Function: signature annotation Layout.strides materialization --------

TEST(HirConformance, Function_SignatureStridesMaterializedToCOrder) {
  auto m = parse_rt(with_target(
      "cta = Mesh(topology=\"cta\", shape=(4,), axes=(\"x\",))\n"
      "@func\n"
      "def f(a: Tensor[(8, 16), f32, ShardLayout(cta, (Split(pos=0),), layout=Layout((4, 2, 16)))],\n"
      "      b: Tensor[(8, 16), f32, ShardLayout(cta, (Split(axis=1),))],\n"
      "      c: Tensor[(4, 6), f32, Layout((4, 6), strides=None)]\n"
      "      ) -> Tensor[(8, 16), f32, ShardLayout(cta, (Split(axis=0),))]:\n"
      "    return a\n"));
  // Shared-engine C-order over the canonical global positions.
  const auto& a = *param_type(*m, "f", 0).layout();
  ASSERT_TRUE(a.strides().has_value());
  EXPECT_EQ(*a.strides(), (ir::Shape{32, 16, 1}));
  const auto& b = *param_type(*m, "f", 1).layout();
  EXPECT_EQ(ir::shape_to_string(b.shape()), "(8, 4, 4)");
  ASSERT_TRUE(b.strides().has_value());
  EXPECT_EQ(*b.strides(), (ir::Shape{16, 4, 1}));
  const auto& c = *param_type(*m, "f", 2).layout();
  ASSERT_TRUE(c.strides().has_value());
  EXPECT_EQ(*c.strides(), (ir::Shape{6, 1}));
  auto ret = ir::as_tensor(m->lookup("f")->return_type());
  ASSERT_TRUE(ret->layout() && ret->layout()->strides());
  EXPECT_EQ(*ret->layout()->strides(), (ir::Shape{32, 16, 1}));
}

// Over DimVars the canonical positions and C-order strides are symbolic:
// the split axis F is (4, F // 4), and the layout prints and reads back.
TEST(HirConformance, Function_SignatureStridesOverSymbolicExtents) {
  auto m = parse_rt(with_target(
      "cta = Mesh(topology=\"cta\", shape=(4,), axes=(\"x\",))\n"
      "N = DimVar(\"N\", 1, 4096)\n"
      "F = DimVar(\"F\", 1, 4096)\n"
      "@func\n"
      "def f(a: Tensor[(N, F), f32, ShardLayout(cta, (Split(axis=1),))],\n"
      "      b: Tensor[(N, F), f32, ShardLayout(cta, (Broadcast(),))]\n"
      "      ) -> Tensor[(N, F), f32, ShardLayout(cta, (Split(axis=1),))]:\n"
      "    return a + reshard(b, layout=ShardLayout(cta, (Split(axis=1),)))\n"));
  const auto& a = *param_type(*m, "f", 0).layout();
  EXPECT_EQ(ir::shape_to_string(a.shape()), "(N, 4, F // 4)");
  ASSERT_TRUE(a.strides().has_value());
  EXPECT_EQ(ir::shape_to_string(*a.strides()), "((F // 4) * 4, F // 4, 1)");
  const auto& b = *param_type(*m, "f", 1).layout();
  EXPECT_EQ(ir::shape_to_string(*b.strides()), "(F, 1)");
  // A static extent that its mesh extent does not divide is still a type error.
  expect_error(with_target("cta = Mesh(topology=\"cta\", shape=(4,), axes=(\"x\",))\n"
                           "@func\n"
                           "def g(a: Tensor[(6,), f32, ShardLayout(cta, (Split(axis=0),))]) -> Tensor[(6,), f32]:\n"
                           "    return local(a)\n"),
               ir::ErrorKind::kType, 6, 28, {"not divisible by its mesh extent 4"});
}

TEST(HirConformance, Function_VerboseStridesPreserved) {
  // Not C-order (a column-major engine): kept verbatim, never rewritten.
  auto m = parse_rt(with_target(
      "cta = Mesh(topology=\"cta\", shape=(4,), axes=(\"x\",))\n"
      "@func\n"
      "def f(a: Tensor[(8, 16), f32, ShardLayout(cta, (Split(pos=0),), layout=Layout((4, 2, 16), "
      "strides=(2, 1, 8)))],\n"
      "      b: Tensor[(4, 6), f32, Layout((4, 6), strides=(1, 4))]\n"
      "      ) -> Tensor[(4, 6), f32, Layout((4, 6), strides=(1, 4))]:\n"
      "    return b\n"));
  EXPECT_EQ(*param_type(*m, "f", 0).layout()->strides(), (ir::Shape{2, 1, 8}));
  EXPECT_EQ(*param_type(*m, "f", 1).layout()->strides(), (ir::Shape{1, 4}));
}

TEST(HirConformance, Function_NoSignatureOrReachableLayoutHasStridesNone) {
  auto m = parse_rt(with_target(
      "cta = Mesh(topology=\"cta\", shape=(4,), axes=(\"x\",))\n"
      "@func\n"
      "def f(a: Tensor[(8, 16), f32, ShardLayout(cta, (Split(pos=0),), layout=Layout((4, 2, 16)))],\n"
      "      w: Tensor[(16, 16), f32]\n"
      "      ) -> tuple[Tensor[(2, 16), f32, Layout((1, 2, 16), strides=(0, 16, 1)), \"smem\"],\n"
      "                 Tensor[(8, 16), f32, ShardLayout(cta, (Broadcast(),))]]:\n"
      "    s = reshard(a, storage=\"smem\", layout=ShardLayout(cta, (Split(axis=0),)))\n"
      "    b = reshard(a @ w, layout=ShardLayout(cta, (Broadcast(),)))\n"
      "    return local(s), b\n"));
  int layouts = 0;
  for_each_tensor_type(*m->lookup("f"), [&](const ir::TensorType& t) {
    if (!t.layout()) return;
    ++layouts;
    EXPECT_TRUE(t.layout()->strides().has_value()) << t.to_string();
  });
  EXPECT_GE(layouts, 6);
}

TEST(HirConformance, Function_BadSignatureLayoutIsRejected) {
  expect_error(with_target("@func\n"
                           "def f(a: Tensor[(8, 16), f32, Layout((4, 16))]) -> Tensor[(8, 16), f32]:\n"
                           "    return a\n"),
               ir::ErrorKind::kType, 5, 31, {"do not factor the tensor shape (8, 16)"});
  expect_error(with_target("cta = Mesh(topology=\"cta\", shape=(4,), axes=(\"x\",))\n"
                           "@func\n"
                           "def f(a: Tensor[(6, 16), f32, ShardLayout(cta, (Split(axis=0),))]) -> Tensor[(6, 16), f32]:\n"
                           "    return a\n"),
               ir::ErrorKind::kType, 6, 31, {"not divisible by its mesh extent 4"});
}

// ---- Function: Partial at the function boundary ---------------------------

TEST(HirConformance, Function_ReturnTypeMayCarryPartialAlsoInATuple) {
  auto m = parse_rt(with_target(
      "cta = Mesh(topology=\"cta\", shape=(4,), axes=(\"x\",))\n"
      "@func\n"
      "def f(a: Tensor[(8, 16), f32, ShardLayout(cta, (Partial(\"sum\"),))],\n"
      "      b: Tensor[(8, 16), f32, ShardLayout(cta, (Partial(\"sum\"),))]\n"
      "      ) -> tuple[Tensor[(8, 16), f32, ShardLayout(cta, (Partial(\"sum\"),))],\n"
      "                 Tensor[(8, 16), f32, ShardLayout(cta, (Broadcast(),))]]:\n"
      "    c = a + b\n"
      "    return c, reshard(c, layout=ShardLayout(cta, (Broadcast(),)))\n"));
  auto ret = ir::as_tuple(m->lookup("f")->return_type());
  ASSERT_NE(ret, nullptr);
  auto* first = ir::as_shard_layout(ir::as_tensor(ret->fields()[0])->layout());
  ASSERT_NE(first, nullptr);
  EXPECT_TRUE(first->has_partial());  // preserved, not completed
  auto* second = ir::as_shard_layout(ir::as_tensor(ret->fields()[1])->layout());
  ASSERT_NE(second, nullptr);
  EXPECT_FALSE(second->has_partial());  // only the explicit Reshard completes it
}

}  // namespace
}  // namespace tf::frontend
