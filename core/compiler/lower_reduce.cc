// Reduce over any axes, as a stage of its own (a last-axis Reduce read back
// along its row is fused instead: lower_loop_nest.h). Numerics as core/eval's
// reduce_group: float sums accumulate in double (f16 / bf16 in float,
// reassociated: a vectorized reduction), a mean rounds the sum to the dtype
// before dividing by the reduced count; a float max / abs_max is a
// vectorized max beside a count of NaN elements, any of which makes the
// result NaN (as tf_max propagates it); integer sums wrap. The output is
// contiguous in kept-axis order, which is its layout with or without keepdim.
//
// Two schedules, chosen per call:
// - rows: one task per kept element walks the reduced axes, the last one
//   innermost (the operand's last axis reduced, or not at unit stride);
// - columns: where a kept axis is at unit stride (the last one: a sum over
//   the batch axis; another one, the last axis reduced at a larger stride:
//   a sum over the rows of a transposed view), a task folds a tile of up
//   to kColumnTile consecutive elements of that axis over every reduced
//   index into an L1 array of accumulators, reading the tile's elements of
//   each reduced index as one contiguous run, kColumnRows indices per pass
//   over the accumulators. One task per output element there
//   walked the operand a strided element at a time: an f32 amax over axis 0
//   of [2048, 4096] took 20x eager's time, a sum over the last axis of its
//   transpose 2.4x. Where the one kept axis is at most kColumnTile long and
//   the rows are dense (a bias gradient's sum over the batch), the rows are
//   split among the threads instead (dense_columns).
#include <functional>
#include <limits>
#include <optional>
#include <string>

#include "core/compiler/codegen.h"
#include "core/compiler/emit_util.h"
#include "core/compiler/lane_partials.h"
#include "core/compiler/lower_loop_nest.h"
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

// The column schedule's widest tile (its accumulators: 8 KB of doubles, in
// L1 beside the rows' lines) and the reduced indices it folds per pass.
constexpr int64_t kColumnTile = 1024;
constexpr int64_t kColumnRows = 8;
// Dense columns (dense_columns) fold kDenseRows runs per pass (fewer
// streams than kColumnRows, as their runs are already contiguous: measured
// faster at 9 of 10 shapes) and give a thread at least kMinRunsPerPart runs
// of kColumnTile / 2 or more elements.
constexpr int64_t kDenseRows = 4;
constexpr int64_t kMinRunsPerPart = 32;
// A row split within its walks (rows) splits them at multiples of this
// many elements: whole 64-byte lines of doubles, whole lane blocks.
constexpr int64_t kSplitAlign = 64;

Axes split_axes(size_t rank, const std::vector<int64_t>& axes) {
  std::vector<bool> red(rank, false);
  for (int64_t a : axes) red.at(static_cast<size_t>(a < 0 ? a + static_cast<int64_t>(rank) : a)) = true;
  Axes out;
  for (size_t i = 0; i < rank; ++i) (red[i] ? out.reduced : out.kept).push_back(i);
  return out;
}

// How elements fold into an accumulator, and the value stored: the same for
// a scalar accumulator (rows) and an array of them (columns).
struct Fold {
  std::string name;  // the accumulator's
  Type acc_t;
  ExprPtr init;
  std::function<ExprPtr(const ExprPtr& x)> lift;  // an element (compute type) as an accumulator value
  std::function<ExprPtr(const ExprPtr& a, const ExprPtr& b)> combine;  // two accumulator values
  std::optional<BinaryOp> vector_op;  // the vectorized reduction, if any; else a serial loop
  std::optional<Type> nan_t;          // a float max's count of NaN elements
  std::function<ExprPtr(const ExprPtr& acc, const ExprPtr& nans, const ExprPtr& count)> result;  // compute type

