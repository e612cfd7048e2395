// The function boundary: a function returns by value into a buffer of its
// declared return type, so the returned value must agree with that type in
// shape (DimVar bounds included), dtype and sharding — mesh, the per-axis
// Split / Broadcast / Partial state, layout positions — while its storage and
// strides may differ. Accepted programs are run on the virtual mesh and
// compared with the same body over plain tensors; rejected ones must say
// what differs.
#include <gtest/gtest.h>

#include <random>

#include "core/eval/evaluator.h"
#include "core/spmd/virtual_mesh.h"
#include "core/frontend/parser.h"
#include "core/ir/error.h"

namespace tf {
namespace {
using runtime::NDArray;

const char* kHeader = R"(from tilefoundry.dsl import *
TARGET = Target("cpu", topology=(("device", 1), ("cta", 4)))
cta = Mesh(topology="cta", shape=(4,), axes=("x",))
)";

NDArray random_f32(const std::vector<int64_t>& shape, std::mt19937& rng) {
  NDArray a = NDArray::empty(ir::DType::kF32, shape);
  std::uniform_real_distribution<float> u(-2.f, 2.f);
  for (int64_t i = 0; i < a.numel(); ++i) static_cast<float*>(a.data())[i] = u(rng);
  return a;
}

void expect_close(const NDArray& got, const NDArray& want, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  for (int64_t i = 0; i < want.numel(); ++i)
    EXPECT_NEAR(static_cast<const float*>(got.data())[i], static_cast<const float*>(want.data())[i], 1e-4)
        << what << " at " << i;
}

// Every instance holds a genuine share of a Partial("sum") parameter: weights
// 1..n over their sum, so no instance holds the whole value.
void weighted_shares(size_t, size_t share, size_t shares, ir::Reduction r, NDArray& local) {
  ASSERT_EQ(r, ir::Reduction::kSum);
  float w = static_cast<float>(share + 1) / static_cast<float>(shares * (shares + 1) / 2);
  for (int64_t i = 0; i < local.numel(); ++i) static_cast<float*>(local.data())[i] *= w;
}

// `sharded` and `plain` compute the same value; the first over sharded
// parameters and a sharded return, the second over plain ones.
void expect_same_value(const std::string& src, const std::vector<std::vector<int64_t>>& shapes, bool shares) {
  ir::ModulePtr m = frontend::parse_module(std::string(kHeader) + src, "boundary.tf");
  std::mt19937 rng(17);
  std::vector<NDArray> in;
  for (const auto& s : shapes) in.push_back(random_f32(s, rng));
  NDArray want = eval::evaluate(*m, *m->lookup("plain"), in)[0];
  const ir::Function& f = *m->lookup("sharded");
  NDArray got = shares ? spmd::evaluate_virtual_mesh(*m, f, in, weighted_shares)[0]
                       : spmd::evaluate_virtual_mesh(*m, f, in)[0];
  expect_close(got, want, src);
}

std::string parse_error(const std::string& src, ir::ErrorKind kind = ir::ErrorKind::kType) {
  try {
    frontend::parse_module(std::string(kHeader) + src, "boundary.tf");
  } catch (const ir::Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "accepted:\n" << src;
  return "";
}

TEST(ReturnBoundary, ReductionOfAPartialValueIsReturnedPartial) {
  // The reduction keeps its input's row stride (16); the declared return is
  // materialized with stride 1. The value is returned Partial, not completed.
  expect_same_value(R"(
@func
def sharded(x: Tensor[(8, 16), f32, ShardLayout(cta, (Partial("sum"),))]) -> Tensor[(8,), f32, ShardLayout(cta, (Partial("sum"),))]:
    return sum(x, axes=(1,), keepdim=False)

@func
def plain(x: Tensor[(8, 16), f32]) -> Tensor[(8,), f32]:
    return sum(x, axes=(1,), keepdim=False)
)",
                    {{8, 16}}, true);
  expect_same_value(R"(
@func
def sharded(x: Tensor[(8, 16), f32, ShardLayout(cta, (Partial("sum"),))]) -> Tensor[(8, 1), f32, ShardLayout(cta, (Partial("sum"),))]:
    return mean(x, axes=(1,), keepdim=True)

@func
def plain(x: Tensor[(8, 16), f32]) -> Tensor[(8, 1), f32]:
    return mean(x, axes=(1,), keepdim=True)
)",
                    {{8, 16}}, true);
}

TEST(ReturnBoundary, ReductionOverASplitAxisOfAReturnedValueCollapsesToBroadcast) {
  expect_same_value(R"(
@func
def sharded(x: Tensor[(8, 16), f32, ShardLayout(cta, (Split(axis=0),))]) -> Tensor[(16,), f32, ShardLayout(cta, (Broadcast(),))]:
    return sum(x, axes=(0,), keepdim=False)

@func
def plain(x: Tensor[(8, 16), f32]) -> Tensor[(16,), f32]:
    return sum(x, axes=(0,), keepdim=False)
)",
                    {{8, 16}}, false);
}

