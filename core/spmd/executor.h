// The SPMD executor: one rank's run of a device-sharded function. Every
// rank of a mesh runs the same function on its own shares of the arguments
// (blocks.h says which) and calls its Communicator where a value crosses
// ranks:
// * Reshard between layouts that differ on one mesh axis m is one
//   collective of m's group: Partial -> Broadcast all-reduce, Partial ->
//   Split reduce-scatter, Split -> Broadcast all-gather, Split(a) ->
//   Split(b) all-to-all, Broadcast -> Split a local slice, Broadcast ->
//   Partial a local share (no communication) — when no mesh axis after m
//   splits the tensor axes involved. A Reshard over several mesh axes runs
//   as such moves (each changed axis to Broadcast, innermost first, then to
//   its target, outermost first). Any other Reshard gathers the logical
//   operand on every rank (all-gathers over each mesh axis), computes it
//   there and keeps the rank's share of the result: the typing rule's
//   meaning, at a cost the direct moves avoid.
// * A Reduce over a split axis reduces the rank's block, then all-reduces
//   over each mesh axis that splits a reduced axis (sum / float mean by sum,
//   amax / abs_max by max; an f16 / bf16 mean gathers as above).
// * A Gather on a split axis runs on the rank's own rows (zeros elsewhere;
//   the result is Partial(sum) by its typing rule); every other op runs on
//   the rank's shares with its local result type.
// Loops run on every rank alike, so collectives inside them meet; the
// values a loop body reads from the enclosing body are computed once,
// before the first iteration. A call runs the callee's body on the same
// rank.
#pragma once

#include <vector>

#include "core/ir/module.h"
#include "core/runtime/ndarray.h"
#include "core/spmd/communicator.h"

namespace tf::spmd {

class SegmentPlan;

// Whether a call moves values across ranks or runs code that may (a call to
// a function): Reshard, Local, a Reduce or Gather over a split axis, an op
// that takes its block of a replicated operand. Every other op runs on the
// rank's shares with its local result type, which is what a native segment
// (segments.h) compiles.
bool crosses_ranks(const ir::Call& c);

// The one mesh of a function's types (parameters, result, body); null when
// it has none. Error(kUnsupported) for two different meshes.
ir::MeshPtr function_mesh(const ir::Function& fn);

// Whether run_rank first checks that the ranks make the same call.
enum class Agreement { kCheck, kTrusted };

// Runs `fn` on this rank: `inputs` are the rank's shares of the arguments
// (borrowed, never written), in parameter order. Returns the rank's shares
// of the result's tensor leaves, fresh and contiguous. Error(kInvalidArgument)
// when a share's dtype or shape is not the one its parameter's type gives
// this rank; errors of ops and collectives as they arise. The communicator's
// mesh shape must equal the function's mesh's.
//
// With Agreement::kCheck (ranks in separate processes), before anything
// else the ranks all-gather one 8-byte fingerprint of the call each (the
// function's name and signature, every share's dtype and shape), one
// all-gather per mesh axis, so that every rank holds every fingerprint:
// ranks that run different functions or shapes would otherwise meet in
// collectives of different sizes, which hang or corrupt; instead every rank
// fails with Error(kInvalidArgument) naming the mesh coordinates that
// differ. kTrusted skips it (the virtual mesh: one call, every rank).
//
// With `segments` (plan_segments(fn)), the ops of fn's body run as its
// compiled segments; without, on the evaluator's kernels.
std::vector<runtime::NDArray> run_rank(const ir::Module& m, const ir::Function& fn,
                                       const std::vector<runtime::NDArray>& inputs, Communicator& comm,
                                       Agreement agreement = Agreement::kCheck,
                                       const SegmentPlan* segments = nullptr);

}  // namespace tf::spmd
