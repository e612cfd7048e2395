// Stage emitters of the data-movement and shape ops: Gather, TopK, Concat,
// Stack, Reshard (a copy on one device), ShapeOf, Rank, ShapeExtract and
// ShapeCompose. Each writes one `{ // stage: ... }` block of the generated
// entry (emit_util.h) onto `o`; every tensor operand is a materialized slot
// (any strides), every result slot is contiguous. Element values are moved as
// stored (no widening), so every storable dtype works, 8-bit floats included.
//
// Run-time checks mirror core/eval/kernels (indexing.cc, combine.cc): the
// same condition, reported through a codegen.h error code whose rt->info the
// host turns into the evaluator's message. A check that reads only shapes or
// parameters goes to `pre` (the entry's prechecks: it returns before anything
// is written); the others run in the stage, which then writes nothing.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "core/compiler/codegen.h"
#include "core/ops/shape/shape.h"
#include "core/ops/tensor/tensor.h"

namespace tf::compiler {

// Returns true when the stage may fail after other stages wrote (its
// indices are computed, not a parameter).
bool emit_gather(std::ostream& o, std::ostream& pre, const std::vector<Slot>& slots, size_t out, size_t x,
                 size_t indices, const ops::Gather& op);

// values / indices are the two result slots; k is values' extent on the axis.
void emit_topk(std::ostream& o, std::ostream& pre, const std::vector<Slot>& slots, size_t values, size_t indices,
               size_t x, const ops::TopK& op);

void emit_concat(std::ostream& o, const std::vector<Slot>& slots, size_t out, const std::vector<size_t>& ins,
                 const ops::Concat& op);
void emit_stack(std::ostream& o, const std::vector<Slot>& slots, size_t out, const std::vector<size_t>& ins,
                const ops::Stack& op);

// out = x, copied in row-major order (Reshard's single-device meaning).
void emit_copy(std::ostream& o, const std::vector<Slot>& slots, size_t out, size_t x, const std::string& what);

// x is read for its shape only.
void emit_shape_of(std::ostream& o, const std::vector<Slot>& slots, size_t out, size_t x);
void emit_rank(std::ostream& o, const std::vector<Slot>& slots, size_t out, size_t x);
void emit_shape_extract(std::ostream& o, std::ostream& pre, const std::vector<Slot>& slots, size_t out,
                        size_t shape, const ops::ShapeExtract& op);
// dims: one int64_t C++ expression per field (a literal or a slot's value).
void emit_shape_compose(std::ostream& o, const std::vector<Slot>& slots, size_t out,
                        const std::vector<std::string>& dims);


}  // namespace tf::compiler
