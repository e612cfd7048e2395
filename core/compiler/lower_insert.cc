// InsertSlice / CacheUpdate: the checks first, in the evaluator's order (a
// failure records its code and details and the stage writes nothing), then
// dst is copied into the result unless they share a buffer (an in-place
// carry, or a dst computed straight into the result's slot: codegen's
// plan_insert), then the window is written. Both copies are the prelude's
// tf_copy_nd (parallel above its own threshold).
#include "core/compiler/codegen.h"
#include "core/compiler/emit_util.h"
#include "core/compiler/lower_stages.h"

namespace tf::compiler {

using ir::DType;
using namespace tir;

namespace {

// y = dst unless the result is dst's buffer, then y's window at `offset`
// (elements) = update, whose extents are `window` (an i64 pointer).
StmtPtr write(const EntryVars& e, size_t out, size_t dst, size_t update, const ExprPtr& offset, const ExprPtr& window) {
  const SlotVars &y = e.slot(out), &d = e.slot(dst), &u = e.slot(update);
  const Type T = Type::scalar(y.type->dtype());
  const ExprPtr r = i32(static_cast<int64_t>(y.type->rank()));
  std::vector<StmtPtr> body;
  if (dst != out)
    body.push_back(IfThenElse::make(
        ne(y.data, d.data),
        Evaluate::make(extern_call("tf_copy_nd", {y.data, y.strides, d.data, d.strides, d.shape, r}, {T}))));
  body.push_back(
      Evaluate::make(extern_call("tf_copy_nd", {address(y.data, offset), y.strides, u.data, u.strides, window, r}, {T})));
  return Seq::make(std::move(body));
}

std::string heading(const char* op, size_t out, size_t dst) {
  return std::string(op) + (dst == out ? " in place" : "");
}

}  // namespace

LoweredStage lower_insert_slice(const EntryVars& e, size_t out, size_t dst, size_t update,
                                const std::vector<ExprPtr>& offsets) {
  const SlotVars &y = e.slot(out), &d = e.slot(dst), &u = e.slot(update);
  const size_t r = y.type->rank();
  Lets frame;
  std::vector<VarPtr> o;
  ExprPtr off = i64(0);
  for (size_t a = 0; a < r; ++a) {
    o.push_back(frame.bind("o" + std::to_string(a), offsets.at(a)));
    off = add(off, mul(o[a], stride(y, a)));
  }
  // The window is the update's own extents.
  StmtPtr body = write(e, out, dst, update, off, u.shape);
  // Axis by axis, the first window out of dst is the one reported.
  for (size_t a = r; a-- > 0;) {
    const ExprPtr end = add(o[a], extent(u, a));
    body = IfThenElse::make(lor(lt(o[a], i64(0)), gt(end, extent(d, a))),
                            record_error(e, kErrInsertWindow, {o[a], end, i64(static_cast<int64_t>(a)), extent(d, a)}),
                            body);
  }
  return LoweredStage{Seq::make({stage_comment(heading("InsertSlice", out, dst), out), frame.wrap(body)}), nullptr,
                      true};
}

LoweredStage lower_cache_update(const EntryVars& e, size_t out, size_t cache, size_t update, const ExprPtr& pos,
                                const ExprPtr& count) {
  const SlotVars &y = e.slot(out), &d = e.slot(cache), &u = e.slot(update);
  const size_t r = y.type->rank();
  Lets frame;
  const VarPtr p = frame.bind("pos", pos), n = frame.bind("cnt", count);
  // The window: the update's extents, with only `cnt` of its positions (axis 1).
  const VarPtr window = Var::make("win", Type::pointer(DType::kI64));
  std::vector<StmtPtr> fill;
  for (size_t a = 0; a < r; ++a)
    fill.push_back(Store::make(window, i64(static_cast<int64_t>(a)), a == 1 ? ExprPtr(n) : extent(u, a)));
  fill.push_back(write(e, out, cache, update, mul(p, stride(y, 1)), window));
  const StmtPtr ok = Allocate::make(window, i64(static_cast<int64_t>(r)), MemoryScope::kLocal, Seq::make(std::move(fill)));
  // core/eval's order: cur_pos, then s against new, then the end against the cache.
  const StmtPtr checks = IfThenElse::make(
      lt(p, i64(0)), record_error(e, kErrCachePos, {p}),
      IfThenElse::make(lor(lt(n, i64(1)), gt(n, extent(u, 1))), record_error(e, kErrCacheCount, {extent(u, 1), n}),
                       IfThenElse::make(gt(add(p, n), extent(d, 1)),
                                        record_error(e, kErrCacheEnd, {p, n, extent(d, 1)}), ok)));
  return LoweredStage{Seq::make({stage_comment(heading("CacheUpdate", out, cache), out), frame.wrap(checks)}), nullptr,
                      true};
}

}  // namespace tf::compiler
