// Lowering of an elementwise stage to TIR: the loop nest that computes one
// materialized value whose inlined elementwise producers (scalar_lowering.h)
// read materialized values (leaves) with broadcasting. The decisions made
// here, per stage:
// - iteration: rows (all axes but the last) x blocks of kBlock along the
//   last axis, one parallel loop over both, on one thread below 65536
//   elements (split_parallel_threshold makes that a branch);
// - a specialization for unit inner strides (every leaf that varies along
//   the row has stride 1), where a C compiler vectorizes without gathers;
// - chunks of kChunk elements through L1 buffers when the value needs any:
//   f16 leaves widened by F16C (tf_widen_n), calls computed a chunk at a
//   time (tf_gelu_tanh_n, tf_rf16_n), a half-precision output narrowed a
//   chunk at a time (tf_narrow_n);
// - streaming stores (tf_stream) for a memory-bound stage whose output is
//   too large to stay in cache (can_stream).
#pragma once

#include <functional>
#include <string>

#include "core/ir/expr.h"
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
  tir::VarPtr err;  // int*: the entry's error flag
};

// Tuning constants of the CPU loops (the prelude has the same values for
// its own routines).
constexpr int64_t kChunk = 256;
constexpr int64_t kBlock = 16384;
constexpr int64_t kStreamMinBytes = int64_t{16} << 20;  // about half an L3
constexpr int64_t kElementwiseParallelMin = 65536;

// The loop nest storing e into slot s. With root_inline, e is computed even
// though it is the slot's own value (its root is not read back as a leaf).
// Sets *may_fail when an inlined op can fail at run time.
tir::StmtPtr lower_elementwise_stage(const StageEnv& env, size_t s, const ir::ExprPtr& e, const std::string& what,
                                     bool root_inline, bool* may_fail);

}  // namespace tf::compiler
