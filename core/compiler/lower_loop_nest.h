// Lowering of one fused stage to TIR: the loop nest that computes one
// materialized value from its inlined producers. Inlined are elementwise
// ops (scalar_lowering.h) with broadcasting, and row reductions: a Reduce
// over the last axis, keepdim, whose result the stage reads broadcast along
// the row (the normalization pattern: mean(x * x) in x * rsqrt(...)).
//
// A stage without row reductions is elementwise: one parallel loop over
// tasks, each a block of kBlock along the last axis of a few consecutive
// rows (all axes but the last; as many short rows as make kTaskElements),
// so the row index is decomposed into the outer axes once per task.
// A stage with them is a row stage: one parallel task per row, which runs
// one pass over the row per level of reductions (a reduction whose operand
// reads another's result runs a pass later: softmax's sum after its max),
// binds each reduction's result as a scalar of the row, and then stores the
// row. Every pass recomputes the inlined values it reads from the row's
// leaves, which a previous pass has just brought into cache; the last
// reduction pass prefetches the next row into L2.
//
// Views — Slice, Transpose, Reshape (inserting or dropping extent-1 axes,
// splitting static axes) and Concat along the row — are index maps, not
// copies: a value read through them is loaded where it lies (every leaf's
// address is an affine function of the stage's index, its strides folded
// per stage), and a Concat splits the row's loop at its operands'
// boundaries, each piece reading one operand. A view the lowering cannot
// read in place throws ViewRefused; the code generator then materializes
// that view as a copy and lowers again.
//
// The decisions shared by both kinds, per stage:
// - one thread below a size threshold, lower for exp-like work
//   (split_parallel_threshold makes that a branch, which also takes the
//   serial loop when the caller runs one thread);
// - a specialization for unit inner strides (every leaf that varies along
//   the row has stride 1), where a C compiler vectorizes without gathers;
// - the store loop in chunks of kChunk elements through L1 buffers when the
//   value needs any: f16 leaves widened by F16C (tf_widen_n), calls computed
//   a chunk at a time (tf_gelu_tanh_n, tf_rf16_n; gelu's two-operand form
//   reads an f32 input row or an earlier call's buffer where it lies, and
//   writes a result that is the stored value into the output row itself),
//   a half-precision output narrowed a chunk at a time (tf_narrow_n);
// - streaming stores for a memory-bound stage whose output is too large to
//   stay in cache, a 64-byte line at a time as the values are computed
//   (stream_lines; a task ends with a store fence; a row
//   stage that caches its values in a scratch row streams each row during
//   the next row's last reduction pass), and for
//   an elementwise one that moves most of the last-level cache, prefetches
//   of its inputs kPrefetchAhead bytes ahead.
//
// Reductions compute as the evaluator's Reduce: float sums accumulate in
// double (f16 / bf16 in float), a mean rounds the sum to its dtype before
// dividing by the row length, max propagates NaN; the result is rounded to
// the Reduce's dtype before anything reads it. On the CPU a reduction pass
// keeps its partial results in lanes across the row's chunks and folds
// them once per row (lane_partials.h).
#pragma once

#include <functional>
#include <string>

#include "core/ir/expr.h"
#include "core/compiler/target.h"
#include "core/tir/stmt.h"

