// The virtual mesh behind every accepted sharding typing rule: each test is
// named after the HirConformance test (tests/ops/test_sharding_partial.cc,
// test_sharding_layouts.cc) whose accepted case it executes. One program is
// built twice — sharded parameter types, and plain ones — and the virtual
// mesh's reassembled result must equal the plain evaluator's (exactly for
// integers, within 1e-4 relative for floats).
//
// A Partial parameter is split into *genuine* shares (spread() below): every
// instance holds a real contribution, and the element's largest (max) /
// smallest (min) / balancing (sum) share sits on an instance that depends on
// the parameter, so two Partial operands' winners differ. (The default split,
// the value on instance 0 and the identity elsewhere, would let any op that
// maps the identity to itself pass.)
//
// The last section runs rules that typing rejects, with hand-built result
// types, and shows their answers really are wrong.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "core/eval/evaluator.h"
#include "core/eval/kernels/dispatch.h"
#include "core/spmd/virtual_mesh.h"
#include "core/ir/error.h"
#include "core/ops/math/math.h"
#include "core/ops/nn/nn.h"
#include "core/ops/sharding/shard_util.h"
#include "core/ops/sharding/sharding.h"
#include "core/ops/tensor/tensor.h"
#include "core/sema/typeinfer.h"

namespace tf {
namespace {
using runtime::NDArray;
using ir::DType;
using ir::Reduction;
using Attrs = std::vector<ir::ShardAttr>;
using Exprs = std::vector<ir::ExprPtr>;
using Build = std::function<ir::ExprPtr(const Exprs&)>;

const ir::ShardAttr kPSum = ir::ShardAttr::partial(Reduction::kSum);
const ir::ShardAttr kPMax = ir::ShardAttr::partial(Reduction::kMax);
const ir::ShardAttr kPMin = ir::ShardAttr::partial(Reduction::kMin);
const ir::ShardAttr kB = ir::ShardAttr::broadcast();
ir::ShardAttr split(int64_t axis) { return ir::ShardAttr::split(axis); }
ir::ShardAttr partial(Reduction r) { return ir::ShardAttr::partial(r); }

ir::MeshPtr mesh_of(size_t axes) {
  if (axes == 2) return std::make_shared<const ir::Mesh>(ir::Mesh{"cta", "cta", {2, 2}, {"x", "y"}});
  return std::make_shared<const ir::Mesh>(ir::Mesh{"cta", "cta", {4}, {"x"}});
}

// A parameter: logical shard attrs (empty: plain) or an explicit layout, and
// the range its random values are drawn from (lo == hi: that constant).
struct Param {
  ir::Shape shape;
  Attrs logical;
  DType dtype = DType::kF32;
  double lo = -2, hi = 2;
  ir::LayoutPtr layout = nullptr;
};

ir::FunctionPtr make_fn(const std::vector<Param>& ps, const Build& body, bool sharded) {
  ir::Function::Fields f;
  Exprs exprs;
  for (size_t i = 0; i < ps.size(); ++i) {
    ir::LayoutPtr l = ps[i].layout;
    if (!l && !ps[i].logical.empty())
      l = ops::shard::canonical_layout(mesh_of(ps[i].logical.size()), ps[i].logical, ps[i].shape);
    f.params.push_back(ir::Var::make("p" + std::to_string(i), ir::TensorType::make(ps[i].shape, ps[i].dtype,
                                                                                      sharded ? l : nullptr)));
    exprs.push_back(f.params.back());
  }
  f.name = "f";
  f.body = body(exprs);
  f.return_type = f.body->type();
  return ir::Function::make(std::move(f));
}

NDArray random_array(const Param& p, std::mt19937& rng) {
  std::vector<int64_t> shape;
  for (const auto& d : p.shape) shape.push_back(d.value());
  NDArray a = NDArray::empty(p.dtype, shape);
  eval::dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>) {
      T* d = eval::mutable_data_of<T>(a);
      for (int64_t i = 0; i < a.numel(); ++i)
        d[i] = std::is_floating_point_v<T> ? static_cast<T>(std::uniform_real_distribution<double>(p.lo, p.hi)(rng))
                                           : static_cast<T>(std::uniform_int_distribution<int64_t>(
                                                 static_cast<int64_t>(p.lo), static_cast<int64_t>(p.hi))(rng));
    } else {
      ADD_FAILURE() << "test inputs are f32, i32 or i64";
    }
  });
  return a;
}

