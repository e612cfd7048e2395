// The SPMD executor over the in-process mesh: every Reshard direction and
// Partial reduction on 1-D and 2-D device meshes, loops and calls with
// collectives inside, the tensor-parallel MLP, and failures that must
// surface as errors on every rank instead of hangs. Each program runs on
// its ranks (threads, one communicator each, recording the collectives they
// call) and is compared with the plain evaluator on the logical tensors.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cmath>
#include <random>
#include <thread>

#include "core/eval/evaluator.h"
#include "core/frontend/parser.h"
#include "core/ir/error.h"
#include "core/sema/bind.h"
#include "core/spmd/blocks.h"
#include "core/spmd/executor.h"
#include "core/spmd/local_mesh.h"
#include "core/spmd/segments.h"
#include "core/spmd/virtual_mesh.h"
#include "spmd/mesh_run.h"

namespace tf {
namespace {
using runtime::NDArray;
using namespace testing_spmd;

const char* kHeader = R"(from tilefoundry.dsl import *
TARGET = Target("cpu", topology=(("device", 4), ("cta", 1)))
d4 = Mesh(topology="device", shape=(4,), axes=("tp",))
d22 = Mesh(topology="device", shape=(2, 2), axes=("dp", "tp"))
)";

ir::ModulePtr parse(const std::string& src) { return frontend::parse_module(std::string(kHeader) + src, "spmd.tf"); }

// reshard(x) from `from` to `to` keeps the logical value, through `calls`
// (the collectives every rank makes, in order).
void expect_reshard(const std::string& mesh, const std::string& from, const std::string& to,
                    const std::vector<std::string>& calls) {
  const std::string src = "@func\ndef f(x: Tensor[(8, 12), f32, ShardLayout(" + mesh + ", (" + from +
                          ",))]) -> Tensor[(8, 12), f32, ShardLayout(" + mesh + ", (" + to +
                          ",))]:\n    return reshard(x, layout=ShardLayout(" + mesh + ", (" + to + ",)))\n";
  SCOPED_TRACE(from + " -> " + to);
  ir::ModulePtr m = parse(src);
  std::mt19937 rng(3);
  NDArray x = random_f32({8, 12}, rng);
  MeshRun run = run_on_mesh(*m, *m->lookup("f"), {x});
  expect_close(run.results[0], x, src);
  for (const auto& c : run.calls) EXPECT_EQ(c, calls);
}

TEST(Spmd, ReshardOnOneAxisIsOneCollective) {
  expect_reshard("d4", "Partial(\"sum\")", "Broadcast()", {"all_reduce@0"});
  expect_reshard("d4", "Partial(\"max\")", "Broadcast()", {"all_reduce@0"});
  expect_reshard("d4", "Partial(\"min\")", "Broadcast()", {"all_reduce@0"});
  expect_reshard("d4", "Partial(\"sum\")", "Split(axis=0)", {"reduce_scatter@0"});
  expect_reshard("d4", "Partial(\"max\")", "Split(axis=1)", {"reduce_scatter@0"});
  expect_reshard("d4", "Split(axis=0)", "Broadcast()", {"all_gather@0"});
  expect_reshard("d4", "Split(axis=1)", "Broadcast()", {"all_gather@0"});
  expect_reshard("d4", "Split(axis=0)", "Split(axis=1)", {"all_to_all@0"});
  expect_reshard("d4", "Split(axis=1)", "Split(axis=0)", {"all_to_all@0"});
  expect_reshard("d4", "Broadcast()", "Split(axis=0)", {});
  expect_reshard("d4", "Broadcast()", "Split(axis=1)", {});
  expect_reshard("d4", "Split(axis=1)", "Split(axis=1)", {});
}

TEST(Spmd, ReshardsToPartialGoThroughBroadcast) {
  // Broadcast -> Partial keeps the value on coordinate 0: no communication.
  expect_reshard("d4", "Broadcast()", "Partial(\"sum\")", {});
  expect_reshard("d4", "Split(axis=0)", "Partial(\"sum\")", {"all_gather@0"});
  expect_reshard("d4", "Partial(\"sum\")", "Partial(\"max\")", {"all_reduce@0"});
}

TEST(Spmd, AReshardNoStepsCanMakeGathersTheLogicalValue) {
  // Mesh axis 1 still splits tensor axis 0 after the move, so axis 0's block
  // is not one block of the result: the logical value is gathered (one
  // all-gather per mesh axis, the last first) and the rank's share kept.
  expect_reshard("d22", "Split(axis=0), Split(axis=0)", "Broadcast(), Split(axis=0)",
                 {"all_gather@1", "all_gather@0"});
}

TEST(Spmd, ReshardOnATwoByTwoMesh) {
  expect_reshard("d22", "Split(axis=0), Partial(\"sum\")", "Split(axis=0), Broadcast()", {"all_reduce@1"});
  expect_reshard("d22", "Split(axis=0), Split(axis=1)", "Broadcast(), Split(axis=1)", {"all_gather@0"});
  expect_reshard("d22", "Split(axis=0), Split(axis=1)", "Split(axis=0), Broadcast()", {"all_gather@1"});
  expect_reshard("d22", "Partial(\"sum\"), Split(axis=1)", "Split(axis=0), Split(axis=1)", {"reduce_scatter@0"});
  expect_reshard("d22", "Split(axis=0), Split(axis=1)", "Split(axis=1), Split(axis=0)",
                 {"all_gather@1", "all_gather@0"});
  expect_reshard("d22", "Split(axis=0), Broadcast()", "Split(axis=0), Split(axis=1)", {});
  // Several axes: each to Broadcast (innermost first), then each to its
  // target (outermost first), one collective or slice per step.
  expect_reshard("d22", "Broadcast(), Split(axis=1)", "Split(axis=1), Split(axis=0)", {"all_gather@1"});
  expect_reshard("d22", "Partial(\"sum\"), Partial(\"sum\")", "Broadcast(), Broadcast()",
                 {"all_reduce@1", "all_reduce@0"});
  // Both mesh axes split axis 0: the inner one's blocks are blocks of the
  // outer one's, so gathering it is one all-gather.
  expect_reshard("d22", "Split(axis=0), Split(axis=0)", "Split(axis=0), Broadcast()", {"all_gather@1"});
  expect_reshard("d22", "Split(axis=0), Broadcast()", "Split(axis=0), Split(axis=0)", {});
}

TEST(Spmd, TensorParallelMlpMatchesThePlainProgram) {
  ir::ModulePtr m = parse(R"(
dev = Mesh(topology="device", shape=(4,), axes=("tp",))

@func
def mlp(x: Tensor[(4, 8), f32, ShardLayout(dev, (Broadcast(),))],
        w1: Tensor[(8, 16), f32, ShardLayout(dev, (Split(axis=1),))],
        w2: Tensor[(16, 8), f32, ShardLayout(dev, (Split(axis=0),))],
        g: Tensor[(8,), f32, ShardLayout(dev, (Broadcast(),))]) -> Tensor[(4, 8), f32, ShardLayout(dev, (Broadcast(),))]:
    y = silu(x @ w1) @ w2
    y = reshard(y, layout=ShardLayout(dev, (Broadcast(),)))
    return rms_norm(y + x, g, eps=1e-6)

@func
def plain(x: Tensor[(4, 8), f32], w1: Tensor[(8, 16), f32], w2: Tensor[(16, 8), f32], g: Tensor[(8,), f32]) -> Tensor[(4, 8), f32]:
    return rms_norm(silu(x @ w1) @ w2 + x, g, eps=1e-6)
)");
  std::mt19937 rng(5);
  std::vector<NDArray> in{random_f32({4, 8}, rng), random_f32({8, 16}, rng), random_f32({16, 8}, rng),
                          random_f32({8}, rng)};
  NDArray want = eval::evaluate(*m, *m->lookup("plain"), in)[0];
  MeshRun run = run_on_mesh(*m, *m->lookup("mlp"), in);
  expect_close(run.results[0], want, "mlp");
  // One all-reduce of the [4, 8] partial product: the minimum the types need.
  for (const auto& c : run.calls) EXPECT_EQ(c, std::vector<std::string>{"all_reduce@0"});
  EXPECT_EQ(run.elements_sent, 4 * 8);
  expect_close(spmd::evaluate_virtual_mesh(*m, *m->lookup("mlp"), in)[0], want, "virtual mesh");
}

// The same block over symbolic extents: one kernel serves every size, its
// DimVars bound on each rank from the shares (F from w1's split axis as the
// share's extent times the mesh's).
TEST(Spmd, TensorParallelMlpOverSymbolicExtents) {
  ir::ModulePtr m = parse(R"(
dev = Mesh(topology="device", shape=(4,), axes=("tp",))
B = DimVar("B", 1, 1024)
D = DimVar("D", 1, 1024)
F = DimVar("F", 1, 4096)

@func
def mlp(x: Tensor[(B, D), f32, ShardLayout(dev, (Broadcast(),))],
        w1: Tensor[(D, F), f32, ShardLayout(dev, (Split(axis=1),))],
        w2: Tensor[(F, D), f32, ShardLayout(dev, (Split(axis=0),))],
        g: Tensor[(D,), f32, ShardLayout(dev, (Broadcast(),))]) -> Tensor[(B, D), f32, ShardLayout(dev, (Broadcast(),))]:
    y = silu(x @ w1) @ w2
    y = reshard(y, layout=ShardLayout(dev, (Broadcast(),)))
    return rms_norm(y + x, g, eps=1e-6)

@func
def plain(x: Tensor[(B, D), f32], w1: Tensor[(D, F), f32], w2: Tensor[(F, D), f32], g: Tensor[(D,), f32]) -> Tensor[(B, D), f32]:
    return rms_norm(silu(x @ w1) @ w2 + x, g, eps=1e-6)
)");
  const ir::TensorType& w1 = *ir::as_tensor(m->lookup("mlp")->params()[1]->type());
  EXPECT_EQ(w1.layout()->to_string(),
            "ShardLayout(dev, (Split(pos=1),), layout=Layout((D, 4, F // 4), strides=((F // 4) * 4, F // 4, 1)))");
  // Two native segments around the all-reduce: the matmuls and silu on the
  // rank's shares, then the residual and rms_norm on the reduced value.
  auto plan = spmd::plan_segments(*m->lookup("mlp"));
  EXPECT_EQ(plan->fallback_reason(), "");
  ASSERT_EQ(plan->segments().size(), 2u);
  EXPECT_EQ(plan->segments()[0].outputs.size(), 1u);
  EXPECT_EQ(plan->segments()[1].inputs.size(), 3u);  // the reduced value, x and g
  std::mt19937 rng(7);
  for (auto [b, d, f] : {std::array<int64_t, 3>{4, 8, 16}, {3, 12, 40}}) {
    SCOPED_TRACE("B=" + std::to_string(b) + " D=" + std::to_string(d) + " F=" + std::to_string(f));
    std::vector<NDArray> in{random_f32({b, d}, rng), random_f32({d, f}, rng), random_f32({f, d}, rng),
                            random_f32({d}, rng)};
    NDArray want = eval::evaluate(*m, *m->lookup("plain"), in)[0];
    MeshRun run = run_on_mesh(*m, *m->lookup("mlp"), in);
    expect_close(run.results[0], want, "mlp");
    EXPECT_EQ(run.elements_sent, b * d);
    expect_close(spmd::evaluate_virtual_mesh(*m, *m->lookup("mlp"), in)[0], want, "virtual mesh");
  }
  // F = 18 has no four equal shares.
  std::vector<NDArray> odd{random_f32({2, 8}, rng), random_f32({8, 18}, rng), random_f32({18, 8}, rng),
                           random_f32({8}, rng)};
  try {
    spmd::evaluate_virtual_mesh(*m, *m->lookup("mlp"), odd);
    ADD_FAILURE() << "F = 18 ran on 4 shares";
  } catch (const ir::Error& e) {
    EXPECT_NE(std::string(e.what()).find("has extent 18, which its 4 shares do not divide"), std::string::npos)
        << e.what();
  }
}

// A DimVar bound whole by one parameter and split by another must divide;
// a share of the wrong extent names the share it should be.
TEST(Spmd, SymbolicSharesAreCheckedAgainstTheirDimVars) {
  ir::ModulePtr m = parse(R"(
N = DimVar("N", 1, 1024)

@func
def f(a: Tensor[(N,), f32, ShardLayout(d4, (Broadcast(),))],
      b: Tensor[(N,), f32, ShardLayout(d4, (Split(axis=0),))]) -> Tensor[(N,), f32, ShardLayout(d4, (Broadcast(),))]:
    return reshard(b, layout=ShardLayout(d4, (Broadcast(),))) + a
)");
  const ir::Function& fn = *m->lookup("f");
  auto errors_with = [&](int64_t whole, int64_t share) {
    return errors_on_ranks(*m, fn, 4, [&](size_t) {
      return std::vector<NDArray>{NDArray::empty(ir::DType::kF32, {whole}), NDArray::empty(ir::DType::kF32, {share})};
    }, spmd::Agreement::kTrusted)[0];
  };
  EXPECT_EQ(errors_with(12, 3), "");
  std::string e = errors_with(10, 2);
  EXPECT_NE(e.find("input #1 (b): axis 0 has logical extent N = 10, which is not divisible by its 4 shares"),
            std::string::npos)
      << e;
  e = errors_with(12, 2);
  EXPECT_NE(e.find("DimVar N = 12"), std::string::npos) << e;
}

TEST(Spmd, CollectivesRunInsideLoopsAndCalledFunctions) {
  ir::ModulePtr m = parse(R"(
@func
def complete(p: Tensor[(8, 12), f32, ShardLayout(d4, (Partial("sum"),))]) -> Tensor[(8, 12), f32, ShardLayout(d4, (Broadcast(),))]:
    return reshard(p, layout=ShardLayout(d4, (Broadcast(),)))

@func
def looped(x: Tensor[(8, 12), f32, ShardLayout(d4, (Split(axis=1),))],
           w: Tensor[(12, 12), f32, ShardLayout(d4, (Split(axis=0),))]) -> Tensor[(8, 12), f32, ShardLayout(d4, (Split(axis=1),))]:
    h = x
    for i in range(3):
        b = complete(h @ w) * 0.5
        h = reshard(b, layout=ShardLayout(d4, (Split(axis=1),)))
    return h

@func
def plain(x: Tensor[(8, 12), f32], w: Tensor[(12, 12), f32]) -> Tensor[(8, 12), f32]:
    h = x
    for i in range(3):
        h = (h @ w) * 0.5
    return h
)");
  std::mt19937 rng(7);
  std::vector<NDArray> in{random_f32({8, 12}, rng), random_f32({12, 12}, rng)};
  NDArray want = eval::evaluate(*m, *m->lookup("plain"), in)[0];
  // The loop body runs natively too: h @ w before the call's all-reduce,
  // the scaling after it.
  const ir::GridRegionExpr* loop = find_loop(m->lookup("looped")->body());
  ASSERT_NE(loop, nullptr);
  auto plan = spmd::plan_segments(*m->lookup("looped"));
  ASSERT_NE(plan->nested(loop), nullptr);
  EXPECT_EQ(plan->nested(loop)->segments().size(), 2u);
  MeshRun run = run_on_mesh(*m, *m->lookup("looped"), in);
  expect_close(run.results[0], want, "looped");
  const std::vector<std::string> three(3, "all_reduce@0");
  for (const auto& c : run.calls) EXPECT_EQ(c, three);
  expect_close(spmd::evaluate_virtual_mesh(*m, *m->lookup("looped"), in)[0], want, "virtual mesh");
}

// Segments around a loop, with a tuple-valued op and constants inside
// them: the native run (run_on_mesh's second run) must
// agree with the evaluator's kernels and with the unsharded program.
TEST(Spmd, NativeSegmentsAroundLoopsTuplesAndConstants) {
  ir::ModulePtr m = parse(R"(
@func
def mixed(x: Tensor[(8, 12), f32, ShardLayout(d4, (Split(axis=1),))],
          w: Tensor[(12, 12), f32, ShardLayout(d4, (Split(axis=0),))]) -> Tensor[(8, 12), f32, ShardLayout(d4, (Broadcast(),))]:
    p = (x * 0.5) @ w
    b = reshard(p, layout=ShardLayout(d4, (Broadcast(),)))
    h = b
    for i in range(2):
        h = h * 0.5 + b
    v, idx = topk(h + b, k=12)
    return exp(v * 0.1) * (h + 1.0)

@func
def plain(x: Tensor[(8, 12), f32], w: Tensor[(12, 12), f32]) -> Tensor[(8, 12), f32]:
    b = (x * 0.5) @ w
    h = b
    for i in range(2):
        h = h * 0.5 + b
    v, idx = topk(h + b, k=12)
    return exp(v * 0.1) * (h + 1.0)
)");
  const ir::Function& fn = *m->lookup("mixed");
  auto plan = spmd::plan_segments(fn);
  EXPECT_EQ(plan->fallback_reason(), "");
  EXPECT_EQ(plan->segments().size(), 2u);  // before the all-reduce; after the loop
  std::mt19937 rng(11);
  std::vector<NDArray> in{random_f32({8, 12}, rng), random_f32({12, 12}, rng)};
  NDArray want = eval::evaluate(*m, *m->lookup("plain"), in)[0];
  MeshRun run = run_on_mesh(*m, fn, in);
  expect_close(run.results[0], want, "mixed");
  for (const auto& c : run.calls) EXPECT_EQ(c, std::vector<std::string>{"all_reduce@0"});
}

TEST(Spmd, AReductionOverASplitAxisInsideALoop) {
  ir::ModulePtr m = parse(R"(
@func
def f(x: Tensor[(8, 12), f32, ShardLayout(d22, (Split(axis=0), Split(axis=1)))]) -> Tensor[(12,), f32, ShardLayout(d22, (Broadcast(), Split(axis=0)))]:
    acc = sum(x, axes=(0,), keepdim=False)
    for i in range(2):
        acc = acc + sum(x * 2.0, axes=(0,), keepdim=False)
    return acc

@func
def plain(x: Tensor[(8, 12), f32]) -> Tensor[(12,), f32]:
    acc = sum(x, axes=(0,), keepdim=False)
    for i in range(2):
        acc = acc + sum(x * 2.0, axes=(0,), keepdim=False)
    return acc
)");
  std::mt19937 rng(9);
  std::vector<NDArray> in{random_f32({8, 12}, rng)};
  NDArray want = eval::evaluate(*m, *m->lookup("plain"), in)[0];
  expect_close(run_on_mesh(*m, *m->lookup("f"), in).results[0], want, "reduce in a loop");
}

// A Reduce over a split axis reduces each rank's block and all-reduces the
// result over the mesh axes that split a reduced axis: the result's
// elements move, not the operand's.
TEST(Spmd, AReduceOverASplitAxisIsALocalReduceAndAnAllReduce) {
  for (const char* reduce : {"sum", "mean", "amax", "abs_max"}) {
    SCOPED_TRACE(reduce);
    ir::ModulePtr m = parse(std::string(R"(
@func
def f(x: Tensor[(8, 12), f32, ShardLayout(d22, (Split(axis=0), Split(axis=1)))]) -> Tensor[(12,), f32, ShardLayout(d22, (Broadcast(), Split(axis=0)))]:
    return )") + reduce + R"((x, axes=(0,), keepdim=False)

@func
def plain(x: Tensor[(8, 12), f32]) -> Tensor[(12,), f32]:
    return )" + reduce + "(x, axes=(0,), keepdim=False)\n");
    std::mt19937 rng(13);
    std::vector<NDArray> in{random_f32({8, 12}, rng)};
    NDArray want = eval::evaluate(*m, *m->lookup("plain"), in)[0];
    MeshRun run = run_on_mesh(*m, *m->lookup("f"), in);
    expect_close(run.results[0], want, reduce);
    for (const auto& c : run.calls) EXPECT_EQ(c, std::vector<std::string>{"all_reduce@0"});
    EXPECT_EQ(run.elements_sent, 6);  // the rank's [6] block of the result
  }
}

TEST(Spmd, RanksThatDisagreeAtACollectiveFailInsteadOfCorrupting) {
  spmd::LocalMesh mesh({2});
  std::string err0, err1;
  std::thread t0([&] {
    try {
      NDArray a = NDArray::empty(ir::DType::kF32, {4});
      mesh.communicator(0)->all_reduce(0, a, ir::Reduction::kSum);
    } catch (const ir::Error& e) {
      err0 = e.what();
      mesh.abort(0, e.what());
    }
  });
  std::thread t1([&] {
    try {
      NDArray a = NDArray::empty(ir::DType::kF32, {4}), out = NDArray::empty(ir::DType::kF32, {8});
      mesh.communicator(1)->all_gather(0, a, out);
    } catch (const ir::Error& e) {
      err1 = e.what();
      mesh.abort(1, e.what());
    }
  });
  t0.join();
  t1.join();
  EXPECT_NE(err0.find("disagree"), std::string::npos) << err0;
  EXPECT_NE(err0.find("all_gather"), std::string::npos) << err0;
  EXPECT_NE(err1.find("disagree"), std::string::npos) << err1;
}

TEST(Spmd, AFailedRankStopsTheOthersAtTheirNextCollective) {
  spmd::LocalMesh mesh({2});
  std::string err;
  std::thread waiter([&] {
    try {
      NDArray a = NDArray::empty(ir::DType::kF32, {4});
      mesh.communicator(0)->all_reduce(0, a, ir::Reduction::kSum);
    } catch (const ir::Error& e) {
      EXPECT_EQ(e.kind(), ir::ErrorKind::kRuntime);
      err = e.what();
    }
  });
  EXPECT_TRUE(mesh.abort(1, "boom"));
  EXPECT_FALSE(mesh.abort(1, "again"));
  waiter.join();
  EXPECT_NE(err.find("rank 1 failed: boom"), std::string::npos) << err;
  // A later collective fails at once.
  NDArray a = NDArray::empty(ir::DType::kF32, {4});
  EXPECT_THROW(mesh.communicator(0)->all_reduce(0, a, ir::Reduction::kSum), ir::Error);
}

TEST(Spmd, ABadShareOnOneRankIsAnErrorOnEveryRank) {
  ir::ModulePtr m = parse(R"(
@func
def f(x: Tensor[(8, 12), f32, ShardLayout(d4, (Split(axis=0),))]) -> Tensor[(8, 12), f32, ShardLayout(d4, (Broadcast(),))]:
    return reshard(x * 2.0, layout=ShardLayout(d4, (Broadcast(),)))
)");
  const ir::Function& fn = *m->lookup("f");
  const std::vector<std::string> errors = errors_on_ranks(*m, fn, 4, [](size_t r) {
    return std::vector<NDArray>{NDArray::empty(ir::DType::kF32, {r == 2 ? int64_t{3} : int64_t{2}, 12})};
  }, spmd::Agreement::kCheck);
  EXPECT_NE(errors[2].find("this rank's share of"), std::string::npos) << errors[2];
  EXPECT_NE(errors[2].find("is f32 (3, 12)"), std::string::npos) << errors[2];
  for (size_t r : {0, 1, 3}) EXPECT_NE(errors[r].find("rank 2 failed"), std::string::npos) << errors[r];
}

// Ranks in separate processes check first that they make the same call.
std::vector<std::string> run_two_functions(const ir::Module& m, const std::string& f0, const std::string& f1,
                                           std::vector<std::vector<std::string>>* calls) {
  spmd::LocalMesh mesh({2, 2});
  std::vector<std::string> errors(4);
  std::vector<std::unique_ptr<Recording>> comms;
  for (size_t r = 0; r < 4; ++r) comms.push_back(std::make_unique<Recording>(mesh.communicator(r)));
  std::vector<std::thread> threads;
  for (size_t r = 0; r < 4; ++r)
    threads.emplace_back([&, r] {
      try {
        const ir::Function& fn = *m.lookup(r == 3 ? f1 : f0);
        spmd::run_rank(m, fn, {NDArray::empty(ir::DType::kF32, {4, 12})}, *comms[r]);
      } catch (const ir::Error& e) {
        errors[r] = e.what();
        mesh.abort(r, e.what());
      }
    });
  for (auto& t : threads) t.join();
  for (auto& c : comms) calls->push_back(c->calls);
  return errors;
}

TEST(Spmd, RanksCheckTheyMakeTheSameCallBeforeAnyCollective) {
  ir::ModulePtr m = parse(R"(
@func
def f(x: Tensor[(8, 12), f32, ShardLayout(d22, (Split(axis=0), Broadcast()))]) -> Tensor[(8, 12), f32, ShardLayout(d22, (Broadcast(), Broadcast()))]:
    return reshard(x, layout=ShardLayout(d22, (Broadcast(), Broadcast())))

@func
def g(x: Tensor[(8, 12), f32, ShardLayout(d22, (Split(axis=0), Broadcast()))]) -> Tensor[(8, 12), f32, ShardLayout(d22, (Broadcast(), Broadcast()))]:
    return reshard(x * 2.0, layout=ShardLayout(d22, (Broadcast(), Broadcast())))
)");
  std::vector<std::vector<std::string>> calls;
  auto errors = run_two_functions(*m, "f", "f", &calls);
  for (size_t r = 0; r < 4; ++r) {
    EXPECT_EQ(errors[r], "") << r;
    // An all-gather of fingerprints per mesh axis (the last first), then the
    // program's collective.
    EXPECT_EQ(calls[r], (std::vector<std::string>{"all_gather@1", "all_gather@0", "all_gather@0"})) << r;
  }
  calls.clear();
  errors = run_two_functions(*m, "f", "g", &calls);
  // Rank 3, at mesh coordinates (1, 1), runs g: every rank says so, rank 0
  // too, which shares no group with it.
  for (size_t r = 0; r < 4; ++r) {
    const std::string others = r == 3 ? "(0, 0), (0, 1), (1, 0)" : "(1, 1)";
    EXPECT_NE(errors[r].find("the ranks do not make the same call: the rank(s) at mesh coordinates " + others +
                             " run another function"),
              std::string::npos)
        << r << ": " << errors[r];
    EXPECT_EQ(calls[r], (std::vector<std::string>{"all_gather@1", "all_gather@0"})) << r;
  }
}

TEST(Spmd, TheCommunicatorMustHaveTheFunctionsMeshShape) {
  ir::ModulePtr m = parse(R"(
@func
def f(x: Tensor[(8, 12), f32, ShardLayout(d4, (Split(axis=0),))]) -> Tensor[(8, 12), f32, ShardLayout(d4, (Split(axis=0),))]:
    return x * 2.0
)");
  spmd::LocalMesh mesh({2, 2});
  auto comm = mesh.communicator(0);
  try {
    spmd::run_rank(*m, *m->lookup("f"), {NDArray::empty(ir::DType::kF32, {2, 12})}, *comm);
    ADD_FAILURE() << "ran on the wrong mesh";
  } catch (const ir::Error& e) {
    EXPECT_EQ(e.kind(), ir::ErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("mesh of shape"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tf
