// Data-movement stages: Gather, TopK, Concat, Stack, Reshard's copy,
// Bitcast's copy of bits and Arange's fill.
// Element values move as stored (no widening), so every storable dtype
// works, 8-bit floats included. Checks as core/eval/kernels (indexing.cc,
// combine.cc).
#include "core/compiler/codegen.h"
#include "core/compiler/lower_stages.h"

namespace tf::compiler {

using ir::DType;
using namespace tir;

namespace {

// Below these many elements (TopK: compared values) a stage runs on one thread.
constexpr int64_t kGatherParallelMin = 65536;
constexpr int64_t kTopKParallelMin = 8192;

size_t norm_axis(int64_t axis, size_t rank) {
  return static_cast<size_t>(axis < 0 ? axis + static_cast<int64_t>(rank) : axis);
}

ExprPtr type_rank(const SlotVars& s) { return i32(static_cast<int64_t>(s.type->rank())); }
Type element_type(const SlotVars& s) { return Type::scalar(s.type->dtype()); }

// The indices in row-major order, each against [0, x's extent on `axis`):
// at the first bad one rt->info = {index, axis, extent}, `fail` runs and
// `ok` becomes false (the evaluator reports the first in that order). No
// index is checked when the result is empty.
StmtPtr check_indices(const EntryVars& e, size_t out, size_t xs, size_t ind, size_t axis, const VarPtr& ok,
                      const StmtPtr& fail) {
  const SlotVars &x = e.slot(xs), &ix = e.slot(ind);
  const size_t ri = ix.type->rank();
  std::vector<ExprPtr> n, st;
  for (size_t a = 0; a < ri; ++a) n.push_back(extent(ix, a)), st.push_back(stride(ix, a));
  const VarPtr f = Var::make("f", kIndex);
  Lets at;
  const ExprPtr off = row_major_offsets(f, n, {st}, at)[0];
  const VarPtr j = at.bind("j", cast(DType::kI64, load(ix.data, off)));
  const ExprPtr len = extent(x, axis);
  const StmtPtr bad = Seq::make({store_info(e, {j, i64(static_cast<int64_t>(axis)), len}), fail,
                                 Assign::make(ok, boolean(false))});
  const StmtPtr check = IfThenElse::make(ok, at.wrap(IfThenElse::make(lor(lt(j, i64(0)), ge(j, len)), bad)));
  const ExprPtr count = select(gt(element_count(e.slot(out)), i64(0)), element_count(ix), i64(0));
  return For::make(f, i64(0), count, ForKind::kSerial, check);
}

}  // namespace

LoweredStage lower_gather(const EntryVars& e, size_t out, size_t xs, size_t ind, const ops::Gather& op) {
  const SlotVars &x = e.slot(xs), &ix = e.slot(ind), &y = e.slot(out);
  const size_t rx = x.type->rank(), r = y.type->rank();
  const size_t axis = norm_axis(op.axis, rx), nb = static_cast<size_t>(op.batch_dims);
  const size_t ni = ix.type->rank() - nb;
  LoweredStage lowered;
  const VarPtr ok = Var::make("ok", Type::scalar(DType::kBool), true);
  // Indices given as a parameter are checked before any stage writes.
  const bool hoist = e.is_input(ind);
  if (hoist) {
    const StmtPtr walk = check_indices(e, out, xs, ind, axis, ok, Seq::make({}));
    lowered.precheck = Seq::make({Comment::make("precheck: gather indices"),
                                  LetStmt::make(ok, boolean(true),
                                                Seq::make({walk, IfThenElse::make(lnot(ok), Return::make(i32(kErrGatherIndex)))}))});
  }
  // Per result axis d: its stride in x (0 on an index axis) and in indices
  // (batch and index axes only); x's gathered axis adds j * st[axis].
  std::vector<ExprPtr> xs_d(r, i64(0)), is_d(r, i64(0)), n;
  for (size_t d = 0; d < r; ++d) {
    if (d < axis) xs_d[d] = stride(x, d);
    if (d < nb) is_d[d] = stride(ix, d);
    if (d >= axis && d < axis + ni) is_d[d] = stride(ix, nb + d - axis);
    if (d >= axis + ni) xs_d[d] = stride(x, d - ni + 1);
    n.push_back(extent(y, d));
  }
  Lets frame;
  const ExprPtr go = hoist ? boolean(true) : ExprPtr(ok);
  const VarPtr inner = frame.bind("inner", r ? extent(y, r - 1) : i64(1));
  const VarPtr outer = frame.bind("outer", select(go, extents_product(y, 0, r ? r - 1 : 0), i64(0)));
  const VarPtr sa = frame.bind("sa", stride(x, axis));
  const ExprPtr xs_last = r ? xs_d[r - 1] : i64(0), is_last = r ? is_d[r - 1] : i64(0);
  if (r) n.pop_back(), xs_d.pop_back(), is_d.pop_back();
  const VarPtr row = Var::make("row", kIndex), q = Var::make("q", kIndex);
  Lets task;
  const std::vector<ExprPtr> off = row_major_offsets(row, n, {xs_d, is_d}, task, "d");
  Lets elem;
  const VarPtr j = elem.bind("j", cast(DType::kI64, load(ix.data, add(off[1], mul(q, is_last)))));
  const StmtPtr copy = Store::make(y.data, add(mul(row, inner), q), load(x.data, add(add(off[0], mul(q, xs_last)), mul(j, sa))));
  const StmtPtr body = task.wrap(For::make(q, i64(0), inner, ForKind::kSerial, elem.wrap(copy)));
  const ExprPtr count = element_count(y);
  StmtPtr stage = IfThenElse::make(
      gt(count, i64(0)),
      frame.wrap(For::make(row, i64(0), outer, ForKind::kParallel, body, {}, ge(count, i64(kGatherParallelMin)))));
  if (!hoist) {
    stage = LetStmt::make(
        ok, boolean(true),
        Seq::make({check_indices(e, out, xs, ind, axis, ok,
                                 Evaluate::make(extern_call("tf_fail", {e.err, i32(kErrGatherIndex)}))),
                   stage}));
    lowered.may_fail = true;
  }
  lowered.stage = Seq::make({stage_comment("gather", out), stage});
  return lowered;
}

LoweredStage lower_topk(const EntryVars& e, size_t values, size_t indices, size_t xs, const ops::TopK& op) {
  const SlotVars &x = e.slot(xs), &v = e.slot(values), &ix = e.slot(indices);
  const size_t r = x.type->rank(), axis = norm_axis(op.axis, r);
  LoweredStage lowered;
  // k against the axis length reads shapes only: a precheck.
  {
    Lets at;
    const VarPtr k = at.bind("k", extent(v, axis)), len = at.bind("len", extent(x, axis));
    const StmtPtr bad = Seq::make({store_info(e, {k, len, i64(static_cast<int64_t>(axis))}),
                                   Return::make(i32(kErrTopKCount))});
    lowered.precheck = Seq::make({Comment::make("precheck: topk k"),
                                  at.wrap(IfThenElse::make(lor(lt(k, i64(0)), gt(k, len)), bad))});
  }
  Lets frame;
  std::vector<ExprPtr> n;
  std::vector<std::vector<ExprPtr>> st(3);
  ExprPtr outer_v = i64(1);
  for (size_t a = 0; a < r; ++a) {
    if (a == axis) continue;
    n.push_back(extent(x, a));
    outer_v = mul(outer_v, extent(x, a));
    st[0].push_back(stride(x, a)), st[1].push_back(stride(v, a)), st[2].push_back(stride(ix, a));
  }
  const VarPtr outer = frame.bind("outer", outer_v);
  const VarPtr len = frame.bind("len", extent(x, axis)), k = frame.bind("k", extent(v, axis));
  const VarPtr row = Var::make("row", kIndex);
  Lets task;
  const std::vector<ExprPtr> off = row_major_offsets(row, n, st, task);
  // tf_topk_row sorts indices in a scratch row of len entries.
  const VarPtr order = Var::make("order", Type::pointer(DType::kI64));
  const ExprPtr sort = extern_call("tf_topk_row",
                                   {address(x.data, off[0]), stride(x, axis), len, k, boolean(op.largest),
                                    address(v.data, off[1]), stride(v, axis), address(ix.data, off[2]),
                                    stride(ix, axis), order},
                                   {element_type(x)});
  const StmtPtr body = task.wrap(Allocate::make(order, len, MemoryScope::kGlobal, Evaluate::make(sort)));
  const StmtPtr par = For::make(row, i64(0), select(gt(k, i64(0)), outer, i64(0)), ForKind::kParallel, body, {},
                                ge(mul(outer, len), i64(kTopKParallelMin)));
  lowered.stage = Seq::make({Comment::make("stage: topk -> slots " + std::to_string(values) + ", " +
                                           std::to_string(indices)),
                             frame.wrap(par)});
  return lowered;
}

LoweredStage lower_concat(const EntryVars& e, size_t out, const std::vector<size_t>& ins, const ops::Concat& op) {
  const SlotVars& y = e.slot(out);
  const size_t axis = norm_axis(op.axis, y.type->rank());
  std::vector<StmtPtr> copies{stage_comment("concat", out)};
  ExprPtr at = i64(0);  // where input k starts along the axis
  for (size_t k : ins) {
    const SlotVars& x = e.slot(k);
    copies.push_back(Evaluate::make(extern_call(
        "tf_copy_nd", {address(y.data, mul(at, stride(y, axis))), y.strides, x.data, x.strides, x.shape, type_rank(y)},
        {element_type(y)})));
    at = add(at, extent(x, axis));
  }
  return LoweredStage{Seq::make(std::move(copies)), nullptr, false};
}

LoweredStage lower_stack(const EntryVars& e, size_t out, const std::vector<size_t>& ins, const ops::Stack& op) {
  const SlotVars& y = e.slot(out);
  const size_t r = y.type->rank(), axis = norm_axis(op.axis, r);
  // The result's strides without the new axis: one input's window.
  const VarPtr window = Var::make("so", Type::pointer(DType::kI64));
  std::vector<StmtPtr> body;
  for (size_t d = 0, w = 0; d < r; ++d)
    if (d != axis) body.push_back(Store::make(window, i64(static_cast<int64_t>(w++)), stride(y, d)));
  for (size_t j = 0; j < ins.size(); ++j) {
    const SlotVars& x = e.slot(ins[j]);
    body.push_back(Evaluate::make(extern_call("tf_copy_nd",
                                              {address(y.data, mul(i64(static_cast<int64_t>(j)), stride(y, axis))),
                                               window, x.data, x.strides, x.shape, type_rank(x)},
                                              {element_type(y)})));
  }
  const StmtPtr stack =
      Allocate::make(window, i64(static_cast<int64_t>(r > 1 ? r - 1 : 1)), MemoryScope::kLocal, Seq::make(std::move(body)));
  return LoweredStage{Seq::make({stage_comment("stack", out), stack}), nullptr, false};
}

LoweredStage lower_bitcast(const EntryVars& e, size_t out, size_t xs) {
  const SlotVars &x = e.slot(xs), &y = e.slot(out);
  const StmtPtr copy = Evaluate::make(extern_call("tf_copy_nd", {y.data, y.strides, x.data, x.strides, x.shape, type_rank(x)},
                                                  {element_type(y), element_type(x)}));
  return LoweredStage{Seq::make({stage_comment("bitcast", out), copy}), nullptr, false};
}

LoweredStage lower_arange(const EntryVars& e, size_t out, const ops::Arange& op) {
  const SlotVars& y = e.slot(out);
  const StmtPtr fill = Evaluate::make(extern_call(
      "tf_arange", {y.data, load(y.shape, i64(0)), imm(DType::kF64, op.start), imm(DType::kF64, op.step)},
      {element_type(y)}));
  return LoweredStage{Seq::make({stage_comment("arange", out), fill}), nullptr, false};
}

LoweredStage lower_copy(const EntryVars& e, size_t out, size_t xs, const std::string& what) {
  const SlotVars &x = e.slot(xs), &y = e.slot(out);
  const StmtPtr copy = Evaluate::make(
      extern_call("tf_copy_nd", {y.data, y.strides, x.data, x.strides, x.shape, type_rank(x)}, {element_type(y)}));
  return LoweredStage{Seq::make({stage_comment(what, out), copy}), nullptr, false};
}

}  // namespace tf::compiler