  // acc with element x folded in.
  ExprPtr step(const ExprPtr& acc, const ExprPtr& x) const { return combine(acc, lift(x)); }
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

ExprPtr count_nan(const ExprPtr& nans, const ExprPtr& x) { return add(nans, cast(nans->dtype(), ne(x, x))); }

Fold fold_for(const ops::Reduce& op, DType d) {
  const DType cd = compute_dtype(d);
  Fold f;
  f.name = op.kind == ops::ReduceKind::kSum || op.kind == ops::ReduceKind::kMean ? "acc" : "m";
  switch (op.kind) {
    case ops::ReduceKind::kSum:
    case ops::ReduceKind::kMean: {
      const bool mean = op.kind == ops::ReduceKind::kMean;
      if (!ir::is_float(d)) {
        f.acc_t = kIndex;
        f.init = i64(0);
        f.lift = [](const ExprPtr& x) { return cast(DType::kI64, x); };
        f.combine = [](const ExprPtr& a, const ExprPtr& b) { return call(kIndex, "tf_wadd", {a, b}, {kIndex}); };
        f.result = [cd](const ExprPtr& acc, const ExprPtr&, const ExprPtr&) { return cast(cd, acc); };
        return f;
      }
      // f16 / bf16 sums accumulate in float, the others in double (core/eval).
      const DType acc_t = is_half(d) ? DType::kF32 : DType::kF64;
      f.acc_t = Type::scalar(acc_t);
      f.init = imm(acc_t, 0);
      f.lift = [acc_t](const ExprPtr& x) { return cast(acc_t, x); };
      f.combine = [](const ExprPtr& a, const ExprPtr& b) { return add(a, b); };
      f.vector_op = BinaryOp::kAdd;
      f.result = [cd, d, mean](const ExprPtr& acc, const ExprPtr&, const ExprPtr& count) {
        const ExprPtr sum = round_to(d, cast(cd, acc));
        return mean ? select(ne(count, i64(0)), div(sum, cast(cd, count)), sum) : sum;
      };
      return f;
    }
    case ops::ReduceKind::kMax:
    case ops::ReduceKind::kAbsMax: {
      const bool abs = op.kind == ops::ReduceKind::kAbsMax;
      const Type ct = Type::scalar(cd);
      f.acc_t = ct;
      f.init = abs ? imm(cd, 0) : lowest(cd);
      f.lift = [ct, abs](const ExprPtr& x) { return abs ? call(ct, "tf_abs", {x}, {ct}) : x; };
      f.result = [cd](const ExprPtr& m, const ExprPtr& nans, const ExprPtr&) {
        return nans ? select(gt(nans, imm(nans->dtype(), 0)), imm(cd, std::numeric_limits<double>::quiet_NaN()), m) : m;
      };
      if (cd == DType::kBool) {  // any(): tf_max in a serial loop
        f.combine = [ct](const ExprPtr& a, const ExprPtr& b) { return call(ct, "tf_max", {a, b}, {ct}); };
        return f;
      }
      // A vectorized max (vmaxps; tf_max's NaN test and select in a serial
      // loop ran an f32 amax over rows of 4096 at 14x eager's time); for
      // floats, beside it a count of NaNs, of the elements' width so both
      // fill the same lanes.
      f.combine = [](const ExprPtr& a, const ExprPtr& b) { return max(a, b); };
      f.vector_op = BinaryOp::kMax;
      if (ir::is_float(cd)) f.nan_t = Type::scalar(cd == DType::kF64 ? DType::kI64 : DType::kI32);
      return f;
    }
  }
  TF_CHECK(false, "lower_reduce: unknown Reduce kind");
}

// A row's pointers: one per leaf of the operand.
using Pointers = std::vector<VarPtr>;

// What the stage folds: its leaves (slots) read at the operand's index,
// and the element they make. One slot read through its axes (a Transpose
// read in place) is one leaf whose element is what it stores; an inline
// operand (inline_operand.h) is an elementwise tree over several, each
// broadcast to the operand's shape (stride 0 along an axis it is
// broadcast on).
class Operand {
 public:
  explicit Operand(const SlotView& x) : dtype_(x.slot.type->dtype()) {
    Leaf l{x.slot.data, {}, std::vector<bool>(x.rank(), false)};
    for (size_t a = 0; a < x.rank(); ++a) extents_.push_back(x.extent_at(a)), l.strides.push_back(x.stride_at(a));
    leaves_.push_back(std::move(l));
  }
  Operand(const EntryVars& e, const InlineOperand& x) : extents_(x.extents), dtype_(x.dtype), inline_(&x) {
    for (const InlineOperand::Leaf& il : x.leaves) {
      const SlotVars& s = e.slot(il.slot);
      Leaf l{s.data, {}, {}};
      for (size_t a = 0; a < il.axis.size(); ++a) {
        l.broadcast.push_back(il.axis[a] < 0);
        if (il.axis[a] < 0) {
          l.strides.push_back(i64(0));
          continue;
        }
        const auto b = static_cast<size_t>(il.axis[a]);
        l.strides.push_back(il.run_time_broadcast[a] ? select(eq(extent(s, b), i64(1)), i64(0), stride(s, b))
                                                     : stride(s, b));
      }
      leaves_.push_back(std::move(l));
    }
  }

