// Lane partials: a vectorized reduction that a serial loop runs once per
// iteration (a row's sum taken a chunk at a time) keeps its partial results
// in an array of reduce_lanes() values for the whole serial loop, folded into
// its accumulator once, after it.
//
// Why: a C compiler ends each run of a vectorized reduction by adding its
// lanes into the scalar accumulator one after another (GCC's `omp simd
// reduction` keeps the lanes' order, as C's float semantics ask), a chain
// of 16 or 32 dependent adds per chunk that the next chunk's chain waits
// on. With the lanes carried across chunks the fold runs once per row, in
// vector registers. Measured on one core (EPYC, Zen 5; ns per element with
// the row in cache, [64, 4096]): rmsnorm f32 0.136-0.139 -> 0.129-0.131,
// bf16 0.213 -> 0.185, LayerNorm 0.203-0.211 -> 0.177-0.189; rows of 16
// pay about 1 ns more per row (docs/decisions.md has the table).
#pragma once

#include "core/tir/stmt.h"

namespace tf::compiler {

// Partials per accumulator: 32 where the CPU has AVX-512 (four registers
// of doubles, two of floats), 16 elsewhere (four AVX2 registers of
// doubles, so that a LayerNorm's two sums leave half of the 16 free; not
// measured: the hosts at hand have AVX-512). Kernels are compiled for the
// CPU they run on.
int64_t reduce_lanes();

// `loop` (a For) with every vectorized loop inside it whose reductions are
// sums, or float maxima, of accumulators bound outside `loop` rewritten as
// blocks of reduce_lanes() iterations, each iteration adding into its own
// partial; the remainder of each such loop runs as before, into the
// accumulator itself. The partials start at the reduction's identity
// before `loop` and are folded (pairwise, then into the accumulator) after
// it. The sum's order changes (it was already unspecified: a vectorized
// reassociation); a maximum's value does not. Any other loop is returned
// unchanged. `blocks_run`: false only where no rewritten loop runs a whole
// block (the partials then hold their identity, and the fold is skipped:
// on a short row its latency would stand between the reduction and the
// row's store); a constant false leaves `loop` unchanged.
tir::StmtPtr carry_lane_partials(const tir::StmtPtr& loop, const tir::ExprPtr& blocks_run);

}  // namespace tf::compiler
