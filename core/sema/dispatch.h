// Shape dispatch and specializations (docs/ir.md, Functions): the rules a dispatch
// prototype and its variants obey, the authoring freeze, and run-time
// variant selection.
#pragma once

#include <string>
#include <vector>

#include "core/ir/expr.h"

namespace tf::sema {

// Checks a prototype's variants (Error(kVerify), naming the base, the variant
// by label and the rule):
//  * every variant shares the base's name, params (names and types) and
//    return_type, has a body and no variants of its own;
//  * carries exactly one DimVarRangePat, anchored to a DimVar of an input
//    parameter and inside that DimVar's envelope [lo, hi), with lo < hi;
//  * canonical signatures are distinct;
//  * the ranges partition the envelope: disjoint and complete half-open
//    ranges (the error names the gap or the overlap).
void check_dispatch(const ir::Function& base);

// Accumulates the variants of one dispatch prototype during authoring. The
// base Function node does not exist until seal(), so nothing can hash a base
// while it accumulates; after seal() further variants are rejected.
class PrototypeBuilder {
 public:
  // `base` holds the signature (name, params, return_type, span); its body is
  // ignored (a prototype is written `pass`).
  explicit PrototypeBuilder(ir::Function::Fields base) : base_(std::move(base)) {}
  const ir::Function::Fields& base() const { return base_; }
  bool sealed() const { return sealed_ != nullptr; }
  // Throws Error(kVerify) once sealed.
  void add_variant(ir::FunctionPtr variant);
  // Builds the prototype, runs check_dispatch, and freezes. Idempotent: a
  // second call returns the same node.
  ir::FunctionPtr seal();

 private:
  ir::Function::Fields base_;
  std::vector<ir::FunctionPtr> variants_;
  ir::FunctionPtr sealed_;
};

// Dispatch resolution: the one variant whose DimVarRangePat holds for the
// bound DimVars. Throws Error(kInvalidArgument) when the shape lies outside
// the envelope (no variant matches), naming the DimVar, its value and the
// envelope.
const ir::Function& select_variant(const ir::Function& base, const ir::DimBindings& bindings);

}  // namespace tf::sema