  size_t rank() const { return extents_.size(); }
  DType dtype() const { return dtype_; }
  size_t leaves() const { return leaves_.size(); }
  ExprPtr extent_at(size_t a) const { return extents_.at(a); }
  ExprPtr stride_at(size_t k, size_t a) const { return leaves_.at(k).strides.at(a); }
  // Leaf k is broadcast along axis a by the types (read at index 0 there).
  bool broadcast(size_t k, size_t a) const { return leaves_.at(k).broadcast.at(a); }
  bool any_broadcast() const {
    for (const Leaf& l : leaves_)
      for (bool b : l.broadcast)
        if (b) return true;
    return false;
  }
  Pointers data() const {
    Pointers p;
    for (const Leaf& l : leaves_) p.push_back(l.data);
    return p;
  }
  // Per leaf, its strides along `axes`.
  std::vector<std::vector<ExprPtr>> strides(const std::vector<size_t>& axes) const {
    std::vector<std::vector<ExprPtr>> out(leaves_.size());
    for (size_t k = 0; k < leaves_.size(); ++k)
      for (size_t a : axes) out[k].push_back(stride_at(k, a));
    return out;
  }
  // from[k] + offsets[k], bound in `lets` as `name` (one leaf) or
  // `name`_l<k>.
  Pointers bind(Lets& lets, const std::string& name, const Pointers& from, const std::vector<ExprPtr>& offsets) const {
    Pointers p;
    for (size_t k = 0; k < leaves_.size(); ++k)
      p.push_back(lets.bind_pointer(leaf_name(name, k), address(from[k], offsets.at(k)), false));
    return p;
  }
  std::string leaf_name(const std::string& name, size_t k) const {
    return leaves_.size() == 1 ? name : name + "_l" + std::to_string(k);
  }
  // Whether every leaf that moves along axis a moves at unit stride (null:
  // none moves along it), and whether some leaf moving along it does not.
  ExprPtr unit(size_t a) const { return each_moving(a, [](const ExprPtr& s) { return eq(s, i64(1)); }, land); }
  ExprPtr strided(size_t a) const { return each_moving(a, [](const ExprPtr& s) { return ne(s, i64(1)); }, lor); }
  // The element, in the compute type, where leaf k's is p[k][index(k)].
  ExprPtr element(const Pointers& p, const std::function<ExprPtr(size_t)>& index) const {
    std::vector<ExprPtr> loads;
    for (size_t k = 0; k < leaves_.size(); ++k) loads.push_back(load(p[k], index(k)));
    return inline_ ? inline_->at(loads) : cast(compute_dtype(dtype_), loads[0]);
  }

 private:
  struct Leaf {
    VarPtr data;
    std::vector<ExprPtr> strides;  // per operand axis
    std::vector<bool> broadcast;   // per operand axis
  };
  ExprPtr each_moving(size_t a, const std::function<ExprPtr(const ExprPtr&)>& test,
                      ExprPtr (*join)(ExprPtr, ExprPtr)) const {
    ExprPtr all;
    for (size_t k = 0; k < leaves_.size(); ++k)
      if (!broadcast(k, a)) all = all ? join(all, test(stride_at(k, a))) : test(stride_at(k, a));
    return all;
  }

  std::vector<ExprPtr> extents_;
  DType dtype_;
  const InlineOperand* inline_ = nullptr;
  std::vector<Leaf> leaves_;
};

// The extents of `axes` of x, and per leaf its strides along them.
struct AxisList {
  std::vector<ExprPtr> n;
  std::vector<std::vector<ExprPtr>> s;
};
AxisList axis_list(const Operand& x, const std::vector<size_t>& axes) {
  AxisList l{{}, x.strides(axes)};
  for (size_t a : axes) l.n.push_back(x.extent_at(a));
  return l;
}
ExprPtr product(const std::vector<ExprPtr>& n) {
  ExprPtr p = i64(1);
  for (const ExprPtr& e : n) p = mul(p, e);
  return p;
}

ExprPtr ceil_div(const ExprPtr& a, const ExprPtr& b) { return div(add(a, sub(b, i64(1))), b); }

// A column schedule's accumulators: one per element of a tile, and for a
// float max a count of NaN elements beside each.
struct Accumulators {
  VarPtr accs, nans;  // nans: null when the fold counts none

