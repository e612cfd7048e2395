#include "core/spmd/virtual_mesh.h"

#include <atomic>
#include <exception>
#include <thread>

#include "core/eval/evaluator.h"
#include "core/ir/error.h"
#include "core/sema/bind.h"
#include "core/spmd/blocks.h"
#include "core/spmd/executor.h"
#include "core/spmd/local_mesh.h"

namespace tf::spmd {

using runtime::NDArray;
using ir::ErrorKind;

namespace {

// Every rank's shares of the arguments: shares[rank][param].
std::vector<std::vector<NDArray>> share_out(const ir::Function& fn, const std::vector<NDArray>& inputs,
                                            const Grid& g, const ir::DimBindings& b, const PartialShareFn& split) {
  std::vector<std::vector<NDArray>> shares(g.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::TensorType& t = *ir::as_tensor(fn.params()[i]->type());
    const ir::ShardLayout* l = ir::as_shard_layout(t.layout());
    for (size_t r = 0; r < g.size(); ++r) {
      NDArray local = copy_of(view_of(inputs[i], block_of(t, g, r, b)));
      if (l && l->has_partial()) {
        auto [share, count] = partial_share(*l, g, r);
        if (split) split(i, share, count, *partial_reduction(*l), local);
        else if (share != 0) fill_identity(local, *partial_reduction(*l));
      }
      shares[r].push_back(std::move(local));
    }
  }
  return shares;
}

// Runs every rank on its own thread; rethrows the first failure.
std::vector<std::vector<NDArray>> run_ranks(const ir::Module& m, const ir::Function& fn, const Grid& g,
                                            const std::vector<std::vector<NDArray>>& shares) {
  LocalMesh mesh(g.mesh->shape);
  std::vector<std::vector<NDArray>> outs(g.size());
  std::vector<std::exception_ptr> errors(g.size());
  std::atomic<size_t> first_failure{g.size()};
  std::vector<std::thread> threads;
  for (size_t r = 0; r < g.size(); ++r)
    threads.emplace_back([&, r] {
      try {
        auto comm = mesh.communicator(r);
        outs[r] = run_rank(m, fn, shares[r], *comm, Agreement::kTrusted);  // one call: they agree
      } catch (...) {
        errors[r] = std::current_exception();
        std::string why = "unknown error";
        try {
          throw;
        } catch (const std::exception& e) {
          why = e.what();
        } catch (...) {
        }
        if (mesh.abort(r, why)) first_failure = r;
      }
    });
  for (auto& t : threads) t.join();
  if (first_failure < g.size()) std::rethrow_exception(errors[first_failure]);
  return outs;
}

}  // namespace

std::vector<NDArray> evaluate_virtual_mesh(const ir::Module& m, const ir::Function& fn,
                                           const std::vector<NDArray>& inputs) {
  return evaluate_virtual_mesh(m, fn, inputs, PartialShareFn());
}

std::vector<NDArray> evaluate_virtual_mesh(const ir::Module& m, const ir::Function& fn,
                                           const std::vector<NDArray>& inputs, const PartialShareFn& split_partial) {
  if (!fn.body()) ir::fail(ErrorKind::kUnsupported, "virtual mesh: '" + fn.name() + "' has no body");
  Grid g{function_mesh(fn)};
  if (!g.mesh) return eval::evaluate(m, fn, inputs);
  if (inputs.size() != fn.params().size())
    ir::fail(ErrorKind::kInvalidArgument, "'" + fn.name() + "' takes " + std::to_string(fn.params().size()) +
                                              " input(s), but got " + std::to_string(inputs.size()));
  std::vector<sema::ArgDesc> descs;
  for (const NDArray& a : inputs) descs.push_back({a.dtype(), a.shape()});
  const ir::DimBindings b = sema::bind_arguments(fn, descs);
  auto outs = run_ranks(m, fn, g, share_out(fn, inputs, g, b, split_partial));
  std::vector<NDArray> results;
  const auto leaves = ir::flatten_tensor_types(fn.body()->type());
  for (size_t j = 0; j < leaves.size(); ++j) {
    std::vector<const NDArray*> locals;
    for (size_t r = 0; r < g.size(); ++r) locals.push_back(&outs[r].at(j));
    results.push_back(assemble(locals, *leaves[j], g, b));
  }
  return results;
}

}  // namespace tf::spmd
