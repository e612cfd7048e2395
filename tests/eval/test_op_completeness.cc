// Every registered op is defined completely: the parts its record states
// (surface, typeinfer, sharding) and the evaluator's kernel, each registered
// op has one, and each kernel belongs to a registered op. The native
// compiler's lowering joins the list of parts the same way.
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "core/eval/evaluator.h"
#include "core/eval/kernel.h"
#include "core/ir/error.h"
#include "core/ops/completeness.h"
#include "core/ops/part_table.h"
#include "core/ops/registry.h"

namespace tf::evaltest {
namespace {

// The parts the layers linked into this test provide, beyond the record's own.
std::vector<ops::OpPart> layer_parts() { return {eval::kernel_part()}; }

TEST(OpCompleteness, EveryRegisteredOpHasEveryPart) {
  std::vector<std::string> gaps = ops::missing_parts(ops::all_ops(), layer_parts());
  std::string all;
  for (const auto& g : gaps) all += "\n  " + g;
  EXPECT_TRUE(gaps.empty()) << "incomplete op definitions:" << all;
}

TEST(OpCompleteness, HasKernelAgreesWithTheKernelPart) {
  for (const ops::OpInfo& info : ops::all_ops()) EXPECT_TRUE(eval::has_kernel(info.name)) << info.name;
  EXPECT_FALSE(eval::has_kernel("NoSuchOp"));
}

ir::TypePtr no_type(const ir::Op&, ops::TypeCtx& ctx) { return ctx.type(0); }

// A record stating nothing but its name: every part is reported missing.
TEST(OpCompleteness, ReportsEachPartARecordLacks) {
  ops::OpInfo bare;
  bare.name = "Bare";
  std::vector<std::string> gaps = ops::missing_parts({bare}, layer_parts());
  ASSERT_EQ(gaps.size(), 4u);
  EXPECT_NE(gaps[0].find("Bare lacks a surface"), std::string::npos) << gaps[0];
  EXPECT_NE(gaps[1].find("Bare lacks a typeinfer"), std::string::npos) << gaps[1];
  EXPECT_NE(gaps[2].find("Bare lacks a sharding statement"), std::string::npos) << gaps[2];
  EXPECT_EQ(gaps[3], "Bare lacks an evaluator kernel");
}

// "No sharding rule" counts only when said; surface_elsewhere stands for a surface.
TEST(OpCompleteness, AnExplicitFailClosedAndSurfaceElsewhereAreParts) {
  ops::OpInfo op;
  op.name = "Binary";  // has a kernel
  op.surface_elsewhere = "spelled by the test";
  op.typeinfer = no_type;
  EXPECT_EQ(ops::missing_parts({op}, layer_parts()).size(), 1u);
  op.shard = ops::ShardSpec::fail_closed();
  EXPECT_TRUE(ops::missing_parts({op}, layer_parts()).empty());
}

TEST(OpCompleteness, ReportsAPartRegisteredForNoOp) {
  ops::OpPartTable<int> lowerings("a native lowering");
  lowerings.add("Binary", 1);
  lowerings.add("Binnary", 2);
  std::vector<std::string> gaps = ops::missing_parts(ops::all_ops(), {eval::kernel_part(), lowerings.part()});
  EXPECT_NE(std::find(gaps.begin(), gaps.end(),
                      "a native lowering is registered for 'Binnary', which is not a registered op"),
            gaps.end());
  EXPECT_NE(std::find(gaps.begin(), gaps.end(), "Unary lacks a native lowering"), gaps.end());
  EXPECT_EQ(std::find(gaps.begin(), gaps.end(), "Binary lacks a native lowering"), gaps.end());
}

TEST(OpCompleteness, ReportsShardTraitsForASurfaceTheOpLacks) {
  ops::OpInfo op = *ops::find_op("Unary");
  op.shard.except({"expp"}, ops::monotone());
  std::vector<std::string> gaps = ops::missing_parts({op}, layer_parts());
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_EQ(gaps[0], "Unary: its shard traits name 'expp', which is not one of its surface functions");
}

runtime::NDArray dummy_kernel(const eval::KernelArgs& args) { return args.inputs.at(0); }

TEST(KernelRegistration, ASecondKernelForAnOpIsRefused) {
  try {
    eval::register_kernel("Binary", dummy_kernel);
    ADD_FAILURE() << "expected a refusal";
  } catch (const ir::Error& e) {
    EXPECT_EQ(e.kind(), ir::ErrorKind::kInvalidArgument);
    EXPECT_STREQ(e.what(), "op 'Binary' already has an evaluator kernel");
  }
  EXPECT_THROW(eval::register_tuple_kernel("TopK", nullptr), ir::Error);
}

// Additions from many threads while others look up: every addition lands
// once, and a lookup sees either nothing or the whole part.
TEST(KernelRegistration, AddsAndLookupsFromManyThreadsAreSafe) {
  eval::KernelTable table;
  constexpr int kThreads = 4, kEach = 200;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&table, t] {
      for (int i = 0; i < kEach; ++i) {
        table.add("Op" + std::to_string(t) + "_" + std::to_string(i), dummy_kernel);
        eval::Kernel k = table.find("Op" + std::to_string((t + 1) % kThreads) + "_" + std::to_string(i));
        EXPECT_TRUE(k == nullptr || k == dummy_kernel);
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t)
    for (int i = 0; i < kEach; ++i)
      EXPECT_EQ(table.find("Op" + std::to_string(t) + "_" + std::to_string(i)), dummy_kernel);
  EXPECT_EQ(table.find_tuple("Op0_0"), nullptr);
}

}  // namespace
}  // namespace tf::evaltest