// Genuine shares (file comment). `positive`: for ops defined on x > 0 only
// (log, log2), max / min shares stay positive (x / 2, 2x), as the rule needs.
spmd::PartialShareFn spread(bool positive = false) {
  return [positive](size_t param, size_t share, size_t shares, Reduction r, NDArray& local) {
    eval::dispatch_dtype(local.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>) {
        const T unit = std::is_floating_point_v<T> ? T(0.25) : T(1);
        T* x = eval::mutable_data_of<T>(local);
        for (int64_t e = 0; e < local.numel(); ++e) {
          size_t owner = (static_cast<size_t>(e) + param) % shares;
          auto offset = [&](size_t q) { return static_cast<T>(static_cast<int64_t>((e * 7 + q * 5 + param * 3) % 9) - 4) * unit; };
          auto gap = [&](size_t q) { return static_cast<T>(1 + (static_cast<size_t>(e) + q) % 3) * unit * T(2); };
          if (r == Reduction::kSum) {
            if (share != owner) {
              x[e] = offset(share);
            } else {
              for (size_t q = 0; q < shares; ++q)
                if (q != owner) x[e] -= offset(q);
            }
          } else if (share != owner) {
            bool up = r == Reduction::kMin;
            if (positive && std::is_floating_point_v<T>) x[e] = up ? x[e] * T(2) : x[e] / T(2);
            else x[e] = up ? x[e] + gap(share) : x[e] - gap(share);
          }
        }
      } else {
        ADD_FAILURE() << "Partial test values are f32, i32 or i64";
      }
    });
  };
}

template <typename T>
int64_t count_differing(const NDArray& a, const NDArray& b, double tol) {
  int64_t n = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    double x = static_cast<double>(eval::data_of<T>(a)[i]), y = static_cast<double>(eval::data_of<T>(b)[i]);
    bool same = std::is_floating_point_v<T> ? std::fabs(x - y) <= tol * std::max(1.0, std::fabs(y)) : x == y;
    n += !same;
  }
  return n;
}

int64_t differing(const NDArray& got, const NDArray& want, double tol = 1e-4) {
  EXPECT_EQ(got.shape(), want.shape());
  EXPECT_EQ(got.dtype(), want.dtype());
  if (got.shape() != want.shape() || got.dtype() != want.dtype()) return -1;
  switch (got.dtype()) {
    case DType::kF32: return count_differing<float>(got, want, tol);
    case DType::kI32: return count_differing<int32_t>(got, want, tol);
    case DType::kI64: return count_differing<int64_t>(got, want, tol);
    default: ADD_FAILURE() << "unexpected result dtype"; return -1;
  }
}

std::vector<NDArray> inputs_for(const std::vector<Param>& ps) {
  std::mt19937 rng(23);
  std::vector<NDArray> in;
  for (const auto& p : ps) in.push_back(random_array(p, rng));
  return in;
}

// The sharded program on the virtual mesh vs the plain one on the evaluator.
void check_same_answer(const std::vector<Param>& ps, const Build& body, bool positive = false) {
  auto sharded = make_fn(ps, body, true);
  auto plain = make_fn(ps, body, false);
  auto m = ir::Module::make(ir::Target::default_cpu(), {sharded});
  auto mp = ir::Module::make(ir::Target::default_cpu(), {plain});
  auto in = inputs_for(ps);
  auto got = spmd::evaluate_virtual_mesh(*m, *sharded, in, spread(positive));
  auto want = eval::evaluate(*mp, *plain, in);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(differing(got[i], want[i]), 0) << "result #" << i;
}

