// Run-time signature binding: matching concrete argument descriptions
// against a Function's parameter types. Shared by every backend so that the
// evaluator and compiled kernels reject exactly the same inputs.
#pragma once

#include <cstdint>
#include <vector>

#include "core/ir/expr.h"

namespace tf::sema {

struct ArgDesc {
  ir::DType dtype;
  std::vector<int64_t> shape;
};

// Checks count, dtype, rank, static extents and DimVar ranges, and returns the
// value of every DimVar. Throws Error(kInvalidArgument) naming the parameter
// and axis, e.g. "argument #1 (w): axis 0 must be 4096, but got 8".
ir::DimBindings bind_arguments(const ir::Function& fn, const std::vector<ArgDesc>& args);

// Concrete shapes of the function's outputs (the tensor leaves of its return
// type, in order) under the bindings.
std::vector<ArgDesc> output_descs(const ir::Function& fn, const ir::DimBindings& bindings);

}  // namespace tf::sema
