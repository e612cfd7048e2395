#include "core/compiler/lower_loop_nest.h"

#include <algorithm>
#include <limits>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "core/compiler/emit_util.h"
#include "core/compiler/lane_partials.h"
#include "core/compiler/lower_stages.h"
#include "core/compiler/scalar_lowering.h"
#include "core/ir/error.h"
#include "core/compiler/codegen.h"
#include "core/ops/math/math.h"
#include "core/ops/tensor/tensor.h"
#include "core/tir/functor.h"
#include "core/tir/op.h"
#include "core/tir/printer.h"
#include "core/tir/transform.h"

namespace tf::compiler {

using ir::DType;
using namespace tir;

namespace {

// One step of a row sum: acc + element. A product computed in the double
// accumulator's own type is fused into the add (one rounding, not two): a
// row sum's order is already unspecified (a vectorized reassociation), so
// its last bits are too, while kernels otherwise compile without
// contraction so that every product the evaluator rounds is rounded. Left
// unfused, LayerNorm's sum of squares costs a multiply and an add per
// element where one FMA does.
ExprPtr accumulate(const VarPtr& acc, const ExprPtr& element) {
  auto* m = as<Binary>(element);
  if (acc->dtype() == DType::kF64 && m && m->op() == BinaryOp::kMul && m->type() == acc->type())
    return call(acc->type(), "__builtin_fma", {m->a(), m->b(), acc});
  return add(acc, cast(acc->dtype(), element));
}

// A call computed a chunk at a time: fn(buf, n, extra...) over the buffer
// `buf` filled with arg.
struct Staged {
  std::string fn;
  ExprPtr arg;
  VarPtr buf;
  std::vector<ExprPtr> extra;
};

// Where a value's elements lie, as an affine function of the stage's index
// i: element index[b] = sum_a coef[b][a] * i[a] + offset[b] (null entries
// are 0). bcast[b]: row b may be broadcast at run time (an extent the types
// do not show equal to the one it is read against, which may be 1), so no
// view may change its extent; the leaves zero such rows' strides as today.
struct IndexMap {
  std::vector<std::vector<ExprPtr>> coef;
  std::vector<ExprPtr> offset;
  std::vector<bool> bcast;

  static IndexMap zeros(size_t rows, size_t rank) {
    return IndexMap{std::vector<std::vector<ExprPtr>>(rows, std::vector<ExprPtr>(rank)),
                    std::vector<ExprPtr>(rows), std::vector<bool>(rows, false)};
  }
  static IndexMap identity(size_t rank) {
    IndexMap m = zeros(rank, rank);
    for (size_t b = 0; b < rank; ++b) m.coef[b][b] = i64(1);
    return m;
  }
  void copy_row(size_t to, const IndexMap& from, size_t b) {
    coef[to] = from.coef[b];
    offset[to] = from.offset[b];
    bcast[to] = from.bcast[b];
  }
  // Spells the map, to tell leaves of one slot apart.
  std::string key() const {
    std::string k;
    auto part = [&](const ExprPtr& e) { k += e ? tir::to_string(e) : "0"; k += ","; };
    for (size_t b = 0; b < coef.size(); ++b) {
      for (const ExprPtr& c : coef[b]) part(c);
      part(offset[b]);
      k += ";";
    }
    return k;
  }
};

ExprPtr plus(const ExprPtr& a, const ExprPtr& b) { return !a ? b : !b ? a : add(a, b); }
ExprPtr times(const ExprPtr& a, int64_t k) { return a ? mul(a, i64(k)) : nullptr; }

// A materialized value read by the stage, through an index map.
struct Leaf {
  size_t slot;
  VarPtr row;     // the leaf's elements of the current row (a pointer)
  VarPtr stride;  // its stride along the row, in elements
  bool inner_zero;  // broadcast along the row (same element for every j)
  IndexMap map;
  std::string key;
  VarPtr value;  // inner_zero: the row's one element, loaded once per row
};

// A Concat read along the row: the row's loop runs once per piece, each
// reading one operand.
struct ConcatRead {
  const ir::Call* call;
  std::vector<ExprPtr> starts;  // where pieces 1..n-1 start along the concat's axis
  ExprPtr offset;               // the concat's index along its axis is j + offset
  std::string offset_key;
  size_t choice = 0;            // the piece being lowered

  // Where piece p (>= 1) starts in j.
  ExprPtr start_j(size_t p) const { return offset ? sub(starts[p - 1], offset) : starts[p - 1]; }
};

// A version of the stored value for one combination of concat pieces.
struct Piece {
  ExprPtr value;
  std::vector<Staged> staged;
  std::vector<size_t> choice;  // per ConcatRead
};

// Pieces per stage at most (the product over its concats).
constexpr size_t kMaxPieces = 8;

[[noreturn]] void refuse(const ir::Expr& node, const std::string& why) { throw ViewRefused{&node, why}; }


// A Reduce computed inside the stage, once per row.
struct RowReduce {
  const ir::Call* call;
  int depth;              // its pass: 1 + the deepest reduction its operand reads
  ExprPtr element;        // the operand's element, in the compute type
  VarPtr acc, nans;       // accumulator; for max, a count of NaN elements
  VarPtr value;           // the result, bound after its pass
};

// Replaces loads of the given row pointers by loads of chunk buffers.
class ReadWidened final : public Mutator {
 public:
  ReadWidened(const std::unordered_map<const Var*, VarPtr>& wide, ExprPtr at) : wide_(wide), at_(std::move(at)) {}

 protected:
  ExprPtr mutate_Load(const Load& n, const ExprPtr& self) override {
    auto it = wide_.find(n.base().get());
    return it == wide_.end() ? Mutator::mutate_Load(n, self) : load(it->second, at_);
  }

 private:
  const std::unordered_map<const Var*, VarPtr>& wide_;
  ExprPtr at_;
};

// Reads of the staged buffers in `bufs` as reads of row[j]: their routine
// ran on the row in place.
class ReadInRow final : public Mutator {
 public:
  ReadInRow(const std::unordered_set<const Var*>& bufs, VarPtr row, VarPtr j)
      : bufs_(bufs), row_(std::move(row)), j_(std::move(j)) {}

 protected:
  ExprPtr mutate_Load(const Load& n, const ExprPtr& self) override {
    return bufs_.count(n.base().get()) ? load(row_, j_) : Mutator::mutate_Load(n, self);
  }

 private:
  const std::unordered_set<const Var*>& bufs_;
  VarPtr row_, j_;
};

// Each IfThenElse on `flag` replaced by the branch `value` takes.
class FlagResolver final : public Mutator {
 public:
  FlagResolver(const Var* flag, bool value) : flag_(flag), value_(value) {}

 protected:
  StmtPtr mutate_IfThenElse(const IfThenElse& n, const StmtPtr& self) override {
    if (n.cond().get() != flag_) return Mutator::mutate_IfThenElse(n, self);
    if (value_) return mutate(n.then_case());
    return n.else_case() ? mutate(n.else_case()) : Seq::make({});
  }

 private:
  const Var* flag_;
  bool value_;
};

// Whether e (an expression or a statement) loads through `base`.
template <typename Node>
bool reads(const Node& e, const Var* base) {
  struct Finder final : Visitor {
    const Var* base;
    bool found = false;
    void visit_Load(const Load& n) override {
      found = found || n.base().get() == base;
      Visitor::visit_Load(n);
    }
  } f;
  f.base = base;
  f.visit(e);
  return f.found;
}

class Stage {
 public:
  Stage(const StageEnv& env, size_t s) : env_(env), s_(s), iter_(*env.slot(s).type) {}

  StmtPtr lower(const ir::ExprPtr& e, const std::string& what, bool root_inline, bool* may_fail) {
    j_ = Var::make("j", kIndex);
    c0_ = Var::make("c0", kIndex);
    inner_ = Var::make("inner", kIndex);
    y_ = Var::make("y", env_.slot(s_).data->type());
    staging_ = true;
    map_ = IndexMap::identity(rank());
    ExprPtr value = root(expr(e, root_inline));
    if (!concats_.empty()) {
      if (!reduces_.empty()) refuse(*concats_.front().call, "a concat in a stage with row reductions");
      lower_pieces(e, root_inline);
    } else if (choose_cached(e, root_inline)) {
      // Lower the stored value again, reading the cached values back. A
      // half-precision row caches them in a float scratch row, when the row
      // fits: the value as first lowered is kept for longer rows.
      if (scratch_) plain_ = Plain{value, staged_};
      staged_.clear();
      store_transcendentals_ = 0;
      value = root(expr(e, root_inline));
    }
    if (!reduces_.empty() && env_.produced) produce();
    if (may_fail_) *may_fail = true;
    return reduces_.empty() ? elementwise_skeleton(what, value) : row_skeleton(what, value);
  }

 private:
  size_t rank() const { return iter_.rank(); }
  ExprPtr shape(size_t slot, size_t a) { return load(env_.slot(slot).shape, i64(static_cast<int64_t>(a))); }
  ExprPtr stride(size_t slot, size_t a) { return load(env_.slot(slot).strides, i64(static_cast<int64_t>(a))); }

  // Slot k's element at the current index map (map_ has one row per axis of k).
  ExprPtr leaf(size_t k) {
    const std::string key = std::to_string(k) + ":" + map_.key();
    auto it = std::find_if(leaves_.begin(), leaves_.end(), [&](const Leaf& l) { return l.key == key; });
    if (it == leaves_.end()) {
      const ir::TensorType& t = *env_.slot(k).type;
      // Broadcast along the row: no axis of extent > 1 moves with j.
      bool moves = false;
      for (size_t b = 0; rank() > 0 && b < t.rank(); ++b)
        moves = moves || (map_.coef[b][rank() - 1] && !is_static_one(t.shape()[b]));
      const bool inner_zero = !moves && (t.rank() == 0 || !is_static_one(iter_.shape().back()));
      const std::string n = std::to_string(k);
      leaves_.push_back(Leaf{k, Var::make("x" + n, Type::pointer(t.dtype())), Var::make("is" + n, kIndex), inner_zero,
                             map_, key, inner_zero && !is_produced(k) ? Var::make("v" + n, Type::scalar(t.dtype())) : nullptr});
      it = leaves_.end() - 1;
    }
    // An element constant along the row is loaded once per row (row_body).
    if (it->value) return cast(compute_dtype(it->row->dtype()), it->value);
    return cast(compute_dtype(it->row->dtype()), load(it->row, mul(j_, it->stride)));
  }

  // The produced value's slot is written by the first pass: nothing reads
  // it before (an element constant along the row is loaded where read).
  bool is_produced(size_t k) const {
    return env_.produced && env_.slot_of(env_.produced.get()) == static_cast<long>(k);
  }

  // ---- index maps ---------------------------------------------------------------

  // x's element under the current map, which is that of a value of shape
  // `of` that reads x with broadcasting (trailing axes aligned).
  ExprPtr read(const ir::ExprPtr& x, const ir::Shape& of) {
    const ir::Shape& xs = tensor_type(*x).shape();
    IndexMap m = IndexMap::zeros(xs.size(), rank());
    for (size_t b = 0; b < xs.size(); ++b) {
      const size_t nb = b + of.size() - xs.size();
      if (is_static_one(xs[b])) continue;  // index 0 whatever the stage's
      m.copy_row(b, map_, nb);
      m.bcast[b] = map_.bcast[nb] || xs[b] != of[nb];
    }
    return with_map(std::move(m), x);
  }

  ExprPtr with_map(IndexMap m, const ir::ExprPtr& x) {
    std::swap(map_, m);
    ExprPtr v = expr(x);
    std::swap(map_, m);
    return v;
  }

  // A view's operand, read in place: its rows from the view's (map_).
  ExprPtr view(const ir::Call& c) {
    if (is_fp8(tensor_type(c).dtype())) refuse(c, "8-bit floats are copied as stored");
    const std::string_view name = c.op()->name();
    if (name == "Concat") return concat(c);
    const ir::ExprPtr& x = c.args()[0];
    IndexMap in = IndexMap::zeros(tensor_type(*x).rank(), rank());
    if (name == "Transpose") transpose_rows(c, &in);
    else if (name == "Slice") slice_rows(c, &in);
    else reshape_rows(c, &in);
    return with_map(std::move(in), x);
  }

  // y = transpose(x, axes): y[b] = x[axes[b]].
  void transpose_rows(const ir::Call& c, IndexMap* in) const {
    const auto& axes = static_cast<const ops::Transpose&>(*c.op()).axes;
    const int64_t r = static_cast<int64_t>(axes.size());
    for (size_t b = 0; b < axes.size(); ++b) in->copy_row(static_cast<size_t>(axes[b] < 0 ? axes[b] + r : axes[b]), map_, b);
  }

