// Lowerings to TIR of the stages that are not a fused loop nest
// (lower_loop_nest.h): each builds one stage of the entry from the slots it
// reads and writes (entry_vars.h). Every operand is a materialized slot of
// any strides; every result slot is C-contiguous. One file per concept:
//
//   lower_reduce.cc  Reduce over any axes (a Reduce that is not fused)
//   lower_matmul.cc  MatMul through the prelude's GEMM
//   lower_layout.cc  Reshape / Transpose / Slice copies
//   lower_insert.cc  InsertSlice / CacheUpdate
//   lower_rope.cc    rotate-half RoPE
//   lower_data.cc    Gather, TopK, Concat, Stack, Reshard's copy, Bitcast, Arange
//   lower_shape.cc   ShapeOf, Rank, ShapeExtract, ShapeCompose
//   lower_conv.cc    Conv2D (im2col + GEMM)
//
// Run-time checks mirror core/eval's kernels: the same condition in the same
// order, reported through a codegen.h error code whose rt->info the host
// turns into the evaluator's message. A check of parameters or shapes alone
// is a precheck (the entry runs it before any stage and returns its code);
// any other runs in its stage, which then writes nothing of its own result.
// Throws Error(kUnsupported) for a form not compiled (the caller falls back).
#pragma once

#include <array>
#include <functional>
#include <optional>
#include <vector>

#include "core/compiler/entry_vars.h"
#include "core/compiler/inline_operand.h"
#include "core/ops/nn/nn.h"
#include "core/ops/shape/shape.h"
#include "core/ops/tensor/tensor.h"

