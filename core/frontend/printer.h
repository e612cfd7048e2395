// The printer: canonical DSL source for a Module. parse_module(print_module(m))
// is structurally equal to m, and printing that again is byte-identical.
#pragma once

#include <string>

#include "core/ir/module.h"

namespace tf::frontend {

std::string print_module(const ir::Module& m);
// "def rmsnorm(x: Tensor[(N, 4096), f32], w: Tensor[(4096,), f32]) -> Tensor[(N, 4096), f32]"
std::string print_signature(const ir::Function& fn);

}  // namespace tf::frontend