  // y = x[begin : end : step]: x's index = y's * step + begin.
  void slice_rows(const ir::Call& c, IndexMap* in) {
    const auto& sl = static_cast<const ops::Slice&>(*c.op());
    const ir::Shape &ys = tensor_type(c).shape(), &xs = tensor_type(*c.args()[0]).shape();
    for (size_t b = 0; b < ys.size(); ++b) {
      const int64_t step = sl.strides.at(b);
      const bool whole = step == 1 && sl.begin.at(b).is_static() && sl.begin[b].value() == 0 && sl.end.at(b) == xs[b];
      if (step <= 0) refuse(c, "a slice with a non-positive step");
      if (map_.bcast[b] && !whole) refuse(c, "a slice of an axis broadcast at run time");
      in->coef[b] = map_.coef[b];
      for (ExprPtr& k : in->coef[b]) k = times(k, step);
      in->offset[b] = times(map_.offset[b], step);
      // The begin is resolved (and the window checked) by the host.
      if (!whole) in->offset[b] = plus(in->offset[b], env_.slice_begin(c, b));
      in->bcast[b] = map_.bcast[b];
    }
  }

  // A reshape that inserts or drops extent-1 axes and splits axes: each
  // axis of x of extent > 1 is one axis of y of the same extent, or a run
  // of static axes of y whose product it is (x's index is then their
  // row-major combination). Merging axes is not an index map of y's index
  // over arbitrary strides: such a reshape is refused (copied).
  void reshape_rows(const ir::Call& c, IndexMap* in) const {
    const ir::Shape &ys = tensor_type(c).shape(), &xs = tensor_type(*c.args()[0]).shape();
    std::vector<size_t> outs;
    for (size_t o = 0; o < ys.size(); ++o)
      if (!is_static_one(ys[o])) outs.push_back(o);
    size_t k = 0;
    for (size_t b = 0; b < xs.size(); ++b) {
      if (is_static_one(xs[b])) continue;
      if (k < outs.size() && xs[b] == ys[outs[k]]) {
        in->copy_row(b, map_, outs[k++]);
        continue;
      }
      if (!xs[b].is_static()) refuse(c, "a reshape of a symbolic axis into several");
      int64_t prod = 1;
      const size_t k0 = k;
      while (k < outs.size() && prod < xs[b].value() && ys[outs[k]].is_static()) prod *= ys[outs[k++]].value();
      if (prod != xs[b].value() || k - k0 < 2) refuse(c, "a reshape that merges axes");
      int64_t mult = 1;
      for (size_t m = k; m-- > k0;) {
        const size_t o = outs[m];
        if (map_.bcast[o]) refuse(c, "a reshape of an axis broadcast at run time");
        for (size_t a = 0; a < rank(); ++a) in->coef[b][a] = plus(in->coef[b][a], times(map_.coef[o][a], mult));
        in->offset[b] = plus(in->offset[b], times(map_.offset[o], mult));
        mult *= ys[o].value();
      }
    }
    if (k != outs.size()) refuse(c, "a reshape that merges axes");
  }

  // A concat along the row: the piece being lowered reads its operand,
  // shifted to where that operand starts.
  ExprPtr concat(const ir::Call& c) {
    const auto* t = ir::expr_as<ir::Tuple>(c.args()[0]);
    const int64_t r = static_cast<int64_t>(tensor_type(c).rank());
    const int64_t ax = static_cast<const ops::Concat&>(*c.op()).axis;
    const size_t axis = static_cast<size_t>(ax < 0 ? ax + r : ax);
    if (!t || rank() == 0 || axis >= map_.coef.size()) refuse(c, "a concat of this form");
    bool along = !map_.bcast[axis] && is_const_int(map_.coef[axis][rank() - 1], 1);
    for (size_t a = 0; a + 1 < rank(); ++a) along = along && !map_.coef[axis][a];
    if (!along) refuse(c, "a concat that is not along the row");
    if (!staging_ || lowering_reduce_ >= 0) refuse(c, "a concat in a stage with row reductions");
    const ExprPtr& off = map_.offset[axis];
    const std::string off_key = off ? tir::to_string(off) : "0";
    auto it = std::find_if(concats_.begin(), concats_.end(), [&](const ConcatRead& k) { return k.call == &c; });
    if (it == concats_.end()) {
      ConcatRead k{&c, {}, off, off_key};
      ExprPtr start = i64(0);
      for (size_t p = 0; p + 1 < t->fields().size(); ++p) {
        start = add(start, env_.extent(tensor_type(*t->fields()[p]).shape().at(axis)));
        k.starts.push_back(start);
      }
      concats_.push_back(std::move(k));
      it = concats_.end() - 1;
    } else if (it->offset_key != off_key) {
      refuse(c, "a concat read at two offsets");
    }
    const size_t p = it->choice;
    IndexMap in = map_;
    // The operand's index along the axis: the concat's minus where it starts.
    if (p > 0) in.offset[axis] = off ? sub(off, it->starts[p - 1]) : neg(it->starts[p - 1]);
    return with_map(std::move(in), t->fields()[p]);
  }

  // The stored value once per combination of concat pieces (a piece's
  // value may reach further concats: lowering repeats until none is new).
  void lower_pieces(const ir::ExprPtr& e, bool root_inline) {
    for (bool complete = false; !complete;) {
      size_t n = 1;
      for (const ConcatRead& k : concats_) n *= k.starts.size() + 1;
      if (n > kMaxPieces) refuse(*concats_.back().call, "more concat pieces than one loop takes");
      const size_t known = concats_.size();
      pieces_.clear();
      int transcendentals = 0;
      complete = true;
      for (size_t v = 0; v < n && complete; ++v) {
        Piece piece;
        for (size_t i = 0, rem = v; i < known; ++i) {
          const size_t pieces = concats_[i].starts.size() + 1;
          concats_[i].choice = rem % pieces;
          piece.choice.push_back(rem % pieces);
          rem /= pieces;
        }
        staged_.clear();
        store_transcendentals_ = 0;
        map_ = IndexMap::identity(rank());
        piece.value = root(expr(e, root_inline));
        piece.staged = staged_;
        transcendentals = std::max(transcendentals, store_transcendentals_);
        pieces_.push_back(std::move(piece));
        complete = concats_.size() == known;
      }
      store_transcendentals_ = transcendentals;
    }
    // can_stream() counts the staged calls: the piece with fewest, to be safe.
    for (const Piece& p : pieces_)
      if (p.staged.size() < staged_.size()) staged_ = p.staged;
  }

  ExprPtr expr(const ir::ExprPtr& e, bool root_inline = false) {
    if (!root_inline) {
      const long k = env_.slot_of(e.get());
      if (k >= 0 && inline_produced_ && e == env_.produced) return expr(e, /*root_inline=*/true);
      if (k >= 0) return leaf(static_cast<size_t>(k));
    }
    if (auto* k = ir::expr_as<ir::Constant>(e)) return constant_value(*k);
    auto* c = ir::expr_as<ir::Call>(e);
    TF_CHECK(c && c->op(), "lowering: an unplanned non-call value");
    if (env_.fused_reduce && env_.fused_reduce(*c)) return row_scalar(*c);
    if (staging_ && cached_.count(c)) return load(cache(), j_);  // stored by the last reduction pass
    if (is_view(*c->op())) return view(*c);
    const ScalarLowering* l = find_scalar_lowering(c->op()->name());
    TF_CHECK(l, "lowering: op " + std::string(c->op()->name()) + " has no scalar form");
    ScalarArgs a{*c, {}, tensor_type(*c).dtype(), env_.err, nullptr, nullptr, nullptr};
    for (const ir::ExprPtr& x : c->args()) a.args.push_back(read(x, tensor_type(*c).shape()));
    if (staging_) {
      a.stage = [this](const std::string& fn, const ExprPtr& arg, const std::vector<ExprPtr>& extra) {
        return stage(fn, arg, extra);
      };
      a.invariant = [this](const ExprPtr& v) { return independent_of(v, {j_.get(), c0_.get()}, {}); };
      a.in_row = [this](const ExprPtr& v) { return is_row_element(v, cache()); };
    }
    (staging_ ? store_transcendentals_ : reduce_transcendentals_) += l->transcendental(*c->op());
    may_fail_ = may_fail_ || l->may_fail(*c);
    ExprPtr v = l->lower(a);
    // An f16 result's rounding (tf_rf16, 11 vector operations per 16
    // values) as F16C's round trip over the chunk (2).
    if (a.out == DType::kF16 && staging_) return stage("tf_rf16_n", v, {});
    v = round_to(a.out, v);
    if (!staging_ && lowering_reduce_ >= 0 && reduce_values_.emplace(c, std::make_pair(v, lowering_reduce_)).second)
      recorded_.push_back(c);
    return v;
  }

  // The produced value (StageEnv::produced) as the first pass computes it,
  // and the leaf it is stored through and read back by.
  void produce() {
    const size_t k = static_cast<size_t>(env_.slot_of(env_.produced.get()));
    const bool staging = staging_;
    staging_ = false;  // a reduction pass has no chunk buffers
    IndexMap saved = std::exchange(map_, IndexMap::identity(rank()));
    produced_value_ = expr(env_.produced, /*root_inline=*/true);
    leaf(k);
    const std::string key = std::to_string(k) + ":" + map_.key();
    produced_leaf_ = static_cast<size_t>(
        std::find_if(leaves_.begin(), leaves_.end(), [&](const Leaf& l) { return l.key == key; }) - leaves_.begin());
    map_ = std::move(saved);
    staging_ = staging;
  }

  // ---- values cached in the output row -----------------------------------------
  //
  // An exp-like value the last reduction pass computes and the store reads
  // again (softmax's exp(x - m): summed, then divided by the sum) is stored
  // into the output row by that pass and loaded by the store, instead of
  // computed twice: the row is in cache, the exp is not free. Only where
  // the value has the output's dtype and that dtype is a compute type (the
  // row holds it exactly).

  // Whether the inlined tree of e (up to materialized values and fused
  // reductions) has an exp-like call.
  bool costly(const ir::ExprPtr& e) const {
    if (env_.slot_of(e.get()) >= 0) return false;
    auto* c = ir::expr_as<ir::Call>(e);
    if (!c || !c->op() || (env_.fused_reduce && env_.fused_reduce(*c))) return false;
    const ScalarLowering* l = find_scalar_lowering(c->op()->name());
    if (l && l->transcendental(*c->op())) return true;
    for (const ir::ExprPtr& a : c->args())
      if (costly(a)) return true;
    return false;
  }

  // Marks the outermost node of the stored value's tree that the last
  // reduction pass computed; returns whether there is one. It is kept in
  // the output row when it holds its dtype exactly (f32, f64), in a float
  // scratch row (scratch_) for an f16 / bf16 output. One row holds one
  // value per element, so one node is cached: a second (softmax(x) +
  // softmax(2 x)'s other exp) is recomputed by the final pass; two sharing
  // the row read each other's values.
  bool choose_cached(const ir::ExprPtr& e, bool root_inline) {
    const DType out = iter_.dtype(), dt = compute_dtype(out);
    if (reduces_.empty() || !(dt == DType::kF32 || dt == DType::kF64)) return false;
    if (is_half(out) && env_.target != Target::kCpu) return false;  // no scratch row: recomputed

    int last = 0;
    for (const RowReduce& r : reduces_) last = std::max(last, r.depth);
    std::function<void(const ir::ExprPtr&, bool)> walk = [&](const ir::ExprPtr& x, bool top) {
      if (!top && env_.slot_of(x.get()) >= 0) return;
      auto* c = ir::expr_as<ir::Call>(x);
      if (!c || !c->op() || (env_.fused_reduce && env_.fused_reduce(*c))) return;
      auto it = reduce_values_.find(c);
      if (!top && it != reduce_values_.end() && reduces_[it->second.second].depth == last &&
          tensor_type(*c).dtype() == dt && costly(x) && (cached_.empty() || cached_.count(c))) {
        if (cached_.insert(c).second) cached_order_.push_back(c);
        return;
      }
      for (const ir::ExprPtr& a : c->args()) walk(a, false);
    };
    walk(e, root_inline);
    if (!cached_.empty() && is_half(out)) scratch_ = Var::make("sb", Type::pointer(DType::kF32));
    return !cached_.empty();
  }

