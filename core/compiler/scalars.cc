#include "core/compiler/scalars.h"

#include "core/ir/error.h"
#include "core/ops/tensor/tensor.h"

namespace tf::compiler {
namespace {

// core/eval's slice_kernel: bounds are evaluated, then normalized as a
// static slice is; a window narrower than typed is an error.
int64_t slice_begin(const RuntimeScalar& s, const ir::DimBindings& b) {
  const int64_t dim = s.dim.evaluate(b);
  ops::SliceAxis ax = ops::resolve_slice_axis(s.value.evaluate(b), s.end.evaluate(b), s.stride, dim);
  const int64_t extent = ax.extent.value(), typed = s.typed.evaluate(b);
  if (extent != typed)
    ir::fail(ir::ErrorKind::kRuntime, "'slice' axis " + std::to_string(s.axis) + ": the window " +
                                          s.value.to_string() + ":" + s.end.to_string() + " is typed " +
                                          std::to_string(typed) + " wide, but an axis of length " +
                                          std::to_string(dim) + " gives " + std::to_string(extent));
  return extent > 0 ? ax.begin.value() : 0;
}

// core/eval's loop bounds (docs/ir.md, Loops).
int64_t loop_bound(const RuntimeScalar& s, const ir::DimBindings& b) {
  const char* what = s.kind == RuntimeScalar::kLoopStart ? "start" : s.kind == RuntimeScalar::kLoopExtent ? "extent" : "step";
  const bool positive = s.kind == RuntimeScalar::kLoopStep;
  const std::string at = s.where.empty() ? "" : s.where + ": ";
  int64_t n = 0;
  try {
    n = s.value.evaluate(b);
  } catch (const ir::Error& err) {
    ir::fail(ir::ErrorKind::kRuntime, at + "loop " + what + " " + s.value.to_string() + " cannot be resolved: " + err.what());
  }
  if (positive ? n <= 0 : n < 0)
    ir::fail(ir::ErrorKind::kRuntime, at + "loop " + what + " " + s.value.to_string() + " resolves to " +
                                          std::to_string(n) +
                                          (positive ? ", but it must be positive" : ", but it must be non-negative"));
  return n;
}

}  // namespace

int64_t resolve_scalar(const RuntimeScalar& s, const ir::DimBindings& bindings) {
  if (s.kind == RuntimeScalar::kSliceBegin) return slice_begin(s, bindings);
  if (s.kind == RuntimeScalar::kExtent) return s.value.evaluate(bindings);
  return loop_bound(s, bindings);
}

}  // namespace tf::compiler
