// Reduce over any axes, as a stage of its own (a last-axis Reduce read back
// along its row is fused instead: lower_loop_nest.h). One task per kept
// element of the operand walks the reduced axes, the last one innermost.
// Numerics as core/eval's reduce_group: float sums accumulate in double
// (f16 / bf16 in float, reassociated: a vectorized reduction), a mean
// rounds the sum to the dtype before dividing by the reduced count; max /
// abs_max propagate NaN (tf_max); integer sums wrap. The output is
// contiguous in kept-axis order, which is its layout with or without keepdim.
#include <limits>

#include "core/compiler/codegen.h"
#include "core/compiler/emit_util.h"
#include "core/compiler/lower_stages.h"
#include "core/compiler/scalar_lowering.h"
#include "core/ir/error.h"

namespace tf::compiler {

using ir::DType;
using namespace tir;

namespace {

// The operand's axes split into kept and reduced ones, in axis order.
struct Axes {
  std::vector<size_t> kept, reduced;
};

Axes split_axes(size_t rank, const std::vector<int64_t>& axes) {
  std::vector<bool> red(rank, false);
  for (int64_t a : axes) red.at(static_cast<size_t>(a < 0 ? a + static_cast<int64_t>(rank) : a)) = true;
  Axes out;
  for (size_t i = 0; i < rank; ++i) (red[i] ? out.reduced : out.kept).push_back(i);
  return out;
}

// How one element is folded into the accumulator, and the value stored.
struct Fold {
  VarPtr acc;
  ExprPtr init;
  std::function<StmtPtr(const ExprPtr& element)> update;  // element in the compute type
  std::vector<Reduction> reductions;                     // empty: a serial loop
  std::function<ExprPtr(const ExprPtr& count)> result;   // in the compute type
};

// Where a max starts: -inf for floats, the lowest value of an integer type
// (0 for u8, false for bool, whose max is any()).
ExprPtr lowest(DType cd) {
  switch (cd) {
    case DType::kF32:
    case DType::kF64: return imm(cd, -std::numeric_limits<double>::infinity());
    case DType::kI64: return i64(std::numeric_limits<int64_t>::min());
    case DType::kI32: return imm(cd, std::numeric_limits<int32_t>::min());
    case DType::kI8: return imm(cd, std::numeric_limits<int8_t>::min());
    default: return imm(cd, 0);
  }
}

Fold fold_for(const ops::Reduce& op, DType d) {
  const DType cd = compute_dtype(d);
  Fold f;
  switch (op.kind) {
    case ops::ReduceKind::kSum:
    case ops::ReduceKind::kMean: {
      if (!ir::is_float(d)) {
        f.acc = Var::make("acc", kIndex, true);
        f.init = i64(0);
        f.update = [acc = f.acc](const ExprPtr& x) {
          return Assign::make(acc, call(kIndex, "tf_wadd", {acc, cast(DType::kI64, x)}, {kIndex}));
        };
        f.result = [acc = f.acc, cd](const ExprPtr&) { return cast(cd, acc); };
        return f;
      }
      // f16 / bf16 sums accumulate in float, the others in double (core/eval).
      const DType acc_t = is_half(d) ? DType::kF32 : DType::kF64;
      f.acc = Var::make("acc", Type::scalar(acc_t), true);
      f.init = imm(acc_t, 0);
      f.update = [acc = f.acc, acc_t](const ExprPtr& x) { return Assign::make(acc, add(acc, cast(acc_t, x))); };
      f.reductions = {Reduction{f.acc, BinaryOp::kAdd}};
      const bool mean = op.kind == ops::ReduceKind::kMean;
      f.result = [acc = f.acc, cd, d, mean](const ExprPtr& count) {
        const ExprPtr sum = round_to(d, cast(cd, acc));
        return mean ? select(ne(count, i64(0)), div(sum, cast(cd, count)), sum) : sum;
      };
      return f;
    }
    case ops::ReduceKind::kMax:
    case ops::ReduceKind::kAbsMax: {
      const bool abs = op.kind == ops::ReduceKind::kAbsMax;
      const Type ct = Type::scalar(cd);
      f.acc = Var::make("m", ct, true);
      f.init = abs ? imm(cd, 0) : lowest(cd);
      f.update = [m = f.acc, ct, abs](const ExprPtr& x) {
        const ExprPtr v = abs ? call(ct, "tf_abs", {x}, {ct}) : x;
        return Assign::make(m, call(ct, "tf_max", {m, v}, {ct}));
      };
      f.result = [m = f.acc](const ExprPtr&) { return ExprPtr(m); };
      return f;
    }
  }
  TF_CHECK(false, "lower_reduce: unknown Reduce kind");
}

}  // namespace

LoweredStage lower_reduce(const EntryVars& e, size_t out, size_t xs, const ops::Reduce& op) {
  const SlotVars &x = e.slot(xs), &y = e.slot(out);
  const DType d = x.type->dtype();
  const Axes axes = split_axes(x.type->rank(), op.axes);
  std::vector<ExprPtr> kept_n, kept_s, walk_n, walk_s;
  for (size_t a : axes.kept) kept_n.push_back(extent(x, a)), kept_s.push_back(stride(x, a));
  for (size_t i = 0; i + 1 < axes.reduced.size(); ++i)
    walk_n.push_back(extent(x, axes.reduced[i])), walk_s.push_back(stride(x, axes.reduced[i]));

  Lets frame;
  ExprPtr outer_v = i64(1), rout_v = i64(1);
  for (const ExprPtr& n : kept_n) outer_v = mul(outer_v, n);
  for (const ExprPtr& n : walk_n) rout_v = mul(rout_v, n);
  const VarPtr outer = frame.bind("outer", outer_v), rout = frame.bind("rout", rout_v);
  const VarPtr inner = frame.bind("inner", axes.reduced.empty() ? i64(1) : extent(x, axes.reduced.back()));
  const VarPtr is = frame.bind("is", axes.reduced.empty() ? i64(0) : stride(x, axes.reduced.back()));

  // One task: the kept element `row`, its reduced elements walked by q
  // (all reduced axes but the last) and j (the last, innermost).
  const Fold f = fold_for(op, d);
  const VarPtr row = Var::make("row", kIndex), q = Var::make("q", kIndex), j = Var::make("j", kIndex);
  Lets task;
  const VarPtr x0 = task.bind_pointer("x0", address(x.data, row_major_offsets(row, kept_n, {kept_s}, task, "k")[0]), false);
  Lets walk;
  const VarPtr xr = walk.bind_pointer("x", address(x0, row_major_offsets(q, walk_n, {walk_s}, walk, "w")[0]), false);
  const ExprPtr element = cast(compute_dtype(d), load(xr, mul(j, is)));
  const ForKind inner_kind = f.reductions.empty() ? ForKind::kSerial : ForKind::kVectorized;
  StmtPtr loop = For::make(q, i64(0), rout, ForKind::kSerial,
                           walk.wrap(For::make(j, i64(0), inner, inner_kind, f.update(element), f.reductions)));
  const StmtPtr store = Store::make(y.data, row, cast(d, f.result(mul(inner, rout))));
  StmtPtr body = task.wrap(LetStmt::make(f.acc, f.init, Seq::make({loop, store})));
  StmtPtr par = For::make(row, i64(0), outer, ForKind::kParallel, body, {},
                          ge(mul(mul(outer, inner), rout), i64(kRowParallelMin)));

  std::vector<StmtPtr> stage;
  // A mean over an empty axis records its error where the stage runs, as
  // the evaluator's does.
  if (op.kind == ops::ReduceKind::kMean)
    stage.push_back(IfThenElse::make(land(gt(outer, i64(0)), eq(mul(inner, rout), i64(0))),
                                     Evaluate::make(extern_call("tf_fail", {e.err, i32(kErrEmptyMean)}))));
  stage.push_back(par);
  return LoweredStage{Seq::make({stage_comment("reduce", out), frame.wrap(Seq::make(std::move(stage)))}), nullptr,
                      op.kind == ops::ReduceKind::kMean};
}

}  // namespace tf::compiler