  // The result of a row reduction, lowered once per stage: its operand's
  // element (without chunk staging: a reduction pass has no chunk buffers).
  ExprPtr row_scalar(const ir::Call& c) {
    for (const RowReduce& r : reduces_)
      if (r.call == &c) return note_depth(r);
    const bool staging = staging_;
    const int depth = depth_, lowering = lowering_reduce_;
    staging_ = false;
    depth_ = 0;
    lowering_reduce_ = static_cast<int>(reduces_.size());  // this reduction's index, once pushed
    // The operand has the stage's shape (the fusion decision's rule). The
    // produced value is computed inline by the first pass (which stores
    // it); a later pass reads it back.
    const size_t mark = recorded_.size();
    const bool inline_produced = inline_produced_;
    inline_produced_ = true;
    ExprPtr element = with_map(IndexMap::identity(rank()), c.args()[0]);
    if (env_.produced && depth_ > 0) {
      for (size_t i = mark; i < recorded_.size(); ++i)
        if (reduce_values_.at(recorded_[i]).second == lowering_reduce_) reduce_values_.erase(recorded_[i]);
      inline_produced_ = false;
      depth_ = 0;
      element = with_map(IndexMap::identity(rank()), c.args()[0]);
    }
    inline_produced_ = inline_produced;
    const int my_depth = depth_ + 1;
    staging_ = staging;
    depth_ = depth;
    lowering_reduce_ = lowering;
    const auto& op = static_cast<const ops::Reduce&>(*c.op());
    const DType d = tensor_type(c).dtype(), cd = compute_dtype(d);
    const bool is_max = op.kind == ops::ReduceKind::kMax || op.kind == ops::ReduceKind::kAbsMax;
    // f16 / bf16 sums accumulate in float, others in double (the evaluator's),
    // but where a decomposition says its built-in sums in the compute type.
    const DType acc_t = is_max || env_.compute_type_sum(c) ? cd : (is_half(d) ? DType::kF32 : DType::kF64);
    const std::string n = std::to_string(reduces_.size());
    // The NaN count has the width of the elements, so both reductions fill
    // the same vector lanes.
    const Type count_t = Type::scalar(cd == DType::kF64 ? DType::kI64 : DType::kI32);
    RowReduce r{&c, my_depth, element, Var::make("acc" + n, Type::scalar(acc_t), true),
                is_max ? Var::make("nans" + n, count_t, true) : nullptr, Var::make("r" + n, Type::scalar(cd))};
    if (op.kind == ops::ReduceKind::kAbsMax) r.element = call(Type::scalar(cd), "tf_abs", {element}, {Type::scalar(cd)});
    reduces_.push_back(r);
    return note_depth(reduces_.back());
  }
  ExprPtr note_depth(const RowReduce& r) {
    depth_ = std::max(depth_, r.depth);
    return r.value;
  }

  ExprPtr stage(const std::string& fn, const ExprPtr& arg, const std::vector<ExprPtr>& extra) {
    staged_.push_back(
        Staged{fn, arg, Var::make("tb" + std::to_string(staged_.size()), Type::pointer(DType::kF32)), extra});
    return load(staged_.back().buf, sub(j_, c0_));
  }

  // The prelude routine that computes the one staged call a streamed store
  // stores as is (v is its buffer's element) and streams each line of the
  // result as it computes it: fn(y + c0, src, sx, n) (src: source()).
  // Empty where there is none: the values then stream a line at a time
  // after the routine has run over the chunk (stream_lines).
  std::string streaming_routine(const ExprPtr& v) const {
    if (staged_.size() != 1 || staged_.front().fn != "tf_gelu_tanh_n" || iter_.dtype() != DType::kF32) return "";
    auto* l = as<Load>(v);
    return l && l->base() == staged_.front().buf ? "tf_gelu_tanh_stream_n" : "";
  }

  // The form of a staged routine that reads its source and writes its
  // result apart, fn(dst, src, sx, n): dst[i] = f(src[i * sx]), dst may be
  // src when sx is 1. Empty where the routine has none (it then works in
  // place in its buffer).
  static std::string two_operand_form(const std::string& fn) {
    return fn == "tf_gelu_tanh_n" ? "tf_gelu_tanh_from_n" : "";
  }

  // Where a staged call's routine can read its argument as it lies rather
  // than from a copy in its own L1 buffer (the copy cost gelu-tanh 7% of
  // its time at 32 MiB on one thread), for a routine with a two-operand
  // form: a CPU stage's f32 input row (element j of a leaf: x[j * stride])
  // or an earlier staged call's result (its buffer, or the cache row where
  // it ran in place: in_row). The address of its element c0 and its
  // stride; null `at` otherwise.
  struct Source {
    ExprPtr at, stride;
  };
  Source source(const Staged& s, const std::unordered_set<const Var*>& in_row) const {
    auto* l = as<Load>(s.arg);
    if (env_.target != Target::kCpu || two_operand_form(s.fn).empty() || !l || l->dtype() != DType::kF32) return {};
    for (const Staged& t : staged_)
      if (&t != &s && l->base() == t.buf)
        return in_row.count(t.buf.get()) ? Source{address(cache(), c0_), i64(1)} : Source{t.buf, i64(1)};
    if (const Leaf* leaf = row_leaf(*l)) return {address(leaf->row, mul(c0_, leaf->stride)), leaf->stride};
    return {};
  }

  // The leaf whose element along the row `l` loads (x[j * stride]), or null.
  const Leaf* row_leaf(const Load& l) const {
    auto* i = as<Binary>(l.index());
    if (!i || i->op() != BinaryOp::kMul || i->a() != ExprPtr(j_)) return nullptr;
    for (const Leaf& leaf : leaves_)
      if (l.base() == leaf.row && !leaf.inner_zero && i->b() == ExprPtr(leaf.stride)) return &leaf;
    return nullptr;
  }

  // The staged buffer whose element v is, where its routine has a
  // two-operand form that can write v into the output row itself, as a
  // plain f32 store would have from the buffer. Null otherwise.
  const Var* stored_by_routine(const ExprPtr& v) const {
    auto* l = as<Load>(v);
    if (!l || iter_.dtype() != DType::kF32 || env_.target != Target::kCpu) return nullptr;
    for (const Staged& s : staged_)
      if (l->base() == s.buf && !two_operand_form(s.fn).empty()) return s.buf.get();
    return nullptr;
  }

  // Whether v is row[j]: the element of `row` at the store loop's index.
  bool is_row_element(const ExprPtr& v, const VarPtr& row) const {
    auto* l = as<Load>(v);
    return l && l->base() == row && l->index() == ExprPtr(j_);
  }

  // Staged calls whose argument is the cache row's own element, read by
  // nothing else of the chunk: their routine runs on the row in place
  // (no copy into a buffer and back), and their result is read there.
  std::unordered_set<const Var*> staged_in_row(const ExprPtr& value) const {
    std::unordered_set<const Var*> out;
    for (const Staged& s : staged_) {
      if (!is_row_element(s.arg, cache()) || reads(value, cache().get())) continue;
      bool alone = true;
      for (const Staged& t : staged_) alone = alone && (&t == &s || !reads(t.arg, cache().get()));
      if (alone) out.insert(s.buf.get());
    }
    return out;
  }

  // The stored value: a store to a narrow float rounds to it itself, so a
  // rounding to that same type at the root (staged or not) is dropped;
  // rounding twice gives the same bits. A rounding to another type stays
  // (an f32 result of cast(cast(x, f16), f32) is x rounded to f16).
  ExprPtr root(ExprPtr v) {
    const DType dt = iter_.dtype();
    if (dt == DType::kF16 && !staged_.empty() && staged_.back().fn == "tf_rf16_n") {
      auto* l = as<Load>(v);
      if (l && l->base() == staged_.back().buf) {
        v = staged_.back().arg;
        staged_.pop_back();
      }
    }
    if (auto* c = as<Call>(v); c && ((dt == DType::kF16 && c->name() == "tf_rf16") ||
                                     (dt == DType::kBF16 && c->name() == "tf_rbf16") ||
                                     (dt == DType::kFP8E4M3 && c->name() == "tf_rfp8e4m3") ||
                                     (dt == DType::kF8E8M0 && c->name() == "tf_rf8e8m0")))
      return c->args()[0];
    return v;
  }

  // The elements from which the stage forks: `plain`, or fewer when an
  // element calls an exp-like function (kTranscendentalParallelMin).
  ExprPtr parallel_min(int64_t plain) const {
    const bool transcendental = store_transcendentals_ + reduce_transcendentals_ > 0;
    return i64(transcendental ? std::min(plain, kTranscendentalParallelMin) : plain);
  }

  // Streaming needs 4- or 8-byte values and memory-bound work: fewer than
  // one exp-like call per two tensors the stage moves. Staging an inline
  // exp-like call's loop through L1 costs a compute-bound loop more than the
  // saved line reads; calls computed a chunk at a time are in L1 already.
  bool can_stream() const {
    if (env_.target != Target::kCpu) return false;
    const DType d = iter_.dtype();
    const int tensors = static_cast<int>(leaves_.size()) + 1;
    const int inline_calls = store_transcendentals_ + reduce_transcendentals_ - static_cast<int>(staged_.size());
    return !is_half(d) && (ir::dtype_bits(d) == 32 || ir::dtype_bits(d) == 64) && 2 * inline_calls < tensors;
  }

  // f16 leaves that vary along the row and are read by the value or a
  // staged call's argument: widened a chunk at a time by F16C (the scalar
  // conversion vectorizes into ~13 operations per 16 values, against one).
  std::vector<const Leaf*> widened(const ExprPtr& value) const {
    std::vector<const Leaf*> wide;
    if (env_.target != Target::kCpu) return wide;  // a GPU converts each element where it reads it
    for (const Leaf& l : leaves_) {
      if (l.row->dtype() != DType::kF16 || l.inner_zero) continue;
      bool read = reads(value, l.row.get());
      for (const Staged& s : staged_) read = read || reads(s.arg, l.row.get());
      if (read) wide.push_back(&l);
    }
    return wide;
  }

  // for (c in chunks of [lo, hi)) { c0, c1 bound; body(c0, c1) }.
  StmtPtr chunk_loop(const ExprPtr& lo, const ExprPtr& hi, const VarPtr& c1, StmtPtr body) {
    VarPtr c = Var::make("c", kIndex);
    body = LetStmt::make(c0_, add(lo, mul(c, i64(kChunk))), LetStmt::make(c1, min(add(c0_, i64(kChunk)), hi), body));
    const ExprPtr count = div(add(sub(hi, lo), i64(kChunk - 1)), i64(kChunk));
    return For::make(c, i64(0), count, ForKind::kSerial, body);
  }

  // When the store is one staged routine working in place in the output
  // row, which leaves the stored value there (a cached exp divided by its
  // row's sum): that routine's call over the whole of [lo, hi), once per
  // row rather than once per chunk (its setup, a reciprocal and its range,
  // cost the composed softmax 0.03 ms of 1.1 at 512 x 4096 f32 per chunk).
  // Nothing is left to stream. Null otherwise.
  StmtPtr whole_row_routine(const VarPtr& y, const ExprPtr& lo, const ExprPtr& hi, const ExprPtr& value,
                            bool needs_buffers) const {
    if (needs_buffers || staged_.size() != 1 || y != cache()) return nullptr;
    const std::unordered_set<const Var*> in_row = staged_in_row(value);
    const Staged& s = staged_.front();
    if (!in_row.count(s.buf.get()) || !is_row_element(ReadInRow(in_row, cache(), j_).mutate(value), y))
      return nullptr;
    std::vector<ExprPtr> args{address(cache(), lo), sub(hi, lo)};
    args.insert(args.end(), s.extra.begin(), s.extra.end());
    return Evaluate::make(extern_call(s.fn, args));
  }

