// Structural equality and hashing of IR, separate from identity (same_as is
// pointer equality of ExprPtr). Both are DAG-aware: sharing counts, so
// `h = a + b; h * h` is not equal to `(a + b) * (a + b)` built from two
// distinct Calls. Bound Vars (params, loop vars) compare by binding position;
// spans and variant labels never participate.
#pragma once

#include "core/ir/expr.h"
#include "core/ir/module.h"

namespace tf::ir {

bool structural_equal(const ExprPtr& a, const ExprPtr& b);
size_t structural_hash(const ExprPtr& e);
bool structural_equal(const Module& a, const Module& b);
size_t structural_hash(const Module& m);

}  // namespace tf::ir
