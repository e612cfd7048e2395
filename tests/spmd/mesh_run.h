// Running a sharded function on every rank of an in-process mesh (one
// thread per rank, each with a communicator that records its collectives),
// on the evaluator's kernels and as native segments: the helpers the SPMD
// tests share.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/ir/error.h"
#include "core/sema/bind.h"
#include "core/spmd/blocks.h"
#include "core/spmd/executor.h"
#include "core/spmd/local_mesh.h"
#include "core/spmd/segments.h"

namespace tf::testing_spmd {
using runtime::NDArray;

// Forwards to a rank's communicator and records what it was asked to do.
class Recording final : public spmd::Communicator {
 public:
  explicit Recording(std::unique_ptr<spmd::Communicator> c) : c_(std::move(c)) {}
  const std::vector<int64_t>& mesh_shape() const override { return c_->mesh_shape(); }
  const std::vector<int64_t>& coords() const override { return c_->coords(); }
  void all_reduce(size_t axis, const NDArray& buf, ir::Reduction r) override {
    note("all_reduce", axis, buf.numel());
    c_->all_reduce(axis, buf, r);
  }
  void all_gather(size_t axis, const NDArray& in, const NDArray& out) override {
    note("all_gather", axis, in.numel());
    c_->all_gather(axis, in, out);
  }
  void reduce_scatter(size_t axis, const NDArray& in, const NDArray& out, ir::Reduction r) override {
    note("reduce_scatter", axis, in.numel());
    c_->reduce_scatter(axis, in, out, r);
  }
  void all_to_all(size_t axis, const NDArray& in, const NDArray& out) override {
    note("all_to_all", axis, in.numel());
    c_->all_to_all(axis, in, out);
  }
  std::vector<std::string> calls;
  int64_t elements_sent = 0;