namespace tf::compiler {

// ---- lower_reduce.cc
// One task per kept element of x, walking the reduced axes (the last one
// innermost), or tiles of a kept axis at unit stride, with core/eval's
// accumulation and rounding. x_axes: a Transpose's axes when the operand is
// read in place through one (StageCall::axes), else empty.
LoweredStage lower_reduce(const EntryVars& e, size_t out, size_t x, const std::vector<int64_t>& x_axes,
                          const ops::Reduce& op);
// The same over an operand the stage computes where it reads it
// (inline_operand.h): each leaf read at its own strides, broadcast ones at
// stride 0. The columns schedules need every leaf that moves along the
// tiled axis at unit stride; the dense one, no broadcast leaf at all.
LoweredStage lower_reduce(const EntryVars& e, size_t out, const InlineOperand& x, const ops::Reduce& op);

// ---- lower_matmul.cc
// One GEMM per batch (broadcast batch axes read stride 0).
// a_axes / b_axes: a Transpose's axes when the operand is read in place
// through one (StageCall::axes), else empty.
LoweredStage lower_matmul(const EntryVars& e, size_t out, size_t a, const std::vector<int64_t>& a_axes, size_t b,
                          const std::vector<int64_t>& b_axes);

// ---- lower_layout.cc
LoweredStage lower_reshape(const EntryVars& e, size_t out, size_t x);
LoweredStage lower_transpose(const EntryVars& e, size_t out, size_t x, const ops::Transpose& op);
// A copy of transposed planes on the CPU: y (C-contiguous, as [planes, ea,
// ej]) from x, whose element (p, a, j) is at x[plane_offset(p) + a + j * xj]
// (x's unit stride is on y's second-to-last axis: x.T, k.transpose(-1,
// -2)). A task is a block of a plane, 128 bytes of y's columns by up to
// 4096 of its rows, through the prelude's tf_transpose_block, which reads
// x along its rows and writes whole lines of y, streamed where the copy
// moves stream_min_bytes() or more. Tasks run in parallel where
// `parallel` holds. Used by a Transpose's own stage and by a fused stage
// that only copies one operand (lower_loop_nest.cc).
struct TransposedPlanes {
  tir::VarPtr x, y;  // the operand's and the result's data
  ir::DType dtype;
  tir::ExprPtr planes, ea, ej, xj;
  // x's offset of plane p; digits it needs are bound in `lets`.
  std::function<tir::ExprPtr(const tir::VarPtr& p, Lets& lets)> plane_offset;
  tir::ExprPtr parallel;
};
tir::StmtPtr transposed_planes(const TransposedPlanes& t);
// Registers each axis's begin as a run-time scalar (scalars.h).
LoweredStage lower_slice(const EntryVars& e, size_t out, size_t x, const ops::Slice& op);

// ---- lower_insert.cc
// offsets: one i64 value per axis (a literal or a scalar slot's value).
// hoist: the offsets read only parameters and literals, so the window checks
// are a precheck.
LoweredStage lower_insert_slice(const EntryVars& e, size_t out, size_t dst, size_t update,
                                const std::vector<tir::ExprPtr>& offsets, bool hoist);
// pos, count: CacheUpdate's cur_pos and s as i64 values; hoist as above.
LoweredStage lower_cache_update(const EntryVars& e, size_t out, size_t cache, size_t update, const tir::ExprPtr& pos,
                                const tir::ExprPtr& count, bool hoist);
// cache[b, pos[b]:] = new[b] per batch row; the checks are a precheck when
// pos is a parameter.
LoweredStage lower_cache_scatter(const EntryVars& e, size_t out, size_t cache, size_t update, size_t pos);

// ---- lower_rope.cc
// in: q, k, cos, sin, positions; out: q_rot, k_rot.
LoweredStage lower_rope(const EntryVars& e, const std::array<size_t, 5>& in, const std::array<size_t, 2>& out);

// ---- lower_data.cc
LoweredStage lower_gather(const EntryVars& e, size_t out, size_t x, size_t indices, const ops::Gather& op);
// values / indices are the two result slots.
LoweredStage lower_topk(const EntryVars& e, size_t values, size_t indices, size_t x, const ops::TopK& op);
LoweredStage lower_concat(const EntryVars& e, size_t out, const std::vector<size_t>& ins, const ops::Concat& op);
LoweredStage lower_stack(const EntryVars& e, size_t out, const std::vector<size_t>& ins, const ops::Stack& op);
// out = x's elements' bits read as out's dtype (same width).
LoweredStage lower_bitcast(const EntryVars& e, size_t out, size_t x);
// out[i] = op.start + i * op.step, as the evaluator computes it.
LoweredStage lower_arange(const EntryVars& e, size_t out, const ops::Arange& op);
// out = x in row-major order (Reshard's single-device meaning).
LoweredStage lower_copy(const EntryVars& e, size_t out, size_t x, const std::string& what);

// ---- lower_shape.cc (x is read for its shape only)
LoweredStage lower_shape_of(const EntryVars& e, size_t out, size_t x);
LoweredStage lower_rank(const EntryVars& e, size_t out, size_t x);
LoweredStage lower_shape_extract(const EntryVars& e, size_t out, size_t shape, const ops::ShapeExtract& op);
// dims: one i64 value per field.
LoweredStage lower_shape_compose(const EntryVars& e, size_t out, const std::vector<tir::ExprPtr>& dims);

// ---- lower_conv.cc
// NCHW x OIHW; bias a rank-1 [O] slot or none.
LoweredStage lower_conv2d(const EntryVars& e, size_t out, size_t x, size_t weight, std::optional<size_t> bias,
                          const ops::Conv2D& op);
// The same as stages around one batched GEMM of scratch slots (for a
// target whose GEMM is a library call): the column matrix and the weight
// in the compute type, the GEMM into a compute-type result, then the bias
// and one rounding.
GemmStages lower_conv2d_as_gemm(const EntryVars& e, size_t out, size_t x, size_t weight,
                                std::optional<size_t> bias, const ops::Conv2D& op,
                                const std::function<size_t(ir::TensorTypePtr)>& scratch);

}  // namespace tf::compiler