  // for (j in [lo, hi)) y[j] = value, in chunks of kChunk through L1 when
  // the value needs any (see the header); streamed when `nt` holds.
  StmtPtr store_loop(const VarPtr& y, const ExprPtr& lo, const ExprPtr& hi, const ExprPtr& value, const VarPtr& nt,
                     bool stream_only = false, const VarPtr& pf = nullptr) {
    const DType dt = iter_.dtype();
    // A half row is narrowed a chunk at a time on the CPU (F16C); a GPU
    // thread rounds its own elements as it stores them.
    const bool half = is_half(dt) && env_.target == Target::kCpu;
    const std::vector<const Leaf*> wide = widened(value);
    auto chunks = [&](bool streamed) {
      VarPtr c1 = Var::make("c1", kIndex);
      std::vector<StmtPtr> body;
      std::unordered_map<const Var*, VarPtr> wide_bufs;
      std::vector<std::pair<VarPtr, const Leaf*>> wide_fill;
      for (const Leaf* l : wide) {
        VarPtr buf = Var::make("xw" + std::to_string(l->slot), Type::pointer(DType::kF32));
        wide_bufs[l->row.get()] = buf;
        wide_fill.emplace_back(buf, l);
      }
      ReadWidened rw(wide_bufs, sub(j_, c0_));
      const ExprPtr n = sub(c1, c0_);
      for (auto& [buf, l] : wide_fill)
        body.push_back(Evaluate::make(
            extern_call("tf_widen_n", {buf, address(l->row, mul(c0_, l->stride)), l->stride, n})));
      if (streamed && pf) body.push_back(prefetch_ahead(c1, pf));
      const std::unordered_set<const Var*> in_row = staged_in_row(value);
      const ExprPtr v = ReadInRow(in_row, cache(), j_).mutate(rw.mutate(value));
      const std::string self_streamed = streamed && !pending_ ? streaming_routine(v) : "";
      // The plain store below (the last branch), done by the routine instead.
      const Var* direct = !streamed && !half ? stored_by_routine(v) : nullptr;
      std::unordered_set<const Var*> unbuffered = in_row;  // staged calls that need no L1 buffer
      for (const Staged& s : staged_) {
        if (in_row.count(s.buf.get())) {
          std::vector<ExprPtr> args{address(cache(), c0_), n};
          args.insert(args.end(), s.extra.begin(), s.extra.end());
          body.push_back(Evaluate::make(extern_call(s.fn, args)));
          continue;
        }
        // An argument reading an earlier call that ran in place reads the
        // cache row, where that call's result is.
        const Source src = source(s, in_row);
        if (!src.at)
          body.push_back(For::make(j_, c0_, n, ForKind::kVectorized,
                                   Store::make(s.buf, sub(j_, c0_), ReadInRow(in_row, cache(), j_).mutate(rw.mutate(s.arg)))));
        const bool into_y = !self_streamed.empty() || direct == s.buf.get();
        std::string fn = s.fn;
        std::vector<ExprPtr> args{s.buf, n};
        if (!self_streamed.empty()) fn = self_streamed;
        else if (src.at || into_y) fn = two_operand_form(s.fn);
        if (fn != s.fn)
          args = {into_y ? address(y, c0_) : ExprPtr(s.buf), src.at ? src.at : ExprPtr(s.buf), src.at ? src.stride : i64(1), n};
        if (src.at && into_y) unbuffered.insert(s.buf.get());
        args.insert(args.end(), s.extra.begin(), s.extra.end());
        body.push_back(Evaluate::make(extern_call(fn, args)));
      }
      if (!self_streamed.empty()) {
        // The routine streamed the stored values itself.
      } else if (direct) {
        // The routine stored them itself.
      } else if (streamed && pending_) {
        // Into the scratch row in place (unless a routine left it there),
        // which the next row's last reduction pass streams out
        // (streamed_row).
        if (!is_row_element(v, pending_))
          body.push_back(For::make(j_, c0_, n, ForKind::kVectorized, Store::make(pending_, j_, cast(dt, v))));
      } else if (!half && y == cache() && is_row_element(v, y)) {
        // The routine left the stored value in the output row already (in
        // cache: streaming it again would only add a pass).
      } else if (streamed && is_row_element(v, cache())) {
        // The stored value is the scratch row's: streamed from there.
        body.push_back(Evaluate::make(extern_call("tf_stream", {address(y, c0_), address(cache(), c0_), n})));
      } else if (streamed) {
        body.push_back(stream_lines(y, c0_, n, j_, v));
      } else if (half) {
        VarPtr buf = Var::make("buf", Type::pointer(compute_dtype(dt)));
        StmtPtr fill = For::make(j_, c0_, n, ForKind::kVectorized, Store::make(buf, sub(j_, c0_), v));
        StmtPtr flush = Evaluate::make(extern_call("tf_narrow_n", {address(y, c0_), i64(1), buf, n}));
        body.push_back(Allocate::make(buf, i64(kChunk), MemoryScope::kLocal, Seq::make({fill, flush})));
      } else {
        body.push_back(For::make(j_, c0_, n, ForKind::kVectorized, Store::make(y, j_, cast(dt, v))));
      }
      StmtPtr chunk = Seq::make(std::move(body));
      for (auto it = staged_.rbegin(); it != staged_.rend(); ++it)
        if (!unbuffered.count(it->buf.get())) chunk = Allocate::make(it->buf, i64(kChunk), MemoryScope::kLocal, chunk);
      for (auto it = wide_fill.rbegin(); it != wide_fill.rend(); ++it)
        chunk = Allocate::make(it->first, i64(kChunk), MemoryScope::kLocal, chunk);
      StmtPtr loop = chunk_loop(lo, hi, c1, chunk);
      // A row stage's task is its row, and this its last streamed write;
      // an elementwise task fences once after all its rows (fenced()).
      if (streamed && !reduces_.empty() && !pending_) loop = Seq::make({loop, stream_fence()});
      return loop;
    };
    if (stream_only) return chunks(true);
    if (StmtPtr whole = whole_row_routine(y, lo, hi, value, half || !wide.empty())) return whole;
    StmtPtr plain;
    if (half || !wide.empty() || !staged_.empty()) plain = chunks(false);
    else plain = For::make(j_, lo, sub(hi, lo), ForKind::kVectorized, Store::make(y, j_, cast(dt, value)));
    if (!nt) return plain;
    return IfThenElse::make(nt, chunks(true), plain);
  }

  // Prefetches into L2 of every leaf's elements kPrefetchAhead bytes past
  // the chunk [c0, c1), one per cache line, for a streamed elementwise
  // stage that moves most of the last-level cache (pf: see wrap). One thread keeps
  // only about a dozen line misses in flight from L1; a prefetch to L2 uses
  // the L2's own queue, so more of DRAM's latency overlaps. A leaf of lower
  // rank than the stage (a weight row) is re-read from cache every row.
  StmtPtr prefetch_ahead(const VarPtr& c1, const VarPtr& pf) const {
    std::vector<StmtPtr> out;
    for (const Leaf* l : streamed_leaves()) {
      const ExprPtr ahead = i64(kPrefetchAhead / ir::dtype_bytes(l->row->dtype()));
      out.push_back(IfThenElse::make(land(pf, eq(l->stride, i64(1))), prefetch_lines(*l, ahead, c1)));
    }
    return Seq::make(std::move(out));
  }

  // The lines of leaf l's unit-stride row that hold [c0, c1), `offset`
  // elements further on, prefetched into L2.
  StmtPtr prefetch_lines(const Leaf& l, const ExprPtr& offset, const VarPtr& c1) const {
    return compiler::prefetch_lines(l.row, offset, c0_, sub(c1, c0_));
  }

  // ---- the parts both skeletons share ---------------------------------------

  // A leaf as large as the stage that varies along its rows: one the stage
  // streams through (a weight row of lower rank is re-read from cache).
  bool streams_through(const Leaf& l) const { return !l.inner_zero && env_.slot(l.slot).type->rank() >= rank(); }

  // One such leaf per slot: the inputs an elementwise stage streams
  // through (a rotate-half's two halves of q and q itself are three leaves
  // of one slot).
  std::vector<const Leaf*> streamed_leaves() const {
    std::vector<const Leaf*> out;
    std::set<size_t> slots;
    for (const Leaf& l : leaves_)
      if (streams_through(l) && slots.insert(l.slot).second) out.push_back(&l);
    return out;
  }

  // An elementwise task's body, then, when the stage streams, a store
  // fence: streamed stores are visible to other threads only after one, and
  // the stage ends at a barrier. Once per task rather than per row: a fence
  // waits for every pending streamed line, and a RoPE's rows are 512 bytes.
  static StmtPtr fenced(const StmtPtr& body, const VarPtr& nt) {
    if (!nt) return body;
    return Seq::make({body, IfThenElse::make(nt, stream_fence())});
  }

  // Strides of every leaf along the stage's axes through its index map (an
  // axis of extent 1 has stride 0: broadcasting), as Lets appended to
  // `lets`: bs[leaf][axis] (shared by leaves of one slot whose maps differ
  // only in their offsets); and its offset at index 0 (null when 0).
  std::vector<std::vector<VarPtr>> leaf_strides(std::vector<std::pair<VarPtr, ExprPtr>>& lets,
                                                std::vector<ExprPtr>* base) {
    const size_t r = rank();
    std::vector<std::vector<VarPtr>> bs(leaves_.size());
    base->assign(leaves_.size(), nullptr);
    std::map<std::string, size_t> by_strides;  // slot + coefficients -> first leaf
    for (size_t li = 0; li < leaves_.size(); ++li) {
      const Leaf& l = leaves_[li];
      const size_t k = l.slot, rl = env_.slot(k).type->rank();
      auto eff = [&](size_t b) { return select(eq(shape(k, b), i64(1)), i64(0), stride(k, b)); };
      IndexMap coefs = l.map;
      coefs.offset.assign(coefs.offset.size(), nullptr);
      auto [first, fresh] = by_strides.emplace(std::to_string(k) + ":" + coefs.key(), li);
      if (!fresh) {
        bs[li] = bs[first->second];
      } else {
        for (size_t a = 0; a < r; ++a) {
          bs[li].push_back(Var::make("bs" + std::to_string(k) + "_" + std::to_string(a), kIndex));
          ExprPtr v;
          for (size_t b = 0; b < rl; ++b)
            if (const ExprPtr& c = l.map.coef[b][a]) v = plus(v, is_const_int(c, 1) ? eff(b) : mul(c, eff(b)));
          lets.emplace_back(bs[li][a], v ? v : i64(0));
        }
      }
      ExprPtr off;
      for (size_t b = 0; b < rl; ++b)
        if (l.map.offset[b]) off = plus(off, mul(l.map.offset[b], eff(b)));
      if (off) {
        VarPtr o = Var::make("base" + std::to_string(k), kIndex);
        lets.emplace_back(o, off);
        (*base)[li] = o;
      }
    }
    return bs;
  }

  // Whether every leaf that varies along the row has unit stride there.
  ExprPtr unit_strides(const std::vector<std::vector<VarPtr>>& bs) const {
    const size_t r = rank();
    ExprPtr fast = boolean(true);
    for (size_t li = 0; li < leaves_.size(); ++li)
      if (!leaves_[li].inner_zero && r > 0)
        fast = land(fast, lor(eq(bs[li][r - 1], i64(1)), eq(inner_, i64(1))));
    return fast;
  }

  // `body` (reading the leaves' row pointers and strides) specialized for
  // unit strides, under Lets of every leaf's row pointer for row `row`
  // (the row index decomposed over the outer axes).
  StmtPtr row_body(const StmtPtr& body, const VarPtr& fast, const VarPtr& row,
                   const std::vector<std::vector<VarPtr>>& bs, const std::vector<ExprPtr>& base) {
    const size_t r = rank();
    std::vector<std::pair<VarPtr, ExprPtr>> digits;
    const std::vector<ExprPtr> off = row_offsets(row, r >= 2 ? r - 1 : 0, bs, base, &digits);
    StmtPtr out = leaf_rows(body, fast, bs, off);
    for (auto it = digits.rbegin(); it != digits.rend(); ++it) out = LetStmt::make(it->first, it->second, out);
    return out;
  }

  // Each leaf's offset at the row whose index over the outer axes [0, axes)
  // is `index` (its digits, named i<axis>, appended to *digits as Lets).
  std::vector<ExprPtr> row_offsets(const ExprPtr& index, size_t axes, const std::vector<std::vector<VarPtr>>& bs,
                                   const std::vector<ExprPtr>& base, std::vector<std::pair<VarPtr, ExprPtr>>* digits) {
    std::vector<ExprPtr> off(leaves_.size(), i64(0));
    for (size_t li = 0; li < leaves_.size(); ++li)
      if (base[li]) off[li] = base[li];
    ExprPtr rem = index;
    for (size_t a = axes; a-- > 0;) {
      VarPtr i = Var::make("i" + std::to_string(a), kIndex);
      digits->emplace_back(i, a == 0 ? rem : mod(rem, shape(s_, a)));
      for (size_t li = 0; li < leaves_.size(); ++li) off[li] = add(off[li], mul(i, bs[li][a]));
      rem = div(rem, shape(s_, a));
    }
    return off;
  }

