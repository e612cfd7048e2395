// How many blocks a kernel's launch can keep busy, worked out on the host
// for each call.
//
// A grid-strided kernel is correct with any grid, so the launch could
// always be the device's full grid (8 blocks per multiprocessor). But every
// block of that grid is scheduled, runs the kernel's preamble and exits:
// 1056 blocks on a 132-multiprocessor device for a one-row tensor, where
// one block has all the work. The work a kernel's leaf has is an integer
// expression of the call's shapes, strides and run-time scalars (the
// stage's lets, kernel_split.h), so the host evaluates that expression over
// the same argument words it passes to the kernel and launches
// min(full grid, blocks with work).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/compiler/cuda/cuda_printer.h"
#include "core/compiler/lower_segment.h"
#include "core/tir/expr.h"

namespace tf::compiler::cuda {

// The blocks `kernel` (one leaf in its context, kernel_split.h) can keep
// busy when launched as `launch`, as an i64 expression whose only variable
// is the argument words (kernel_arg_words): a kBlocks leaf's iterations, a
// kThreads loop's iterations per kBlockThreads rounded up, and zero where
// a guard around the leaf fails. Null for a kOneBlock launch (one block,
// whatever the work) and when that number depends on anything else
// (memory a kernel wrote, a helper over a whole tensor): such a launch of
// the grid takes the full grid.
tir::ExprPtr kernel_blocks(const tir::StmtPtr& kernel, Launch launch, const LoweredEntry& e);

// The variable kernel_blocks's expressions read the argument words through.
const tir::VarPtr& kernel_arg_words();

// blocks's value over `words` (cuda_function.cc's pack_kernel_args, laid
// out as cuda_codegen.h's args_layout); nullopt when it cannot be computed:
// an index outside the words, a division by zero, an overflow.
std::optional<int64_t> evaluate_blocks(const tir::ExprPtr& blocks, const std::vector<int64_t>& words);

}  // namespace tf::compiler::cuda
