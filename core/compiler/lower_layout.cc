// Reshape / Transpose / Slice: the contiguous result gathers from its
// materialized operand. Transpose and Slice are strided views (one run-time
// stride per result axis; Slice's begins resolved by the host: scalars.h),
// copied a row at a time with a unit-stride path, or, where the operand's
// unit stride is on the result's second-to-last axis, as planes of blocks
// (transposed_planes); Reshape keeps row-major
// order, so a contiguous operand is a flat copy and any other is walked
// index by index. Rows run in parallel from kLayoutParallelMin elements.
#include "core/compiler/emit_util.h"
#include "core/compiler/lower_loop_nest.h"
#include "core/compiler/lower_stages.h"

namespace tf::compiler {

using ir::DType;
using namespace tir;

namespace {

// A copy moves 2 values per element: threads pay off later than for a
// stage that computes.
constexpr int64_t kLayoutParallelMin = 65536;
// A transposed plane's task covers at most this many of y's rows.
constexpr int64_t kTransposeColumns = 4096;

// y[row * inner + j] = x[base + offset(row) + j * xs.back()] over the result's
// rows: xs[i] is the operand stride of result axis i.
StmtPtr strided_copy(const EntryVars& e, size_t out, size_t xs_slot, const std::vector<ExprPtr>& xs,
                     const ExprPtr& base) {
  const SlotVars &x = e.slot(xs_slot), &y = e.slot(out);
  const size_t r = y.type->rank();
  if (r == 0) return Store::make(y.data, i64(0), load(x.data, base));
  Lets frame;
  const VarPtr inner = frame.bind("inner", extent(y, r - 1));
  const VarPtr outer = frame.bind("outer", extents_product(y, 0, r - 1));
  const VarPtr is = frame.bind("is", xs[r - 1]);
  std::vector<ExprPtr> row_n;
  for (size_t i = 0; i + 1 < r; ++i) row_n.push_back(extent(y, i));
  const VarPtr row = Var::make("row", kIndex), j = Var::make("j", kIndex);
  Lets task;
  const ExprPtr off = add(base, row_major_offsets(row, row_n, {std::vector<ExprPtr>(xs.begin(), xs.end() - 1)}, task)[0]);
  const VarPtr xr = task.bind_pointer("xr", address(x.data, off), true);
  const VarPtr yr = task.bind_pointer("yr", address(y.data, mul(row, inner)), true);
  // The unit-stride row vectorizes; any other is a gather.
  const StmtPtr unit = For::make(j, i64(0), inner, ForKind::kVectorized, Store::make(yr, j, load(xr, j)));
  const StmtPtr strided = For::make(j, i64(0), inner, ForKind::kSerial, Store::make(yr, j, load(xr, mul(j, is))));
  const StmtPtr body = task.wrap(IfThenElse::make(eq(is, i64(1)), unit, strided));
  const StmtPtr par = For::make(row, i64(0), outer, ForKind::kParallel, body, {},
                                ge(mul(outer, inner), i64(kLayoutParallelMin)));
  return IfThenElse::make(gt(element_count(y), i64(0)), frame.wrap(par));
}

}  // namespace

StmtPtr transposed_planes(const TransposedPlanes& t) {
  const int64_t bytes = ir::dtype_bytes(t.dtype);
  const int64_t block = 128 / bytes;  // the prelude's tf_transpose_rows
  Lets frame;
  const VarPtr ea = frame.bind("ea", t.ea);
  const VarPtr ej = frame.bind("ej", t.ej);
  const VarPtr xj = frame.bind("xj", t.xj);
  const VarPtr nb = frame.bind("nb", div(add(ej, i64(block - 1)), i64(block)));
  // Blocks of few columns are cut along a too, so that a plane of a few
  // long y rows still spreads over the threads.
  const VarPtr na = frame.bind("na", div(add(ea, i64(kTransposeColumns - 1)), i64(kTransposeColumns)));
  const VarPtr planes = frame.bind("planes", t.planes);
  const ExprPtr count = mul(planes, mul(ea, ej));
  const VarPtr nt = frame.bind("nt", ge(mul(count, i64(2 * bytes)), stream_min_bytes()));
  const VarPtr task = Var::make("t", kIndex);
  Lets lets;
  const VarPtr p = lets.bind("p", div(task, mul(nb, na)));
  const VarPtr j0 = lets.bind("j0", mul(div(mod(task, mul(nb, na)), na), i64(block)));
  const VarPtr a0 = lets.bind("a0", mul(mod(task, na), i64(kTransposeColumns)));
  const ExprPtr x = address(t.x, add(t.plane_offset(p, lets), add(a0, mul(j0, xj))));
  const ExprPtr y = address(t.y, add(mul(add(mul(p, ea), a0), ej), j0));
  const StmtPtr call = Evaluate::make(extern_call(
      "tf_transpose_block",
      {x, xj, y, ej, min(i64(block), sub(ej, j0)), min(i64(kTransposeColumns), sub(ea, a0)), nt}));
  return frame.wrap(
      For::make(task, i64(0), mul(planes, mul(nb, na)), ForKind::kParallel, lets.wrap(call), {}, t.parallel));
}

LoweredStage lower_reshape(const EntryVars& e, size_t out, size_t xs) {
  const SlotVars &x = e.slot(xs), &y = e.slot(out);
  const size_t ra = x.type->rank();
  Lets frame;
  const VarPtr n = frame.bind("n", element_count(y));
  // Contiguous: every axis of extent > 1 has the row-major stride.
  ExprPtr contig = boolean(true), dense = i64(1);
  for (size_t i = ra; i-- > 0;) {
    contig = land(contig, lor(eq(extent(x, i), i64(1)), eq(stride(x, i), dense)));
    dense = mul(dense, extent(x, i));
  }
  const VarPtr is_contig = frame.bind("contig", contig);
  const ExprPtr min_work = ge(n, i64(kLayoutParallelMin));
  // The flat copy, in blocks of kBlock so that the threads split it and each
  // block's loop vectorizes.
  const VarPtr t = Var::make("t", kIndex), f = Var::make("f", kIndex);
  Lets block;
  const VarPtr f0 = block.bind("f0", mul(t, i64(kBlock)));
  const VarPtr f1 = block.bind("f1", min(n, add(f0, i64(kBlock))));
  const StmtPtr copy = For::make(f, f0, sub(f1, f0), ForKind::kVectorized, Store::make(y.data, f, load(x.data, f)));
  const StmtPtr flat = For::make(t, i64(0), div(add(n, i64(kBlock - 1)), i64(kBlock)), ForKind::kParallel,
                                 block.wrap(copy), {}, min_work);
  // Any other operand: each element's offset from its row-major index.
  std::vector<ExprPtr> xn, xst;
  for (size_t i = 0; i < ra; ++i) xn.push_back(extent(x, i)), xst.push_back(stride(x, i));
  Lets digits;
  const ExprPtr off = row_major_offsets(f, xn, {xst}, digits)[0];
  const StmtPtr walk = For::make(f, i64(0), n, ForKind::kParallel,
                                 digits.wrap(Store::make(y.data, f, load(x.data, off))), {}, min_work);
  return LoweredStage{Seq::make({stage_comment("Reshape", out), frame.wrap(IfThenElse::make(is_contig, flat, walk))}),
                      nullptr, false};
}

LoweredStage lower_transpose(const EntryVars& e, size_t out, size_t xs, const ops::Transpose& op) {
  const SlotVars& x = e.slot(xs);
  const size_t r = e.slot(out).type->rank(), ra = x.type->rank();
  std::vector<ExprPtr> strides;
  for (size_t i = 0; i < r; ++i) {
    const int64_t p = op.axes.at(i);
    strides.push_back(stride(x, static_cast<size_t>(p < 0 ? p + static_cast<int64_t>(ra) : p)));
  }
  StmtPtr copy = strided_copy(e, out, xs, strides, i64(0));
  if (e.target == Target::kCpu && r >= 2) {
    // A matrix's transpose, or a batch of them: planes (see the header).
    const SlotVars& y = e.slot(out);
    TransposedPlanes t{x.data, y.data, y.type->dtype(), extents_product(y, 0, r - 2), extent(y, r - 2),
                       extent(y, r - 1), strides[r - 1], nullptr, ge(element_count(y), i64(kLayoutParallelMin))};
    t.plane_offset = [&](const VarPtr& p, Lets& lets) {
      std::vector<ExprPtr> n, st;
      for (size_t i = 0; i + 2 < r; ++i) n.push_back(extent(y, i)), st.push_back(strides[i]);
      return n.empty() ? i64(0) : row_major_offsets(p, n, {st}, lets)[0];
    };
    const ExprPtr planar = land(eq(strides[r - 2], i64(1)), ne(strides[r - 1], i64(1)));
    copy = IfThenElse::make(planar, IfThenElse::make(gt(element_count(y), i64(0)), transposed_planes(t)), copy);
  }
  return LoweredStage{Seq::make({stage_comment("Transpose", out), copy}), nullptr, false};
}

LoweredStage lower_slice(const EntryVars& e, size_t out, size_t xs, const ops::Slice& op) {
  const SlotVars &x = e.slot(xs), &y = e.slot(out);
  const size_t r = y.type->rank();
  std::vector<ExprPtr> strides;
  ExprPtr base = i64(0);
  for (size_t i = 0; i < r; ++i) {
    if (op.strides.at(i) <= 0) unsupported("Slice with a non-positive stride");
    const size_t k = e.add_scalar(RuntimeScalar{RuntimeScalar::kSliceBegin, op.begin.at(i), op.end.at(i),
                                                op.strides[i], x.type->shape()[i], y.type->shape()[i], i, ""});
    strides.push_back(mul(stride(x, i), i64(op.strides[i])));
    base = add(base, mul(load(e.scalars, i64(static_cast<int64_t>(k))), stride(x, i)));
  }
  Lets frame;
  const VarPtr b = frame.bind("base", base);
  return LoweredStage{Seq::make({stage_comment("Slice", out), frame.wrap(strided_copy(e, out, xs, strides, b))}),
                      nullptr, false};
}

}  // namespace tf::compiler