template <typename OpT, typename... A>
ir::ExprPtr call(Exprs args, A&&... a) {
  return sema::make_op_call(std::make_shared<const OpT>(std::forward<A>(a)...), std::move(args));
}
ir::ExprPtr binary(ops::BinaryKind k, const ir::ExprPtr& a, const ir::ExprPtr& b) { return call<ops::Binary>({a, b}, k); }
ir::ExprPtr unary(ops::UnaryKind k, const ir::ExprPtr& a) { return call<ops::Unary>({a}, k); }
ir::ExprPtr reduce(const ir::ExprPtr& x, std::vector<int64_t> axes, bool keep, ops::ReduceKind k) {
  return call<ops::Reduce>({x}, std::move(axes), keep, k);
}

const ir::Shape kS{8, 16};
using ops::BinaryKind;
using ops::UnaryKind;

// ---- Binary (test_sharding_partial.cc) ---------------------------------------

TEST(VirtualMesh, Binary_AddBothPartialSumPasses) {
  for (DType dt : {DType::kF32, DType::kI64})
    check_same_answer({{kS, {kPSum}, dt, -50, 50}, {kS, {kPSum}, dt, -50, 50}},
                      [](auto& p) { return binary(BinaryKind::kAdd, p[0], p[1]); });
}

TEST(VirtualMesh, Binary_AddOnePartialMaxOrMinWithBroadcastPasses) {
  for (Reduction r : {Reduction::kMax, Reduction::kMin}) {
    check_same_answer({{kS, {partial(r)}}, {kS, {kB}}}, [](auto& p) { return binary(BinaryKind::kAdd, p[0], p[1]); });
    check_same_answer({{kS, {}}, {kS, {partial(r)}}}, [](auto& p) { return binary(BinaryKind::kAdd, p[0], p[1]); });
  }
}

TEST(VirtualMesh, Binary_MulOnePartialSumPasses) {
  check_same_answer({{kS, {kB}}, {kS, {kPSum}}}, [](auto& p) { return binary(BinaryKind::kMul, p[0], p[1]); });
  check_same_answer({{kS, {kPSum}, DType::kI64, -9, 9}, {kS, {}, DType::kI64, -9, 9}},
                    [](auto& p) { return binary(BinaryKind::kMul, p[0], p[1]); });
}

TEST(VirtualMesh, Binary_AddTwoPartialsOnDifferentAxesRejected) {
  // Its accepted half: Partial on the same mesh axis of a (2, 2) mesh.
  check_same_answer({{kS, {kPSum, kB}}, {kS, {kPSum, kB}}}, [](auto& p) { return binary(BinaryKind::kAdd, p[0], p[1]); });
}

TEST(VirtualMesh, Binary_SplitOperandsPropagateSplit) {
  check_same_answer({{kS, {split(0)}}, {kS, {}}}, [](auto& p) { return binary(BinaryKind::kSub, p[0], p[1]); });
}

// ---- Where, Clamp, Bitcast -------------------------------------------------------

TEST(VirtualMesh, Where_SplitOperandsAlignAndPartialIsRejected) {
  check_same_answer({{kS, {split(0)}}, {kS, {}}, {kS, {split(0)}}}, [](auto& p) {
    return call<ops::Where>({binary(BinaryKind::kLt, p[0], p[1]), p[2], p[1]});
  });
}

TEST(VirtualMesh, Clamp_MonotoneCommutesWithMaxMinNotSum) {
  for (Reduction r : {Reduction::kMax, Reduction::kMin})
    check_same_answer({{kS, {partial(r)}, DType::kF32, -3.0, 3.0}}, [](auto& p) { return call<ops::Clamp>({p[0]}, -1.0, 2.0); });
}

TEST(VirtualMesh, Bitcast_KeepsSplitRejectsEveryPartial) {
  check_same_answer({{kS, {split(0)}}}, [](auto& p) { return call<ops::Bitcast>({p[0]}, DType::kI32); });
}

