// The virtual-mesh evaluator (docs/sharding.md, `mesh="virtual"`): runs a
// sharded function once per mesh instance on that instance's local shards and
// reassembles the logical result. It is how tests show that every accepted
// sharding rule computes the same answer as the unsharded program.
//
// Semantics. Arguments are the logical (global) tensors. Each instance
// receives its local shard of a sharded parameter: a Split axis gives the
// instance its block; Broadcast the whole value; Partial(reduction) the
// logical value on instance 0 and the reduction's identity on the others.
// Every Call runs per instance on local values with its local result type,
// except a Reduce over a Split axis and a Gather on a Split axis, whose
// cross-instance meaning is the typing rule's (collapse to Broadcast / Partial(sum)).
// Results: Split axes are concatenated, Partial values reduced across
// instances, Broadcast / plain values taken from instance 0.
// Every ShardLayout must be a block layout (ops::shard::to_block_logical:
// canonical, or verbose with an axis's last Split-bound position a multiple of
// its mesh extent), so each shard is one contiguous block per tensor axis; a
// per-instance Reshape then keeps the local row-major element order.
#pragma once

#include <functional>
#include <vector>

#include "core/ir/module.h"
#include "core/ir/shard.h"
#include "core/runtime/ndarray.h"

namespace tf::eval {

// Same contract as evaluate(); fn's tensors must have static shapes. A
// function with no ShardLayout anywhere runs once (one instance).
// Throws Error(kUnsupported) for an op it cannot run per instance (a loop,
// a nested function call, an op whose attributes embed a global shape).
std::vector<runtime::NDArray> evaluate_virtual_mesh(const ir::Module& m, const ir::Function& fn,
                                                    const std::vector<runtime::NDArray>& inputs);

// How a parameter carrying Partial(reduction) is split into per-instance
// shares. `share` is the instance's row-major index over the parameter's
// Partial mesh axes (of `shares` in all); `local` holds the instance's block
// of the logical value and is overwritten with its share. The caller
// guarantees the shares reduce back to the logical value; tests use this to
// give every instance a genuine share rather than the default (share 0 holds
// the value, the others the reduction's identity), under which any op that
// maps the identity to itself would look as if it commuted.
using PartialShareFn = std::function<void(size_t param, size_t share, size_t shares, ir::Reduction reduction,
                                          runtime::NDArray& local)>;

// evaluate_virtual_mesh with Partial parameters split by `split_partial`.
std::vector<runtime::NDArray> evaluate_virtual_mesh(const ir::Module& m, const ir::Function& fn,
                                                    const std::vector<runtime::NDArray>& inputs,
                                                    const PartialShareFn& split_partial);

}  // namespace tf::eval
