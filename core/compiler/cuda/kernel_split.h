// Kernel fission: a stage of TIR -> the CUDA kernels that run it, in order.
//
// A CPU stage is one piece of code; on the device, work that must finish
// before other work starts needs a kernel boundary (the grid has no
// barrier). A stage's top level — what runs outside every loop — is
// context (immutable lets, ifs, sequences, comments) around leaves (loops,
// stores, calls, allocations, returns, and a mutable variable's whole
// scope). Each leaf becomes one kernel: the stage with every other leaf
// removed, its context kept, so a kernel recomputes the lets it needs
// (they read shapes and scalars, or memory an earlier kernel finished).
#pragma once

#include <vector>

#include "core/tir/stmt.h"

namespace tf::compiler::cuda {

std::vector<tir::StmtPtr> split_kernels(const tir::StmtPtr& stage);

// Whether s is context at a stage's top level (an immutable let, an if, a
// sequence, a comment) rather than a leaf. The printer's grid level uses the
// same test, so a kernel's leaf is the one this split kept.
bool is_context(const tir::StmtPtr& s);

}  // namespace tf::compiler::cuda