// ---- Unary -------------------------------------------------------------------

TEST(VirtualMesh, Unary_MonotoneCommutesWithMaxMinNotSum) {
  for (UnaryKind k : {UnaryKind::kExp, UnaryKind::kLog, UnaryKind::kRelu, UnaryKind::kCeil, UnaryKind::kRound,
                      UnaryKind::kExp2, UnaryKind::kLog2}) {
    bool log = k == UnaryKind::kLog || k == UnaryKind::kLog2;  // the rule claims x (and its shares) > 0
    for (Reduction r : {Reduction::kMax, Reduction::kMin}) {
      SCOPED_TRACE(std::string(ops::unary_kind_name(k)) + " / " + std::string(ir::reduction_name(r)));
      check_same_answer({{kS, {partial(r)}, DType::kF32, log ? 0.1 : -3.0, 3.0}},
                        [k](auto& p) { return unary(k, p[0]); }, log);
    }
  }
}

TEST(VirtualMesh, Unary_NegIsLinearCommutesWithSumNotMaxMin) {
  check_same_answer({{kS, {kPSum}}}, [](auto& p) { return unary(UnaryKind::kNeg, p[0]); });
  check_same_answer({{kS, {kPSum}, DType::kI64, -99, 99}}, [](auto& p) { return unary(UnaryKind::kNeg, p[0]); });
}

// ---- Reduce ------------------------------------------------------------------

TEST(VirtualMesh, Reduce_SumMeanCommuteWithSumOnly) {
  for (auto k : {ops::ReduceKind::kSum, ops::ReduceKind::kMean})
    check_same_answer({{kS, {kPSum}}}, [k](auto& p) { return reduce(p[0], {1}, false, k); });
}

TEST(VirtualMesh, Reduce_MaxCommutesWithMaxOnly) {
  check_same_answer({{kS, {kPMax}}}, [](auto& p) { return reduce(p[0], {0}, true, ops::ReduceKind::kMax); });
  check_same_answer({{kS, {kPMax}, DType::kI64, -50, 50}},
                    [](auto& p) { return reduce(p[0], {0, 1}, false, ops::ReduceKind::kMax); });
}

// Runs through the virtual mesh's collective path (assemble, reduce, hand
// out), so it checks the collapsed Broadcast size-1 stride-0 layout, not a
// per-instance kernel.
TEST(VirtualMesh, Reduce_SplitPositionOfReducedAxisCollapsesToBroadcastSize1Stride0) {
  for (auto k : {ops::ReduceKind::kSum, ops::ReduceKind::kMax, ops::ReduceKind::kMean})
    check_same_answer({{kS, {split(0)}}}, [k](auto& p) { return reduce(p[0], {0}, true, k); });
}

TEST(VirtualMesh, Reduce_SplitOfKeptAxisIsRenumbered) {
  check_same_answer({{kS, {split(1)}}}, [](auto& p) { return reduce(p[0], {0}, false, ops::ReduceKind::kMax); });
}

// ---- MatMul ------------------------------------------------------------------

TEST(VirtualMesh, MatMul_OnePartialSumWithReplicatedOtherPasses) {
  check_same_answer({{kS, {kPSum}}, {{16, 4}, {}}}, [](auto& p) { return call<ops::MatMul>({p[0], p[1]}); });
  check_same_answer({{{2, 8}, {}}, {kS, {kPSum}}}, [](auto& p) { return call<ops::MatMul>({p[0], p[1]}); });
}

TEST(VirtualMesh, MatMul_SplitRowsAndKSplitPropagate) {
  check_same_answer({{kS, {split(0)}}, {{16, 4}, {}}}, [](auto& p) { return call<ops::MatMul>({p[0], p[1]}); });
  // K split on both: per-instance partial products, Partial(sum).
  check_same_answer({{kS, {split(1)}}, {{16, 4}, {split(0)}}}, [](auto& p) { return call<ops::MatMul>({p[0], p[1]}); });
}