namespace tf::compiler {

// Where a slot's memory and geometry live in the entry: its data pointer
// (typed), and pointers to its shape and strides (in elements).
struct SlotVars {
  tir::VarPtr data, shape, strides;
  const ir::TensorType* type = nullptr;
};

struct StageEnv {
  // The slot of a materialized value, or -1 when it is computed inline.
  std::function<long(const ir::Expr*)> slot_of;
  std::function<const SlotVars&(size_t)> slot;
  // Whether a Reduce call is computed inside the stages that read it.
  std::function<bool(const ir::Call&)> fused_reduce;
  tir::VarPtr err;  // int*: the entry's error flag
  // A typed extent as an index expression (a constant, or a run-time scalar
  // the host resolves from the DimVar bindings).
  std::function<tir::ExprPtr(const ir::ShapeDim&)> extent;
  // The normalized begin of Slice call c's axis `axis` (a run-time scalar,
  // which also checks the window against c's typed extent).
  std::function<tir::ExprPtr(const ir::Call& c, size_t axis)> slice_begin;
  // Whether a mean's empty-row error applies (not to a decomposition's:
  // decompose.h).
  std::function<bool(const ir::Call&)> checked;
  // Whether a sum accumulates in its compute type rather than in double
  // (a decomposition's: decompose.h).
  std::function<bool(const ir::Call&)> compute_type_sum;
  // Whether a value is never infinite or NaN (decompose.h).
  std::function<bool(const ir::Expr&)> finite;
  // A materialized value of the stage's shape (with a slot) that a row
  // stage computes in its first pass and stores, instead of a stage of its
  // own writing it and this one reading it back (residual + RMSNorm's sum);
  // later passes and the store read it back from cache. Null when none.
  ir::ExprPtr produced;
  // The stage's output may be an input's buffer (an in-place result read at
  // the same index: compiler/in_place.h): its pointer is not __restrict.
  bool out_may_alias = false;
  // The CPU schedule streams large outputs past the cache and keeps a half
  // row's float values in a scratch row; a CUDA block does neither (its
  // stores bypass no cache, and a block's shared memory is too small for
  // every branch's row).
  Target target = Target::kCpu;
};

// Slice, Transpose, Reshape and Concat: read in place by fused stages.
bool is_view(const ir::Op& op);

// Thrown by lower_stage for a view it cannot read in place (a Reshape that
// merges axes, a Concat across rows or in a stage with row reductions, ...).
struct ViewRefused {
  const ir::Expr* node;
  std::string why;
};

// The type of every index and extent in a lowered stage.
inline const tir::Type kIndex = tir::Type::scalar(ir::DType::kI64);

// Tuning constants of the CPU loops (the prelude has the same values for
// its own routines).
constexpr int64_t kChunk = 256;
constexpr int64_t kBlock = 16384;
// Streaming and prefetching depend on whether a stage's data is still in
// the last-level cache when it is next read, so their thresholds are
// fractions of that cache's size, read at run time (the prelude's
// tf_llc_bytes: TF_LLC_BYTES, else the last-level cache sysfs lists,
// else sysconf's L3):
// - stream_min_bytes(), three quarters of it: a stage that moves this many
//   bytes (its inputs and output together) streams its output. One that
//   moves less leaves its data in cache for the next call, where a plain
//   store finds its line; one that moves more has evicted it, and a plain
//   store reads each line in before writing it. Measured through torch.ops,
//   warm allocator, alternating rounds, ms, streamed / stored, rows of 4096
//   f32, 1 thread. On a 300 MiB L3: at 32 MiB per tensor (64-96 MiB moved)
//   softmax 4.09-4.22 / 2.81-2.97, rmsnorm 2.65-2.77 / 2.34-2.51, silu * b
//   3.64-4.04 / 3.36-3.58, a * b 2.83-2.95 / 3.40-3.48 (the one loss); at
//   128 MiB (256 MiB moved and more) rmsnorm 9.7-11.9 / 20.1-21.5,
//   layer_norm 11.5-13.4 / 22.0-23.4, a * b 15.4-19.5 / 25.0-26.4, RoPE
//   29-37 / 45-49 (2 threads alike, but softmax at 128 MiB: 8.1-8.4 /
//   6.4-7.3). On a 32 MiB L3 (AMD EPYC guest): at 32 MiB rmsnorm 1.34-1.47
//   / 1.82-1.96, softmax 1.85-1.91 / 2.91-2.97; at 8 MiB per tensor, 16 MiB
//   moved: rmsnorm 0.278-0.284 / 0.267-0.272 (2 threads 0.139-0.225 /
//   0.127-0.135), softmax 0.43-0.46 / 0.42-0.44; 24-32 MiB moved: silu * b
//   0.424-0.434 / 0.466-0.472, residual + rmsnorm 0.58 / 0.75-0.84. The
//   output's size alone (a quarter of the cache) chose wrongly at 8 MiB.
// - prefetch_min_bytes(), three quarters of it: a streamed elementwise
//   stage moving this many bytes (its inputs and output together)
//   prefetches its leaves kPrefetchAhead bytes ahead into L2. Measured on
//   the 300 MiB host (Intel), without / with, rows of 4096 f32: at 8192
//   rows (384 MiB moved) silu * b 25.8-28.5 / 22.6-25.4 on 1 thread, 13.2-15.2 /
//   11.3-11.4 on 2; a * b 19.6-20.3 / 17.9-18.8 and 9.3-9.8 / 7.1-7.7;
//   gelu-tanh (256 MiB) 24.0-29.9 / 16.4-20.1 and 10.6-11.7 / 8.6-9.2.
//   With less, the previous call leaves much of it in cache, and the
//   prefetches cost silu * b on two threads 1.95 / 2.25 at 2048 rows (96
//   MiB moved) and 4.0 / 4.7 at 4096 (192).
// - prefetch_streams(), the prelude's tf_prefetch_streams (a bool): whether
//   that prefetch also runs for a stage that reads each input as one
//   ascending run. It does on every host for a stage that reads an input
//   at several offsets along the row (a rotate-half's halves: the composed
//   RoPE at 128 MiB per tensor on an AMD EPYC guest (Zen 5), 1 thread, ms:
//   11.2-12.6 in 13 runs with the prefetch; without, 11.7-12.0 in 3 runs and
//   20.6-23.4 in 4, a slow mode the prefetch removes). For one ascending run
//   per input that core's prefetcher keeps up and the prefetches only cost:
//   through torch.ops, warm allocator, 3 alternating rounds, ms, without /
//   with, one thread: silu * b 1.64-1.66 / 1.70-2.08 at 32 MiB, 6.78-6.89 /
//   7.22-7.78 at 128 MiB; gelu-tanh 1.94-1.98 / 2.00-2.03 and 7.90-7.98 /
//   7.95-8.33; silu * b over rows of 128, 128 MiB, 7.45-7.53 / 8.05-8.81;
//   two threads: silu * b 1.35-1.54 / 1.47-1.55 and 6.36-6.49 / 7.21-7.23,
//   gelu-tanh 0.98-1.07 / 1.06-1.09 and 5.30-5.43 / 4.92-5.09 (the one
//   loss). So tf_prefetch_streams() is false on AMD cores and true
//   elsewhere, where the measurements above the rule (made on Intel hosts)
//   showed the prefetch helping long rows; TF_PREFETCH_STREAMS=0 / 1
//   overrides it.
tir::ExprPtr stream_min_bytes();
tir::ExprPtr prefetch_min_bytes();
tir::ExprPtr prefetch_streams();
// The number of threads a parallel loop of the current call would get
// (the prelude's tf_threads, an i64).
tir::ExprPtr team_size();
// Prefetches into L2 (locality 2: prefetcht1) of the lines of `row` (a
// pointer) that hold its elements [lo, lo + n), `offset` elements further
// on: one per 64-byte line.
tir::StmtPtr prefetch_lines(const tir::VarPtr& row, const tir::ExprPtr& offset, const tir::ExprPtr& lo,
                            const tir::ExprPtr& n);
// The fence that makes a task's streamed stores visible to other threads.
tir::StmtPtr stream_fence();
// y[j] = value for j in [lo, lo + n), streamed past the cache one 64-byte
// line at a time: each line's values go into a line buffer in L1 and out at
// once (tf_stream_line), so the streaming stores spread over the loop's
// arithmetic; the elements before y's first line boundary and after its
// last are stored plainly. A chunk computed whole and then streamed as one
// burst of 16 lines waits on the write-combining buffers instead: through
// torch.ops, warm allocator, [8192, 4096] f32, 3 alternating rounds, ms,
// burst / per line: silu(a) * b 15.9-17.4 / 13.3-14.1 on one thread and
// 8.7-9.3 / 6.8-7.4 on two (gelu-tanh, whose routine streams its own
// lines, tf_gelu_tanh_stream_n: 16.6-17.7 / 13.4-14.4 and 9.0-9.2 /
// 7.0-7.4).
tir::StmtPtr stream_lines(const tir::VarPtr& y, const tir::ExprPtr& lo, const tir::ExprPtr& n,
                          const tir::VarPtr& j, const tir::ExprPtr& value);
// A row stage's task is one row, which ends with a store fence: rows
// shorter than this do not stream there (a fence per 512 bytes made a RoPE
// 4x slower than not streaming). An elementwise task fences once after its
// rows, which stream when each is whole cache lines (RoPE's rows of 128
// f32, composed: 44.8-49.9 / 29.1-30.7 ms at 128 MiB on one thread).
constexpr int64_t kStreamMinRow = 2048;
// In bytes (16384 f32 values). Against 16 KiB at [8192, 4096] f32, 4 and 3
// alternating rounds, ms: gelu-tanh 19.3-20.8 / 17.1-18.2 on one thread and
// 9.7-10.2 / 8.2-9.3 on two; silu * b within its spread (medians 19.8 / 20.1
// and 9.6 / 9.5). 256 KiB was slower on two threads (9.3-12.9).
constexpr int64_t kPrefetchAhead = 65536;
// Elements from which a stage's loop runs on several threads (below, or
// with a team of one, the serial twin runs: team_size()). A stage calling
// an exp-like function per element does several times the work per
// element, so it forks from kTranscendentalParallelMin. Two threads,
// through torch.ops, 2 alternating rounds, us, forking from 65536 /
// 8192 elements (from 32768 / 8192 for the row stage): silu(a) * b at [16,
// 512] 3.95-4.05 / 3.39-3.52, [32, 512] 5.97-6.70 / 4.49-4.81; gelu-tanh
// 4.20-4.24 / 3.56-3.57 and 6.58-6.61 / 4.99-5.09; softmax [32, 512]
// 6.87-7.16 / 5.31-5.39 (eager torch 5.54-6.03). From 4096 the fork costs
// more than it saves (gelu-tanh at [8, 512] 2.71-2.79 / 3.35-3.39).
constexpr int64_t kElementwiseParallelMin = 65536;
constexpr int64_t kTranscendentalParallelMin = 8192;
// An elementwise stage's task covers at least this many elements (several
// short rows), so per-task index arithmetic is amortized.
constexpr int64_t kTaskElements = 4096;
// Where an operand moves by kTileMinStride elements or more per element
// along the row (a transpose read in place) in a stage of kTileMinElements
// or more, an elementwise stage's task on the CPU is a tile of kTileRows
// rows by kTileCols elements instead of whole rows: the tile reads the same
// kTileCols lines of the operand for all of its rows, kTileCols being few
// enough that lines a power-of-two stride apart (one cache set) stay
// cached, and the output's part of each row is a whole line of f32.
// Whole rows read one element per line and page and came back for the
// next after the line had left. f32 [2048, 4096] -> [4096, 2048] through
// torch.ops, one thread, ms (eager's copy 6.2-7.4): whole rows 61; tiles of
// 32 x 128 rows by columns 19.7, 32 x 32 12.0, 64 x 16 7.6, 128 x 16 7.3,
// 256 x 16 6.6, 512 x 16 6.7, 256 x 8 11.6. Small stages keep whole rows
// (a [8, 30, 100] one took 50% longer in tiles).
constexpr int64_t kTileRows = 256;
constexpr int64_t kTileCols = 16;
constexpr int64_t kTileMinStride = 16;
constexpr int64_t kTileMinElements = 65536;
constexpr int64_t kRowParallelMin = 32768;
// Floats in a half-precision row stage's scratch row (32 KiB).
constexpr int64_t kRowScratch = 8192;
// Rows per task of a row stage whose streamed stores are deferred to the
// next row (a task's last row is streamed in one burst at its end).
constexpr int64_t kDeferRows = 16;

// Whether a Reduce can be a row reduction of a stage of rank `rank` (its
// shape): over the last axis only, keepdim, a float operand.
bool is_row_reduce(const ir::Call& c);

// The loop nest storing e into slot s. With root_inline, e is computed even
// though it is the slot's own value (its root is not read back as a leaf).
// Sets *may_fail when an inlined op can fail at run time after the stage
// has written. *precheck (null when none) is a check of shapes alone that
// the entry runs before any stage, returning an error code (a mean over
// an empty row).
tir::StmtPtr lower_stage(const StageEnv& env, size_t s, const ir::ExprPtr& e, const std::string& what,
                         bool root_inline, bool* may_fail, tir::StmtPtr* precheck);

}  // namespace tf::compiler
