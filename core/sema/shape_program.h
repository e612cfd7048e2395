// Shape programs: a Function's signature as data over its input extents.
// For every input axis, what run-time binding (bind.h) requires of it; for
// every extent, a postfix program over the input extents that computes it,
// with each DimVar read at the input axis that binds it. An input axis's
// program is the value binding requires of it (for a DimVar's site, the axis
// itself), so a client checks every input axis the same way. The C ABI hands
// these out (tf_kernel_input_axis, tf_kernel_input_extent,
// tf_kernel_output_extent; docs/c-abi.md) so that a client computes output
// shapes, symbolic ones included, without parsing signature text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/ir/expr.h"

namespace tf::sema {

// One axis of one input parameter.
struct AxisRef {
  size_t input = 0;
  size_t axis = 0;
};

// Where each DimVar of the parameters is bound: the first axis, in parameter
// then axis order, whose extent is exactly that DimVar. bind_arguments binds
// it there and requires every later occurrence to equal it.
using DimVarSites = std::map<std::string, AxisRef>;
DimVarSites dimvar_sites(const ir::Function& fn);

// One instruction of a dim program, in postfix order. The kind is the
// ShapeDim node kind it came from:
//   kConst        pushes `a`;
//   kVar          pushes the extent of input `a`, axis `b` (the DimVar's site);
//   a binary kind pops rhs, then lhs, and pushes `lhs op rhs` with ShapeDim's
//                 semantics (floor division and modulus; a zero divisor is
//                 Error(kRuntime) when a kernel binds).
struct DimInstr {
  ir::DimKind kind = ir::DimKind::kConst;
  int64_t a = 0;
  int64_t b = 0;
};
using DimProgram = std::vector<DimInstr>;

// The program computing d from the input extents. Throws Error(kUnsupported)
// naming `what` when d mentions a DimVar that no input axis binds (binding
// then fails for every input, so no input shape determines d).
DimProgram dim_program(const ir::ShapeDim& d, const DimVarSites& sites, const std::string& what);

// The four rules bind_arguments applies to an input axis.
enum class AxisRule : uint8_t {
  kStatic,        // the extent must equal a constant
  kBindsDimVar,   // the DimVar's site: the extent binds it, within [lo, hi)
  kEqualsDimVar,  // a later occurrence: within [lo, hi) and equal to the site's extent
  kExpr,          // a dim expression: the extent must equal its value
};

struct AxisRequirement {
  AxisRule rule = AxisRule::kStatic;
  ir::ShapeDim dim;  // the declared extent; dim_program(dim) is the value binding requires
  AxisRef site;      // the DimVar rules: where the DimVar is bound
};

// What binding requires of input i, axis `axis` (both in range; the
// parameter is a tensor).
AxisRequirement input_axis_requirement(const ir::Function& fn, const DimVarSites& sites, size_t i,
                                       size_t axis);

}  // namespace tf::sema