// ---- nn elementwise and normalizations -----------------------------------------

TEST(VirtualMesh, ReLUSigmoidTanh_MonotoneCommuteWithMaxMinNotSum) {
  for (Reduction r : {Reduction::kMax, Reduction::kMin}) {
    check_same_answer({{kS, {partial(r)}}}, [](auto& p) { return call<ops::ReLU>({p[0]}); });
    check_same_answer({{kS, {partial(r)}}}, [](auto& p) { return call<ops::Sigmoid>({p[0]}); });
    check_same_answer({{kS, {partial(r)}}}, [](auto& p) { return call<ops::Tanh>({p[0]}); });
  }
}

TEST(VirtualMesh, Gelu_NotMonotoneRejectsAnyPartial) {
  check_same_answer({{kS, {kB}}}, [](auto& p) { return call<ops::Gelu>({p[0]}, "tanh"); });  // accepted: Broadcast
}

TEST(VirtualMesh, Silu_NotMonotoneRejectsAnyPartial) {
  check_same_answer({{kS, {split(0)}}}, [](auto& p) { return call<ops::Silu>({p[0]}); });  // accepted: Split rows
}

TEST(VirtualMesh, RMSNorm_RejectsAnyPartialOperand) {
  check_same_answer({{kS, {split(0)}}, {{16}, {}}}, [](auto& p) { return call<ops::RMSNorm>({p[0], p[1]}, 1e-6); });
}

// ---- Reshape (view rule; the Split-divide is test_virtual_mesh_reshape.cc) ------

TEST(VirtualMesh, Reshape_FullyBroadcastInputReshapesToPlainOutput) {
  check_same_answer({{kS, {kB}}}, [](auto& p) { return call<ops::Reshape>({p[0]}, ir::Shape{ir::ShapeDim(128)}); });
}

TEST(VirtualMesh, Reshape_ViewOverWholeLayoutPositionsCarriesSplit) {
  check_same_answer({{kS, {split(0)}}}, [](auto& p) { return call<ops::Reshape>({p[0]}, ir::Shape{4, 32}); });
  check_same_answer({{kS, {split(0)}}}, [](auto& p) { return call<ops::Reshape>({p[0]}, ir::Shape{1, 8, 16, 1}); });
}

TEST(VirtualMesh, Reshape_PartialCarriesThroughUnchanged) {
  check_same_answer({{kS, {kPSum}}}, [](auto& p) { return call<ops::Reshape>({p[0]}, ir::Shape{ir::ShapeDim(128)}); });
}

// ---- Gather (test_sharding_layouts.cc) -------------------------------------------

TEST(VirtualMesh, Gather_SplitOnGatheredAxisBecomesPartialSum) {
  check_same_answer({{kS, {split(0)}}, {{5}, {}, DType::kI64, 0, 7}},
                    [](auto& p) { return call<ops::Gather>({p[0], p[1]}, 0, 0); });
}

TEST(VirtualMesh, Gather_SplitOnOtherAxisIsRenumbered) {
  check_same_answer({{{8, 16, 4}, {split(2)}}, {{2, 3}, {}, DType::kI64, 0, 7}},
                    [](auto& p) { return call<ops::Gather>({p[0], p[1]}, 0, 0); });
}

TEST(VirtualMesh, Gather_OutputLayoutIsNaturalContiguousNotInherited) {
  auto l = ir::ShardLayout::make(mesh_of(1), {split(1)}, {16, 4, 1}, ir::Shape{1, 16, 0});
  check_same_answer({{{16, 4}, {}, DType::kF32, -2, 2, l}, {{5}, {}, DType::kI64, 0, 15}},
                    [](auto& p) { return call<ops::Gather>({p[0], p[1]}, 0, 0); });
}