  // `body` specialized for unit strides, under Lets of every leaf's row
  // pointer (its slot's data at off[leaf]) and of the one element of each
  // leaf constant along the row.
  StmtPtr leaf_rows(const StmtPtr& body, const VarPtr& fast, const std::vector<std::vector<VarPtr>>& bs,
                    const std::vector<ExprPtr>& off) {
    const size_t r = rank();
    VarMap unit;
    for (const Leaf& l : leaves_) unit[l.stride.get()] = i64(l.inner_zero || r == 0 ? 0 : 1);
    StmtPtr general = body;
    for (size_t li = leaves_.size(); li-- > 0;)
      general = LetStmt::make(leaves_[li].stride, r ? ExprPtr(bs[li][r - 1]) : i64(0), general);
    StmtPtr out = IfThenElse::make(fast, tir::substitute(body, unit), general);
    // A row has at least one element (wrap()), so the one element of a leaf
    // constant along it can be loaded before any pass.
    for (size_t li = leaves_.size(); li-- > 0;)
      if (leaves_[li].value) out = LetStmt::make(leaves_[li].value, load(leaves_[li].row, i64(0)), out);
    for (size_t li = leaves_.size(); li-- > 0;)
      out = LetStmt::make(leaves_[li].row, address(env_.slot(leaves_[li].slot).data, off[li]), out, /*no_alias=*/!env_.out_may_alias);
    return out;
  }

  // Whether some input is streamed through at more than one offset
  // (streamed_leaves() keeps one leaf per slot).
  bool reads_at_several_offsets() const {
    return streamed_leaves().size() < static_cast<size_t>(std::count_if(
               leaves_.begin(), leaves_.end(), [&](const Leaf& l) { return streams_through(l); }));
  }

  // What both skeletons declare around their parallel loop.
  struct Frame {
    VarPtr outer, fast, nt;  // nt is null when the stage does not stream
    VarPtr pf;               // null but in an elementwise stage that streams
    std::vector<std::pair<VarPtr, ExprPtr>> lets;  // the leaves' broadcast strides
    std::vector<std::vector<VarPtr>> bs;           // bs[leaf][axis]
    std::vector<ExprPtr> base;                     // base[leaf]: offset at index 0, or null
  };
  Frame frame() {
    Frame f;
    f.outer = Var::make("outer", kIndex);
    f.bs = leaf_strides(f.lets, &f.base);
    f.fast = Var::make("fast", Type::scalar(DType::kBool));
    if (can_stream() || streams_cached_row()) f.nt = Var::make("nt", Type::scalar(DType::kBool));
    if (f.nt && reduces_.empty()) f.pf = Var::make("pf", Type::scalar(DType::kBool));
    return f;
  }

  // The stage around its parallel loop: extents, leaf strides, the
  // fast-path flag, the streaming flag; nothing runs for an empty result.
  StmtPtr wrap(const std::string& what, StmtPtr par, const Frame& f) {
    const size_t r = rank();
    StmtPtr stage = par;
    // Bytes per element the stage moves: its output and every input as large.
    int64_t moved = ir::dtype_bytes(iter_.dtype());
    for (const Leaf* l : streamed_leaves()) moved += ir::dtype_bytes(l->row->dtype());
    const ExprPtr moved_bytes = mul(mul(f.outer, inner_), i64(moved));
    if (f.pf) {
      // An input read as one ascending run is left to the core's own
      // prefetcher where that keeps up (prefetch_streams()); one read at
      // several offsets along the row (a rotate-half's two halves) is
      // prefetched on every host.
      ExprPtr pf = ge(moved_bytes, prefetch_min_bytes());
      if (!reads_at_several_offsets()) pf = land(pf, prefetch_streams());
      stage = LetStmt::make(f.pf, pf, stage);
    }
    if (f.nt) {
      const int64_t bytes = ir::dtype_bytes(iter_.dtype());
      // A row stage's task is a row, fenced on its own; an elementwise task
      // writes consecutive rows and fences once, so short rows stream too
      // where each is whole cache lines.
      ExprPtr rows_ok = ge(inner_, i64(kStreamMinRow));
      if (reduces_.empty()) rows_ok = lor(rows_ok, eq(mod(mul(inner_, i64(bytes)), i64(64)), i64(0)));
      stage = LetStmt::make(f.nt, land(ge(moved_bytes, stream_min_bytes()), rows_ok), stage);
    }
    stage = LetStmt::make(f.fast, unit_strides(f.bs), stage);
    for (auto it = f.lets.rbegin(); it != f.lets.rend(); ++it) stage = LetStmt::make(it->first, it->second, stage);
    stage = IfThenElse::make(gt(mul(f.outer, inner_), i64(0)), stage);
    ExprPtr outer_v = i64(1);
    for (size_t a = 0; a + 1 < r; ++a) outer_v = mul(outer_v, shape(s_, a));
    stage = LetStmt::make(f.outer, outer_v, LetStmt::make(inner_, r ? shape(s_, r - 1) : i64(1), stage));
    return Seq::make({Comment::make("stage: " + what + " -> slot " + std::to_string(s_)), stage});
  }

  // ---- elementwise ------------------------------------------------------------

  // One parallel loop over tasks; a task is a block of kBlock elements of
  // up to `tr` consecutive rows along the innermost outer axis (enough rows
  // for kTaskElements elements), walked by a serial loop; on the CPU, in a
  // large stage reading an operand far apart along the row (a transpose:
  // kTileMinStride), a tile of kTileRows rows by kTileCols elements. The
  // outer axes' digits are divided out once per task rather than once per
  // row: a RoPE's rows are 128 elements, and three 64-bit divisions per row
  // were a tenth of its time.
  StmtPtr elementwise_skeleton(const std::string& what, const ExprPtr& value) {
    const SlotVars& out = env_.slot(s_);
    const Frame f = frame();
    const size_t r = rank();
    const bool tiles = r >= 2 && env_.target == Target::kCpu;
    // Tiles where an operand moves by a line or more per element along the
    // row, in a stage too large for the cache.
    ExprPtr far = boolean(false);
    for (size_t li = 0; tiles && li < leaves_.size(); ++li)
      if (!leaves_[li].inner_zero) far = lor(far, ge(f.bs[li][r - 1], i64(kTileMinStride)));
    far = land(far, ge(mul(f.outer, inner_), i64(kTileMinElements)));
    VarPtr tiled = Var::make("tiled", Type::scalar(DType::kBool));
    VarPtr blk = Var::make("blk", kIndex);
    VarPtr nb = Var::make("nb", kIndex), t = Var::make("t", kIndex), row = Var::make("row", kIndex);
    VarPtr j0 = Var::make("j0", kIndex), j1 = Var::make("j1", kIndex), y = Var::make("y", out.data->type());
    StmtPtr body = pieces_.empty() ? store_loop(y, j0, j1, value, f.nt, false, f.pf) : piece_loops(y, j0, j1, f);
    StmtPtr par;
    if (r < 2) {
      body = row_body(body, f.fast, row, f.bs, f.base);
      body = LetStmt::make(y, address(out.data, mul(row, inner_)), body, /*no_alias=*/!env_.out_may_alias);
      body = fenced(body, f.nt);
      body = LetStmt::make(row, div(t, nb), LetStmt::make(j0, mul(mod(t, nb), blk),
                                                          LetStmt::make(j1, min(inner_, add(j0, blk)), body)));
      par = For::make(t, i64(0), mul(f.outer, nb), ForKind::kParallel, body, {},
                      ge(mul(f.outer, inner_), parallel_min(kElementwiseParallelMin)));
    } else {
      const ExprPtr m = shape(s_, r - 2);  // the innermost outer axis
      VarPtr tr = Var::make("tr", kIndex), ntile = Var::make("ntile", kIndex), u = Var::make("u", kIndex);
      VarPtr grp = Var::make("grp", kIndex), lo = Var::make("lo", kIndex), i = Var::make("i" + std::to_string(r - 2), kIndex);
      std::vector<std::pair<VarPtr, ExprPtr>> lets;
      std::vector<ExprPtr> off = row_offsets(grp, r - 2, f.bs, f.base, &lets);
      std::vector<VarPtr> group_off;
      for (size_t li = 0; li < leaves_.size(); ++li) {
        group_off.push_back(Var::make("o" + std::to_string(li), kIndex));
        lets.emplace_back(group_off.back(), off[li]);
        off[li] = add(group_off.back(), mul(i, f.bs[li][r - 2]));
      }
      body = leaf_rows(body, f.fast, f.bs, off);
      body = LetStmt::make(y, address(out.data, mul(add(mul(grp, m), i), inner_)), body, /*no_alias=*/!env_.out_may_alias);
      body = fenced(For::make(i, lo, sub(min(m, add(lo, tr)), lo), ForKind::kSerial, body), f.nt);
      for (auto it = lets.rbegin(); it != lets.rend(); ++it) body = LetStmt::make(it->first, it->second, body);
      body = LetStmt::make(lo, mul(mod(u, ntile), tr), body);
      body = LetStmt::make(grp, div(u, ntile), body);
      body = LetStmt::make(u, div(t, nb), LetStmt::make(j0, mul(mod(t, nb), blk),
                                                        LetStmt::make(j1, min(inner_, add(j0, blk)), body)));
      par = For::make(t, i64(0), mul(mul(div(f.outer, m), ntile), nb), ForKind::kParallel, body, {},
                      ge(mul(f.outer, inner_), parallel_min(kElementwiseParallelMin)));
      par = LetStmt::make(ntile, div(add(m, sub(tr, i64(1))), tr), par);
      const ExprPtr rows = max(i64(1), min(m, div(i64(kTaskElements), inner_)));
      par = LetStmt::make(tr, tiles ? select(tiled, min(m, i64(kTileRows)), rows) : rows, par);
    }
    // Tasks of at most kBlock (or a tile's kTileCols) along the row, so
    // that one long row and many short rows both spread over the threads;
    // index arithmetic rather
    // than a call, so the CUDA host can size the grid from it (grid_size.h).
    par = LetStmt::make(nb, select(le(inner_, blk), i64(1), div(add(inner_, sub(blk, i64(1))), blk)), par);
    par = LetStmt::make(blk, tiles ? select(tiled, i64(kTileCols), i64(kBlock)) : i64(kBlock), par);
    if (tiles) par = LetStmt::make(tiled, far, par);
    if (tiles) par = transposed_copy(value, f, par);
    return wrap(what, par, f);
  }

  // The leaf a stage only copies (its value is that leaf's element along
  // the row, in the stage's dtype), or null. A half-precision element is
  // computed in float: its copy is a widening that the store narrows back
  // exactly.
  const Leaf* copied_leaf(const ExprPtr& value) const {
    ExprPtr v = value;
    if (auto* c = as<Cast>(v); c && is_half(iter_.dtype()) && c->dtype() == DType::kF32) v = c->value();
    auto* l = as<Load>(v);
    if (!l || l->dtype() != iter_.dtype() || !pieces_.empty() || !staged_.empty()) return nullptr;
    return row_leaf(*l);
  }

  // A stage that only copies an operand whose unit stride is on the
  // result's second-to-last axis (a fused x.T) copies transposed planes
  // (lower_stages.h) rather than tiles gathered down the operand's
  // columns: [2048, 4096] f32, one / two threads, 6.9 / 3.1 ms as tiles
  // (docs/decisions.md). `par` (the tiles) runs for any other strides.
  StmtPtr transposed_copy(const ExprPtr& value, const Frame& f, const StmtPtr& par) {
    const Leaf* l = copied_leaf(value);
    if (!l || env_.out_may_alias) return par;
    const size_t r = rank(), li = static_cast<size_t>(l - leaves_.data());
    const SlotVars& out = env_.slot(s_);
    TransposedPlanes t{env_.slot(l->slot).data, out.data, iter_.dtype(), div(f.outer, shape(s_, r - 2)),
                       shape(s_, r - 2), inner_, f.bs[li][r - 1], nullptr,
                       ge(mul(f.outer, inner_), parallel_min(kElementwiseParallelMin))};
    t.plane_offset = [&](const VarPtr& p, Lets& lets) {
      std::vector<ExprPtr> n, st;
      for (size_t a = 0; a + 2 < r; ++a) n.push_back(shape(s_, a)), st.push_back(f.bs[li][a]);
      const ExprPtr base = f.base[li] ? f.base[li] : i64(0);
      return n.empty() ? base : add(base, row_major_offsets(p, n, {st}, lets)[0]);
    };
    const ExprPtr planar = land(eq(f.bs[li][r - 2], i64(1)), ne(f.bs[li][r - 1], i64(1)));
    return IfThenElse::make(planar, transposed_planes(t), par);
  }


