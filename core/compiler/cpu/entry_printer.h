// The CPU target's entry: a lowered segment (lower_segment.h) printed as
// the C++ function of codegen.h's ABI,
//   extern "C" int TF_ENTRY(void* const* P, const int64_t* SH,
//                           const int64_t* ST, const tf_rt* rt)
// Slot k's data pointer is P[k] (temporaries: allocated by the host), its
// shape and strides the next rank(k) values of SH and ST; the run-time
// scalars follow the last shape in SH. The prechecks run first and may
// return a code before anything is written; each stage is one block.
#pragma once

#include <string>

#include "core/compiler/lower_segment.h"

namespace tf::compiler::cpu {

std::string print_entry(const LoweredEntry& e);

}  // namespace tf::compiler::cpu