TEST(VirtualMesh, Gather_BroadcastAndPartialCarryThrough) {
  check_same_answer({{kS, {kB, kPMax}}, {{3}, {}, DType::kI64, 0, 15}},
                    [](auto& p) { return call<ops::Gather>({p[0], p[1]}, 1, 0); });
  check_same_answer({{kS, {kPSum}}, {{3}, {}, DType::kI64, 0, 7}},
                    [](auto& p) { return call<ops::Gather>({p[0], p[1]}, 0, 0); });
}

// ---- TopK ------------------------------------------------------------------------

TEST(VirtualMesh, TopK_LayoutExtentOfSelectedAxisBecomesK) {
  for (bool largest : {true, false})  // both fields: values and i64 indices
    check_same_answer({{kS, {split(0)}}}, [largest](auto& p) {
      return call<ops::TopK>({p[0]}, ir::ShapeDim(3), 1, largest, true);
    });
}

// ---- InsertSlice / CacheUpdate -----------------------------------------------------

TEST(VirtualMesh, InsertSlice_PartialDstRequiresIdenticalUpdateState) {
  for (Reduction r : {Reduction::kSum, Reduction::kMax}) {
    check_same_answer({{{8}, {partial(r)}}, {{2}, {partial(r)}}}, [](auto& p) {
      auto off = ir::Constant::make_int(3, DType::kI64);
      return call<ops::InsertSlice>({p[0], p[1], off}, std::vector<std::optional<int64_t>>{std::optional<int64_t>(3)});
    });
  }
}

TEST(VirtualMesh, CacheUpdate_PartialCacheRequiresIdenticalNewState) {
  // cur_pos = 5, s = 2: writes new[:, :2] at cache[:, 5:7].
  check_same_answer({{{1, 8, 2, 4}, {kPSum}},
                     {{}, {}, DType::kI32, 5, 5},
                     {{}, {}, DType::kI32, 2, 2},
                     {{1, 3, 2, 4}, {kPSum}}},
                    [](auto& p) { return call<ops::CacheUpdate>({p[0], p[1], p[2], p[3]}); });
}

// ---- RoPE / Conv2D -------------------------------------------------------------------

TEST(VirtualMesh, RoPE_BranchPreservesOnePartialSumWhenCachesReplicated) {
  check_same_answer({{{1, 4, 2, 8}, {kPSum}},
                     {{1, 4, 2, 8}, {}},
                     {{16, 8}, {}},
                     {{16, 8}, {}},
                     {{1, 4}, {}, DType::kI64, 0, 15}},
                    [](auto& p) { return call<ops::RoPE>({p[0], p[1], p[2], p[3], p[4]}); });
}

TEST(VirtualMesh, Conv2D_PartialSumInputPreservedOnlyWithReplicatedWeight) {
  // Without a bias (see Conv2D_PartialSumWithReplicatedBiasAddsTheBiasPerInstance).
  using V = std::vector<int64_t>;
  check_same_answer({{{1, 2, 5, 5}, {kPSum}}, {{3, 2, 3, 3}, {}}}, [](auto& p) {
    return call<ops::Conv2D>({p[0], p[1], ir::Tuple::make({})}, V{1, 1}, V{1, 1}, V{1, 1}, 1);
  });
}

// ---- Cast (rule_cast: a ShardLayout input keeps its layout) -------------------------

TEST(VirtualMesh, Cast_KeepsPartialForMonotoneAndExactConversions) {
  check_same_answer({{kS, {kPMax}}}, [](auto& p) { return call<ops::Cast>({p[0]}, DType::kI32); });
  check_same_answer({{kS, {kPMin}, DType::kI64, -99, 99}}, [](auto& p) { return call<ops::Cast>({p[0]}, DType::kF32); });
  check_same_answer({{kS, {kPSum}, DType::kI32, -99, 99}}, [](auto& p) { return call<ops::Cast>({p[0]}, DType::kI64); });
}

// ---- Reshard / Local / Function boundary ---------------------------------------------

