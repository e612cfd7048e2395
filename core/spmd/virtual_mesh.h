// The virtual mesh (docs/sharding.md, `mesh="virtual"`): runs a sharded
// function on every rank of its mesh at once, as threads of this process
// over an in-process communicator (local_mesh.h), each rank through the SPMD
// executor (executor.h), and reassembles the logical results. It is how
// tests show that every accepted sharding rule computes the same answer as
// the unsharded program, and it exercises the same executor, collectives
// included, that runs a function across processes.
//
// Arguments are the logical (global) tensors. Each rank receives its share
// (blocks.h): a Split axis gives it its block; Broadcast the whole value;
// Partial(reduction) the logical value on share 0 and the reduction's
// identity on the others. Results: Split axes concatenated, Partial shares
// reduced, Broadcast / plain values taken from rank 0.
#pragma once

#include <functional>
#include <vector>

#include "core/ir/module.h"
#include "core/ir/shard.h"
#include "core/runtime/ndarray.h"

namespace tf::spmd {

// Same contract as eval::evaluate(); fn's parameters must have static
// shapes. A function with no ShardLayout anywhere runs once, on the plain
// evaluator. An error on any rank is thrown here (the first rank's to fail;
// the others stop at their next collective).
std::vector<runtime::NDArray> evaluate_virtual_mesh(const ir::Module& m, const ir::Function& fn,
                                                    const std::vector<runtime::NDArray>& inputs);

// How a parameter carrying Partial(reduction) is split into per-rank
// shares. `share` is the rank's row-major index over the parameter's
// Partial mesh axes (of `shares` in all); `local` holds the rank's block
// of the logical value and is overwritten with its share. The caller
// guarantees the shares reduce back to the logical value; tests use this to
// give every rank a genuine share rather than the default (share 0 holds
// the value, the others the reduction's identity), under which any op that
// maps the identity to itself would look as if it commuted.
using PartialShareFn = std::function<void(size_t param, size_t share, size_t shares, ir::Reduction reduction,
                                          runtime::NDArray& local)>;

// evaluate_virtual_mesh with Partial parameters split by `split_partial`.
std::vector<runtime::NDArray> evaluate_virtual_mesh(const ir::Module& m, const ir::Function& fn,
                                                    const std::vector<runtime::NDArray>& inputs,
                                                    const PartialShareFn& split_partial);

}  // namespace tf::spmd
