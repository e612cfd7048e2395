#include "core/compiler/codegen.h"

#include <unordered_set>

#include "core/compiler/cpu/entry_printer.h"
#include "core/compiler/decompose.h"
#include "core/compiler/emit_util.h"
#include "core/compiler/inline.h"
#include "core/compiler/lower_segment.h"
#include "core/compiler/one_pass_variance.h"
#include "core/compiler/transpose_sinking.h"
#include "core/ir/error.h"

namespace tf::compiler {

using ir::Expr;
using ir::ExprPtr;

FunctionSegment function_segment(const ir::Function& fn) {
  if (!fn.body() || fn.is_prototype()) unsupported("a dispatch prototype");
  FunctionSegment s;
  s.inputs.assign(fn.params().begin(), fn.params().end());
  s.outputs = {split_tuple_calls(inline_calls(fn.body()))};
  for (int64_t p : fn.inplace()) s.aliased.push_back(p >= 0);
  return s;
}

Program generate(const ir::Function& fn) {
  const FunctionSegment s = function_segment(fn);
  return generate_segment(s.inputs, s.outputs, s.aliased);
}

LoweredEntry lower_entry(const std::vector<ExprPtr>& inputs, const std::vector<ExprPtr>& given,
                         const std::vector<bool>& aliased, Target target) {
  // Built-in ops with a decomposition become their composition (decompose.h).
  DecompositionNotes notes;
  std::unordered_set<const Expr*> stop;
  for (const ExprPtr& i : inputs) stop.insert(i.get());
  std::vector<ExprPtr> outputs;
  for (const ExprPtr& o : given) outputs.push_back(decompose(o, stop, &notes));
  // A variance written as a mean of squared deviations takes the mean's pass
  // (one_pass_variance.h).
  outputs = one_pass_variances(outputs, stop, &notes);
  // A reduction of an elementwise value of transposes reads the transpose of
  // a value computed in its operands' layout (transpose_sinking.h).
  outputs = sink_transposes(outputs, stop, &notes);
  // Each view a stage refuses is copied instead, and the kernel generated
  // again (a handful of views at most; each is refused once).
  std::unordered_set<const Expr*> copied;
  for (;;) {
    try {
      return lower_segment(inputs, outputs, copied, notes, aliased, target);
    } catch (const ViewRefused& r) {
      TF_CHECK(copied.insert(r.node).second, "codegen: a view refused after it was copied");
    }
  }
}

Program generate_segment(const std::vector<ExprPtr>& inputs, const std::vector<ExprPtr>& given,
                         const std::vector<bool>& aliased) {
  const LoweredEntry entry = lower_entry(inputs, given, aliased, Target::kCpu);
  Program p;
  p.slots = entry.slots;
  p.body = cpu::print_entry(entry);
  p.may_fail = entry.may_fail;
  p.prechecks = !entry.prechecks.empty();
  p.scalars = entry.run_time_scalars;
  p.tir = to_string(entry);
  return p;
}

}  // namespace tf::compiler
