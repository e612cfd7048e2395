// Call elaboration (docs/ir.md) over sharded arguments: a layout-less parameter
// is a template wildcard that binds the argument's full type, ShardLayout
// included, and each Partial(reduction) is carried at its mesh-axis index
// through the callee's body, into the call's type, also through tuples.
#include <gtest/gtest.h>

#include "core/ir/shard.h"
#include "round_trip.h"

namespace tf::frontend {
namespace {

using testing::parse_rt;

const char* kHeader = R"(
TARGET = Target("cpu", topology=(("device", 1), ("cta", 4)))
cta = Mesh(topology="cta", shape=(2, 2), axes=("x", "y"))

)";

std::string module(const std::string& callee_body, const std::string& caller_ret, const std::string& caller_body) {
  return std::string(kHeader) + R"(
@func
def g(a: Tensor[(8, 16), f32]) -> Tensor[(8, 16), f32]:
)" + callee_body + R"(

@func
def f(x: Tensor[(8, 16), f32, ShardLayout(cta, (Broadcast(), Partial("sum")))]) -> )" +
         caller_ret + ":\n" + caller_body + "\n";
}

const ir::ShardLayout* call_layout(const ir::Module& m, size_t field = 0) {
  ir::TypePtr t = m.lookup("f")->body()->type();
  auto leaves = ir::flatten_tensor_types(t);
  return ir::as_shard_layout(leaves.at(field)->layout());
}

}  // namespace

TEST(HirConformance, Elaboration_LayoutlessParamBindsTheArgumentsShardLayoutAndCarriesPartialAtItsAxis) {
  const std::string sharded = R"(Tensor[(8, 16), f32, ShardLayout(cta, (Broadcast(), Partial("sum")))])";
  std::string src = module("    return a * 2.0", sharded, "    return g(x)");
  ir::ModulePtr m = parse_rt(src);
  const ir::ShardLayout* l = call_layout(*m);
  ASSERT_NE(l, nullptr) << m->lookup("f")->body()->type()->to_string();
  ASSERT_EQ(l->attrs().size(), 2u);
  EXPECT_FALSE(l->attrs()[0].is_partial());  // mesh axis 0 stays Broadcast
  ASSERT_TRUE(l->attrs()[1].is_partial());   // the Partial stays on mesh axis 1
  EXPECT_EQ(l->attrs()[1].reduction, ir::Reduction::kSum);
  // The callee's own declaration is unchanged: elaboration made an instance.
  EXPECT_EQ(m->lookup("g")->return_type()->to_string(), "Tensor[(8, 16), f32]");
}

TEST(HirConformance, Elaboration_PartialCarriedThroughATupleReturn) {
  const std::string sharded = R"(Tensor[(8, 16), f32, ShardLayout(cta, (Broadcast(), Partial("sum")))])";
  std::string src = std::string(kHeader) + R"(
@func
def g(a: Tensor[(8, 16), f32]) -> tuple[Tensor[(8, 16), f32], Tensor[(8, 16), f32]]:
    return a * 2.0, a

@func
def f(x: )" + sharded + ") -> tuple[" + sharded + ", " + sharded + R"(]:
    return g(x)
)";
  ir::ModulePtr m = parse_rt(src);
  for (size_t field = 0; field < 2; ++field) {
    const ir::ShardLayout* l = call_layout(*m, field);
    ASSERT_NE(l, nullptr) << field;
    EXPECT_TRUE(l->attrs()[1].is_partial()) << field;
  }
}

TEST(HirConformance, Elaboration_PartialCarriedThroughAGridRegionExprReturn) {
  // The callee's loop carry starts from the sharded parameter: the re-typed
  // GridRegionExpr (ADD of two Partial(sum) on one axis) keeps the Partial.
  const std::string sharded = R"(Tensor[(8, 16), f32, ShardLayout(cta, (Broadcast(), Partial("sum")))])";
  std::string src = std::string(kHeader) + R"(
@func
def g(a: Tensor[(8, 16), f32]) -> Tensor[(8, 16), f32]:
    acc = a
    for i in range(2):
        acc = acc + a
    return acc

@func
def f(x: )" + sharded + ") -> " + sharded + R"(:
    return g(x)
)";
  ir::ModulePtr m = parse_rt(src);
  const ir::ShardLayout* l = call_layout(*m);
  ASSERT_NE(l, nullptr) << m->lookup("f")->body()->type()->to_string();
  EXPECT_TRUE(l->attrs()[1].is_partial());
  EXPECT_FALSE(l->attrs()[0].is_partial());
}

TEST(HirConformance, Elaboration_BodyThatCannotCarryThePartialFailsAtTheOpWithTheCallSite) {
  const std::string sharded = R"(Tensor[(8, 16), f32, ShardLayout(cta, (Broadcast(), Partial("sum")))])";
  std::string src = module("    return exp(a)", sharded, "    return g(x)");
  try {
    parse_module(src, "t.tf");
    FAIL() << "expected a type error";
  } catch (const ir::Error& e) {
    std::string msg = e.what();
    EXPECT_EQ(e.kind(), ir::ErrorKind::kType) << msg;
    EXPECT_NE(msg.find("in call to 'g'"), std::string::npos) << msg;   // the call site
    EXPECT_NE(msg.find("'exp' operand #0"), std::string::npos) << msg;  // the failing op in the callee
    EXPECT_NE(msg.find("Reshard to Broadcast"), std::string::npos) << msg;
  }
}

}  // namespace tf::frontend
