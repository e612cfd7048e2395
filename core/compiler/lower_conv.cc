// Conv2D (NCHW x OIHW, torch.nn.functional.conv2d): per image and group,
// im2col into a compute-type buffer, one GEMM through the prelude's tf_gemm
// (row-major operands: exactly the runtime table's sgemm / dgemm call the
// evaluator makes, so f32 / f64 results agree bit for bit), then bias and
// one rounding per output element, as core/eval/kernels/conv_norm.cc.
// f16 / bf16 are widened to float and use sgemm, as the evaluator does.
#include "core/compiler/emit_util.h"
#include "core/compiler/lower_stages.h"
#include "core/compiler/scalar_lowering.h"

namespace tf::compiler {

using ir::DType;
using namespace tir;

namespace {

// im2col rows run in parallel from this many gathered values.
constexpr int64_t kIm2colParallelMin = 65536;

// The geometry every part of the stage reads, bound once.
struct Geometry {
  VarPtr images, h, w, outs, kh, kw, ho, wo, groups, cg, og, kk, hw;
};

Geometry geometry(const SlotVars& x, const SlotVars& wt, const SlotVars& y, const ops::Conv2D& op, Lets& lets) {
  Geometry g;
  g.images = lets.bind("Nn", extent(x, 0));
  g.h = lets.bind("H", extent(x, 2));
  g.w = lets.bind("Wd", extent(x, 3));
  g.outs = lets.bind("O", extent(wt, 0));
  g.kh = lets.bind("kh", extent(wt, 2));
  g.kw = lets.bind("kw", extent(wt, 3));
  g.ho = lets.bind("Ho", extent(y, 2));
  g.wo = lets.bind("Wo", extent(y, 3));
  g.groups = lets.bind("G", i64(op.groups));
  g.cg = lets.bind("cg", div(extent(x, 1), g.groups));
  g.og = lets.bind("og", div(g.outs, g.groups));
  g.kk = lets.bind("kk", mul(mul(g.cg, g.kh), g.kw));
  g.hw = lets.bind("hw", mul(g.ho, g.wo));
  return g;
}

// (c, i, j) of im2col row rr: input channel in the group, kernel row and column.
struct Tap {
  VarPtr c, i, j;
};
Tap tap(const Geometry& g, const ExprPtr& rr, Lets& lets) {
  return Tap{lets.bind("c", div(rr, mul(g.kh, g.kw))), lets.bind("i", mod(div(rr, g.kw), g.kh)),
             lets.bind("j", mod(rr, g.kw))};
}

// col[(c, i, j), (oh, ow)] = x[n, g*cg + c, oh*s - p + i*d, ow*s - p + j*d],
// 0 outside the image.
StmtPtr im2col(const SlotVars& x, const Geometry& g, const ops::Conv2D& op, const VarPtr& col, const VarPtr& n,
               const VarPtr& grp, DType cd) {
  const VarPtr rr = Var::make("rr", kIndex), oh = Var::make("oh", kIndex), ow = Var::make("ow", kIndex);
  Lets row;
  const Tap t = tap(g, rr, row);
  const VarPtr out = row.bind_pointer("row", address(col, mul(rr, g.hw)), false);
  const VarPtr xc = row.bind_pointer(
      "xc", address(x.data, add(mul(n, stride(x, 0)), mul(add(mul(grp, g.cg), t.c), stride(x, 1)))), false);
  Lets at_h, at_w;
  const VarPtr ih = at_h.bind("ih", add(sub(mul(oh, i64(op.stride.at(0))), i64(op.padding.at(0))),
                                       mul(t.i, i64(op.dilation.at(0)))));
  const VarPtr iw = at_w.bind("iw", add(sub(mul(ow, i64(op.stride.at(1))), i64(op.padding.at(1))),
                                       mul(t.j, i64(op.dilation.at(1)))));
  const ExprPtr inside = land(land(ge(ih, i64(0)), lt(ih, g.h)), land(ge(iw, i64(0)), lt(iw, g.w)));
  const ExprPtr at = add(mul(oh, g.wo), ow);
  // A branch, not a select: the load outside the image must not happen.
  const StmtPtr value = IfThenElse::make(
      inside, Store::make(out, at, cast(cd, load(xc, add(mul(ih, stride(x, 2)), mul(iw, stride(x, 3)))))),
      Store::make(out, at, imm(cd, 0)));
  const StmtPtr cols = For::make(ow, i64(0), g.wo, ForKind::kSerial, at_w.wrap(value));
  const StmtPtr rows = For::make(oh, i64(0), g.ho, ForKind::kSerial, at_h.wrap(cols));
  return For::make(rr, i64(0), g.kk, ForKind::kParallel, row.wrap(rows), {},
                   ge(mul(g.kk, g.hw), i64(kIm2colParallelMin)));
}

// wm[oo, (c, i, j)] = weight[g*og + oo, c, i, j], in the compute type.
StmtPtr weight_matrix(const SlotVars& wt, const Geometry& g, const VarPtr& wm, const VarPtr& grp, DType cd) {
  const VarPtr q = Var::make("q", kIndex);
  Lets at;
  const VarPtr oo = at.bind("oo", div(q, g.kk)), rr = at.bind("rr", mod(q, g.kk));
  const Tap t = tap(g, rr, at);
  const ExprPtr src = add(add(add(mul(add(mul(grp, g.og), oo), stride(wt, 0)), mul(t.c, stride(wt, 1))),
                              mul(t.i, stride(wt, 2))),
                          mul(t.j, stride(wt, 3)));
  return For::make(q, i64(0), mul(g.og, g.kk), ForKind::kSerial, at.wrap(Store::make(wm, q, cast(cd, load(wt.data, src)))));
}

// y[n, g*og + oo, :] = res[oo, :] + bias, rounded once to the output type.
StmtPtr store_result(const SlotVars& y, std::optional<std::reference_wrapper<const SlotVars>> bias, const Geometry& g,
                     const VarPtr& res, const VarPtr& n, const VarPtr& grp, DType cd) {
  const DType d = y.type->dtype();
  const VarPtr oo = Var::make("oo", kIndex), p = Var::make("p", kIndex);
  Lets at;
  const ExprPtr channel = add(mul(grp, g.og), oo);
  const VarPtr b = at.bind(
      "b", bias ? cast(cd, load(bias->get().data, mul(channel, stride(bias->get(), 0)))) : imm(cd, 0));
  const VarPtr yr = at.bind_pointer("yr", address(y.data, mul(add(mul(n, g.outs), channel), g.hw)), false);
  const StmtPtr row = For::make(p, i64(0), g.hw, ForKind::kSerial,
                                Store::make(yr, p, cast(d, add(load(res, add(mul(oo, g.hw), p)), b))));
  return For::make(oo, i64(0), g.og, ForKind::kSerial, at.wrap(row));
}

}  // namespace

LoweredStage lower_conv2d(const EntryVars& e, size_t out, size_t xs, size_t ws, std::optional<size_t> bias,
                          const ops::Conv2D& op) {
  const SlotVars &x = e.slot(xs), &wt = e.slot(ws), &y = e.slot(out);
  const DType d = y.type->dtype(), cd = compute_dtype(d);
  if (cd != DType::kF32 && cd != DType::kF64) unsupported("Conv2D of dtype " + std::string(ir::dtype_name(d)));
  Lets frame;
  const Geometry g = geometry(x, wt, y, op, frame);
  // One buffer per stage: col (kk x hw), wm (og x kk), res (og x hw).
  const VarPtr col = Var::make("col", Type::pointer(cd));
  Lets parts;
  const VarPtr wm = parts.bind_pointer("wm", address(col, mul(g.kk, g.hw)), false);
  const VarPtr res = parts.bind_pointer("res", address(wm, mul(g.og, g.kk)), false);
  const VarPtr n = Var::make("n", kIndex), grp = Var::make("g", kIndex);
  // tf_gemm fills res with zeros when kk is 0 (an empty reduction).
  const StmtPtr gemm = Evaluate::make(extern_call(
      "tf_gemm", {e.rt, g.og, g.hw, g.kk, wm, g.kk, i64(1), col, g.hw, i64(1), res}, {Type::scalar(cd)}));
  std::optional<std::reference_wrapper<const SlotVars>> b;
  if (bias) b = std::cref(e.slot(*bias));
  const StmtPtr group = Seq::make({im2col(x, g, op, col, n, grp, cd), weight_matrix(wt, g, wm, grp, cd), gemm,
                                   store_result(y, b, g, res, n, grp, cd)});
  const StmtPtr loops = For::make(n, i64(0), g.images, ForKind::kSerial,
                                  For::make(grp, i64(0), g.groups, ForKind::kSerial, group));
  const ExprPtr size = add(add(add(mul(g.kk, g.hw), mul(g.og, g.kk)), mul(g.og, g.hw)), i64(1));
  const StmtPtr body = Allocate::make(col, size, MemoryScope::kGlobal, parts.wrap(loops));
  const StmtPtr stage = IfThenElse::make(gt(mul(mul(g.images, g.outs), g.hw), i64(0)), body);
  return LoweredStage{Seq::make({stage_comment("conv2d", out), frame.wrap(stage)}), nullptr, false};
}

}  // namespace tf::compiler
