// The reference evaluator: interprets a typed Function's Call DAG over
// NDArrays. Simple, obviously correct, torch-exact: it is the oracle the
// compiler is tested against. Each op's kernel lives in eval/kernels, in a
// table keyed by the op's registry name.
#pragma once

#include <string>
#include <vector>

#include "core/ir/module.h"
#include "core/runtime/ndarray.h"

namespace tf::eval {

// Evaluates fn (a normal function of m) on inputs, which are borrowed and
// never written. Returns the outputs — the tensor leaves of the return value,
// in order — as freshly allocated contiguous arrays. Throws Error(kInvalidArgument)
// when inputs do not match the signature (via sema::bind_arguments),
// Error(kRuntime) for runtime checks, Error(kUnsupported) for a dtype the
// evaluator does not compute.
std::vector<runtime::NDArray> evaluate(const ir::Module& m, const ir::Function& fn,
                                       const std::vector<runtime::NDArray>& inputs);

// True when the evaluator has a kernel for the registered op name.
bool has_kernel(const std::string& op_name);

// Pieces of the interpreter that other interpreters of the same IR (the SPMD
// executor) share. A rank-0 array holding the literal (floats round once to
// the dtype):
runtime::NDArray constant_array(const ir::Constant& c);
// A loop's start / extent / step under the DimVar bindings; Error(kRuntime),
// located at the loop, when it does not resolve, is negative, or (positive)
// is not positive.
int64_t resolve_loop_bound(const ir::GridRegionExpr& g, const ir::ShapeDim& d, const ir::DimBindings& bindings,
                           const char* what, bool positive);

}  // namespace tf::eval
