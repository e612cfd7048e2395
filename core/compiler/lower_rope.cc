// Rotate-half RoPE: one task per (b, s) row computes both q_rot and k_rot
// (core/eval's rope_one: v * cos + rot * sin in the compute type, rounded
// once). Positions are checked first, serially and in (b, s) order, so an
// out-of-range one is reported as the evaluator reports it (kErrRopePosition,
// the value and the caches' length in rt->info). When the positions are a
// parameter the check is a precheck: it runs before any stage writes, so the
// kernel need not count as one that fails after writing (its callers may
// then write in place).
#include <functional>

#include "core/compiler/codegen.h"
#include "core/compiler/lower_stages.h"
#include "core/compiler/scalar_lowering.h"

namespace tf::compiler {

using ir::DType;
using namespace tir;

namespace {

// The operands, named.
struct Rope {
  const SlotVars &q, &k, &cos, &sin, &pos;
  ExprPtr batch() const { return extent(q, 0); }
  ExprPtr seq() const { return extent(q, 1); }
  ExprPtr position(const ExprPtr& b, const ExprPtr& s) const {
    return cast(DType::kI64, load(pos.data, add(mul(b, stride(pos, 0)), mul(s, stride(pos, 1)))));
  }
};

// Walks the positions in (b, s) order; at the first one outside [0, P),
// rt->info = {value, P} and `fail` runs, then `ok` is false. The loop has no
// early exit (TIR loops have none): later positions are read, not checked.
StmtPtr check_positions(const EntryVars& e, const Rope& op, const VarPtr& ok, const StmtPtr& fail) {
  Lets frame;
  const VarPtr bn = frame.bind("Bn", op.batch()), sn = frame.bind("Sn", op.seq());
  const VarPtr pn = frame.bind("Pn", extent(op.cos, 0));
  const VarPtr t = Var::make("t", kIndex);
  Lets at;
  const VarPtr p = at.bind("p", op.position(div(t, sn), mod(t, sn)));
  const StmtPtr bad = Seq::make({store_info(e, {p, pn}), fail, Assign::make(ok, boolean(false))});
  const StmtPtr check = IfThenElse::make(ok, at.wrap(IfThenElse::make(lor(lt(p, i64(0)), ge(p, pn)), bad)));
  return frame.wrap(For::make(t, i64(0), mul(bn, sn), ForKind::kSerial, check));
}

// Whether one output of rope streams its rows past the cache, a line at a
// time as they are computed (stream_lines): an f32 / f64 output of a
// rope that moves stream_min_bytes() or more (`moved`) on the CPU. A plain
// store reads each output line in before writing it, a third of the
// stage's traffic. A task writes every head of one (b, s), so its rows
// are one contiguous block and it fences once. Null where it never streams.
// Measured through torch.ops, warm allocator, 3 alternating rounds, ms,
// plain / streamed: [4, 2048, 32, 128] f32 36.4-38.3 / 30.4-32.5 on one
// thread, 18.2-19.3 / 15.2-16.0 on two; [4, 512, 32, 128] the same within
// its spread (4.45-4.62 / 4.52-4.58, 2.21-2.34 / 2.21-2.31).
ExprPtr streams(const EntryVars& e, const SlotVars& y, const ExprPtr& moved) {
  const DType t = y.type->dtype();
  if (e.target != Target::kCpu || (t != DType::kF32 && t != DType::kF64)) return nullptr;
  return ge(moved, stream_min_bytes());
}

// Whether rope moves enough to prefetch its inputs (prefetch_min_bytes(),
// as an elementwise stage: q and k read, both outputs written), and x's
// rows (b, s, h) are consecutive, so that kPrefetchAhead bytes past a head's
// row lies a row a later task reads. Measured through torch.ops, warm
// allocator, [4, 2048, 32, 128] f32 (512 MiB moved), 5 alternating rounds,
// ms, without / with: 24.6-30.6 / 20.6-24.1 on one thread, 11.0-16.6 /
// 9.6-11.5 on two; [4, 512, 32, 128] (no prefetch) the same.
ExprPtr prefetches(const SlotVars& x, const ExprPtr& moved, const ExprPtr& dim) {
  const ExprPtr rows = land(eq(stride(x, 3), i64(1)), eq(stride(x, 2), dim));
  return land(ge(moved, prefetch_min_bytes()), land(rows, eq(stride(x, 1), mul(extent(x, 2), dim))));
}

// One of q / k rotated into y, for row (b, s) at position rows cr / sr;
// streamed a line at a time when `stream` holds (null: never), its
// input prefetched ahead there when `pf` holds.
StmtPtr rotate(const SlotVars& x, const SlotVars& y, const ExprPtr& b, const ExprPtr& s, const ExprPtr& sn,
               const ExprPtr& dim, const ExprPtr& half, const VarPtr& cr, const VarPtr& sr, const VarPtr& fast,
               const SlotVars& cos, const SlotVars& sin, const VarPtr& stream, const VarPtr& pf) {
  const DType t = x.type->dtype(), c = compute_dtype(t);
  const VarPtr h = Var::make("h", kIndex), j = Var::make("j", kIndex);
  Lets head;
  const VarPtr xr = head.bind_pointer(
      "xr", address(x.data, add(add(mul(b, stride(x, 0)), mul(s, stride(x, 1))), mul(h, stride(x, 2)))), true);
  const VarPtr yr =
      head.bind_pointer("yr", address(y.data, mul(add(mul(add(mul(b, sn), s), extent(x, 2)), h), dim)), true);
  // The row's two halves, stored by `store` (to, lo, n, value of j).
  using StoreFn = std::function<StmtPtr(const ExprPtr&, const ExprPtr&, const ExprPtr&)>;
  auto body = [&](const StoreFn& store, const ExprPtr& xs, const ExprPtr& cs, const ExprPtr& ss) {
    auto X = [&](const ExprPtr& i) { return cast(c, load(xr, mul(i, xs))); };
    const ExprPtr cj = cast(c, load(cr, mul(j, cs))), sj = cast(c, load(sr, mul(j, ss)));
    return Seq::make({store(i64(0), half, cast(t, add(mul(X(j), cj), mul(neg(X(add(j, half))), sj)))),
                      store(half, sub(dim, half), cast(t, add(mul(X(j), cj), mul(X(sub(j, half)), sj))))});
  };
  auto rows = [&](const StoreFn& store) {
    return IfThenElse::make(fast, body(store, i64(1), i64(1), i64(1)),
                            body(store, stride(x, 3), stride(cos, 1), stride(sin, 1)));
  };
  const StoreFn plain_store = [&](const ExprPtr& lo, const ExprPtr& n, const ExprPtr& v) {
    return For::make(j, lo, n, ForKind::kVectorized, Store::make(yr, j, v));
  };
  const StmtPtr plain = For::make(h, i64(0), extent(x, 2), ForKind::kSerial, head.wrap(rows(plain_store)));
  if (!stream) return plain;
  // Each line streamed as it is computed (stream_lines).
  const StoreFn streamed_store = [&](const ExprPtr& lo, const ExprPtr& n, const ExprPtr& v) {
    return stream_lines(yr, lo, n, j, v);
  };
  const StmtPtr prefetch = IfThenElse::make(pf, prefetch_lines(xr, i64(kPrefetchAhead / ir::dtype_bytes(t)), i64(0), dim));
  const StmtPtr streamed =
      Seq::make({For::make(h, i64(0), extent(x, 2), ForKind::kSerial, head.wrap(Seq::make({prefetch, rows(streamed_store)}))),
                 stream_fence()});
  return IfThenElse::make(stream, streamed, plain);
}

}  // namespace

LoweredStage lower_rope(const EntryVars& e, const std::array<size_t, 5>& in, const std::array<size_t, 2>& out) {
  const Rope op{e.slot(in[0]), e.slot(in[1]), e.slot(in[2]), e.slot(in[3]), e.slot(in[4])};
  const SlotVars &q = op.q, &k = op.k;
  LoweredStage lowered;
  const bool hoist = e.is_input(in[4]);
  const VarPtr ok = Var::make("ok", Type::scalar(DType::kBool), true);
  if (hoist) {
    const StmtPtr walk = check_positions(e, op, ok, Seq::make({}));
    lowered.precheck = Seq::make({Comment::make("precheck: rope positions"),
                                  LetStmt::make(ok, boolean(true),
                                                Seq::make({walk, IfThenElse::make(lnot(ok), Return::make(i32(kErrRopePosition)))}))});
  }
  Lets frame;
  const VarPtr bn = frame.bind("Bn", op.batch()), sn = frame.bind("Sn", op.seq());
  const VarPtr dim = frame.bind("D", extent(q, 3)), half = frame.bind("half", div(dim, i64(2)));
  const VarPtr fast = frame.bind("fast", land(land(eq(stride(op.cos, 1), i64(1)), eq(stride(op.sin, 1), i64(1))),
                                              land(eq(stride(q, 3), i64(1)), eq(stride(k, 3), i64(1)))));
  const VarPtr t = Var::make("t", kIndex);
  Lets row;
  const VarPtr b = row.bind("b", div(t, sn)), s = row.bind("s", mod(t, sn));
  const VarPtr p = row.bind("p", op.position(b, s));
  const VarPtr cr = row.bind_pointer("cr", address(op.cos.data, mul(p, stride(op.cos, 0))), true);
  const VarPtr sr = row.bind_pointer("sr", address(op.sin.data, mul(p, stride(op.sin, 0))), true);
  // Bytes moved: q and k read, both outputs written.
  const ExprPtr moved = mul(mul(mul(bn, sn), mul(add(extent(q, 2), extent(k, 2)), dim)),
                            i64(ir::dtype_bytes(q.type->dtype()) + ir::dtype_bytes(e.slot(out[0]).type->dtype())));
  const ExprPtr stream_q = streams(e, e.slot(out[0]), moved);
  const ExprPtr stream_k = streams(e, e.slot(out[1]), moved);
  const VarPtr sq = stream_q ? frame.bind("nt_q", stream_q) : nullptr;
  const VarPtr sk = stream_k ? frame.bind("nt_k", stream_k) : nullptr;
  const VarPtr pq = stream_q ? frame.bind("pf_q", prefetches(q, moved, dim)) : nullptr;
  const VarPtr pk = stream_k ? frame.bind("pf_k", prefetches(k, moved, dim)) : nullptr;
  const StmtPtr both = Seq::make({rotate(q, e.slot(out[0]), b, s, sn, dim, half, cr, sr, fast, op.cos, op.sin, sq, pq),
                                  rotate(k, e.slot(out[1]), b, s, sn, dim, half, cr, sr, fast, op.cos, op.sin, sk, pk)});
  // Nothing is written when a position failed its check (in this stage).
  const ExprPtr go = hoist ? boolean(true) : ExprPtr(ok);
  const ExprPtr rows = select(go, mul(bn, sn), i64(0));
  const ExprPtr work = land(go, ge(mul(mul(mul(bn, sn), add(extent(q, 2), extent(k, 2))), dim), i64(kRowParallelMin)));
  StmtPtr stage = frame.wrap(For::make(t, i64(0), rows, ForKind::kParallel, row.wrap(both), {}, work));
  if (!hoist) {
    stage = LetStmt::make(
        ok, boolean(true),
        Seq::make({check_positions(e, op, ok, Evaluate::make(extern_call("tf_fail", {e.err, i32(kErrRopePosition)}))),
                   stage}));
    lowered.may_fail = true;
  }
  lowered.stage = Seq::make({Comment::make("stage: rope -> slots " + std::to_string(out[0]) + ", " +
                                           std::to_string(out[1])),
                             stage});
  return lowered;
}

}  // namespace tf::compiler