TEST(ReturnBoundary, AKeepdimReductionOfASplitValueIsReturnedInTheDeclaredStrides) {
  // The reduction keeps the input's strides (32, 16) on the Split rows and
  // gives the kept size-1 axis stride 0; the annotation materializes C-order
  // (2, 1, 1) over the same positions (4, 2, 1).
  ir::ModulePtr m = frontend::parse_module(std::string(kHeader) + R"(
@func
def sharded(x: Tensor[(8, 16), f32, ShardLayout(cta, (Split(axis=0),))]) -> Tensor[(8, 1), f32, ShardLayout(cta, (Split(axis=0),))]:
    return sum(x, axes=(1,), keepdim=True)
)",
                                           "boundary.tf");
  const ir::Function& f = *m->lookup("sharded");
  auto strides = [](const ir::TypePtr& t) { return *ir::as_tensor(t)->layout()->strides(); };
  EXPECT_EQ(strides(f.body()->type()), (ir::Shape{32, 16, 0}));
  EXPECT_EQ(strides(f.return_type()), (ir::Shape{2, 1, 1}));
  EXPECT_FALSE(ir::type_equal(f.body()->type(), f.return_type()));
  expect_same_value(R"(
@func
def sharded(x: Tensor[(8, 16), f32, ShardLayout(cta, (Split(axis=0),))]) -> Tensor[(8, 1), f32, ShardLayout(cta, (Split(axis=0),))]:
    return sum(x, axes=(1,), keepdim=True)

@func
def plain(x: Tensor[(8, 16), f32]) -> Tensor[(8, 1), f32]:
    return sum(x, axes=(1,), keepdim=True)
)",
                    {{8, 16}}, false);
}

TEST(ReturnBoundary, TheShardingStateMustMatchTheDeclaredReturn) {
  std::string e = parse_error(R"(
@func
def f(x: Tensor[(8, 16), f32, ShardLayout(cta, (Partial("sum"),))]) -> Tensor[(8,), f32, ShardLayout(cta, (Broadcast(),))]:
    return sum(x, axes=(1,), keepdim=False)
)");
  EXPECT_NE(e.find("mesh axis 0 is Partial(\"sum\") in the returned value but Broadcast() in the return annotation"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("boundary.tf:6:5"), std::string::npos) << e;
  e = parse_error(R"(
@func
def f(x: Tensor[(8, 16), f32, ShardLayout(cta, (Split(axis=0),))]) -> Tensor[(8, 16), f32]:
    return x * 2.0
)");
  EXPECT_NE(e.find("the returned value is sharded"), std::string::npos) << e;
  e = parse_error(R"(
@func
def f(x: Tensor[(8, 16), f32]) -> Tensor[(8, 16), f16]:
    return x
)");
  EXPECT_NE(e.find("dtype f32 in the returned value but f16 in the return annotation"), std::string::npos) << e;
}

TEST(ReturnBoundary, ADimVarNameWithTwoRangesIsRejectedNamingBoth) {
  // Types and the printed module name a DimVar by its name alone, so one name
  // has one range per module; the second declaration is the error.
  std::string e = parse_error(R"(
N = DimVar("N", 1, 8)
N16 = DimVar("N", 1, 16)

@func
def f(x: Tensor[(N, 4), f32]) -> Tensor[(N16, 4), f32]:
    return x
)",
                              ir::ErrorKind::kVerify);
  EXPECT_NE(e.find("boundary.tf:6:7: error: DimVar 'N' is declared with bounds [1, 16) here but [1, 8) at line 5"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("MUST agree on their bounds"), std::string::npos) << e;
}

TEST(ReturnBoundary, AnRmemValueIsReturnedIntoGmem) {
  ir::ModulePtr m = frontend::parse_module(std::string(kHeader) + R"(
@func
def f(x: Tensor[(4,), f32]) -> Tensor[(4,), f32]:
    return zeros((4,), f32, storage="rmem") + x
)",
                                           "boundary.tf");
  const ir::Function& f = *m->lookup("f");
  EXPECT_EQ(f.body()->type()->to_string(), "Tensor[(4,), f32, \"rmem\"]");
  EXPECT_EQ(f.return_type()->to_string(), "Tensor[(4,), f32]");
  std::mt19937 rng(1);
  NDArray x = random_f32({4}, rng);
  expect_close(eval::evaluate(*m, f, {x})[0], x, "zeros + x");
}

}  // namespace
}  // namespace tf
