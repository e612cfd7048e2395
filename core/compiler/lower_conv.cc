// Conv2D (NCHW x OIHW, torch.nn.functional.conv2d): per image and group,
// im2col into a compute-type buffer, one GEMM through the prelude's tf_gemm
// (row-major operands: exactly the runtime table's sgemm / dgemm call the
// evaluator makes, so f32 / f64 results agree bit for bit), then bias and
// one rounding per output element, as core/eval/kernels/conv_norm.cc.
// f16 / bf16 are widened to float and use sgemm, as the evaluator does.
//
// For a target whose GEMM is a library call (CUDA: cuBLAS), the same
// algorithm over the whole batch at once, in scratch temporaries the
// entry owns (a kernel allocates nothing): the column matrix of every
// image and group, the weight as [G, og, cg * kh * kw], one batched GEMM,
// then bias and rounding; each stage is one flat loop whose iterations are
// independent (a thread each on a GPU).
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

// oneDNN's convolution (the runtime table's conv2d_f32, the evaluator's
// first choice too): true when it computed y.
ExprPtr onednn_conv2d(const EntryVars& e, const SlotVars& x, const SlotVars& wt, const SlotVars& y,
                      std::optional<std::reference_wrapper<const SlotVars>> bias, const Geometry& g,
                      const ops::Conv2D& op) {
  std::vector<ExprPtr> args{e.rt, g.images, extent(x, 1), g.h, g.w, g.outs, g.kh, g.kw, g.ho, g.wo, g.groups};
  for (const auto* v : {&op.stride, &op.padding, &op.dilation})
    for (int i = 0; i < 2; ++i) args.push_back(i64(v->at(i)));
  args.push_back(x.data);
  for (size_t i = 0; i < 4; ++i) args.push_back(stride(x, i));
  args.push_back(wt.data);
  for (size_t i = 0; i < 4; ++i) args.push_back(stride(wt, i));
  args.push_back(boolean(bias.has_value()));
  args.push_back(bias ? bias->get().data : x.data);  // not read without a bias
  args.push_back(bias ? stride(bias->get(), 0) : i64(0));
  args.push_back(y.data);
  return Call::make(Type::scalar(DType::kBool), "tf_conv2d_onednn", std::move(args), Call::kExtern);
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
  StmtPtr body = Allocate::make(col, size, MemoryScope::kGlobal, parts.wrap(loops));
  if (d == DType::kF32) body = IfThenElse::make(lnot(onednn_conv2d(e, x, wt, y, b, g, op)), body);
  const StmtPtr stage = IfThenElse::make(gt(mul(mul(g.images, g.outs), g.hw), i64(0)), body);
  return LoweredStage{Seq::make({stage_comment("conv2d", out), frame.wrap(stage)}), nullptr, false};
}

namespace {

// The flat loop `for q in [0, total)` (parallel) over `body(q)`.
StmtPtr each(const char* name, const ExprPtr& total, const std::function<StmtPtr(const VarPtr&)>& body) {
  const VarPtr q = Var::make(name, kIndex);
  return For::make(q, i64(0), total, ForKind::kParallel, body(q));
}

}  // namespace