ir::ExprPtr reshard_to(const ir::ExprPtr& x, Attrs logical) {
  const ir::TensorType* t = ir::as_tensor(x->type());
  auto l = ops::shard::canonical_layout(mesh_of(logical.size()), logical, t->shape());
  return call<ops::Reshard>({x}, l, std::nullopt);
}

// Reshard is the virtual mesh's collective path (assemble, hand out); the
// per-instance op after it is what checks the new layout.
TEST(VirtualMesh, Reshard_PreservesLogicalShapeAndCompletesPartial) {
  check_same_answer({{kS, {kPSum}}}, [](auto& p) {
    bool sharded = ir::as_tensor(p[0]->type())->layout() != nullptr;  // the plain twin has nothing to complete
    return call<ops::Gelu>({sharded ? reshard_to(p[0], {kB}) : p[0]}, "tanh");
  });
}

TEST(VirtualMesh, Reshard_CrossCtaOwnershipChangeRecordsGridBarrier) {
  // Split rows -> Split columns (and plain -> Split rows), then a per-instance op.
  check_same_answer({{kS, {split(0)}}}, [](auto& p) { return unary(UnaryKind::kNeg, reshard_to(p[0], {split(1)})); });
  check_same_answer({{kS, {}}, {kS, {split(0)}}}, [](auto& p) {
    return binary(BinaryKind::kAdd, reshard_to(p[0], {split(0)}), p[1]);
  });
}

// local(x) is one instance's block; the result (a plain type) is read from
// instance 0, so it must be x's first block of rows.
TEST(VirtualMesh, Local_ContractsEachSplitAxisByMeshExtent) {
  for (bool verbose : {false, true}) {
    ir::LayoutPtr l = verbose ? ir::LayoutPtr(ir::ShardLayout::make(mesh_of(1), {split(0)}, {8, 16},
                                                                    ir::Shape{16, 1}))
                              : ops::shard::canonical_layout(mesh_of(1), {split(0)}, kS);
    std::vector<Param> ps{{kS, {}, DType::kF32, -2, 2, l}};
    auto fn = make_fn(ps, [](auto& p) { return unary(UnaryKind::kNeg, call<ops::Local>({p[0]})); }, true);
    auto m = ir::Module::make(ir::Target::default_cpu(), {fn});
    auto in = inputs_for(ps);
    auto got = spmd::evaluate_virtual_mesh(*m, *fn, in, spread());
    ASSERT_EQ(got[0].shape(), (std::vector<int64_t>{2, 16}));
    for (int64_t i = 0; i < 32; ++i)
      EXPECT_EQ(static_cast<const float*>(got[0].data())[i], -static_cast<const float*>(in[0].data())[i]) << i;
  }
}

TEST(VirtualMesh, FunctionBoundary_PartialReturnTypeAllowedAndPreservedInTuple) {
  check_same_answer({{kS, {kPSum}}, {kS, {kPSum}}}, [](auto& p) {
    return ir::Tuple::make({binary(BinaryKind::kAdd, p[0], p[1]), p[0]});
  });
}

// ---- Rejected rules really are wrong -----------------------------------------------------
// Typing rejects these; here the Call gets a hand-built result type (the one a
// careless rule would give), bypassing typeinfer, and the virtual mesh's
// answer must differ from the unsharded program's.

// A Call of `op` whose sharded twin's type is forced to carry `attrs`.
Build forced(std::function<ir::OpPtr()> op, Attrs attrs) {
  return [op, attrs](const Exprs& p) -> ir::ExprPtr {
    if (!ir::as_tensor(p[0]->type())->layout()) return sema::make_op_call(op(), p);
    Exprs logical;  // the operands' logical types, for the result's shape and dtype
    for (const auto& e : p) {
      const ir::TensorType* t = ir::as_tensor(e->type());
      logical.push_back(ir::Var::make("v", ir::TensorType::make(t->shape(), t->dtype())));
    }
    auto typed = sema::make_op_call(op(), logical);
    const ir::TensorType* t = ir::as_tensor(typed->type());
    auto l = ops::shard::canonical_layout(mesh_of(attrs.size()), attrs, t->shape());
    return ir::Call::make_op(op(), p, ir::TensorType::make(t->shape(), t->dtype(), l));
  };
}

