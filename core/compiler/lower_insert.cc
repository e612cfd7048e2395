// InsertSlice / CacheUpdate / CacheScatter: the checks first, in the
// evaluator's order (a failure records its code and details and nothing is
// written), then dst is copied into the result unless they share a buffer (an
// in-place carry, a dst computed straight into the result's slot: codegen's
// plan_insert, or an in-place parameter whose buffer is the result's), then
// the window is written. Both copies are the prelude's tf_copy_nd (parallel
// above its own threshold).
//
// When the checks read only parameters, literals and shapes they are a
// precheck: the entry runs them before any stage writes, so the kernel does
// not count as one that fails after writing, and its callers may hand it the
// caller's buffers to write in place.
#include "core/compiler/codegen.h"
#include "core/compiler/emit_util.h"
#include "core/compiler/lower_stages.h"

namespace tf::compiler {

using ir::DType;
using namespace tir;

namespace {

// y = dst unless the result is dst's buffer.
StmtPtr copy_dst(const SlotVars& y, const SlotVars& d) {
  const Type T = Type::scalar(y.type->dtype());
  const ExprPtr r = i32(static_cast<int64_t>(y.type->rank()));
  return IfThenElse::make(
      ne(y.data, d.data),
      Evaluate::make(extern_call("tf_copy_nd", {y.data, y.strides, d.data, d.strides, d.shape, r}, {T})));
}

// y's window at `offset` (elements) = update, whose extents are `window` (an
// i64 pointer).
StmtPtr copy_window(const SlotVars& y, const SlotVars& u, const ExprPtr& offset, const ExprPtr& window) {
  const Type T = Type::scalar(y.type->dtype());
  const ExprPtr r = i32(static_cast<int64_t>(y.type->rank()));
  return Evaluate::make(extern_call("tf_copy_nd", {address(y.data, offset), y.strides, u.data, u.strides, window, r}, {T}));
}

StmtPtr write(const EntryVars& e, size_t out, size_t dst, size_t update, const ExprPtr& offset, const ExprPtr& window) {
  const SlotVars &y = e.slot(out), &u = e.slot(update);
  std::vector<StmtPtr> body;
  if (dst != out) body.push_back(copy_dst(y, e.slot(dst)));
  body.push_back(copy_window(y, u, offset, window));
  return Seq::make(std::move(body));
}

std::string heading(const char* op, size_t out, size_t dst) {
  return std::string(op) + (dst == out ? " in place" : "");
}

// One run-time check: when `bad` holds, error `code` with `details`.
struct Check {
  ExprPtr bad;
  int code;
  std::vector<ExprPtr> details;
};

// The checks in order, then `ok`: in a stage, the first failing check records
// its error and nothing else runs; in a precheck, it returns its code.
StmtPtr guarded(const EntryVars& e, const std::vector<Check>& checks, StmtPtr ok, bool precheck) {
  for (size_t i = checks.size(); i-- > 0;) {
    const Check& c = checks[i];
    const StmtPtr fail = precheck ? Seq::make({store_info(e, c.details), Return::make(i32(c.code))})
                                  : record_error(e, c.code, c.details);
    ok = IfThenElse::make(c.bad, fail, ok);
  }
  return ok;
}

// InsertSlice's window, axis by axis; the first axis out of dst is the one
// reported. Fresh bindings per call (a precheck and a stage bind their own).
struct InsertWindow {
  Lets frame;
  std::vector<VarPtr> o;
  std::vector<Check> checks;
  ExprPtr offset = i64(0);
  InsertWindow(const SlotVars& y, const SlotVars& d, const SlotVars& u, const std::vector<ExprPtr>& offsets) {
    for (size_t a = 0; a < y.type->rank(); ++a) {
      o.push_back(frame.bind("o" + std::to_string(a), offsets.at(a)));
      offset = add(offset, mul(o[a], stride(y, a)));
      const ExprPtr end = add(o[a], extent(u, a));
      checks.push_back({lor(lt(o[a], i64(0)), gt(end, extent(d, a))), kErrInsertWindow,
                        {o[a], end, i64(static_cast<int64_t>(a)), extent(d, a)}});
    }
  }
};

// CacheUpdate's position and count; core/eval's order: cur_pos, then s
// against new, then the end against the cache.
struct CacheWindow {
  Lets frame;
  VarPtr p, n;
  std::vector<Check> checks;
  CacheWindow(const SlotVars& d, const SlotVars& u, const ExprPtr& pos, const ExprPtr& count) {
    p = frame.bind("pos", pos);
    n = frame.bind("cnt", count);
    checks = {{lt(p, i64(0)), kErrCachePos, {p}},
              {lor(lt(n, i64(1)), gt(n, extent(u, 1))), kErrCacheCount, {extent(u, 1), n}},
              {gt(add(p, n), extent(d, 1)), kErrCacheEnd, {p, n, extent(d, 1)}}};
  }
};

LoweredStage finish(const EntryVars& e, const char* op, size_t out, size_t dst, StmtPtr stage, StmtPtr precheck) {
  LoweredStage l{Seq::make({stage_comment(heading(op, out, dst), out), std::move(stage)}), nullptr, precheck == nullptr};
  if (precheck) l.precheck = Seq::make({Comment::make(std::string("precheck: ") + op + " window"), precheck});
  (void)e;
  return l;
}

}  // namespace

LoweredStage lower_insert_slice(const EntryVars& e, size_t out, size_t dst, size_t update,
                                const std::vector<ExprPtr>& offsets, bool hoist) {
  const SlotVars &y = e.slot(out), &d = e.slot(dst), &u = e.slot(update);
  InsertWindow w(y, d, u, offsets);
  // The window is the update's own extents.
  const StmtPtr body = write(e, out, dst, update, w.offset, u.shape);
  if (!hoist) return finish(e, "InsertSlice", out, dst, w.frame.wrap(guarded(e, w.checks, body, false)), nullptr);
  InsertWindow pre(y, d, u, offsets);
  return finish(e, "InsertSlice", out, dst, w.frame.wrap(body),
                pre.frame.wrap(guarded(e, pre.checks, Seq::make({}), true)));
}

LoweredStage lower_cache_update(const EntryVars& e, size_t out, size_t cache, size_t update, const ExprPtr& pos,
                                const ExprPtr& count, bool hoist) {
  const SlotVars &y = e.slot(out), &d = e.slot(cache), &u = e.slot(update);
  const size_t r = y.type->rank();
  CacheWindow w(d, u, pos, count);
  // The window: the update's extents, with only `cnt` of its positions (axis 1).
  const VarPtr window = Var::make("win", Type::pointer(DType::kI64));
  std::vector<StmtPtr> fill;
  for (size_t a = 0; a < r; ++a)
    fill.push_back(Store::make(window, i64(static_cast<int64_t>(a)), a == 1 ? ExprPtr(w.n) : extent(u, a)));
  fill.push_back(write(e, out, cache, update, mul(w.p, stride(y, 1)), window));
  const StmtPtr ok = Allocate::make(window, i64(static_cast<int64_t>(r)), MemoryScope::kLocal, Seq::make(std::move(fill)));
  if (!hoist) return finish(e, "CacheUpdate", out, cache, w.frame.wrap(guarded(e, w.checks, ok, false)), nullptr);
  CacheWindow pre(d, u, pos, count);
  return finish(e, "CacheUpdate", out, cache, w.frame.wrap(ok),
                pre.frame.wrap(guarded(e, pre.checks, Seq::make({}), true)));
}

// Rows in order; at the first whose window [p, p + n) leaves [0, len),
// rt->info = {b, p, n, len} and `fail` runs, then `ok` is false (TIR loops
// have no early exit: later rows are read, not checked).
StmtPtr check_scatter_rows(const EntryVars& e, const SlotVars& d, const SlotVars& u, const SlotVars& pos,
                           const VarPtr& ok, const StmtPtr& fail) {
  const VarPtr b = Var::make("b", kIndex);
  Lets at;
  const VarPtr p = at.bind("p", cast(DType::kI64, load(pos.data, mul(b, stride(pos, 0)))));
  const ExprPtr bad = lor(lt(p, i64(0)), gt(add(p, extent(u, 1)), extent(d, 1)));
  const StmtPtr report = Seq::make({store_info(e, {b, p, extent(u, 1), extent(d, 1)}), fail, Assign::make(ok, boolean(false))});
  return For::make(b, i64(0), extent(d, 0), ForKind::kSerial, IfThenElse::make(ok, at.wrap(IfThenElse::make(bad, report))));
}

LoweredStage lower_cache_scatter(const EntryVars& e, size_t out, size_t cache, size_t update, size_t positions) {
  const SlotVars &y = e.slot(out), &d = e.slot(cache), &u = e.slot(update), &pos = e.slot(positions);
  const bool hoist = e.is_input(positions);
  LoweredStage lowered;
  if (hoist) {
    const VarPtr ok = Var::make("ok", Type::scalar(DType::kBool), true);
    lowered.precheck = Seq::make(
        {Comment::make("precheck: cache_scatter windows"),
         LetStmt::make(ok, boolean(true), Seq::make({check_scatter_rows(e, d, u, pos, ok, Seq::make({})),
                                                     IfThenElse::make(lnot(ok), Return::make(i32(kErrScatterWindow)))}))});
  }
  // Row b's window: new[b] (its extents past axis 0) at y[b, p].
  const size_t r = y.type->rank();
  const Type T = Type::scalar(y.type->dtype());
  const VarPtr b = Var::make("b", kIndex);
  Lets at;
  const VarPtr p = at.bind("p", cast(DType::kI64, load(pos.data, mul(b, stride(pos, 0)))));
  const StmtPtr row = at.wrap(Evaluate::make(extern_call(
      "tf_copy_nd",
      {address(y.data, add(mul(b, stride(y, 0)), mul(p, stride(y, 1)))), address(y.strides, i64(1)),
       address(u.data, mul(b, stride(u, 0))), address(u.strides, i64(1)), address(u.shape, i64(1)),
       i32(static_cast<int64_t>(r - 1))},
      {T})));
  std::vector<StmtPtr> body;
  if (cache != out) body.push_back(copy_dst(y, d));
  body.push_back(For::make(b, i64(0), extent(d, 0), ForKind::kSerial, row));
  StmtPtr stage = Seq::make(std::move(body));
  if (!hoist) {
    const VarPtr ok = Var::make("ok", Type::scalar(DType::kBool), true);
    const StmtPtr fail = Evaluate::make(extern_call("tf_fail", {e.err, i32(kErrScatterWindow)}));
    stage = LetStmt::make(ok, boolean(true),
                          Seq::make({check_scatter_rows(e, d, u, pos, ok, fail), IfThenElse::make(ok, stage)}));
    lowered.may_fail = true;
  }
  lowered.stage = Seq::make({stage_comment(heading("CacheScatter", out, cache), out), stage});
  return lowered;
}

}  // namespace tf::compiler