  Accumulators(const Fold& f, const std::string& name, const std::string& nans_name)
      : accs(Var::make(name, Type::pointer(f.acc_t.dtype))),
        nans(f.nan_t ? Var::make(nans_name, Type::pointer(f.nan_t->dtype)) : nullptr) {}
  // body with both arrays allocated, `extent` elements each.
  StmtPtr allocate(const ExprPtr& extent, MemoryScope scope, StmtPtr body) const {
    if (nans) body = Allocate::make(nans, extent, scope, body);
    return Allocate::make(accs, extent, scope, body);
  }
  // [0, n) set to the fold's start.
  StmtPtr init(const Fold& f, const VarPtr& t, const ExprPtr& n) const {
    std::vector<StmtPtr> s{Store::make(accs, t, f.init)};
    if (nans) s.push_back(Store::make(nans, t, imm(nans->dtype(), 0)));
    return For::make(t, i64(0), n, ForKind::kVectorized, Seq::make(std::move(s)));
  }
  // These accumulators [0, n) fold `from`'s accumulators [at, at + n): the
  // partial results of other rows (of this array, or of another part's).
  StmtPtr absorb(const Fold& f, const VarPtr& t, const ExprPtr& n, const Accumulators& from, const ExprPtr& at) const {
    const ExprPtr i = add(at, t);
    std::vector<StmtPtr> s{Store::make(accs, t, f.combine(load(accs, t), load(from.accs, i)))};
    if (nans) s.push_back(Store::make(nans, t, add(load(nans, t), load(from.nans, i))));
    return For::make(t, i64(0), n, ForKind::kVectorized, Seq::make(std::move(s)));
  }
  // The Reduce's value of accumulator t, over `count` reduced elements.
  ExprPtr value(const Fold& f, DType d, const VarPtr& t, const ExprPtr& count) const {
    return cast(d, f.result(load(accs, t), nans ? load(nans, t) : nullptr, count));
  }
};

// Rows: the kept element `row` per task, its reduced elements walked by q
// (all reduced axes but the last) and j (the last, innermost). Where there
// are fewer rows than threads (a full reduction: one), each row is split
// into parts instead: ranges of its walks, and of each walk's elements
// where there are fewer walks than parts. Each task folds one part into
// its own accumulator, left in `partial` (part-major), and the parts of
// each row are joined in order after the fork: one task for a loss's
// mean((a - b) ** 2) left every thread but one idle.
StmtPtr rows(const EntryVars& e, const Operand& x, const SlotVars& y, const Axes& axes, const Fold& f, DType d) {
  const AxisList kept = axis_list(x, axes.kept);
  const bool none = axes.reduced.empty();
  const AxisList walk = axis_list(x, std::vector<size_t>(axes.reduced.begin(), axes.reduced.end() - (none ? 0 : 1)));
  Lets frame;
  const VarPtr outer = frame.bind("outer", product(kept.n)), rout = frame.bind("rout", product(walk.n));
  const VarPtr inner = frame.bind("inner", none ? i64(1) : x.extent_at(axes.reduced.back()));
  // Per leaf, its stride along the walked row (none for a leaf broadcast
  // along it: read at index 0).
  std::vector<VarPtr> is;
  ExprPtr unit;
  for (size_t k = 0; k < x.leaves(); ++k) {
    const bool fixed = !none && x.broadcast(k, axes.reduced.back());
    is.push_back(fixed ? nullptr : frame.bind(x.leaf_name("is", k), none ? i64(0) : x.stride_at(k, axes.reduced.back())));
    if (is.back()) unit = unit ? land(unit, eq(is.back(), i64(1))) : eq(is.back(), i64(1));
  }

  // Row `row`'s walks [q_lo, q_hi), each over its elements [j_lo, j_hi),
  // folded into an accumulator (and a NaN count), which `finish` then reads.
  auto fold = [&](const ExprPtr& row, const ExprPtr& q_lo, const ExprPtr& q_hi, const ExprPtr& j_lo,
                  const ExprPtr& j_hi, const std::function<StmtPtr(const VarPtr& acc, const VarPtr& nans)>& finish) {
    const VarPtr acc = Var::make(f.name, f.acc_t, true);
    const VarPtr nans = f.nan_t ? Var::make("nans", *f.nan_t, true) : nullptr;
    std::vector<Reduction> reductions;
    if (f.vector_op) reductions.push_back({acc, *f.vector_op});
    if (nans) reductions.push_back({nans, BinaryOp::kAdd});
    const VarPtr q = Var::make("q", kIndex), j = Var::make("j", kIndex);
    Lets task;
    const Pointers x0 = x.bind(task, "x0", x.data(), row_major_offsets(row, kept.n, kept.s, task, "k"));
    Lets walks;
    const Pointers xr = x.bind(walks, "x", x0, row_major_offsets(q, walk.n, walk.s, walks, "w"));
    auto along = [&](bool unit_stride) {
      const ExprPtr v = x.element(xr, [&](size_t k) { return !is[k] ? i64(0) : unit_stride ? ExprPtr(j) : mul(j, is[k]); });
      StmtPtr update = Assign::make(acc, f.step(acc, v));
      if (nans) update = Seq::make({update, Assign::make(nans, count_nan(nans, v))});
      return For::make(j, j_lo, sub(j_hi, j_lo), f.vector_op ? ForKind::kVectorized : ForKind::kSerial, update,
                       reductions);
    };
    // A unit stride has a loop of its own, whose contiguous loads vectorize
    // (under the runtime stride every load was a gather: an f32 sum over
    // rows of 4096 took 13x eager's time).
    StmtPtr loop = For::make(q, q_lo, sub(q_hi, q_lo), ForKind::kSerial,
                             walks.wrap(unit ? IfThenElse::make(unit, along(true), along(false)) : along(true)));
    // The sums and maxima keep their partials in lanes across the walk,
    // and across the row itself: one vector accumulator made a sum in
    // double a chain of dependent adds (lane_partials.h).
    if (e.target == Target::kCpu) loop = carry_lane_partials(loop, ge(sub(j_hi, j_lo), i64(reduce_lanes())));
    StmtPtr body = Seq::make({loop, finish(acc, nans)});
    if (nans) body = LetStmt::make(nans, imm(nans->dtype(), 0), body);
    return task.wrap(LetStmt::make(acc, f.init, body));
  };
  const ExprPtr count = mul(inner, rout), work = ge(mul(outer, count), i64(kRowParallelMin));
  const VarPtr row = Var::make("row", kIndex);
  const StmtPtr whole = For::make(row, i64(0), outer, ForKind::kParallel,
                                  fold(row, i64(0), rout, i64(0), inner, [&](const VarPtr& acc, const VarPtr& nans) {
                                    return Store::make(y.data, row, cast(d, f.result(acc, nans, count)));
                                  }),
                                  {}, work);
  if (e.target != Target::kCpu || axes.reduced.empty()) return frame.wrap(whole);

  // Enough parts per row for every thread to get one, each at least
  // kRowParallelMin elements: ranges of the walks, or where a row has
  // fewer walks than parts (a reduction over the last axis alone: one),
  // ranges of each walk's elements too, a multiple of kSplitAlign long.
  const VarPtr parts = frame.bind("parts", max(i64(1), min(ceil_div(team_size(), max(outer, i64(1))),
                                                           div(count, i64(kRowParallelMin)))));
  // (One operand an ExprPtr: for two VarPtrs, std::min on the pointers is
  // the better match.)
  const VarPtr pq = frame.bind("pq", max(i64(1), min(parts, ExprPtr(rout))));
  const VarPtr pj = frame.bind("pj", ceil_div(parts, pq));
  const VarPtr per_q = frame.bind("per_q", ceil_div(rout, pq));
  const VarPtr per_j = frame.bind("per_j", mul(ceil_div(ceil_div(inner, pj), i64(kSplitAlign)), i64(kSplitAlign)));
  const ExprPtr tasks = mul(pq, pj);
  const Accumulators partial(f, "partial", "partial_nans");
  const VarPtr u = Var::make("u", kIndex), t = Var::make("t", kIndex), p = Var::make("p", kIndex);
  Lets task;
  const VarPtr r = task.bind("r", mod(u, outer)), s = task.bind("s", div(u, outer));
  const VarPtr q0 = task.bind("q0", min(rout, mul(mod(s, pq), per_q)));
  const VarPtr j0 = task.bind("j0", min(inner, mul(div(s, pq), per_j)));
  const StmtPtr part = fold(r, q0, min(rout, add(q0, per_q)), j0, min(inner, add(j0, per_j)),
                            [&](const VarPtr& acc, const VarPtr& nans) {
    std::vector<StmtPtr> keep{Store::make(partial.accs, u, acc)};
    if (nans) keep.push_back(Store::make(partial.nans, u, nans));
    return Seq::make(std::move(keep));
  });
  const StmtPtr fork = For::make(u, i64(0), mul(tasks, outer), ForKind::kParallel, task.wrap(part), {}, work);
  const StmtPtr join = Seq::make(
      {For::make(p, i64(1), sub(tasks, i64(1)), ForKind::kSerial, partial.absorb(f, t, outer, partial, mul(p, outer))),
       For::make(t, i64(0), outer, ForKind::kVectorized, Store::make(y.data, t, partial.value(f, d, t, count)))});
  const StmtPtr split = partial.allocate(mul(tasks, outer), MemoryScope::kGlobal, Seq::make({fork, join}));
  return frame.wrap(IfThenElse::make(gt(tasks, i64(1)), split, whole));
}

// The row pointers of reduced index `index` (bound in `walk` as `name`),
// and the element of accumulator t under them.
using RowAt = std::function<Pointers(const ExprPtr& index, Lets& walk, const std::string& name)>;
using ElementAt = std::function<ExprPtr(const Pointers& row)>;

// Folds the reduced indices [lo, hi) into accumulators [0, n): `per_pass`
// indices per pass over the accumulators, combined pairwise before they
// meet the accumulator (a float sum is reassociated, as the rows
// schedule's lane partials reassociate it), then the rest one per pass.
StmtPtr fold_rows(const Accumulators& a, const Fold& f, const VarPtr& t, const ExprPtr& n, const RowAt& row_at,
                  const ElementAt& element, const ExprPtr& lo, const ExprPtr& hi, int64_t per_pass) {
  auto pass = [&](const ExprPtr& first, int64_t rows) {
    Lets walk;
    std::vector<ExprPtr> leaves;
    ExprPtr nan = a.nans ? load(a.nans, t) : nullptr;
    for (int64_t q = 0; q < rows; ++q) {
      const std::string name = rows == 1 ? "x" : "x_" + std::to_string(q);
      const ExprPtr v = element(row_at(q == 0 ? first : add(first, i64(q)), walk, name));
      leaves.push_back(f.lift(v));
      if (a.nans) nan = count_nan(nan, v);
    }
    // Pairwise, so that a pass's chain of dependent operations is
    // log2(rows) + 1 long rather than rows.
    while (leaves.size() > 1) {
      std::vector<ExprPtr> next;
      for (size_t i = 0; i + 1 < leaves.size(); i += 2) next.push_back(f.combine(leaves[i], leaves[i + 1]));
      if (leaves.size() % 2) next.push_back(leaves.back());
      leaves = std::move(next);
    }
    std::vector<StmtPtr> fold{Store::make(a.accs, t, f.combine(load(a.accs, t), leaves[0]))};
    if (a.nans) fold.push_back(Store::make(a.nans, t, nan));
    return walk.wrap(For::make(t, i64(0), n, ForKind::kVectorized, Seq::make(std::move(fold))));
  };
  const VarPtr r = Var::make("r", kIndex), blocks = Var::make("blocks", kIndex);
  const ExprPtr rest = add(lo, mul(blocks, i64(per_pass)));
  return LetStmt::make(blocks, div(sub(hi, lo), i64(per_pass)),
                       Seq::make({For::make(r, i64(0), blocks, ForKind::kSerial, pass(add(lo, mul(r, i64(per_pass))), per_pass)),
                                  For::make(r, rest, sub(hi, rest), ForKind::kSerial, pass(r, 1))}));
}

// Columns: task u folds the tile [t0, t0 + tn) of kept axis `tile` (at
// unit stride), for the combination k of the other kept axes, over every
// reduced index r. The output is contiguous in kept-axis order, so a tile
// of an axis that is not the last kept one is stored at that axis's stride.
//
// The walk folds kColumnRows reduced indices per pass over the tile
// (fold_rows), and a tile is as wide as the call's threads allow, up to
// kColumnTile. Measured on an f32 sum over axis 0 of [2048, 4096] on one
// thread: one index per pass over 256-element tiles made 16 KB jumps after
// every 1 KB run and stored the accumulators once per element read, and
// took 2.3x this walk's time.
StmtPtr columns(const Operand& x, const SlotVars& y, const Axes& axes, size_t tile, const Fold& f, DType d) {
  std::vector<size_t> others;
  std::vector<ExprPtr> other_ys;  // the output's strides of the other kept axes
  ExprPtr ys = i64(1), tile_ys;
  for (size_t i = axes.kept.size(); i-- > 0;) {
    if (axes.kept[i] == tile) tile_ys = ys;
    else others.insert(others.begin(), axes.kept[i]), other_ys.insert(other_ys.begin(), ys);
    ys = mul(ys, x.extent_at(axes.kept[i]));
  }
  const AxisList kept = axis_list(x, others);
  const AxisList red = axis_list(x, axes.reduced);
  Lets frame;
  const VarPtr outer = frame.bind("outer", product(kept.n)), nred = frame.bind("nred", product(red.n));
  const VarPtr len = frame.bind("len", x.extent_at(tile)), ts = frame.bind("ts", tile_ys);
  // Enough tiles per combination of the other kept axes for every thread to
  // get one, each a multiple of kChunk wide, at most kColumnTile.
  const VarPtr per = frame.bind("per", max(i64(1), ceil_div(team_size(), max(outer, i64(1)))));
  const VarPtr share = frame.bind("share", ceil_div(len, per));
  const VarPtr width = frame.bind("width", min(i64(kColumnTile), mul(max(i64(1), ceil_div(share, i64(kChunk))), i64(kChunk))));
  const VarPtr tiles = frame.bind("tiles", ceil_div(len, width));

  const VarPtr u = Var::make("u", kIndex), t = Var::make("t", kIndex);
  Lets task;
  const VarPtr k = task.bind("k", div(u, tiles));
  const VarPtr t0 = task.bind("t0", mul(mod(u, tiles), width));
  const VarPtr tn = task.bind("tn", min(sub(len, t0), width));
  std::vector<std::vector<ExprPtr>> strides = kept.s;
  strides.push_back(other_ys);
  std::vector<ExprPtr> k_off = row_major_offsets(k, kept.n, strides, task, "k");
  const VarPtr y0 = task.bind_pointer("y0", address(y.data, add(k_off.back(), mul(t0, ts))), true);
  // A leaf broadcast along the tile reads its one element there.
  k_off.pop_back();
  for (size_t l = 0; l < x.leaves(); ++l)
    if (!x.broadcast(l, tile)) k_off[l] = add(k_off[l], t0);
  const Pointers x0 = x.bind(task, "x0", x.data(), k_off);

  const Accumulators a(f, f.name + "s", "nans");
  const RowAt row_at = [&](const ExprPtr& index, Lets& walk, const std::string& name) {
    return x.bind(walk, name, x0, row_major_offsets(index, red.n, red.s, walk, name + "_w"));
  };
  const ElementAt element = [&](const Pointers& row) {
    return x.element(row, [&](size_t l) { return x.broadcast(l, tile) ? i64(0) : ExprPtr(t); });
  };
  // The last kept axis stores one contiguous run; another one an element
  // of each of tn output rows.
  const ExprPtr value = a.value(f, d, t, nred);
  const StmtPtr store = tile == axes.kept.back() ? For::make(t, i64(0), tn, ForKind::kVectorized, Store::make(y0, t, value))
                                                 : For::make(t, i64(0), tn, ForKind::kSerial, Store::make(y0, mul(t, ts), value));
  const StmtPtr body = a.allocate(i64(kColumnTile), MemoryScope::kLocal,
                                  Seq::make({a.init(f, t, tn), fold_rows(a, f, t, tn, row_at, element, i64(0), nred, kColumnRows), store}));
  return frame.wrap(For::make(u, i64(0), mul(outer, tiles), ForKind::kParallel, task.wrap(body), {},
                              ge(mul(mul(outer, len), nred), i64(kRowParallelMin))));
}

// Whether each leaf's reduced axes, in order, lie one after another at the
// stride len (the one kept axis's extent, at unit stride): reduced index r
// starts at r * len, so each leaf is one contiguous [nred, len] block.
ExprPtr dense_rows(const Operand& x, const Axes& axes, const ExprPtr& len) {
  ExprPtr dense = nullptr;
  for (size_t l = 0; l < x.leaves(); ++l) {
    ExprPtr expect = len;
    for (size_t i = axes.reduced.size(); i-- > 0;) {
      const ExprPtr here = eq(x.stride_at(l, axes.reduced[i]), expect);
      dense = dense ? land(dense, here) : here;
      expect = mul(expect, x.extent_at(axes.reduced[i]));
    }
  }
  return dense;
}

// Dense columns: one kept axis of len <= kColumnTile at unit stride, the
// reduced axes dense above it (dense_rows). The general schedule's tasks
// are tiles of the kept axis, so an operand this narrow has one or a few
// (a sum over axis 0 of [65536, 128]: one task, whatever the team), and
// each pass over a narrow tile is short. Here m = kColumnTile / len
// consecutive rows are one run of w = m * len elements, folded into w
// accumulators (fold_rows over the runs, kDenseRows per pass), and the
// runs are split among the threads: part p folds its runs, then its m
// groups of len accumulators into the first, and leaves them in row p of
// `partial`. After the parts, the first row of `partial` folds the others,
// then the rows after the last whole run.
StmtPtr dense_columns(const Operand& x, const SlotVars& y, const Axes& axes, const Fold& f, DType d) {
  const AxisList red = axis_list(x, axes.reduced);
  Lets frame;
  const VarPtr nred = frame.bind("nred", product(red.n)), len = frame.bind("len", x.extent_at(axes.kept[0]));
  const VarPtr m = frame.bind("m", max(i64(1), div(i64(kColumnTile), len)));
  const VarPtr w = frame.bind("w", mul(m, len)), runs = frame.bind("runs", div(nred, m));
  const VarPtr parts = frame.bind("parts", max(i64(1), min(team_size(), div(runs, i64(kMinRunsPerPart)))));
  const VarPtr per_part = frame.bind("per_part", ceil_div(runs, parts));

  const VarPtr p = Var::make("p", kIndex), t = Var::make("t", kIndex), g = Var::make("g", kIndex);
  const Accumulators a(f, f.name + "s", "nans"), partial(f, "partial", "partial_nans");
  const Pointers xs = x.data();
  const ElementAt element = [&](const Pointers& row) { return x.element(row, [&](size_t) { return ExprPtr(t); }); };
  Lets task;
  const VarPtr r0 = task.bind("r0", min(runs, mul(p, per_part))), r1 = task.bind("r1", min(runs, add(r0, per_part)));
  const RowAt run_at = [&](const ExprPtr& index, Lets& walk, const std::string& name) {
    return x.bind(walk, name, xs, std::vector<ExprPtr>(x.leaves(), mul(index, w)));
  };
  const StmtPtr groups = For::make(g, i64(1), sub(m, i64(1)), ForKind::kSerial, a.absorb(f, t, len, a, mul(g, len)));
  std::vector<StmtPtr> keep{Store::make(partial.accs, add(mul(p, len), t), load(a.accs, t))};
  if (a.nans) keep.push_back(Store::make(partial.nans, add(mul(p, len), t), load(a.nans, t)));
  const StmtPtr part = a.allocate(i64(kColumnTile), MemoryScope::kLocal,
                                  Seq::make({a.init(f, t, w), fold_rows(a, f, t, w, run_at, element, r0, r1, kDenseRows), groups,
                                             For::make(t, i64(0), len, ForKind::kVectorized, Seq::make(std::move(keep)))}));
  const StmtPtr fork = For::make(p, i64(0), parts, ForKind::kParallel, task.wrap(part), {},
                                 ge(mul(len, nred), i64(kRowParallelMin)));

  const VarPtr q = Var::make("q", kIndex);
  const RowAt row_at = [&](const ExprPtr& index, Lets& walk, const std::string& name) {
    return x.bind(walk, name, xs, std::vector<ExprPtr>(x.leaves(), mul(index, len)));
  };
  const StmtPtr join = Seq::make({For::make(q, i64(1), sub(parts, i64(1)), ForKind::kSerial, partial.absorb(f, t, len, partial, mul(q, len))),
                                  fold_rows(partial, f, t, len, row_at, element, mul(runs, m), nred, kDenseRows),
                                  For::make(t, i64(0), len, ForKind::kVectorized, Store::make(y.data, t, partial.value(f, d, t, nred)))});
  return frame.wrap(partial.allocate(mul(parts, len), MemoryScope::kGlobal, Seq::make({fork, join})));
}

LoweredStage reduce_stage(const EntryVars& e, size_t out, const Operand& x, const ops::Reduce& op, bool may_fail) {
  const SlotVars& y = e.slot(out);
  const DType d = x.dtype();
  const size_t rank = x.rank();
  const Axes axes = split_axes(rank, op.axes);
  const Fold f = fold_for(op, d);
  StmtPtr stage = rows(e, x, y, axes, f, d);
  // Columns where a kept axis is at unit stride and something is reduced,
  // on the CPU (a GPU's threads, one per kept element, read consecutive
  // elements together already): the last axis if it is kept; otherwise any
  // kept axis at unit stride where the reduced last axis is not (else rows
  // read that contiguously). Chosen per call from the strides: every leaf
  // that moves along the axis must move at unit stride.
  if (e.target == Target::kCpu && !axes.reduced.empty() && !axes.kept.empty()) {
    const bool last_kept = axes.kept.back() == rank - 1;
    for (size_t i = last_kept ? axes.kept.size() - 1 : 0; i < axes.kept.size(); ++i) {
      ExprPtr unit = x.unit(axes.kept[i]);
      if (!unit) continue;  // nothing moves along it
      if (!last_kept)
        if (const ExprPtr strided = x.strided(rank - 1)) unit = land(unit, strided);
      StmtPtr cols = columns(x, y, axes, axes.kept[i], f, d);
      // Dense rows address every leaf alike: none may be broadcast.
      if (axes.kept.size() == 1 && !x.any_broadcast()) {
        const ExprPtr len = x.extent_at(axes.kept[0]);
        const ExprPtr narrow = land(land(gt(len, i64(0)), le(len, i64(kColumnTile))), dense_rows(x, axes, len));
        cols = IfThenElse::make(narrow, dense_columns(x, y, axes, f, d), cols);
      }
      stage = IfThenElse::make(unit, cols, stage);
    }
  }
  std::vector<StmtPtr> stages;
  // A mean over an empty axis records its error where the stage runs, as
  // the evaluator's does.
  if (op.kind == ops::ReduceKind::kMean) {
    const ExprPtr kept = product(axis_list(x, axes.kept).n), reduced = product(axis_list(x, axes.reduced).n);
    stages.push_back(IfThenElse::make(land(gt(kept, i64(0)), eq(reduced, i64(0))),
                                      Evaluate::make(extern_call("tf_fail", {e.err, i32(kErrEmptyMean)}))));
  }
  stages.push_back(stage);
  return LoweredStage{Seq::make({stage_comment("reduce", out), Seq::make(std::move(stages))}), nullptr,
                      may_fail || op.kind == ops::ReduceKind::kMean};
}

}  // namespace

LoweredStage lower_reduce(const EntryVars& e, size_t out, size_t xs, const std::vector<int64_t>& x_axes,
                          const ops::Reduce& op) {
  return reduce_stage(e, out, Operand(SlotView{e.slot(xs), x_axes}), op, false);
}

LoweredStage lower_reduce(const EntryVars& e, size_t out, const InlineOperand& x, const ops::Reduce& op) {
  return reduce_stage(e, out, Operand(e, x), op, x.may_fail);
}

}  // namespace tf::compiler