// Inputs where the forced rule is wrong: the count of differing elements.
int64_t wrong_elements(const std::vector<Param>& ps, const Build& body) {
  auto sharded = make_fn(ps, body, true);
  auto plain = make_fn(ps, body, false);
  auto m = ir::Module::make(ir::Target::default_cpu(), {sharded});
  auto mp = ir::Module::make(ir::Target::default_cpu(), {plain});
  auto in = inputs_for(ps);
  return differing(spmd::evaluate_virtual_mesh(*m, *sharded, in, spread())[0], eval::evaluate(*mp, *plain, in)[0]);
}

template <typename OpT, typename... A>
std::function<ir::OpPtr()> op_of(A... a) {
  return [=] { return std::make_shared<const OpT>(a...); };
}

TEST(VirtualMesh, Rejected_Unary_ExpOfPartialSumIsWrong) {
  EXPECT_GT(wrong_elements({{kS, {kPSum}}}, forced(op_of<ops::Unary>(UnaryKind::kExp), {kPSum})), 0);
}

TEST(VirtualMesh, Rejected_Binary_AddBothPartialMaxIsWrong) {
  EXPECT_GT(wrong_elements({{kS, {kPMax}}, {kS, {kPMax}}}, forced(op_of<ops::Binary>(BinaryKind::kAdd), {kPMax})), 0);
}

TEST(VirtualMesh, Rejected_Binary_AddOnePartialSumWithPlainIsWrong) {
  EXPECT_GT(wrong_elements({{kS, {kPSum}}, {kS, {}}}, forced(op_of<ops::Binary>(BinaryKind::kAdd), {kPSum})), 0);
}

TEST(VirtualMesh, Rejected_Binary_MulPartialMaxByNegativeReplicatedIsWrong) {
  EXPECT_GT(wrong_elements({{kS, {kPMax}}, {kS, {}, DType::kF32, -2, -0.5}},
                           forced(op_of<ops::Binary>(BinaryKind::kMul), {kPMax})),
            0);
}

TEST(VirtualMesh, Rejected_Reduce_AbsMaxOfPartialMaxIsWrong) {
  EXPECT_GT(wrong_elements({{kS, {kPMax}}},
                           forced(op_of<ops::Reduce>(std::vector<int64_t>{1}, false, ops::ReduceKind::kAbsMax), {kPMax})),
            0);
}

// ---- Rules that were once accepted and found wrong here ---------------------------
// Both are rejected by typeinfer now (HirConformance.Conv2D_PartialSumInputWithABiasRejected,
// HirConformance.Cast_KeepsTheLayoutAndOnlyPartialsTheConversionCommutesWith); these
// tests force the old typing and pin that its answer was wrong.

TEST(VirtualMesh, Rejected_Conv2D_PartialSumWithABiasAddsTheBiasPerInstance) {
  // conv(Σ xᵢ) + b != Σ (conv(xᵢ) + b) = conv(x) + 4b: with a bias conv2d is affine.
  using V = std::vector<int64_t>;
  std::vector<Param> ps{{{1, 2, 5, 5}, {kPSum}}, {{3, 2, 3, 3}, {}}, {{3}, {}, DType::kF32, 0.5, 2}};
  EXPECT_GT(wrong_elements(ps, forced(op_of<ops::Conv2D>(V{1, 1}, V{0, 0}, V{1, 1}, int64_t{1}), {kPSum})), 0);
}

TEST(VirtualMesh, Rejected_Cast_PartialSumToAnIntegerDtypeTruncatesEachShare) {
  // trunc(Σ xᵢ) != Σ trunc(xᵢ) for fractional shares.
  EXPECT_GT(wrong_elements({{kS, {kPSum}}}, forced(op_of<ops::Cast>(DType::kI32), {kPSum})), 0);
}

}  // namespace
}  // namespace tf