 private:
  void note(const char* what, size_t axis, int64_t n) {
    calls.push_back(std::string(what) + "@" + std::to_string(axis));
    elements_sent += n;
  }
  std::unique_ptr<spmd::Communicator> c_;
};

inline NDArray random_f32(const std::vector<int64_t>& shape, std::mt19937& rng) {
  NDArray a = NDArray::empty(ir::DType::kF32, shape);
  std::uniform_real_distribution<float> u(-2.f, 2.f);
  for (int64_t i = 0; i < a.numel(); ++i) static_cast<float*>(a.data())[i] = u(rng);
  return a;
}

// A genuine share per rank of a Partial parameter: for sum, weights 1..n
// over their sum; for max / min, each element whole on one share (which
// one varies with the element) and the identity on the others.
inline void shares_of(NDArray& local, size_t share, size_t shares, ir::Reduction r) {
  float* p = static_cast<float*>(local.data());
  for (int64_t i = 0; i < local.numel(); ++i) {
    if (r == ir::Reduction::kSum)
      p[i] *= static_cast<float>(share + 1) / static_cast<float>(shares * (shares + 1) / 2);
    else if (static_cast<size_t>(i) % shares != share)
      p[i] = r == ir::Reduction::kMax ? -INFINITY : INFINITY;
  }
}

struct MeshRun {
  std::vector<NDArray> results;            // logical
  std::vector<std::vector<std::string>> calls;  // per rank
  int64_t elements_sent = 0;               // by rank 0
};

// Runs `fn` on every rank of its mesh from the logical inputs.
inline MeshRun run_on_mesh_with(const ir::Module& m, const ir::Function& fn, const std::vector<NDArray>& inputs,
                         const spmd::SegmentPlan* segments) {
  spmd::Grid g{spmd::function_mesh(fn)};
  spmd::LocalMesh mesh(g.mesh->shape);
  std::vector<sema::ArgDesc> descs;
  for (const NDArray& a : inputs) descs.push_back({a.dtype(), a.shape()});
  const ir::DimBindings b = sema::bind_arguments(fn, descs);
  std::vector<std::vector<NDArray>> outs(g.size());
  std::vector<std::unique_ptr<Recording>> comms;
  for (size_t r = 0; r < g.size(); ++r) comms.push_back(std::make_unique<Recording>(mesh.communicator(r)));
  std::vector<std::string> errors(g.size());
  std::vector<std::thread> threads;
  for (size_t r = 0; r < g.size(); ++r)
    threads.emplace_back([&, r] {
      try {
        std::vector<NDArray> shares;
        for (size_t i = 0; i < inputs.size(); ++i) {
          const ir::TensorType& t = *ir::as_tensor(fn.params()[i]->type());
          NDArray local = spmd::copy_of(spmd::view_of(inputs[i], spmd::block_of(t, g, r, b)));
          if (const ir::ShardLayout* l = ir::as_shard_layout(t.layout()); l && l->has_partial()) {
            auto [share, count] = spmd::partial_share(*l, g, r);
            shares_of(local, share, count, *spmd::partial_reduction(*l));
          }
          shares.push_back(local);
        }
        // Trusted: the collectives recorded are the program's own (the
        // agreement check has its tests below).
        outs[r] = spmd::run_rank(m, fn, shares, *comms[r], spmd::Agreement::kTrusted, segments);
      } catch (const std::exception& e) {
        errors[r] = e.what();
        mesh.abort(r, e.what());
      }
    });
  for (auto& t : threads) t.join();
  for (size_t r = 0; r < g.size(); ++r) EXPECT_EQ(errors[r], "") << "rank " << r;
  MeshRun run;
  const auto leaves = ir::flatten_tensor_types(fn.body()->type());
  for (size_t j = 0; j < leaves.size(); ++j) {
    std::vector<const NDArray*> locals;
    for (size_t r = 0; r < g.size(); ++r) locals.push_back(&outs[r].at(j));
    run.results.push_back(spmd::assemble(locals, *leaves[j], g, b));
  }
  for (auto& c : comms) run.calls.push_back(c->calls);
  run.elements_sent = comms[0]->elements_sent;
  return run;
}

inline void expect_close(const NDArray& got, const NDArray& want, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  for (int64_t i = 0; i < want.numel(); ++i)
    ASSERT_NEAR(static_cast<const float*>(got.data())[i], static_cast<const float*>(want.data())[i], 1e-4)
        << what << " at " << i;
}

// The first loop reached from e.
inline const ir::GridRegionExpr* find_loop(const ir::ExprPtr& e) {
  if (auto* g = ir::expr_as<ir::GridRegionExpr>(e)) return g;
  std::vector<ir::ExprPtr> next;
  if (auto* c = ir::expr_as<ir::Call>(e)) next = c->args();
  if (auto* t = ir::expr_as<ir::Tuple>(e)) next = t->fields();
  if (auto* gi = ir::expr_as<ir::TupleGetItem>(e)) next = {gi->tuple()};
  for (const auto& n : next)
    if (auto* g = find_loop(n)) return g;
  return nullptr;
}

// Runs fn's ops on the evaluator's kernels and, where it has compute
// segments, again as native segments: both must give the same results
// through the same collectives.
inline MeshRun run_on_mesh(const ir::Module& m, const ir::Function& fn, const std::vector<NDArray>& inputs) {
  MeshRun run = run_on_mesh_with(m, fn, inputs, nullptr);
  auto plan = spmd::plan_segments(fn);
  EXPECT_EQ(plan->fallback_reason(), "") << fn.name();
  MeshRun native = run_on_mesh_with(m, fn, inputs, plan.get());
  // Loop bodies and called functions hold collectives: each runs as often
  // natively as on the evaluator (captured values once, not per iteration).
  EXPECT_EQ(native.calls, run.calls) << fn.name();
  for (size_t j = 0; j < run.results.size(); ++j)
    expect_close(native.results[j], run.results[j], fn.name() + " native segments, result " + std::to_string(j));
  return run;
}

// Runs fn on every rank of a 1-D mesh of `ranks`, rank r with shares(r);
// each rank's error message ("" when it finished), a failing rank aborting
// the mesh as a host would.
inline std::vector<std::string> errors_on_ranks(const ir::Module& m, const ir::Function& fn, size_t ranks,
                                                const std::function<std::vector<NDArray>(size_t)>& shares,
                                                spmd::Agreement agreement) {
  spmd::LocalMesh mesh({static_cast<int64_t>(ranks)});
  std::vector<std::string> errors(ranks);
  std::vector<std::thread> threads;
  for (size_t r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      try {
        auto comm = mesh.communicator(r);
        spmd::run_rank(m, fn, shares(r), *comm, agreement);
      } catch (const ir::Error& e) {
        errors[r] = e.what();
        mesh.abort(r, e.what());
      }
    });
  for (auto& t : threads) t.join();
  return errors;
}

}  // namespace tf::testing_spmd