  // The store loop over [j0, j1) cut at the concats' piece boundaries: each
  // piece's range, intersected with the block, stores that piece's value.
  StmtPtr piece_loops(const VarPtr& y, const VarPtr& j0, const VarPtr& j1, const Frame& f) {
    std::vector<StmtPtr> loops;
    const std::vector<Staged> staged = staged_;
    for (const Piece& p : pieces_) {
      ExprPtr lo = j0, hi = j1;
      for (size_t i = 0; i < concats_.size(); ++i) {
        const size_t c = p.choice[i], n = concats_[i].starts.size() + 1;
        if (c > 0) lo = max(lo, concats_[i].start_j(c));
        if (c + 1 < n) hi = min(hi, concats_[i].start_j(c + 1));
      }
      VarPtr plo = Var::make("plo", kIndex), phi = Var::make("phi", kIndex);
      staged_ = p.staged;
      StmtPtr loop = IfThenElse::make(lt(plo, phi), store_loop(y, plo, phi, p.value, f.nt, false, f.pf));
      loops.push_back(LetStmt::make(plo, lo, LetStmt::make(phi, hi, loop)));
    }
    staged_ = staged;
    return Seq::make(std::move(loops));
  }

  // ---- rows -------------------------------------------------------------------

  // Prefetches of the next row of every leaf that varies along the rows,
  // for the chunk [c0, c1), issued in the row's last reduction pass: the
  // store pass after it works from cache, so this overlaps the next row's
  // memory reads with its arithmetic. In the first of several passes the
  // next row shares L1 with this row for longer (softmax 512 x 4096 f32,
  // one thread: 1.13 ms with the prefetch in the max pass, 0.94-1.00 ms in
  // the sum pass). The prefetch asks for L2, not L1 (locality 2: prefetcht1):
  // a 16 KiB row, the next one and a LayerNorm's weight and bias rows fill
  // a 48 KiB L1 and evict one another. A/B through torch, 4 rounds, warm
  // allocator, 1 / 2 threads: rmsnorm 128 MiB 0.86 / 0.85, layer_norm 128
  // MiB 0.90 / 0.88 and 32 MiB 0.95 / 0.95, residual + rmsnorm 32 MiB 0.97
  // / 0.97, softmax 0.96-1.04 (within its spread), 8 MiB rows 0.96-1.02.
  StmtPtr prefetch_next_row(const std::vector<std::vector<VarPtr>>& bs, const VarPtr& c1) {
    const size_t r = rank();
    std::vector<StmtPtr> out;
    if (r < 2) return Seq::make({});
    for (size_t li = 0; li < leaves_.size(); ++li) {
      const Leaf& l = leaves_[li];
      if (!streams_through(l)) continue;
      if (produced_scratch_ && li == produced_leaf_) continue;  // written, not read, and streamed
      const ExprPtr next = bs[li][r - 2];
      out.push_back(IfThenElse::make(land(eq(l.stride, i64(1)), ne(next, i64(0))), prefetch_lines(l, next, c1)));
    }
    return Seq::make(std::move(out));
  }

  // The chunk [c0, c1) of the previous row of the task, from the scratch
  // row to the output: its writes spread over this row's arithmetic. Under
  // the flag has_prev_, which row_tasks resolves (a task's first row has
  // no previous row).
  StmtPtr stream_pending(const VarPtr& c1) const {
    const SlotVars& out = env_.slot(s_);
    const ExprPtr prev = address(out.data, add(mul(sub(row_, i64(1)), inner_), c0_));
    return IfThenElse::make(has_prev_,
                            Evaluate::make(extern_call("tf_stream", {prev, address(pending_, c0_), sub(c1, c0_)})));
  }

  // The previous row's chunk streamed out during this row's exps rather
  // than in one burst before them (the burst waited on the
  // write-combining buffers): where the last pass fills the scratch row
  // with a staged exp's argument and sums the exps there (softmax's x -
  // max), the argument goes to a chunk buffer instead, and
  // tf_exp_sum_drain_n streams each of the row's old values out just
  // before it writes the exp in its place. [8192, 4096] f32 softmax
  // through torch.ops, warm allocator, alternating rounds, ms, burst /
  // drained: 12.3-12.7 / 10.9-12.5 on one thread, 6.2-6.3 / 5.8-6.5 on
  // two (docs/decisions.md).
  // False, with nothing changed, where the pass has no such sum.
  bool drain_pending(std::vector<StmtPtr>* before, const VarPtr& c1, std::vector<VarPtr>* bufs) const {
    struct Retarget final : Mutator {
      ExprPtr x, prev;
      bool done = false;
      ExprPtr mutate_Call(const Call& n, const ExprPtr& self) override {
        if (n.name() != "tf_exp_sum_n") return Mutator::mutate_Call(n, self);
        done = true;
        return call(n.type(), "tf_exp_sum_drain_n", {n.args()[0], x, n.args()[1], prev});
      }
    };
    for (size_t i = 0; i + 1 < before->size(); ++i) {
      auto* fill = as<For>((*before)[i]);
      auto* store = fill ? as<Store>(fill->body()) : nullptr;
      if (!store || store->base() != pending_ || store->index() != ExprPtr(j_)) continue;
      VarPtr buf = Var::make("td", Type::pointer(DType::kF32));
      Retarget r;
      r.x = buf;
      r.prev = address(env_.slot(s_).data, add(mul(sub(row_, i64(1)), inner_), c0_));
      StmtPtr sum = r.mutate((*before)[i + 1]);
      if (!r.done) continue;
      (*before)[i] = For::make(j_, c0_, sub(c1, c0_), ForKind::kVectorized, Store::make(buf, sub(j_, c0_), store->value()));
      (*before)[i + 1] = sum;
      bufs->push_back(buf);
      return true;
    }
    return false;
  }

  // One pass over the row computing every reduction of `depth` (`last`:
  // the row's last reduction pass, which prefetches the next row). Sums
  // are vectorized reductions in their accumulator type (double for f32,
  // as the evaluator's: float partial sums per chunk drifted past the
  // differential tests' tolerance on chains of centred sums); a max is a
  // vectorized max beside a count of NaN elements (a NaN anywhere makes
  // the result NaN, as the evaluator's).
  StmtPtr reduce_pass(int depth, bool last, const std::vector<std::vector<VarPtr>>& bs, bool caching) {
    std::vector<StmtPtr> updates;
    std::vector<Reduction> reductions;
    for (const ir::Call* c : cached_order_) {
      const auto& [value, reduce] = reduce_values_.at(c);
      if (reduces_[reduce].depth == depth && caching) updates.push_back(Store::make(cache(), j_, value));
    }
    if (depth == 1 && produced_leaf_ != SIZE_MAX) {
      const Leaf& l = leaves_[produced_leaf_];
      const ExprPtr v = cast(l.row->dtype(), produced_value_);
      updates.push_back(produced_scratch_ ? Store::make(produced_scratch_, j_, v) : Store::make(l.row, mul(j_, l.stride), v));
    }
    for (const RowReduce& r : reduces_) {
      ExprPtr shift;
      if (r.depth != depth || shifted_twin(r, &shift)) continue;
      if (r.nans) {
        updates.push_back(Assign::make(r.acc, max(r.acc, r.element)));
        updates.push_back(Assign::make(r.nans, add(r.nans, cast(r.nans->dtype(), ne(r.element, r.element)))));
        reductions.push_back({r.acc, BinaryOp::kMax});
        reductions.push_back({r.nans, BinaryOp::kAdd});
      } else {
        updates.push_back(Assign::make(r.acc, accumulate(r.acc, r.element)));
        reductions.push_back({r.acc, BinaryOp::kAdd});
      }
    }
    VarPtr c1 = Var::make("c1", kIndex);
    std::vector<StmtPtr> before;
    std::vector<VarPtr> bufs;
    StmtPtr body = widen_rows(Seq::make(std::move(updates)), c1, &before, &bufs);
    body = stage_chunk_calls(body, c1, &before, &bufs, &reductions);
    const bool staged = !before.empty() || !bufs.empty();  // calls computed a chunk at a time
    if (!as<Seq>(body) || !as<Seq>(body)->stmts().empty())
      before.push_back(For::make(j_, c0_, sub(c1, c0_), ForKind::kVectorized, body, reductions));
    if (depth == 1 && produced_scratch_)  // the chunk of the produced value, streamed out of the scratch row
      before.push_back(Evaluate::make(extern_call(
          "tf_stream", {address(produced_dst_, c0_), address(produced_scratch_, c0_), sub(c1, c0_)})));
    // Chunks: each chunk's reduction is a dependency chain of its own that
    // the out-of-order core overlaps with the next; on the CPU its partial
    // sums stay in lanes across the chunks (lane_partials.h), so that no
    // chunk ends in a chain of adds across its lanes.
    // The pending row's chunk goes out before this row's values overwrite
    // it (only the last pass writes the scratch row: choose_cached): during
    // the chunk's exps where they are summed there (drain_pending), else
    // before the chunk.
    StmtPtr chunk;
    std::vector<StmtPtr> drained = before;
    if (last && pending_ && drain_pending(&drained, c1, &bufs)) {
      chunk = IfThenElse::make(has_prev_, Seq::make(std::move(drained)), Seq::make(std::move(before)));
    } else {
      if (last && pending_) before.insert(before.begin(), stream_pending(c1));
      chunk = Seq::make(std::move(before));
    }
    if (last) chunk = Seq::make({prefetch_next_row(bs, c1), chunk});
    // On a GPU each chunk's reduction is a block-wide one (a barrier): a
    // pass without calls staged a chunk at a time (whose float sums the
    // chunks bound) is one loop over the row and one reduction.
    if (env_.target != Target::kCpu && !staged) return LetStmt::make(c0_, i64(0), LetStmt::make(c1, inner_, chunk));
    for (auto it = bufs.rbegin(); it != bufs.rend(); ++it) chunk = Allocate::make(*it, i64(kChunk), MemoryScope::kLocal, chunk);
    const StmtPtr chunks = chunk_loop(i64(0), inner_, c1, chunk);
    return env_.target == Target::kCpu ? carry_lane_partials(chunks, ge(inner_, i64(reduce_lanes()))) : chunks;
  }

  // The f16 rows a reduction pass's body reads (and does not write),
  // widened a chunk at a time by F16C into L1 buffers that the body reads
  // instead, as the store pass's are (widened()): a sum of squares over an
  // f16 row in L1 took 0.130 ns per element with the conversion inline
  // (vectorized from c10's scalar form), 0.059 from the buffer. Appends
  // the fills to *before and the buffers to *bufs.
  StmtPtr widen_rows(const StmtPtr& body, const VarPtr& c1, std::vector<StmtPtr>* before, std::vector<VarPtr>* bufs) {
    if (env_.target != Target::kCpu) return body;  // a GPU converts each element where it reads it
    const Writes inside = writes_of(body);
    std::unordered_map<const Var*, VarPtr> wide;
    for (const Leaf& l : leaves_) {
      if (l.row->dtype() != DType::kF16 || l.inner_zero || inside.buffers.count(l.row.get()) ||
          !reads(body, l.row.get()))
        continue;
      VarPtr buf = Var::make("xw" + std::to_string(l.slot), Type::pointer(DType::kF32));
      wide[l.row.get()] = buf;
      bufs->push_back(buf);
      before->push_back(Evaluate::make(
          extern_call("tf_widen_n", {buf, address(l.row, mul(c0_, l.stride)), l.stride, sub(c1, c0_)})));
    }
    return wide.empty() ? body : ReadWidened(wide, sub(j_, c0_)).mutate(body);
  }

