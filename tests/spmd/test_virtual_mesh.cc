// The virtual mesh: each accepted sharding rule computes the same answer as
// the unsharded program (docs/sharding.md: the Partial commutation rules, Reduce /
// Gather / TopK layouts, Reshard). Each test builds one program twice — with
// sharded parameter types and with plain ones — and compares the virtual-mesh
// result with the plain evaluator's.
#include <gtest/gtest.h>

#include <functional>
#include <random>

#include "core/eval/evaluator.h"
#include "core/spmd/virtual_mesh.h"
#include "core/ir/error.h"
#include "core/ops/math/math.h"
#include "core/ops/nn/nn.h"
#include "core/ops/sharding/sharding.h"
#include "core/ops/sharding/shard_util.h"
#include "core/ops/tensor/tensor.h"
#include "core/sema/typeinfer.h"

namespace tf {
namespace {
using runtime::NDArray;
using ir::Reduction;
using Attrs = std::vector<ir::ShardAttr>;
using Build = std::function<ir::ExprPtr(const std::vector<ir::ExprPtr>&)>;

struct Param {
  ir::Shape shape;
  Attrs logical;  // empty: plain
  ir::DType dtype = ir::DType::kF32;
};

ir::MeshPtr mesh_of(size_t axes) {
  if (axes == 2) return std::make_shared<const ir::Mesh>(ir::Mesh{"cta", "cta", {2, 2}, {"x", "y"}});
  return std::make_shared<const ir::Mesh>(ir::Mesh{"cta", "cta", {4}, {"x"}});
}

ir::FunctionPtr make_fn(const std::vector<Param>& ps, const Build& body, bool sharded) {
  std::vector<ir::VarPtr> vars;
  std::vector<ir::ExprPtr> exprs;
  for (size_t i = 0; i < ps.size(); ++i) {
    ir::LayoutPtr l;
    if (sharded && !ps[i].logical.empty())
      l = ops::shard::canonical_layout(mesh_of(ps[i].logical.size()), ps[i].logical, ps[i].shape);
    vars.push_back(ir::Var::make("p" + std::to_string(i), ir::TensorType::make(ps[i].shape, ps[i].dtype, l)));
    exprs.push_back(vars.back());
  }
  ir::Function::Fields f;
  f.name = "f";
  f.params = vars;
  f.body = body(exprs);
  f.return_type = f.body->type();
  return ir::Function::make(std::move(f));
}

NDArray random_array(const ir::Shape& s, ir::DType dt, std::mt19937& rng, int64_t hi = 0) {
  std::vector<int64_t> shape;
  for (const auto& d : s) shape.push_back(d.value());
  NDArray a = NDArray::empty(dt, shape);
  if (dt == ir::DType::kI64) {
    std::uniform_int_distribution<int64_t> u(0, hi - 1);
    for (int64_t i = 0; i < a.numel(); ++i) static_cast<int64_t*>(a.data())[i] = u(rng);
  } else {
    std::uniform_real_distribution<float> u(-2.f, 2.f);
    for (int64_t i = 0; i < a.numel(); ++i) static_cast<float*>(a.data())[i] = u(rng);
  }
  return a;
}

void expect_close(const NDArray& a, const NDArray& b) {
  ASSERT_EQ(a.shape(), b.shape());
  ASSERT_EQ(a.dtype(), b.dtype());
  for (int64_t i = 0; i < a.numel(); ++i) {
    if (a.dtype() == ir::DType::kI64)
      EXPECT_EQ(static_cast<int64_t*>(a.data())[i], static_cast<int64_t*>(b.data())[i]) << "at " << i;
    else
      EXPECT_NEAR(static_cast<float*>(a.data())[i], static_cast<float*>(b.data())[i], 1e-4) << "at " << i;
  }
}

// Runs body sharded on the virtual mesh and unsharded on the evaluator.
void check_same_answer(const std::vector<Param>& ps, const Build& body, int64_t index_hi = 8) {
  auto sharded = make_fn(ps, body, true);
  auto plain = make_fn(ps, body, false);
  auto m = ir::Module::make(ir::Target::default_cpu(), {sharded});
  auto mp = ir::Module::make(ir::Target::default_cpu(), {plain});
  std::mt19937 rng(7);
  std::vector<NDArray> in;
  for (const auto& p : ps) in.push_back(random_array(p.shape, p.dtype, rng, index_hi));
  auto got = spmd::evaluate_virtual_mesh(*m, *sharded, in);
  auto want = eval::evaluate(*mp, *plain, in);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) expect_close(got[i], want[i]);
}

template <typename OpT, typename... A>
ir::ExprPtr call(std::vector<ir::ExprPtr> args, A&&... a) {
  return sema::make_op_call(std::make_shared<const OpT>(std::forward<A>(a)...), std::move(args));
}

const ir::ShardAttr kPSum = ir::ShardAttr::partial(Reduction::kSum);
const ir::ShardAttr kPMax = ir::ShardAttr::partial(Reduction::kMax);
ir::ShardAttr split(int64_t axis) { return ir::ShardAttr::split(axis); }

TEST(VirtualMesh, Binary_AddTwoPartialSum) {
  check_same_answer({{{8, 16}, {kPSum}}, {{8, 16}, {kPSum}}},
                    [](auto& p) { return call<ops::Binary>({p[0], p[1]}, ops::BinaryKind::kAdd); });
}

TEST(VirtualMesh, Binary_AddPartialMaxAndReplicated) {
  check_same_answer({{{8, 16}, {kPMax}}, {{8, 16}, {}}},
                    [](auto& p) { return call<ops::Binary>({p[0], p[1]}, ops::BinaryKind::kAdd); });
}

TEST(VirtualMesh, Binary_MulPartialSumByReplicated) {
  check_same_answer({{{8, 16}, {kPSum}}, {{8, 16}, {ir::ShardAttr::broadcast()}}},
                    [](auto& p) { return call<ops::Binary>({p[1], p[0]}, ops::BinaryKind::kMul); });
}

TEST(VirtualMesh, Binary_SplitRowsWithPlainOperand) {
  check_same_answer({{{8, 16}, {split(0)}}, {{8, 16}, {}}}, [](auto& p) {
    return call<ops::Binary>({call<ops::Silu>({p[0]}), p[1]}, ops::BinaryKind::kMul);
  });
}

TEST(VirtualMesh, Unary_NegOfPartialSumAndExpOfPartialMax) {
  check_same_answer({{{8, 16}, {kPSum}}}, [](auto& p) { return call<ops::Unary>({p[0]}, ops::UnaryKind::kNeg); });
  check_same_answer({{{8, 16}, {kPMax}}}, [](auto& p) { return call<ops::Unary>({p[0]}, ops::UnaryKind::kExp); });
}

TEST(VirtualMesh, MatMul_OnePartialSumInput) {
  check_same_answer({{{8, 16}, {kPSum}}, {{16, 4}, {}}}, [](auto& p) { return call<ops::MatMul>({p[0], p[1]}); });
}

TEST(VirtualMesh, MatMul_KSplitGivesPartialSumAndRowSplit) {
  check_same_answer({{{8, 16}, {split(1)}}, {{16, 4}, {split(0)}}},
                    [](auto& p) { return call<ops::MatMul>({p[0], p[1]}); });
  check_same_answer({{{8, 16}, {split(0)}}, {{16, 4}, {}}}, [](auto& p) { return call<ops::MatMul>({p[0], p[1]}); });
}

TEST(VirtualMesh, Reduce_SumOfPartialSumAndSplitAxisCollapse) {
  check_same_answer({{{8, 16}, {kPSum}}}, [](auto& p) {
    return call<ops::Reduce>({p[0]}, std::vector<int64_t>{1}, false, ops::ReduceKind::kSum);
  });
  check_same_answer({{{8, 16}, {split(0)}}}, [](auto& p) {
    return call<ops::Reduce>({p[0]}, std::vector<int64_t>{0}, true, ops::ReduceKind::kMax);
  });
  check_same_answer({{{8, 16}, {split(1)}}}, [](auto& p) {
    return call<ops::Reduce>({p[0]}, std::vector<int64_t>{0}, false, ops::ReduceKind::kMean);
  });
}

TEST(VirtualMesh, Gather_SplitOnGatheredAxisIsPartialSum) {
  check_same_answer({{{8, 16}, {split(0)}}, {{5}, {}, ir::DType::kI64}},
                    [](auto& p) { return call<ops::Gather>({p[0], p[1]}, 0, 0); });
}

TEST(VirtualMesh, Gather_SplitOnOtherAxisRenumbered) {
  check_same_answer({{{8, 16}, {split(1)}}, {{2, 3}, {}, ir::DType::kI64}},
                    [](auto& p) { return call<ops::Gather>({p[0], p[1]}, 0, 0); });
}

TEST(VirtualMesh, TopK_RowSplitKeepsNonSelectedSharding) {
  check_same_answer({{{8, 16}, {split(0)}}}, [](auto& p) {
    return call<ops::TopK>({p[0]}, ir::ShapeDim(3), 1, true, true);
  });
}

TEST(VirtualMesh, Reshard_PartialToBroadcastThenGelu) {
  check_same_answer({{{8, 16}, {kPSum}}}, [](auto& p) {
    auto t = ir::as_tensor(p[0]->type());
    if (!t->layout()) return call<ops::Gelu>({p[0]}, "tanh");
    auto b = ops::shard::canonical_layout(ir::as_shard_layout(t->layout())->mesh(), {ir::ShardAttr::broadcast()},
                                          t->shape());
    return call<ops::Gelu>({call<ops::Reshard>({p[0]}, b, std::nullopt)}, "tanh");
  });
}

TEST(VirtualMesh, TwoAxisMesh_SplitAndPartial) {
  check_same_answer({{{8, 16}, {split(0), kPSum}}, {{8, 16}, {split(0), kPSum}}},
                    [](auto& p) { return call<ops::Binary>({p[0], p[1]}, ops::BinaryKind::kAdd); });
}

TEST(VirtualMesh, Local_IsTheInstanceShard) {
  // sum over instances of local(x) laid back out = x: checked through the
  // plain evaluator refusing local(x) and the virtual mesh accepting it.
  auto fn = make_fn({{{8, 16}, {split(0)}}}, [](auto& p) { return call<ops::Local>({p[0]}); }, true);
  auto m = ir::Module::make(ir::Target::default_cpu(), {fn});
  std::mt19937 rng(1);
  std::vector<NDArray> in{random_array({8, 16}, ir::DType::kF32, rng)};
  try {
    eval::evaluate(*m, *fn, in);
    ADD_FAILURE() << "local(x) evaluated outside a mesh";
  } catch (const ir::Error& e) {
    EXPECT_EQ(e.kind(), ir::ErrorKind::kUnsupported);
  }
}

}  // namespace
}  // namespace tf