GemmStages lower_conv2d_as_gemm(const EntryVars& e, size_t out, size_t xs, size_t ws, std::optional<size_t> bias,
                                const ops::Conv2D& op, const std::function<size_t(ir::TensorTypePtr)>& scratch) {
  const SlotVars &x = e.slot(xs), &wt = e.slot(ws), &y = e.slot(out);
  const DType d = y.type->dtype(), cd = compute_dtype(d);
  if (cd != DType::kF32 && cd != DType::kF64) unsupported("Conv2D of dtype " + std::string(ir::dtype_name(d)));
  // Scratch extents from the operands' types (resolved per call like any slot's).
  const ir::Shape &xd = x.type->shape(), &wd = wt.type->shape(), &yd = y.type->shape();
  const ir::ShapeDim groups(op.groups), kk = wd[1] * wd[2] * wd[3], hw = yd[2] * yd[3];
  const ir::ShapeDim og = ir::dim_floordiv(wd[0], groups);
  const size_t cols = scratch(ir::TensorType::make({xd[0], groups, kk, hw}, cd));
  const size_t wm = scratch(ir::TensorType::make({groups, og, kk}, cd));
  const size_t acc = scratch(ir::TensorType::make({xd[0], groups, og, hw}, cd));
  const SlotVars &c = e.slot(cols), &m = e.slot(wm), &a = e.slot(acc);

  // cols[n, g, (ch, i, j), (oh, ow)] = x[n, g*cg + ch, oh*s - p + i*d, ow*s - p + j*d], 0 outside.
  Lets frame;
  const Geometry g = geometry(x, wt, y, op, frame);
  const StmtPtr im2col = each("q", mul(mul(mul(g.images, g.groups), g.kk), g.hw), [&](const VarPtr& q) {
    Lets at;
    const VarPtr p = at.bind("p", mod(q, g.hw)), r = at.bind("r", div(q, g.hw));
    const VarPtr rr = at.bind("rr", mod(r, g.kk)), ng = at.bind("ng", div(r, g.kk));
    const VarPtr grp = at.bind("grp", mod(ng, g.groups)), n = at.bind("n", div(ng, g.groups));
    const Tap t = tap(g, rr, at);
    const VarPtr ih = at.bind("ih", add(sub(mul(div(p, g.wo), i64(op.stride.at(0))), i64(op.padding.at(0))),
                                       mul(t.i, i64(op.dilation.at(0)))));
    const VarPtr iw = at.bind("iw", add(sub(mul(mod(p, g.wo), i64(op.stride.at(1))), i64(op.padding.at(1))),
                                       mul(t.j, i64(op.dilation.at(1)))));
    const ExprPtr inside = land(land(ge(ih, i64(0)), lt(ih, g.h)), land(ge(iw, i64(0)), lt(iw, g.w)));
    const ExprPtr src = add(add(add(mul(n, stride(x, 0)), mul(add(mul(grp, g.cg), t.c), stride(x, 1))),
                                mul(ih, stride(x, 2))),
                            mul(iw, stride(x, 3)));
    // A branch, not a select: the load outside the image must not happen.
    return at.wrap(IfThenElse::make(inside, Store::make(c.data, q, cast(cd, load(x.data, src))),
                                    Store::make(c.data, q, imm(cd, 0))));
  });
  // wm[o, (ch, i, j)] = weight[o, ch, i, j]: [G, og, kk] is [O, kk].
  const StmtPtr weight = each("q", mul(g.outs, g.kk), [&](const VarPtr& q) {
    Lets at;
    const VarPtr o = at.bind("o", div(q, g.kk)), rr = at.bind("rr", mod(q, g.kk));
    const Tap t = tap(g, rr, at);
    const ExprPtr src = add(add(add(mul(o, stride(wt, 0)), mul(t.c, stride(wt, 1))), mul(t.i, stride(wt, 2))),
                            mul(t.j, stride(wt, 3)));
    return at.wrap(Store::make(m.data, q, cast(cd, load(wt.data, src))));
  });
  // y[n, o, oh, ow] = acc[n, g, oo, p] + bias[o], one rounding: the same flat index.
  const StmtPtr result = each("q", mul(mul(g.images, g.outs), g.hw), [&](const VarPtr& q) {
    ExprPtr v = load(a.data, q);
    if (bias) {
      const SlotVars& b = e.slot(*bias);
      v = add(v, cast(cd, load(b.data, mul(mod(div(q, g.hw), g.outs), stride(b, 0)))));
    }
    return Store::make(y.data, q, cast(d, v));
  });
  GemmStages s;
  s.before = {LoweredStage{Seq::make({stage_comment("conv2d columns", cols), frame.wrap(im2col)}), nullptr, false},
              LoweredStage{Seq::make({stage_comment("conv2d weight matrix", wm), frame.wrap(weight)}), nullptr, false}};
  s.gemm = GemmCall{acc, wm, cols};
  s.after = {LoweredStage{Seq::make({stage_comment("conv2d bias and rounding", out), frame.wrap(result)}), nullptr, false}};
  return s;
}

}  // namespace tf::compiler