  // The f32 exps of a reduction pass's body computed a chunk at a time by
  // the prelude's routine (tf_exp_n: AVX-512, the same bits as tf_exp) into
  // L1 buffers, before the loop that reads them: 0.19 against 0.25 ns per
  // element for the vectorized scalar form (bf16 softmax at 512 x 4096, one
  // thread: 1.68 -> 1.10 ms). An exp the body stores to a row at j (the
  // cached exp of softmax's sum pass) is computed in that row, in place: a
  // buffer beside it cost an f32 softmax a third more time. Only calls
  // whose argument the chunk can compute first: no variable bound in the
  // body, no load of a buffer it stores to. Appends the fills to *before.
  StmtPtr stage_chunk_calls(const StmtPtr& body, const VarPtr& c1, std::vector<StmtPtr>* before,
                            std::vector<VarPtr>* bufs, std::vector<Reduction>* reductions) {
    const Writes inside = writes_of(body);
    auto stageable = [&](const ExprPtr& e) {
      auto* c = as<Call>(e);
      return c && c->name() == "tf_exp" && c->dtype() == DType::kF32 && c->args().size() == 1 &&
             independent_of(c->args()[0], inside.vars, inside.buffers);
    };
    // Where each staged exp lives: (buffer, whether it is a row indexed by
    // j rather than a chunk buffer indexed by j - c0).
    std::map<std::string, std::pair<VarPtr, bool>> staged;
    if (auto* seq = as<Seq>(body))
      for (const StmtPtr& st : seq->stmts())
        if (auto* store = as<Store>(st); store && store->index() == ExprPtr(j_) && stageable(store->value()))
          staged.emplace(tir::to_string(store->value()), std::make_pair(store->base(), true));
    struct Stager final : Mutator {
      std::function<ExprPtr(const ExprPtr&)> at;
      ExprPtr mutate_Call(const Call& n, const ExprPtr& self) override { return at(Mutator::mutate_Call(n, self)); }
    } stager;
    std::map<std::string, size_t> filled;  // key -> the routine's call in *before
    stager.at = [&](const ExprPtr& e) -> ExprPtr {
      if (!stageable(e)) return e;
      const std::string key = tir::to_string(e);
      auto it = staged.find(key);
      if (it == staged.end()) {
        VarPtr buf = Var::make("tx" + std::to_string(bufs->size()), Type::pointer(DType::kF32));
        bufs->push_back(buf);
        it = staged.emplace(key, std::make_pair(buf, false)).first;
      }
      const auto& [buf, row] = it->second;
      const ExprPtr n = sub(c1, c0_), at = row ? ExprPtr(j_) : sub(j_, c0_);
      if (!filled.count(key)) {
        before->push_back(For::make(j_, c0_, n, ForKind::kVectorized, Store::make(buf, at, as<Call>(e)->args()[0])));
        filled[key] = before->size();
        before->push_back(Evaluate::make(extern_call("tf_exp_n", {row ? address(buf, c0_) : ExprPtr(buf), n})));
      }
      return load(buf, at);
    };
    StmtPtr out = stager.mutate(body);
    auto* seq = as<Seq>(out);
    if (!seq) return out;
    std::vector<StmtPtr> kept;
    std::set<std::string> summed;  // keys whose fill became tf_exp_sum_n: a second sum of one adds its loads
    for (const StmtPtr& st : seq->stmts()) {
      // A row's store of its own element (the staged exp, now computed there) goes.
      auto* store = as<Store>(st);
      auto* l = store ? as<Load>(store->value()) : nullptr;
      if (l && l->base() == store->base() && tir::to_string(l->index()) == tir::to_string(store->index())) continue;
      // A sum of a staged exp is the routine's: tf_exp_sum_n computes and
      // sums the chunk in one sweep (its lanes' order, as the vectorized
      // loop's is its own; f32 softmax 512 x 4096: 1.15 -> 1.03 ms). A
      // double accumulator (a user's sum of f32 exps, which the evaluator
      // sums in double) adds the chunk's float sum: exps are never negative,
      // so a float sum of at most kChunk of them cancels nothing and is
      // within kChunk / 32 + 5 ulp of the exact sum, and the double sum
      // across chunks keeps that bound whatever the row's length. Summing
      // each exp in double cost the composed softmax 0.15 ms of 1.3 (512 x
      // 4096 f32, one thread).
      const std::string* key = summed_exp(st, *reductions, staged, filled);
      if (key && summed.insert(*key).second) {
        auto* a = as<Assign>(st);
        const auto& [buf, row] = staged.at(*key);
        const std::vector<ExprPtr> args{row ? address(buf, c0_) : ExprPtr(buf), sub(c1, c0_)};
        const DType acc = a->var()->dtype();
        const ExprPtr chunk_sum = call(Type::scalar(DType::kF32), "tf_exp_sum_n", args);
        (*before)[filled.at(*key)] = Assign::make(a->var(), add(a->var(), cast(acc, chunk_sum)));
        reductions->erase(std::remove_if(reductions->begin(), reductions->end(),
                                         [&](const Reduction& r) { return r.var == a->var(); }),
                          reductions->end());
        continue;
      }
      kept.push_back(st);
    }
    return Seq::make(std::move(kept));
  }

  // For `acc = acc + b[at]` (f32) or `acc = acc + f64(b[at])` (f64), a sum
  // reduction of a staged exp's buffer: that exp's key; null otherwise.
  static const std::string* summed_exp(const StmtPtr& st, const std::vector<Reduction>& reductions,
                                       const std::map<std::string, std::pair<VarPtr, bool>>& staged,
                                       const std::map<std::string, size_t>& filled) {
    auto* a = as<Assign>(st);
    auto* b = a ? as<Binary>(a->value()) : nullptr;
    if (!b || b->op() != BinaryOp::kAdd || b->a() != ExprPtr(a->var())) return nullptr;
    ExprPtr term = b->b();
    if (a->var()->dtype() == DType::kF64) {
      auto* widen = as<Cast>(term);
      if (!widen || widen->value()->dtype() != DType::kF32) return nullptr;
      term = widen->value();
    } else if (a->var()->dtype() != DType::kF32) {
      return nullptr;
    }
    auto* l = as<Load>(term);
    bool reduced = false;
    for (const Reduction& r : reductions) reduced = reduced || (r.var == a->var() && r.op == BinaryOp::kAdd);
    if (!l || !reduced) return nullptr;
    for (const auto& [key, where] : staged)
      if (where.first == l->base() && filled.count(key)) return &key;
    return nullptr;
  }

  // A double sum whose every term is its twin's term plus one finite value
  // c of the row: sum(e) = sum(e - c) + n c, so the pass adds only the
  // twin's terms (the mean of x beside x's moments about its first element:
  // a variance written from means, one_pass_variance.h; one double add per
  // element less in the row's first pass). The sum is reassociated, as the
  // vectorized sum already is; both are double. c must be finite (noted so
  // by the rewrite that chose it): an infinite c makes every twin term
  // infinite or NaN, whatever e's sum is. Null when r has no twin.
  const RowReduce* shifted_twin(const RowReduce& r, ExprPtr* shift) const {
    if (r.nans || r.acc->dtype() != DType::kF64) return nullptr;
    const std::string term = to_string(cast(DType::kF64, r.element));  // as it is added
    std::unordered_set<const Var*> written{y_.get()};
    if (scratch_) written.insert(scratch_.get());
    for (const RowReduce& t : reduces_) {
      if (&t == &r || t.depth != r.depth || t.nans || t.acc->dtype() != DType::kF64) continue;
      const auto* shifted = ir::expr_as<ir::Call>(t.call->args()[0]);  // e - c in HIR
      if (!shifted || !shifted->op() || shifted->op()->name() != "Binary" ||
          static_cast<const ops::Binary&>(*shifted->op()).kind != ops::BinaryKind::kSub ||
          !env_.finite(*shifted->args()[1]))
        continue;
      const ExprPtr added = cast(DType::kF64, t.element);
      const auto* d = as<Binary>(added);
      if (!d || d->op() != BinaryOp::kSub || to_string(d->a()) != term ||
          !independent_of(d->b(), {j_.get(), c0_.get()}, written))
        continue;
      ExprPtr unused;
      if (shifted_twin(t, &unused)) continue;  // the twin's own sum is summed
      *shift = d->b();
      return &t;
    }
    return nullptr;
  }

  // The reduction's value once its pass has run, rounded to its dtype.
  ExprPtr finish(const RowReduce& r) {
    const auto& op = static_cast<const ops::Reduce&>(*r.call->op());
    const DType d = tensor_type(*r.call).dtype(), cd = compute_dtype(d);
    if (r.nans) return select(gt(r.nans, imm(r.nans->dtype(), 0)), imm(cd, std::numeric_limits<double>::quiet_NaN()), r.acc);
    ExprPtr shift;
    const RowReduce* twin = shifted_twin(r, &shift);
    const ExprPtr acc = twin ? add(twin->acc, mul(cast(DType::kF64, inner_), shift)) : ExprPtr(r.acc);
    ExprPtr sum = round_to(d, cast(cd, acc));
    if (op.kind == ops::ReduceKind::kSum) return sum;
    return round_to(d, div(sum, cast(cd, inner_)));
  }

  ExprPtr initial(const RowReduce& r) {
    if (!r.nans) return imm(r.acc->dtype(), 0);
    const auto& op = static_cast<const ops::Reduce&>(*r.call->op());
    if (op.kind == ops::ReduceKind::kAbsMax) return imm(r.acc->dtype(), 0);
    return imm(r.acc->dtype(), -std::numeric_limits<double>::infinity());
  }

  // The passes over one row and its store (value: the stored value;
  // caching: the last pass stores the cached values for it).
  StmtPtr row_passes(const ExprPtr& value, bool caching, const Frame& f, bool stream_only = false) {
    int depth = 0;
    for (const RowReduce& r : reduces_) depth = std::max(depth, r.depth);
    // Innermost first: the store, under every result it reads.
    StmtPtr body = store_loop(y_, i64(0), inner_, value, f.nt, stream_only);
    for (int d = depth; d >= 1; --d) {
      for (auto it = reduces_.rbegin(); it != reduces_.rend(); ++it)
        if (it->depth == d) body = LetStmt::make(it->value, finish(*it), body);
      body = Seq::make({reduce_pass(d, d == depth, f.bs, caching), body});
      for (auto it = reduces_.rbegin(); it != reduces_.rend(); ++it) {
        ExprPtr shift;
        if (it->depth != d || shifted_twin(*it, &shift)) continue;  // no accumulator of its own
        if (it->nans) body = LetStmt::make(it->nans, imm(it->nans->dtype(), 0), body);
        body = LetStmt::make(it->acc, initial(*it), body);
      }
    }
    return body;
  }

  // Where cached values are kept: the output row, or the scratch row.
  const VarPtr& cache() const { return scratch_ ? scratch_ : y_; }

  // Whether a large f32 / f64 row stage whose last reduction pass caches
  // values in the output row (softmax's exps) writes that row once instead:
  // the values go to a scratch row in L1 / L2, the store streams the result
  // out. Cached in the output row, each output line is read for ownership
  // and written twice (0.17 ms of 1.0 per 8 MiB softmax at 32 MiB and
  // more, one thread). Only when the store itself calls nothing costly.
  bool streams_cached_row() const {
    if (env_.target != Target::kCpu) return false;
    const DType d = iter_.dtype();
    return !cached_.empty() && !scratch_ && (d == DType::kF32 || d == DType::kF64) && store_transcendentals_ == 0;
  }

  // Whether a large f32 / f64 row stage that produces a value (residual +
  // RMSNorm's sum) writes it with streaming stores: the first pass keeps
  // the produced row in a scratch row `hb` in L1 / L2 and streams each
  // chunk out of it; later passes read hb. Stored in place, each of its
  // lines is read for ownership: a fifth of residual + RMSNorm's traffic.
  // Through torch.ops, warm allocator, 3 alternating rounds, [8192, 4096]
  // f32, ms, in place / streamed: 28.3-31.0 / 25.5-27.4 on one thread,
  // 14.7-15.1 / 10.8-12.4 on two.
  bool streams_produced() const {
    return produced_leaf_ != SIZE_MAX && cached_.empty() && !scratch_ && can_stream();
  }

  StmtPtr produced_streamed_row(const ExprPtr& value, const Frame& f) {
    const Leaf& l = leaves_[produced_leaf_];
    produced_scratch_ = Var::make("hb", l.row->type());
    produced_dst_ = Var::make("hrow", l.row->type());
    StmtPtr passes = row_passes(value, false, f, /*stream_only=*/true);
    passes = LetStmt::make(produced_dst_, l.row, substitute(passes, VarMap{{l.row.get(), ExprPtr(produced_scratch_)}}));
    passes = Allocate::make(produced_scratch_, i64(kRowScratch), MemoryScope::kLocal, passes);
    produced_scratch_ = produced_dst_ = nullptr;
    return passes;
  }

  // The row's passes with the cached values in the task's scratch row `sb`:
  // the value and the staged calls read sb where they read the output row.
  // The store leaves the result in sb, and the next row of the task
  // streams each chunk out during its last reduction pass, before it
  // overwrites it (the task streams its last row at its end). Streamed by
  // the store pass itself, a row's writes came in one burst after its
  // arithmetic and stalled it. Softmax at [8192, 4096] f32, through
  // torch.ops, 5 alternating rounds, ms, streamed by the store / deferred:
  // 16.7-18.0 / 13.3-14.9 on one thread, 8.23-8.49 / 6.83-7.11 on two. A
  // separate pending row streamed at the end of each chunk was 5-10%
  // faster for the built-in softmax, but the composed one (whose division
  // leaves its result in sb) then paid a copy and ran 13% behind it.
  StmtPtr streamed_row(const ExprPtr& value, const Frame& f) {
    const VarPtr sb = sb_;
    const VarMap to_sb{{y_.get(), ExprPtr(sb)}};
    const std::vector<Staged> staged = staged_;
    for (Staged& st : staged_) {
      st.arg = substitute(st.arg, to_sb);
      for (ExprPtr& x : st.extra) x = substitute(x, to_sb);
    }
    scratch_ = pending_ = sb;
    StmtPtr passes = row_passes(substitute(value, to_sb), true, f, /*stream_only=*/true);
    scratch_ = pending_ = nullptr;
    staged_ = staged;
    return passes;
  }

