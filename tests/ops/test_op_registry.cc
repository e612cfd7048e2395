// The op registry as a table of definitions: run-time additions and their
// refusals, thread safety, and that each built-in record agrees with the op
// its surface functions build.
#include <gtest/gtest.h>

#include <thread>

#include "core/ir/error.h"
#include "core/ops/registry.h"
#include "core/ops/tensor/tensor.h"
#include "core/sema/typeinfer.h"

using namespace tf;
using namespace tf::ops;

namespace {

struct Nop final : ir::Op {
  std::string_view name() const override { return "NoTypeinferForTest"; }
  std::vector<ir::Attr> attrs() const override { return {}; }
  std::string surface_name() const override { return "nop_for_test"; }
};

SurfaceFn nop_surface(const char* name) {
  return {name, {tensor_param("x")}, [](const std::vector<ir::AttrValue>&) -> ir::OpPtr {
            return std::make_shared<Nop>();
          }};
}

OpInfo named(std::string name) {
  OpInfo d;
  d.name = std::move(name);
  d.operands = {"x"};
  d.shard = ShardSpec::fail_closed();
  return d;
}

template <typename F>
void expect_refusal(F f, const std::string& message) {
  try {
    f();
    ADD_FAILURE() << "expected a refusal: " << message;
  } catch (const ir::Error& e) {
    EXPECT_EQ(e.kind(), ir::ErrorKind::kInvalidArgument);
    EXPECT_EQ(std::string(e.what()), message);
  }
}

TEST(OpRegistration, ATakenOpNameIsRefused) {
  expect_refusal([] { register_op(named("Binary")); }, "op 'Binary' is already registered");
}

TEST(OpRegistration, ATakenSurfaceNameIsRefusedAndNothingIsAdded) {
  OpInfo d = named("AdderForTest");
  d.surfaces = {nop_surface("adder_for_test"), nop_surface("add")};
  expect_refusal([&] { register_op(d); },
                 "op 'AdderForTest': surface function 'add' is already defined by op 'Binary'");
  EXPECT_EQ(find_op("AdderForTest"), nullptr);
  EXPECT_EQ(find_surface("adder_for_test"), nullptr);
}

TEST(OpRegistration, ASurfaceWithoutABuilderIsRefused) {
  OpInfo d = named("UnbuiltForTest");
  d.surfaces = {{"unbuilt_for_test", {tensor_param("x")}, nullptr}};
  expect_refusal([&] { register_op(d); }, "op 'UnbuiltForTest': surface function 'unbuilt_for_test' has no builder");
}

// An op registered without a typeinfer is a clear error where it is typed,
// not a crash.
TEST(OpRegistration, TypingAnOpWithoutTypeinferIsUnsupported) {
  register_op(named("NoTypeinferForTest"));
  ir::ExprPtr x = ir::Var::make("x", ir::TensorType::make({4}, ir::DType::kF32));
  try {
    sema::make_op_call(std::make_shared<Nop>(), {x});
    ADD_FAILURE() << "expected an error";
  } catch (const ir::Error& e) {
    EXPECT_EQ(e.kind(), ir::ErrorKind::kUnsupported);
    EXPECT_STREQ(e.what(), "op 'NoTypeinferForTest' has no typeinfer in its definition");
  }
}

// Additions from many threads while others look up, on a registry of the
// test's own: each addition lands once, with its surface function.
TEST(OpRegistration, AddsAndLookupsFromManyThreadsAreSafe) {
  Registry r;
  constexpr int kThreads = 4, kEach = 100;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&r, t] {
      for (int i = 0; i < kEach; ++i) {
        std::string id = std::to_string(t) + "_" + std::to_string(i);
        OpInfo d = named("Op" + id);
        d.surfaces = {nop_surface(("op_" + id).c_str())};
        r.add(std::move(d));
        const OpInfo* other = r.find("Op" + std::to_string((t + 1) % kThreads) + "_" + std::to_string(i));
        EXPECT_TRUE(other == nullptr || other->surfaces.size() == 1);
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(r.ops().size(), static_cast<size_t>(kThreads * kEach));
  EXPECT_EQ(r.surfaces().size(), static_cast<size_t>(kThreads * kEach));
  ASSERT_NE(r.find_surface("op_3_99"), nullptr);
  EXPECT_EQ(r.find_surface("op_3_99")->name, "op_3_99");
  EXPECT_EQ(r.find("Op3_99")->name, "Op3_99");
}

// A value of each attribute type, so every surface function can build its op.
ir::AttrValue sample(AttrType t) {
  switch (t) {
    case AttrType::kInt: return int64_t{0};
    case AttrType::kFloat: return 1.0;
    case AttrType::kBool: return true;
    case AttrType::kString: return std::string("mean");
    case AttrType::kDType: return ir::DType::kF32;
    case AttrType::kInts:
    case AttrType::kAxes: return std::vector<int64_t>{0};
    case AttrType::kShape:
    case AttrType::kDim: return ir::Shape{2};
    case AttrType::kStorage: return ir::StorageKind::kGmem;
  }
  return int64_t{0};
}

// The record's operands and attributes are what the op it builds reports.
TEST(OpDefinition, EachRecordListsTheAttributesOfTheOpsItBuilds) {
  for (const OpInfo& info : all_ops())
    for (const SurfaceFn& s : info.surfaces) {
      std::vector<ir::AttrValue> attrs;
      size_t tensors = 0;
      for (const SurfaceParam& p : s.params) {
        if (p.is_tensor) ++tensors;
        else attrs.push_back(p.default_value ? *p.default_value : sample(p.type));
      }
      ir::OpPtr op = s.make(attrs);
      EXPECT_EQ(op->name(), info.name) << s.name;
      bool prints_as_its_own = false;  // the printed spelling is one of this record's functions
      for (const SurfaceFn& own : info.surfaces) prints_as_its_own |= own.name == op->surface_name();
      EXPECT_TRUE(prints_as_its_own) << s.name << " prints as " << op->surface_name();
      EXPECT_EQ(tensors, info.operands.size()) << s.name;
      std::vector<std::string> names;
      for (const ir::Attr& a : op->attrs()) names.push_back(a.name);
      EXPECT_EQ(names, info.attrs) << s.name;
    }
}

TEST(OpDefinition, ElementwiseTraitsArePerSurfaceForAKindedOp) {
  const ShardSpec& unary = find_op("Unary")->shard;
  EXPECT_EQ(unary.kind, ShardSpec::Kind::kElementwise);
  EXPECT_TRUE(unary.commutes_for("exp").max && !unary.commutes_for("exp").sum);
  EXPECT_TRUE(unary.commutes_for("neg").sum && !unary.commutes_for("neg").max);
  EXPECT_EQ(unary.commutes_for("neg").reason,
            "is linear: it commutes with sum but not max / min (negation reverses order)");
  EXPECT_FALSE(unary.commutes_for("sqrt").sum || unary.commutes_for("sqrt").max || unary.commutes_for("sqrt").min);
  EXPECT_EQ(find_op("Silu")->shard.commutes.reason, "is not monotone and commutes with no reduction");
  EXPECT_EQ(find_op("Reshard")->shard.kind, ShardSpec::Kind::kShardAware);
  EXPECT_EQ(find_op("Transpose")->shard.kind, ShardSpec::Kind::kFailClosed);
  EXPECT_EQ(find_op("MatMul")->shard.kind, ShardSpec::Kind::kRule);
}

}  // namespace
