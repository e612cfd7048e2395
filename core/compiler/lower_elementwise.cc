#include "core/compiler/lower_elementwise.h"

#include <algorithm>
#include <unordered_map>

#include "core/compiler/emit_util.h"
#include "core/compiler/scalar_lowering.h"
#include "core/ir/error.h"
#include "core/tir/functor.h"
#include "core/tir/op.h"
#include "core/tir/transform.h"

namespace tf::compiler {

using ir::DType;
using namespace tir;

namespace {

const Type kIndex = Type::scalar(DType::kI64);

// A materialized value read by the stage.
struct Leaf {
  size_t slot;
  VarPtr row;     // the leaf's elements of the current row (a pointer)
  VarPtr stride;  // its stride along the row, in elements
  bool inner_zero;  // broadcast along the row (same element for every j)
};

// A call computed a chunk at a time: fn over the buffer `buf` filled with arg.
struct Staged {
  std::string fn;
  ExprPtr arg;
  VarPtr buf;
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

// Whether e loads through `base`.
bool reads(const ExprPtr& e, const Var* base) {
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

class ElementwiseStage {
 public:
  ElementwiseStage(const StageEnv& env, size_t s) : env_(env), s_(s), iter_(*env.slot(s).type) {}

  StmtPtr lower(const ir::ExprPtr& e, const std::string& what, bool root_inline, bool* may_fail) {
    j_ = Var::make("j", kIndex);
    c0_ = Var::make("c0", kIndex);
    ExprPtr value = root(expr(e, root_inline));
    if (may_fail_) *may_fail = true;
    return skeleton(what, value);
  }

 private:
  size_t rank() const { return iter_.rank(); }
  ExprPtr shape(size_t slot, size_t a) { return load(env_.slot(slot).shape, i64(static_cast<int64_t>(a))); }
  ExprPtr stride(size_t slot, size_t a) { return load(env_.slot(slot).strides, i64(static_cast<int64_t>(a))); }

  ExprPtr leaf(size_t k) {
    auto it = std::find_if(leaves_.begin(), leaves_.end(), [&](const Leaf& l) { return l.slot == k; });
    if (it == leaves_.end()) {
      const ir::TensorType& t = *env_.slot(k).type;
      const bool inner_zero = t.rank() == 0 || (rank() > 0 && is_static_one(t.shape().back()) &&
                                                 !is_static_one(iter_.shape().back()));
      const std::string n = std::to_string(k);
      leaves_.push_back(Leaf{k, Var::make("x" + n, Type::pointer(t.dtype())), Var::make("is" + n, kIndex), inner_zero});
      it = leaves_.end() - 1;
    }
    return cast(compute_dtype(it->row->dtype()), load(it->row, mul(j_, it->stride)));
  }

  ExprPtr constant(const ir::Constant& k) {
    const DType d = k.dtype();
    if (!ir::is_float(d)) return imm(d, static_cast<double>(k.int_value()));
    return round_to(d, imm(compute_dtype(d) == DType::kF64 ? DType::kF64 : DType::kF32, k.value()));
  }

  ExprPtr expr(const ir::ExprPtr& e, bool root_inline = false) {
    if (!root_inline) {
      const long k = env_.slot_of(e.get());
      if (k >= 0) return leaf(static_cast<size_t>(k));
    }
    if (auto* k = ir::expr_as<ir::Constant>(e)) return constant(*k);
    auto* c = ir::expr_as<ir::Call>(e);
    TF_CHECK(c && c->op(), "lowering: an unplanned non-call value");
    const ScalarLowering* l = find_scalar_lowering(c->op()->name());
    TF_CHECK(l, "lowering: op " + std::string(c->op()->name()) + " has no scalar form");
    ScalarArgs a{*c, {}, tensor_type(*c).dtype(), env_.err, nullptr};
    for (const ir::ExprPtr& x : c->args()) a.args.push_back(expr(x));
    a.stage = [this](const std::string& fn, const ExprPtr& arg) { return stage(fn, arg); };
    transcendentals_ += l->transcendental(*c->op());
    may_fail_ = may_fail_ || l->may_fail(*c);
    ExprPtr v = l->lower(a);
    // An f16 result's rounding (tf_rf16, 11 vector operations per 16
    // values) as F16C's round trip over the chunk (2).
    if (a.out == DType::kF16) return stage("tf_rf16_n", v);
    return round_to(a.out, v);
  }

  ExprPtr stage(const std::string& fn, const ExprPtr& arg) {
    staged_.push_back(Staged{fn, arg, Var::make("tb" + std::to_string(staged_.size()), Type::pointer(DType::kF32))});
    return load(staged_.back().buf, sub(j_, c0_));
  }

  // The stored value: the store rounds to the output type itself, so a
  // rounding at the root (staged or not) is dropped; rounding twice gives
  // the same bits.
  ExprPtr root(ExprPtr v) {
    if (!staged_.empty() && staged_.back().fn == "tf_rf16_n") {
      auto* l = as<Load>(v);
      if (l && l->base() == staged_.back().buf) {
        v = staged_.back().arg;
        staged_.pop_back();
      }
    }
    const DType dt = iter_.dtype();
    if (auto* c = as<Call>(v); c && ((dt == DType::kF16 && c->name() == "tf_rf16") ||
                                     (dt == DType::kBF16 && c->name() == "tf_rbf16")))
      return c->args()[0];
    return v;
  }

  // Streaming needs 4- or 8-byte values and memory-bound work: fewer than
  // one exp-like call per two tensors the stage moves. Staging an inline
  // exp-like call's loop through L1 costs a compute-bound loop more than the
  // saved line reads; calls computed a chunk at a time are in L1 already.
  bool can_stream() const {
    const DType d = iter_.dtype();
    const int tensors = static_cast<int>(leaves_.size()) + 1;
    const int inline_calls = transcendentals_ - static_cast<int>(staged_.size());
    return !is_half(d) && (ir::dtype_bits(d) == 32 || ir::dtype_bits(d) == 64) && 2 * inline_calls < tensors;
  }

  // f16 leaves that vary along the row and are read by the value or a
  // staged call's argument: widened a chunk at a time by F16C (the scalar
  // conversion vectorizes into ~13 operations per 16 values, against one).
  std::vector<const Leaf*> widened(const ExprPtr& value) const {
    std::vector<const Leaf*> wide;
    for (const Leaf& l : leaves_) {
      if (l.row->dtype() != DType::kF16 || l.inner_zero) continue;
      bool read = reads(value, l.row.get());
      for (const Staged& s : staged_) read = read || reads(s.arg, l.row.get());
      if (read) wide.push_back(&l);
    }
    return wide;
  }

  // for (j in [lo, hi)) y[j] = value, in chunks of kChunk through L1 when
  // the value needs any (see the header); streamed when `nt` holds.
  StmtPtr store_loop(const VarPtr& y, const ExprPtr& lo, const ExprPtr& hi, const ExprPtr& value, const VarPtr& nt) {
    const DType dt = iter_.dtype();
    const bool half = is_half(dt);
    const std::vector<const Leaf*> wide = widened(value);
    auto chunks = [&](bool streamed) {
      VarPtr c = Var::make("c", kIndex), c1 = Var::make("c1", kIndex);
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
      for (const Staged& s : staged_) {
        body.push_back(For::make(j_, c0_, n, ForKind::kVectorized, Store::make(s.buf, sub(j_, c0_), rw.mutate(s.arg))));
        body.push_back(Evaluate::make(extern_call(s.fn, {s.buf, n})));
      }
      const ExprPtr v = rw.mutate(value);
      if (streamed || half) {
        VarPtr buf = Var::make("buf", Type::pointer(compute_dtype(dt)));
        StmtPtr fill = For::make(j_, c0_, n, ForKind::kVectorized, Store::make(buf, sub(j_, c0_), v));
        StmtPtr flush = Evaluate::make(streamed ? extern_call("tf_stream", {address(y, c0_), buf, n})
                                                : extern_call("tf_narrow_n", {address(y, c0_), i64(1), buf, n}));
        body.push_back(Allocate::make(buf, i64(kChunk), MemoryScope::kLocal, Seq::make({fill, flush})));
      } else {
        body.push_back(For::make(j_, c0_, n, ForKind::kVectorized, Store::make(y, j_, cast(dt, v))));
      }
      StmtPtr chunk = Seq::make(std::move(body));
      for (auto it = staged_.rbegin(); it != staged_.rend(); ++it)
        chunk = Allocate::make(it->buf, i64(kChunk), MemoryScope::kLocal, chunk);
      for (auto it = wide_fill.rbegin(); it != wide_fill.rend(); ++it)
        chunk = Allocate::make(it->first, i64(kChunk), MemoryScope::kLocal, chunk);
      chunk = LetStmt::make(c0_, add(lo, mul(c, i64(kChunk))), LetStmt::make(c1, min(add(c0_, i64(kChunk)), hi), chunk));
      const ExprPtr count = div(add(sub(hi, lo), i64(kChunk - 1)), i64(kChunk));
      StmtPtr loop = For::make(c, i64(0), count, ForKind::kSerial, chunk);
      if (streamed) loop = Seq::make({loop, Evaluate::make(extern_call("tf_stream_fence", {}))});
      return loop;
    };
    StmtPtr plain;
    if (half || !wide.empty() || !staged_.empty()) plain = chunks(false);
    else plain = For::make(j_, lo, sub(hi, lo), ForKind::kVectorized, Store::make(y, j_, cast(dt, value)));
    if (!nt) return plain;
    return IfThenElse::make(nt, chunks(true), plain);
  }

  StmtPtr skeleton(const std::string& what, const ExprPtr& value) {
    const size_t r = rank();
    const SlotVars& out = env_.slot(s_);
    VarPtr outer = Var::make("outer", kIndex), inner = Var::make("inner", kIndex);
    ExprPtr outer_v = i64(1);
    for (size_t a = 0; a + 1 < r; ++a) outer_v = mul(outer_v, shape(s_, a));
    // Broadcast strides of every leaf against the iteration shape.
    std::vector<std::vector<VarPtr>> bs(leaves_.size());
    std::vector<std::pair<VarPtr, ExprPtr>> lets;
    for (size_t li = 0; li < leaves_.size(); ++li) {
      const size_t k = leaves_[li].slot, rl = env_.slot(k).type->rank();
      for (size_t a = 0; a < r; ++a) {
        bs[li].push_back(Var::make("bs" + std::to_string(k) + "_" + std::to_string(a), kIndex));
        ExprPtr v = i64(0);
        if (a + rl >= r) {
          const size_t la = a + rl - r;
          v = select(eq(shape(k, la), i64(1)), i64(0), stride(k, la));
        }
        lets.emplace_back(bs[li][a], v);
      }
    }
    ExprPtr fast = boolean(true);
    for (size_t li = 0; li < leaves_.size(); ++li)
      if (!leaves_[li].inner_zero && r > 0)
        fast = land(fast, lor(eq(bs[li][r - 1], i64(1)), eq(inner, i64(1))));
    VarPtr fast_v = Var::make("fast", Type::scalar(DType::kBool));
    VarPtr nt;
    if (can_stream()) nt = Var::make("nt", Type::scalar(DType::kBool));
    VarPtr nb = Var::make("nb", kIndex), t = Var::make("t", kIndex), row = Var::make("row", kIndex);
    VarPtr j0 = Var::make("j0", kIndex), j1 = Var::make("j1", kIndex), y = Var::make("y", out.data->type());

    // The row's loop over its block, in both stride cases.
    StmtPtr loop = store_loop(y, j0, j1, value, nt);
    VarMap unit;
    for (const Leaf& l : leaves_) unit[l.stride.get()] = i64(l.inner_zero || r == 0 ? 0 : 1);
    StmtPtr general = loop;
    for (size_t li = leaves_.size(); li-- > 0;)
      general = LetStmt::make(leaves_[li].stride, r ? ExprPtr(bs[li][r - 1]) : i64(0), general);
    StmtPtr body = IfThenElse::make(fast_v, tir::substitute(loop, unit), general);
    body = LetStmt::make(y, address(out.data, mul(row, inner)), body, /*no_alias=*/true);
    // Each leaf's row: the row index decomposed over the outer axes.
    std::vector<ExprPtr> off(leaves_.size(), i64(0));
    std::vector<std::pair<VarPtr, ExprPtr>> row_lets;
    ExprPtr rem = row;
    for (size_t a = r >= 2 ? r - 1 : 0; a-- > 0;) {
      VarPtr i = Var::make("i" + std::to_string(a), kIndex);
      row_lets.emplace_back(i, a == 0 ? rem : mod(rem, shape(s_, a)));
      for (size_t li = 0; li < leaves_.size(); ++li) off[li] = add(off[li], mul(i, bs[li][a]));
      rem = div(rem, shape(s_, a));
    }
    for (size_t li = leaves_.size(); li-- > 0;)
      body = LetStmt::make(leaves_[li].row, address(env_.slot(leaves_[li].slot).data, off[li]), body, true);
    for (auto it = row_lets.rbegin(); it != row_lets.rend(); ++it) body = LetStmt::make(it->first, it->second, body);
    body = LetStmt::make(row, div(t, nb), LetStmt::make(j0, mul(mod(t, nb), i64(kBlock)),
                                                        LetStmt::make(j1, min(inner, add(j0, i64(kBlock))), body)));
    StmtPtr par = For::make(t, i64(0), mul(outer, nb), ForKind::kParallel, body, {},
                            ge(mul(outer, inner), i64(kElementwiseParallelMin)));
    StmtPtr stage = LetStmt::make(nb, call(kIndex, "tf_blocks", {inner}), par);
    if (nt) {
      const int64_t bytes = ir::dtype_bytes(iter_.dtype());
      stage = LetStmt::make(nt, ge(mul(mul(outer, inner), i64(bytes)), i64(kStreamMinBytes)), stage);
    }
    stage = LetStmt::make(fast_v, fast, stage);
    for (auto it = lets.rbegin(); it != lets.rend(); ++it) stage = LetStmt::make(it->first, it->second, stage);
    stage = IfThenElse::make(gt(mul(outer, inner), i64(0)), stage);
    stage = LetStmt::make(outer, outer_v, LetStmt::make(inner, r ? shape(s_, r - 1) : i64(1), stage));
    return Seq::make({Comment::make("stage: " + what + " -> slot " + std::to_string(s_)), stage});
  }

  const StageEnv& env_;
  size_t s_;
  const ir::TensorType& iter_;
  VarPtr j_, c0_;
  std::vector<Leaf> leaves_;
  std::vector<Staged> staged_;
  int transcendentals_ = 0;
  bool may_fail_ = false;
};

}  // namespace

StmtPtr lower_elementwise_stage(const StageEnv& env, size_t s, const ir::ExprPtr& e, const std::string& what,
                                bool root_inline, bool* may_fail) {
  return ElementwiseStage(env, s).lower(e, what, root_inline, may_fail);
}

}  // namespace tf::compiler