  StmtPtr row_skeleton(const std::string& what, const ExprPtr& value) {
    const SlotVars& out = env_.slot(s_);
    const Frame f = frame();
    VarPtr row = Var::make("row", kIndex), y = y_;
    const bool deferred = streams_cached_row();
    if (deferred) {
      row_ = row;
      has_prev_ = Var::make("has_prev", Type::scalar(DType::kBool));
      deferred_ = Var::make("deferred", Type::scalar(DType::kBool));
      sb_ = Var::make("sb", Type::pointer(iter_.dtype()));
    }
    Frame in_place = f;  // the values cached in the output row: nt as can_stream() says
    if (!can_stream()) in_place.nt = nullptr;
    StmtPtr body = row_passes(value, !cached_.empty(), in_place);
    if (deferred) body = IfThenElse::make(deferred_, streamed_row(value, f), body);
    if (streams_produced())
      body = IfThenElse::make(land(f.nt, le(inner_, i64(kRowScratch))), produced_streamed_row(value, f), body);
    if (scratch_) {
      // A row of up to kRowScratch floats (32 KiB) stays in L1 / L2.
      const std::vector<Staged> staged = std::exchange(staged_, plain_.staged);
      StmtPtr longer = row_passes(plain_.value, false, f);
      staged_ = staged;
      body = IfThenElse::make(le(inner_, i64(kRowScratch)),
                              Allocate::make(scratch_, i64(kRowScratch), MemoryScope::kLocal, body), longer);
    }
    body = row_body(body, f.fast, row, f.bs, f.base);
    body = LetStmt::make(y, address(out.data, mul(row, inner_)), body, /*no_alias=*/!env_.out_may_alias);
    const ExprPtr min_work = ge(mul(f.outer, inner_), parallel_min(kRowParallelMin));
    if (deferred) return wrap(what, row_tasks(body, row, f, min_work), f);
    return wrap(what, For::make(row, i64(0), f.outer, ForKind::kParallel, body, {}, min_work), f);
  }

  // The rows in tasks of `tr` consecutive rows: kDeferRows where the
  // streamed form runs (the flag `deferred`), each task with its scratch
  // row (streamed_row), streaming its last row out and fencing at its end;
  // one row elsewhere (a few rows still spread over the threads). A task's
  // first row is peeled off (it has no previous row to stream): tested per
  // row, the test let GCC split the row loop, and one copy's max pass was
  // left scalar (softmax 3x slower). The rows after it run only in the
  // streamed form.
  StmtPtr row_tasks(const StmtPtr& body, const VarPtr& row, const Frame& f, const ExprPtr& min_work) {
    const SlotVars& out = env_.slot(s_);
    VarPtr t = Var::make("t", kIndex), lo = Var::make("lo", kIndex), hi = Var::make("hi", kIndex);
    VarPtr tr = Var::make("tr", kIndex);
    const VarPtr sb = sb_, deferred = deferred_;
    const StmtPtr first = substitute(FlagResolver(has_prev_.get(), false).mutate(body), VarMap{{row.get(), ExprPtr(lo)}});
    const StmtPtr rest = FlagResolver(deferred.get(), true).mutate(FlagResolver(has_prev_.get(), true).mutate(body));
    row_ = has_prev_ = deferred_ = sb_ = nullptr;
    StmtPtr rows = Seq::make({first, IfThenElse::make(deferred, For::make(row, add(lo, i64(1)), sub(sub(hi, lo), i64(1)),
                                                                          ForKind::kSerial, rest))});
    StmtPtr last = IfThenElse::make(
        deferred,
        Seq::make({Evaluate::make(extern_call("tf_stream", {address(out.data, mul(sub(hi, i64(1)), inner_)), sb, inner_})),
                   stream_fence()}));
    StmtPtr task = Allocate::make(sb, i64(kRowScratch), MemoryScope::kLocal, Seq::make({rows, last}));
    task = LetStmt::make(lo, mul(t, tr), LetStmt::make(hi, min(f.outer, add(lo, tr)), task));
    StmtPtr tasks = For::make(t, i64(0), div(add(f.outer, sub(tr, i64(1))), tr), ForKind::kParallel, task, {}, min_work);
    tasks = LetStmt::make(tr, select(deferred, i64(kDeferRows), i64(1)), tasks);
    return LetStmt::make(deferred, land(f.nt, le(inner_, i64(kRowScratch))), tasks);
  }

 public:
  // A mean over an empty row is an error (the evaluator's), when there are
  // rows at all. It depends on the shape alone, so the entry checks it
  // before any stage writes: the kernel need not count as one that can fail
  // after writing (whose callers would give it scratch outputs to copy).
  StmtPtr precheck() {
    bool mean = false;
    for (const RowReduce& r : reduces_)
      mean = mean || (static_cast<const ops::Reduce&>(*r.call->op()).kind == ops::ReduceKind::kMean &&
                      env_.checked(*r.call));
    if (!mean) return nullptr;
    const size_t r = rank();
    VarPtr rows = Var::make("rows", kIndex), len = Var::make("len", kIndex);
    ExprPtr rows_v = i64(1);
    for (size_t a = 0; a + 1 < r; ++a) rows_v = mul(rows_v, shape(s_, a));
    StmtPtr fail = IfThenElse::make(land(gt(rows, i64(0)), eq(len, i64(0))), Return::make(i32(kErrEmptyMean)));
    return Seq::make({Comment::make("precheck: mean over an empty row -> slot " + std::to_string(s_)),
                      LetStmt::make(rows, rows_v, LetStmt::make(len, shape(s_, r - 1), fail))});
  }

  const StageEnv& env_;
  size_t s_;
  const ir::TensorType& iter_;
  VarPtr j_, c0_, inner_;
  std::vector<Leaf> leaves_;
  IndexMap map_;  // where the value being lowered lies, over the stage's index
  std::vector<ConcatRead> concats_;
  std::vector<Piece> pieces_;  // empty without concats
  std::vector<Staged> staged_;
  std::vector<RowReduce> reduces_;
  bool staging_ = true;  // the value being lowered may use chunk buffers
  int depth_ = 0;        // the deepest reduction read by the value being lowered
  int store_transcendentals_ = 0, reduce_transcendentals_ = 0;  // exp-like calls per element
  bool may_fail_ = false;
  VarPtr y_;  // the output row
  int lowering_reduce_ = -1;  // the reduction whose operand is being lowered
  // Values lowered inside a reduction's operand: node -> (value, reduction).
  std::unordered_map<const ir::Call*, std::pair<ExprPtr, int>> reduce_values_;
  std::unordered_set<const ir::Call*> cached_;  // read back from the output row (or scratch_)
  VarPtr scratch_;  // f16 / bf16 rows: the float row cached values are kept in
  struct Plain {
    ExprPtr value;
    std::vector<Staged> staged;
  } plain_;  // with scratch_: the stored value lowered without cached values
  std::vector<const ir::Call*> cached_order_;   // the same, in the order found (printed order)
  std::vector<const ir::Call*> recorded_;       // reduce_values_'s keys, in the order added
  bool inline_produced_ = false;  // lowering a reduction's element: the produced value inline
  ExprPtr produced_value_;
  VarPtr produced_scratch_, produced_dst_;  // the produced row's scratch row and its own row (streamed form)
  size_t produced_leaf_ = SIZE_MAX;
  // The deferred store of a streamed cached row (streamed_row): the row
  // whose chunks the last reduction pass streams out (set while lowering
  // that form only), the task's scratch row, the row index, the flag "this
  // row has a previous row in its task" and the flag choosing that form.
  VarPtr pending_, sb_, row_, has_prev_, deferred_;
};

}  // namespace

bool is_view(const ir::Op& op) {
  const std::string_view n = op.name();
  return n == "Slice" || n == "Transpose" || n == "Reshape" || n == "Concat";
}

StmtPtr stream_fence() { return Evaluate::make(extern_call("tf_stream_fence", {})); }

StmtPtr stream_lines(const VarPtr& y, const ExprPtr& lo, const ExprPtr& n, const VarPtr& j, const ExprPtr& value) {
  const DType dt = y->dtype();
  const ExprPtr per_line = i64(64 / ir::dtype_bytes(dt));
  // lh elements up to y's first line boundary, then nl whole lines.
  const VarPtr h = Var::make("lh", kIndex), nl = Var::make("nl", kIndex);
  const ExprPtr body_lo = add(lo, h), body_hi = add(body_lo, mul(nl, per_line));
  // The two edges, [lo, body_lo) and [body_hi, lo + n), in one loop, run
  // only where they hold anything (a row of whole lines has none: the
  // composed RoPE's half rows of 64 values paid for two empty loops).
  const VarPtr s = Var::make("s", kIndex), e0 = Var::make("e0", kIndex), e1 = Var::make("e1", kIndex);
  const StmtPtr edge_loop = For::make(
      s, i64(0), i64(2), ForKind::kSerial,
      LetStmt::make(e0, select(eq(s, i64(0)), lo, body_hi),
                    LetStmt::make(e1, select(eq(s, i64(0)), body_lo, add(lo, n)),
                                  For::make(j, e0, sub(e1, e0), ForKind::kVectorized, Store::make(y, j, cast(dt, value))))));
  const StmtPtr edges = IfThenElse::make(lt(mul(nl, per_line), n), edge_loop);
  const VarPtr l = Var::make("l", kIndex), b0 = Var::make("b0", kIndex);
  const VarPtr line = Var::make("line", Type::pointer(dt));
  const StmtPtr fill = For::make(j, b0, per_line, ForKind::kVectorized, Store::make(line, sub(j, b0), cast(dt, value)));
  const StmtPtr lines = For::make(
      l, i64(0), nl, ForKind::kSerial,
      LetStmt::make(b0, add(body_lo, mul(l, per_line)),
                    Allocate::make(line, per_line, MemoryScope::kLocal,
                                   Seq::make({fill, Evaluate::make(extern_call("tf_stream_line", {address(y, b0), line}))}))));
  const ExprPtr head = Call::make(kIndex, "tf_line_head", {address(y, lo), n}, Call::kExtern);
  return LetStmt::make(h, head, LetStmt::make(nl, div(sub(n, h), per_line), Seq::make({edges, lines})));
}

// The prelude's functions of the cache size (i64 results).
ExprPtr stream_min_bytes() { return Call::make(kIndex, "tf_stream_min_bytes", {}, Call::kExtern); }
ExprPtr prefetch_min_bytes() { return Call::make(kIndex, "tf_prefetch_min_bytes", {}, Call::kExtern); }
ExprPtr prefetch_streams() { return Call::make(Type::scalar(DType::kBool), "tf_prefetch_streams", {}, Call::kExtern); }
ExprPtr team_size() { return Call::make(kIndex, "tf_threads", {}, Call::kExtern); }

StmtPtr prefetch_lines(const VarPtr& row, const ExprPtr& offset, const ExprPtr& lo, const ExprPtr& n) {
  const int64_t step = std::max<int64_t>(1, 64 / ir::dtype_bytes(row->dtype()));
  VarPtr p = Var::make("p", kIndex);
  ExprPtr at = add(offset, add(lo, mul(p, i64(step))));
  return For::make(p, i64(0), div(add(n, i64(step - 1)), i64(step)), ForKind::kSerial,
                   Evaluate::make(extern_call("__builtin_prefetch", {address(row, at), i32(0), i32(2)})));
}

bool is_row_reduce(const ir::Call& c) {
  if (!c.op() || c.op()->name() != "Reduce") return false;
  auto* r = static_cast<const ops::Reduce*>(c.op().get());
  if (!r->keepdim || r->axes.size() != 1) return false;
  const ir::TensorType& x = tensor_type(*c.args()[0]);
  const int64_t rank = static_cast<int64_t>(x.rank());
  if (rank == 0 || (r->axes[0] != -1 && r->axes[0] != rank - 1)) return false;
  return ir::is_float(x.dtype()) && !is_fp8(x.dtype());
}

StmtPtr lower_stage(const StageEnv& env, size_t s, const ir::ExprPtr& e, const std::string& what, bool root_inline,
                    bool* may_fail, StmtPtr* precheck) {
  Stage stage(env, s);
  StmtPtr body = stage.lower(e, what, root_inline, may_fail);
  *precheck = stage.precheck();
  return body;
}

}  // namespace tf::compiler
