#include "core/ops/sharding/shard_rules.h"

#include <algorithm>
#include <map>
#include <set>

#include "core/ops/sharding/shard_util.h"

namespace tf::ops {
namespace {

using ir::Reduction;
using ir::ShardAttr;
using ir::ShardLayout;
using Kind = ShardAttr::Kind;

// ---- reading operands and attributes -------------------------------------

const ShardLayout* shard_of(const TypeCtx& ctx, size_t i) {
  if (i >= ctx.num_operands()) return nullptr;
  const ir::TensorType* t = ir::as_tensor(ctx.type(i));
  return t ? ir::as_shard_layout(t->layout()) : nullptr;
}

const ir::AttrValue* find_attr(const std::vector<ir::Attr>& attrs, const char* name) {
  for (const auto& a : attrs)
    if (a.name == name) return &a.value;
  return nullptr;
}
std::string attr_str(const ir::Op& op, const char* name) {
  auto attrs = op.attrs();
  const ir::AttrValue* v = find_attr(attrs, name);
  return v && std::holds_alternative<std::string>(*v) ? std::get<std::string>(*v) : "";
}
int64_t attr_int(const ir::Op& op, const char* name, int64_t def) {
  auto attrs = op.attrs();
  const ir::AttrValue* v = find_attr(attrs, name);
  return v && std::holds_alternative<int64_t>(*v) ? std::get<int64_t>(*v) : def;
}
std::vector<int64_t> attr_ints(const ir::Op& op, const char* name) {
  auto attrs = op.attrs();
  const ir::AttrValue* v = find_attr(attrs, name);
  return v && std::holds_alternative<std::vector<int64_t>>(*v) ? std::get<std::vector<int64_t>>(*v)
                                                               : std::vector<int64_t>{};
}
bool attr_bool(const ir::Op& op, const char* name, bool def) {
  auto attrs = op.attrs();
  const ir::AttrValue* v = find_attr(attrs, name);
  return v && std::holds_alternative<bool>(*v) ? std::get<bool>(*v) : def;
}

int64_t norm_axis(int64_t axis, size_t rank) { return axis < 0 ? axis + static_cast<int64_t>(rank) : axis; }

// ---- diagnostics -----------------------------------------------------------

std::string broadcast_fix(const TypeCtx& ctx, size_t i, const ShardLayout& l) {
  std::string attrs;
  for (size_t m = 0; m < l.attrs().size(); ++m) attrs += (m ? ", " : "") + std::string("Broadcast()");
  if (l.attrs().size() == 1) attrs += ",";
  std::string mesh = l.mesh()->name.empty() ? l.mesh()->to_string() : l.mesh()->name;
  (void)ctx;
  (void)i;
  return "use an explicit Reshard to Broadcast first: reshard(x, layout=ShardLayout(" + mesh + ", (" + attrs + ")))";
}

// The one shape of a Partial rejection: names the operand, the reduction, the
// mesh axis, why, and the fix.
[[noreturn]] void reject_partial(const TypeCtx& ctx, size_t i, const ShardLayout& l, size_t m,
                                 const std::string& why) {
  ctx.operand_error(i, "free of Partial(\"" + std::string(ir::reduction_name(l.attrs()[m].reduction)) +
                           "\") on " + shard::mesh_axis_name(l, m) + ": " + why + "; " + broadcast_fix(ctx, i, l));
}

[[noreturn]] void reject_layout(const TypeCtx& ctx, size_t i, const ShardLayout& l, const std::string& why) {
  ctx.operand_error(i, why + " (fail closed, no layout is fabricated); " + broadcast_fix(ctx, i, l));
}

const ir::TensorType& result_tensor(const TypeCtx& ctx, const ir::TypePtr& result) {
  const ir::TensorType* t = ir::as_tensor(result);
  if (!t) ctx.error("has a sharded operand but a non-tensor result; no sharding rule applies");
  return *t;
}

std::vector<ShardAttr> logical_or_reject(const TypeCtx& ctx, size_t i, const ShardLayout& l) {
  auto logical = shard::to_logical(ctx.tensor(i).shape(), l);
  if (!logical) reject_layout(ctx, i, l, "a canonical ShardLayout (a composed layout has no derivable output)");
  return *logical;
}

ir::LayoutPtr canonical_or_reject(const TypeCtx& ctx, const ir::MeshPtr& mesh, const std::vector<ShardAttr>& logical,
                                  const ir::Shape& shape) {
  try {
    return shard::canonical_layout(mesh, logical, shape);
  } catch (const ir::Error& e) {
    ctx.error(std::string("result layout cannot be built: ") + e.what());
  }
}

// Every operand from `first` on must be unsharded or fully Broadcast.
void require_replicated(const TypeCtx& ctx, size_t first, const std::string& why) {
  for (size_t i = first; i < ctx.num_operands(); ++i) {
    const ShardLayout* l = shard_of(ctx, i);
    if (!l || shard::all_broadcast(*l)) continue;
    for (size_t m = 0; m < l->attrs().size(); ++m)
      if (l->attrs()[m].is_partial()) reject_partial(ctx, i, *l, m, why);
    reject_layout(ctx, i, *l, "unsharded or Broadcast (" + why + ")");
  }
}

// ---- elementwise single-input ops -------------------------------------------

ir::TypePtr elementwise(const TypeCtx& ctx, const ir::TypePtr& result, const Commutes& c, const std::string& why) {
  const ShardLayout* l = shard_of(ctx, 0);
  if (l)
    for (size_t m = 0; m < l->attrs().size(); ++m)
      if (l->attrs()[m].is_partial() && !c.with(l->attrs()[m].reduction)) reject_partial(ctx, 0, *l, m, why);
  require_replicated(ctx, 1, "a secondary input must be replicated");
  return shard::with_layout(result_tensor(ctx, result), ctx.tensor(0).layout());
}

// Cast: a ShardLayout input keeps its layout. A Partial survives only
// when the conversion commutes with its reduction: truncating float -> int is
// monotone (max / min) but not linear; wrapping int -> narrower int is linear
// (sum, modulo 2^bits) but not monotone; x != 0 (to bool) commutes with none.
// Other conversions are exact or round once, like any float sum.
ir::TypePtr rule_cast(const ir::Op&, const TypeCtx& ctx, const ir::TypePtr& r) {
  ir::DType from = ctx.tensor(0).dtype(), to = result_tensor(ctx, r).dtype();
  if (ir::is_bool(to)) return elementwise(ctx, r, unproven(), "a cast to bool (x != 0) commutes with no reduction");
  if (ir::is_float(from) && !ir::is_float(to))
    return elementwise(ctx, r, monotone(),
                       "a float -> int cast truncates each share: it commutes with max / min but not sum");
  if (ir::is_int(from) && ir::is_int(to) && ir::dtype_bits(to) < ir::dtype_bits(from))
    return elementwise(ctx, r, linear(), "a narrowing int cast wraps: it commutes with sum but not max / min");
  return elementwise(ctx, r, every_reduction(), "");
}

// SoftMax / LayerNorm / RMSNorm: normalize across an axis; no Partial anywhere,
// and the normalized axis must not be Split (each instance would normalize its
// own shard only). The axis is the op's `axis` attribute when it has one
// (SoftMax), else the last.
ir::TypePtr rule_normalize(const ir::Op& op, const TypeCtx& ctx, const ir::TypePtr& r) {
  std::string why = op.surface_name() + " normalizes across an axis (a non-monotonic combination of every value "
                    "on it), so no reduction provably commutes";
  require_replicated(ctx, 1, why);
  const ShardLayout* l = shard_of(ctx, 0);
  if (!l) return r;
  for (size_t m = 0; m < l->attrs().size(); ++m)
    if (l->attrs()[m].is_partial()) reject_partial(ctx, 0, *l, m, why);
  size_t rank = ctx.tensor(0).rank();
  auto attrs = op.attrs();
  int64_t axis = find_attr(attrs, "axis") ? norm_axis(attr_int(op, "axis", -1), rank) : static_cast<int64_t>(rank) - 1;
  auto logical = logical_or_reject(ctx, 0, *l);
  for (const auto& a : logical)
    if (a.is_split() && a.pos == axis)
      reject_layout(ctx, 0, *l, "not Split on the normalized axis " + std::to_string(axis));
  return shard::with_layout(result_tensor(ctx, r), ctx.tensor(0).layout());
}

// ---- Binary ----------------------------------------------------------------

std::set<size_t> partial_axes(const ShardLayout* l) {
  std::set<size_t> s;
  if (l)
    for (size_t m = 0; m < l->attrs().size(); ++m)
      if (l->attrs()[m].is_partial()) s.insert(m);
  return s;
}

ir::TypePtr rule_binary(const ir::Op& op, const TypeCtx& ctx, const ir::TypePtr& r) {
  const ir::TensorType& rt = result_tensor(ctx, r);
  const ShardLayout* L = shard_of(ctx, 0);
  const ShardLayout* R = shard_of(ctx, 1);
  if (L && shard::all_broadcast(*L) && R && !shard::all_broadcast(*R)) L = nullptr;
  if (R && shard::all_broadcast(*R) && L && !shard::all_broadcast(*L)) R = nullptr;
  const std::string kind = attr_str(op, "kind");
  if (L && R && !L->mesh()->structural_equal(*R->mesh()))
    ctx.operand_error(1, "on the same mesh as operand #0 (" + L->mesh()->to_string() + ")");
  const ShardLayout* S = L ? L : R;
  size_t n = S->attrs().size();
  // Partial states on different mesh axes are not interchangeable.
  auto pl = partial_axes(L), pr = partial_axes(R);
  if (!pl.empty() && !pr.empty() && pl != pr)
    reject_partial(ctx, 1, *R, *pr.begin(),
                   kind + " of two Partial inputs whose states occupy different mesh axes is rejected");
  std::vector<ShardAttr> out(n, ShardAttr::broadcast());
  for (size_t m = 0; m < n; ++m) {
    ShardAttr a = L ? L->attrs()[m] : ShardAttr::broadcast();
    ShardAttr b = R ? R->attrs()[m] : ShardAttr::broadcast();
    if (a.is_partial() && b.is_partial()) {
      if (kind == "add" && a.reduction == Reduction::kSum && b.reduction == Reduction::kSum) {
        out[m] = a;
        continue;
      }
      reject_partial(ctx, a.reduction != Reduction::kSum || kind != "add" ? 0 : 1, *L, m,
                     kind == "add" ? "add of two Partials commutes only when both carry reduction=\"sum\" "
                                     "(max(x)+max(y) is not max(x+y))"
                                   : kind + " of two Partial operands is not proven to commute with any reduction");
    }
    if (a.is_partial() || b.is_partial()) {
      size_t i = a.is_partial() ? 0 : 1;
      const ShardAttr& p = a.is_partial() ? a : b;
      const ShardAttr& other = a.is_partial() ? b : a;
      const ShardLayout& pl_ = i == 0 ? *L : *R;
      if (other.is_split())
        reject_partial(ctx, i, pl_, m, "a Partial combined with a Split operand on the same mesh axis is not proven");
      bool ok = (kind == "add" && p.reduction != Reduction::kSum) || (kind == "mul" && p.reduction == Reduction::kSum);
      if (!ok) {
        std::string why = kind == "add" ? "add with a replicated operand commutes only with max / min "
                                          "(sum(x)+b != sum(x+b))"
                          : kind == "mul" ? "mul by a replicated operand commutes only with sum (the constant's sign "
                                            "is not provable; a negative scale flips max to min)"
                                          : kind + " is not proven to commute with any reduction";
        reject_partial(ctx, i, pl_, m, why);
      }
      out[m] = p;
      continue;
    }
    if (a.is_split() && b.is_split() && a.pos != b.pos)
      reject_layout(ctx, 1, *R, "Split on the same layout position as operand #0 on " + shard::mesh_axis_name(*S, m));
    out[m] = a.is_split() ? a : b;
  }
  // The result takes the sharded operands' layout positions: they must cover
  // the result shape exactly (no broadcasting of a sharded operand).
  for (size_t i = 0; i < 2; ++i) {
    const ShardLayout* l = i == 0 ? L : R;
    if (l && !ir::shape_equal(ctx.tensor(i).shape(), rt.shape()))
      reject_layout(ctx, i, *l, "of the result's shape " + ir::shape_to_string(rt.shape()) +
                                    " (a sharded operand is not broadcast)");
  }
  if (L && R && !ir::shape_equal(L->shape(), R->shape()))
    reject_layout(ctx, 1, *R, "laid out over the same layout positions as operand #0 " + L->Layout::to_string());
  return shard::with_layout(rt, ShardLayout::make(S->mesh(), out, S->shape(), S->strides()));
}

// ---- Where -----------------------------------------------------------------

// cond, a and b are aligned like Binary's operands (a replicated operand
// beside a sharded one is read whole by every instance; sharded ones cover
// the result and agree on their Splits). No Partial: a select between shares
// is not a share of the select unless both values carry the same Partial and
// the mask is replicated, which is not worth a special case.
ir::TypePtr rule_where(const ir::Op&, const TypeCtx& ctx, const ir::TypePtr& r) {
  const ir::TensorType& rt = result_tensor(ctx, r);
  std::vector<const ShardLayout*> ls;
  bool sharded = false;
  for (size_t i = 0; i < 3; ++i) {
    ls.push_back(shard_of(ctx, i));
    sharded = sharded || (ls.back() && !shard::all_broadcast(*ls.back()));
  }
  const ShardLayout* S = nullptr;
  size_t si = 0;
  for (size_t i = 0; i < 3; ++i) {
    if (ls[i] && sharded && shard::all_broadcast(*ls[i])) ls[i] = nullptr;
    if (ls[i] && !S) S = ls[si = i];
  }
  std::vector<ShardAttr> out(S->attrs().size(), ShardAttr::broadcast());
  for (size_t i = 0; i < 3; ++i) {
    const ShardLayout* l = ls[i];
    if (!l) continue;
    const std::string first = "operand #" + std::to_string(si);
    if (!l->mesh()->structural_equal(*S->mesh()))
      ctx.operand_error(i, "on the same mesh as " + first + " (" + S->mesh()->to_string() + ")");
    if (!ir::shape_equal(ctx.tensor(i).shape(), rt.shape()))
      reject_layout(ctx, i, *l, "of the result's shape " + ir::shape_to_string(rt.shape()) +
                                    " (a sharded operand is not broadcast)");
    if (!ir::shape_equal(l->shape(), S->shape()))
      reject_layout(ctx, i, *l, "laid out over the same layout positions as " + first + " " + S->Layout::to_string());
    for (size_t m = 0; m < out.size(); ++m) {
      const ShardAttr& a = l->attrs()[m];
      if (a.is_partial())
        reject_partial(ctx, i, *l, m, "where selects element by element; a select of Partial shares is not proven "
                                      "to be a share of the select");
      if (a.is_split() && out[m].is_split() && a.pos != out[m].pos)
        reject_layout(ctx, i, *l, "Split on the same layout position as " + first + " on " + shard::mesh_axis_name(*S, m));
      if (a.is_split()) out[m] = a;
    }
  }
  return shard::with_layout(rt, ShardLayout::make(S->mesh(), out, S->shape(), S->strides()));
}

// ---- Reduce ----------------------------------------------------------------

ir::TypePtr rule_reduce(const ir::Op& op, const TypeCtx& ctx, const ir::TypePtr& r) {
  const ir::TensorType& rt = result_tensor(ctx, r);
  const ShardLayout& l = *shard_of(ctx, 0);
  const ir::TensorType& x = ctx.tensor(0);
  std::string kind = attr_str(op, "kind");
  for (size_t m = 0; m < l.attrs().size(); ++m) {
    if (!l.attrs()[m].is_partial()) continue;
    Reduction red = l.attrs()[m].reduction;
    bool ok = ((kind == "sum" || kind == "mean") && red == Reduction::kSum) || (kind == "max" && red == Reduction::kMax);
    if (!ok)
      reject_partial(ctx, 0, l, m,
                     "Reduce kind=\"" + kind + "\" does not commute with reduction \"" +
                         std::string(ir::reduction_name(red)) +
                         "\" (sum / mean commute with sum only, max with max only, abs_max with none)");
  }
  if (!l.strides())
    reject_layout(ctx, 0, l, "a ShardLayout with explicit producer strides (non-default-stride sharded input)");
  auto runs = shard::axis_runs(x.shape(), l.shape());
  if (!runs) reject_layout(ctx, 0, l, "a ShardLayout whose positions factor the tensor shape");
  std::set<int64_t> reduced;
  for (int64_t a : attr_ints(op, "axes")) reduced.insert(norm_axis(a, x.rank()));
  bool keepdim = attr_bool(op, "keepdim", true);
  ir::Shape positions, strides;
  std::vector<int64_t> new_pos(l.shape().size(), -1);
  for (size_t k = 0; k < runs->size(); ++k) {
    auto [b, e] = (*runs)[k];
    if (reduced.count(static_cast<int64_t>(k))) {
      if (keepdim) {
        positions.push_back(ir::ShapeDim(1));
        strides.push_back(0);
      }
      continue;
    }
    for (size_t p = b; p < e; ++p) {
      new_pos[p] = static_cast<int64_t>(positions.size());
      positions.push_back(l.shape()[p]);
      strides.push_back((*l.strides())[p]);
    }
  }
  std::vector<ShardAttr> attrs = l.attrs();
  for (auto& a : attrs)
    if (a.is_split()) a = new_pos[a.pos] < 0 ? ShardAttr::broadcast() : ShardAttr::split(new_pos[a.pos]);
  return shard::with_layout(rt, ShardLayout::make(l.mesh(), attrs, positions, strides));
}

// ---- MatMul ----------------------------------------------------------------

ir::TypePtr rule_matmul(const ir::Op&, const TypeCtx& ctx, const ir::TypePtr& r) {
  const ir::TensorType& rt = result_tensor(ctx, r);
  const ShardLayout* A = shard_of(ctx, 0);
  const ShardLayout* B = shard_of(ctx, 1);
  if (A && B && !A->mesh()->structural_equal(*B->mesh()))
    ctx.operand_error(1, "on the same mesh as operand #0 (" + A->mesh()->to_string() + ")");
  const ShardLayout* S = A ? A : B;
  size_t n = S->attrs().size();
  int64_t ra = static_cast<int64_t>(ctx.tensor(0).rank()), rb = static_cast<int64_t>(ctx.tensor(1).rank());
  int64_t ro = static_cast<int64_t>(rt.rank());
  if ((A && ra < 2) || (B && rb < 2)) ctx.error("a sharded matmul needs rank >= 2 operands (fail closed)");
  std::vector<ShardAttr> la = A ? logical_or_reject(ctx, 0, *A) : std::vector<ShardAttr>(n, ShardAttr::broadcast());
  std::vector<ShardAttr> lb = B ? logical_or_reject(ctx, 1, *B) : std::vector<ShardAttr>(n, ShardAttr::broadcast());
  std::vector<ShardAttr> out(n, ShardAttr::broadcast());
  const std::string linear = "matmul is linear in one value input only when the other is Broadcast / replicated";
  for (size_t m = 0; m < n; ++m) {
    const ShardAttr &a = la[m], &b = lb[m];
    if (a.is_partial() && b.is_partial()) reject_partial(ctx, 1, *B, m, "a double-Partial matmul input is rejected");
    if (a.is_partial() || b.is_partial()) {
      size_t i = a.is_partial() ? 0 : 1;
      const ShardAttr& p = a.is_partial() ? a : b;
      const ShardAttr& other = a.is_partial() ? b : a;
      if (p.reduction != Reduction::kSum)
        reject_partial(ctx, i, i ? *B : *A, m, "a non-sum reduction does not commute with matmul");
      if (other.kind != Kind::kBroadcast) reject_partial(ctx, i, i ? *B : *A, m, linear);
      out[m] = p;
    } else if (a.is_split() && b.is_split()) {
      if (a.pos != ra - 1 || b.pos != rb - 2)
        reject_layout(ctx, 1, *B, "Split on the contracted axis together with operand #0 (K-split)");
      out[m] = ShardAttr::partial(Reduction::kSum);  // per-instance partial products
    } else if (a.is_split()) {
      if (a.pos == ra - 1) reject_layout(ctx, 0, *A, "split on K only together with operand #1's K");
      if (a.pos < ra - 2 && rb != 2) reject_layout(ctx, 0, *A, "split on a batch axis only against a rank-2 rhs");
      out[m] = ShardAttr::split(a.pos + (ro - ra));
    } else if (b.is_split()) {
      if (b.pos != rb - 1) reject_layout(ctx, 1, *B, "split on N only (a K-split needs operand #0 split on K)");
      out[m] = ShardAttr::split(ro - 1);
    }
  }
  return shard::with_layout(rt, canonical_or_reject(ctx, S->mesh(), out, rt.shape()));
}

// ---- Gather ----------------------------------------------------------------

ir::TypePtr rule_gather(const ir::Op& op, const TypeCtx& ctx, const ir::TypePtr& r) {
  const ir::TensorType& rt = result_tensor(ctx, r);
  require_replicated(ctx, 1, "gather indices must be replicated");
  const ShardLayout* l = shard_of(ctx, 0);
  if (!l) return r;
  const ir::TensorType& x = ctx.tensor(0);
  int64_t axis = norm_axis(attr_int(op, "axis", 0), x.rank());
  int64_t batch = attr_int(op, "batch_dims", 0);
  if (batch > 0 && !shard::all_broadcast(*l))
    reject_layout(ctx, 0, *l, "unsharded or Broadcast when batch_dims > 0 (batched sharded gather is not supported)");
  auto logical = logical_or_reject(ctx, 0, *l);
  int64_t splits = 0;
  bool on_axis = false;
  for (const auto& a : logical)
    if (a.is_split()) ++splits, on_axis |= a.pos == axis;
  if (on_axis && splits > 1)
    reject_layout(ctx, 0, *l, "split at most once when a Split targets the gathered axis (multiple Splits)");
  int64_t inserted = static_cast<int64_t>(ctx.tensor(1).rank()) - batch;
  for (auto& a : logical) {
    if (!a.is_split()) continue;  // Broadcast and Partial carry through (gather is a linear row selection)
    if (a.pos == axis) a = ShardAttr::partial(Reduction::kSum);
    else if (a.pos > axis) a.pos += inserted - 1;
  }
  return shard::with_layout(rt, canonical_or_reject(ctx, l->mesh(), logical, rt.shape()));
}

// ---- TopK ------------------------------------------------------------------

ir::TypePtr rule_topk(const ir::Op& op, const TypeCtx& ctx, const ir::TypePtr& r) {
  const ShardLayout& l = *shard_of(ctx, 0);
  for (size_t m = 0; m < l.attrs().size(); ++m)
    if (l.attrs()[m].is_partial())
      reject_partial(ctx, 0, l, m,
                     "topk indices identify the winning position, which a per-device partial value cannot recover");
  const ir::TensorType& x = ctx.tensor(0);
  int64_t axis = norm_axis(attr_int(op, "axis", -1), x.rank());
  auto logical = logical_or_reject(ctx, 0, l);
  for (const auto& a : logical)
    if (a.is_split() && a.pos == axis)
      reject_layout(ctx, 0, l, "not Split on the selected axis " + std::to_string(axis));
  const ir::TupleType* tu = ir::as_tuple(r);
  if (!tu) ctx.error("topk must produce a (values, indices) tuple");
  std::vector<ir::TypePtr> fields;
  for (const auto& f : tu->fields()) {
    const ir::TensorType& ft = *ir::as_tensor(f);
    fields.push_back(shard::with_layout(ft, canonical_or_reject(ctx, l.mesh(), logical, ft.shape())));
  }
  return ir::TupleType::make(std::move(fields));
}

// ---- Reshape ---------------------------------------------------------------
//
// Reshape over a genuine ShardLayout (docs/sharding.md, Reshape): a view over the
// input's layout positions, or one Split-divide; everything else fails closed.
// Worked examples on a 4-wide mesh axis x ("S" marks the Split-bound position,
// "|" a new-axis boundary):
//
//  View (canonical (8, 16) = positions (4S, 2, 16)):
//    -> (4, 32)        (4S | 2, 16)               Split(pos=0)
//    -> (1, 8, 16, 1)  (1 | 4S, 2 | 16 | 1)       size-1 axes insert freely
//    -> (8, 4, 4)      plain 16 would divide       rejected
//    -> (2, 64)        4S would divide as 2 | 2, 4 does not divide 2: rejected
//  Split-divide (verbose (8, 16) = positions (8S, 16): instance c owns rows
//  [2c, 2c + 2)):
//    -> (4, 2, 16)     8S = 4 | 2: the outer 4 factors into (4S, 4 / 4 = 1),
//                      the inner 2 is plain: (4S, 1 | 2 | 16), Split(pos=0);
//                      instance c owns new index c on axis 0, the same rows.
//    -> (4, 32)        (4S, 1 | 2, 16): the inner residual merges onward.
//    -> (2, 4, 16)     8S = 2 | 4, 4 does not divide 2 (instance c's 2 rows
//                      are half of one outer index): rejected.
//  Verbose (16, 8) = (16S, 8): -> (8, 2, 8) is (4S, 2 | 2 | 8) (instance c
//  owns outer indices 2c, 2c + 1); -> (4, 2, 2, 8) divides 16S across two
//  boundaries (deeper than one divide): rejected.
//  Mesh (x, y) = (2, 2), verbose (8, 8) = (8Sx, 8Sy): -> (4, 2, 8) is
//  (2Sx, 2 | 2 | 8Sy); -> (4, 16) puts 8Sx and 8Sy in one regroup
//  ({8Sx, 8Sy} -> {4, 16}): two Split-bound positions interact, rejected.
//
// Strides follow the divide (CuTe): a position (E):(s) divided as outer O,
// inner I = E / O is (O, I):(s*I, s), and O = (m, O/m):(s*I*O/m, s*I).

// One piece of an input layout position inside one new axis: the whole
// position, or a sub-factor of a position that divides across boundaries.
enum class Part : uint8_t { kWhole, kOuter, kMiddle, kInner };
struct Piece {
  size_t src;  // input layout position
  int64_t extent;
  Part part;
};
using AxisPieces = std::vector<Piece>;  // empty for a size-1 new axis

// The mesh axes whose Split binds layout position p.
std::vector<size_t> split_bindings(const ShardLayout& l, size_t p) {
  std::vector<size_t> out;
  for (size_t m = 0; m < l.attrs().size(); ++m)
    if (l.attrs()[m].is_split() && l.attrs()[m].pos == static_cast<int64_t>(p)) out.push_back(m);
  return out;
}

// Factors each new axis into pieces of the input positions, in order
// (unsharded size-1 positions drop). nullopt when the new shape does not
// factor: a boundary falls at no integral point of a position, or a
// symbolic extent is not one whole equal position.
std::optional<std::vector<AxisPieces>> factor_axes(const ShardLayout& l, const ir::Shape& new_shape) {
  std::vector<size_t> kept;
  for (size_t p = 0; p < l.shape().size(); ++p) {
    const ir::ShapeDim& d = l.shape()[p];
    if (!(d.is_static() && d.value() == 1 && split_bindings(l, p).empty())) kept.push_back(p);
  }
  std::vector<AxisPieces> axes;
  size_t k = 0;      // next kept position
  int64_t rest = 0;  // extent left of kept[k] after a divide; 0: none consumed
  for (const auto& d : new_shape) {
    AxisPieces run;
    if (!d.is_static()) {
      if (rest || k >= kept.size() || !l.shape()[kept[k]].structural_equal(d)) return std::nullopt;
      run.push_back({kept[k++], 0, Part::kWhole});
    }
    for (int64_t need = d.is_static() ? d.value() : 1; need > 1;) {
      if (k >= kept.size() || !l.shape()[kept[k]].is_static()) return std::nullopt;
      int64_t avail = rest ? rest : l.shape()[kept[k]].value();
      if (need % avail == 0) {  // the (rest of the) position ends inside this axis
        run.push_back({kept[k++], avail, rest ? Part::kInner : Part::kWhole});
        need /= avail;
        rest = 0;
      } else if (avail % need == 0) {  // a new-axis boundary falls inside the position
        run.push_back({kept[k], need, rest ? Part::kMiddle : Part::kOuter});
        rest = avail / need;
        need = 1;
      } else {
        return std::nullopt;
      }
    }
    axes.push_back(std::move(run));
  }
  if (rest || k != kept.size()) return std::nullopt;
  return axes;
}

// Regroups: maximal runs of new axes [first, last] chained by a position
// that divides across their boundaries. Only a regroup with a divide matters.
struct Regroup {
  size_t first, last;
  std::vector<const Piece*> pieces;
};
std::vector<Regroup> divide_regroups(const std::vector<AxisPieces>& axes) {
  std::vector<Regroup> out;
  bool open = false;  // the previous non-size-1 axis ended inside a position
  for (size_t a = 0; a < axes.size(); ++a) {
    if (axes[a].empty()) continue;
    if (!open) out.push_back({a, a, {}});
    out.back().last = a;
    for (const Piece& p : axes[a]) out.back().pieces.push_back(&p);
    Part tail = axes[a].back().part;
    open = tail == Part::kOuter || tail == Part::kMiddle;
  }
  std::vector<Regroup> divided;
  for (auto& g : out)
    for (const Piece* p : g.pieces)
      if (p->part != Part::kWhole) {
        divided.push_back(std::move(g));
        break;
      }
  return divided;
}

// The rule's restrictions on one regroup with a divide; "" when it is the
// accepted Split-divide.
std::string divide_violation(const ShardLayout& l, const Regroup& g) {
  std::set<size_t> split_srcs;
  size_t split_bindings_seen = 0;
  for (const Piece* p : g.pieces)
    if (split_srcs.insert(p->src).second) split_bindings_seen += split_bindings(l, p->src).size();
  for (const Piece* p : g.pieces) {
    if (p->part == Part::kWhole) continue;
    std::string what = "layout position " + std::to_string(p->src) + " (extent " + l.shape()[p->src].to_string() + ")";
    if (split_bindings(l, p->src).empty())
      return what + " is not Split-bound but divides across a new-axis boundary; only a Split-bound position may divide";
    if (p->part == Part::kMiddle)
      return "Split-bound " + what + " divides across more than one new-axis boundary: a device-owned block "
             "spanning a boundary deeper than one divide (arbitrary rank-N regroup) is not yet supported";
  }
  if (split_bindings_seen > 1)
    return "two or more Split-bound positions interact across the same regroup (new axes " + std::to_string(g.first) +
           ".." + std::to_string(g.last) + "); arbitrary rank-N regroup is not yet supported";
  for (const Piece* p : g.pieces) {
    if (p->part != Part::kOuter) continue;
    size_t m = split_bindings(l, p->src)[0];
    int64_t mesh_ext = l.mesh()->shape[m];
    if (p->extent % mesh_ext != 0)
      return "Split-bound layout position " + std::to_string(p->src) + " divides across a new-axis boundary with "
             "outer sub-factor " + std::to_string(p->extent) + ", which its bound mesh extent " +
             std::to_string(mesh_ext) + " (" + shard::mesh_axis_name(l, m) +
             ") does not evenly divide: the device-owned block would span the boundary";
  }
  return "";
}

// The result layout: positions per piece (a Split-divide's outer piece as
// (mesh_ext Split-bound, sub-factor / mesh_ext plain)), size-1 axes as (1):(0),
// Split references remapped.
ir::ShardLayoutPtr reshaped_layout(const ShardLayout& l, const std::vector<AxisPieces>& axes) {
  ir::Shape positions, strides;
  std::vector<int64_t> new_pos(l.shape().size(), -1);
  auto stride_of = [&](size_t src) { return l.strides() ? (*l.strides())[src] : ir::ShapeDim(0); };
  auto push = [&](ir::ShapeDim d, ir::ShapeDim s) {
    positions.push_back(std::move(d));
    strides.push_back(s);
  };
  for (const AxisPieces& run : axes) {
    if (run.empty()) push(ir::ShapeDim(1), 0);
    for (const Piece& p : run) {
      if (p.part == Part::kWhole) {
        new_pos[p.src] = static_cast<int64_t>(positions.size());
        push(l.shape()[p.src], stride_of(p.src));
        continue;
      }
      int64_t inner = l.shape()[p.src].value() / p.extent;  // kOuter: I; kInner: p.extent is I itself
      if (p.part == Part::kInner) {
        push(ir::ShapeDim(p.extent), stride_of(p.src));
        continue;
      }
      int64_t mesh_ext = l.mesh()->shape[split_bindings(l, p.src)[0]];
      new_pos[p.src] = static_cast<int64_t>(positions.size());
      push(ir::ShapeDim(mesh_ext), stride_of(p.src) * ir::ShapeDim(inner * (p.extent / mesh_ext)));
      push(ir::ShapeDim(p.extent / mesh_ext), stride_of(p.src) * ir::ShapeDim(inner));
    }
  }
  std::vector<ShardAttr> attrs = l.attrs();
  for (auto& a : attrs)
    if (a.is_split()) a.pos = new_pos[a.pos];
  return ShardLayout::make(l.mesh(), std::move(attrs), std::move(positions),
                           l.strides() ? std::optional(std::move(strides)) : std::nullopt);
}

ir::TypePtr rule_reshape(const ir::Op&, const TypeCtx& ctx, const ir::TypePtr& r) {
  const ir::TensorType& rt = result_tensor(ctx, r);
  const ShardLayout& l = *shard_of(ctx, 0);
  if (shard::all_broadcast(l)) return shard::with_layout(rt, nullptr);
  const std::string why = "a reshape expressible as a view over its layout positions " + l.Layout::to_string();
  auto axes = factor_axes(l, rt.shape());
  if (!axes) reject_layout(ctx, 0, l, why);
  for (const Regroup& g : divide_regroups(*axes)) {
    std::string v = divide_violation(l, g);
    if (!v.empty()) reject_layout(ctx, 0, l, why + " or one Split-divide: " + v);
  }
  return shard::with_layout(rt, reshaped_layout(l, *axes));
}

// ---- writes: InsertSlice / CacheUpdate --------------------------------------

// dst (operand 0) and the written value (operand `src`): a Partial dst needs
// src to carry the identical mesh and per-axis state; a complete dst rejects
// a Partial src. Other operands (offsets, positions) must be replicated.
ir::TypePtr write_rule(const TypeCtx& ctx, const ir::TypePtr& r, size_t src, const std::string& what) {
  const ir::TensorType& rt = result_tensor(ctx, r);
  const ShardLayout* d = shard_of(ctx, 0);
  const ShardLayout* s = shard_of(ctx, src);
  for (size_t i = 1; i < ctx.num_operands(); ++i)
    if (i != src) {
      const ShardLayout* o = shard_of(ctx, i);
      if (o && !shard::all_broadcast(*o)) reject_layout(ctx, i, *o, "unsharded or Broadcast (a position operand)");
    }
  if (d && d->has_partial()) {
    bool same = s && s->mesh()->structural_equal(*d->mesh()) && s->attrs().size() == d->attrs().size();
    if (same)
      for (size_t m = 0; m < d->attrs().size(); ++m) same &= d->attrs()[m] == s->attrs()[m];
    if (!same)
      ctx.operand_error(src, "sharded like the Partial " + what + " (the identical mesh and per-mesh-axis "
                             "ShardAttr state " + d->to_string() + "); " + broadcast_fix(ctx, 0, *d));
    return shard::with_layout(rt, ctx.tensor(0).layout());
  }
  if (s)
    for (size_t m = 0; m < s->attrs().size(); ++m)
      if (s->attrs()[m].is_partial())
        reject_partial(ctx, src, *s, m, "a complete " + what + " cannot preserve a Partial written into it");
  if (d && s && !d->mesh()->structural_equal(*s->mesh())) ctx.operand_error(src, "on the " + what + "'s mesh");
  if (s && !shard::all_broadcast(*s) && !d)
    reject_layout(ctx, src, *s, "unsharded or Broadcast when the " + what + " is unsharded");
  if (d) {
    auto logical = logical_or_reject(ctx, 0, *d);
    for (const auto& a : logical)
      if (a.is_split()) reject_layout(ctx, 0, *d, "not Split (a windowed write into a split " + what + ")");
  }
  return shard::with_layout(rt, ctx.tensor(0).layout());
}
ir::TypePtr rule_insert_slice(const ir::Op&, const TypeCtx& ctx, const ir::TypePtr& r) {
  return write_rule(ctx, r, 1, "dst");
}
ir::TypePtr rule_cache_update(const ir::Op&, const TypeCtx& ctx, const ir::TypePtr& r) {
  return write_rule(ctx, r, 3, "cache");
}

ir::TypePtr rule_cache_scatter(const ir::Op&, const TypeCtx& ctx, const ir::TypePtr& r) {
  return write_rule(ctx, r, 1, "cache");
}

// ---- RoPE / Conv2D -----------------------------------------------------------

// RoPE(q, k, cos, sin, pos): each branch keeps its input's layout; one
// Partial(sum) per branch when the caches and pos_ids are replicated.
ir::TypePtr rule_rope(const ir::Op&, const TypeCtx& ctx, const ir::TypePtr& r) {
  require_replicated(ctx, 2, "a Partial on a secondary cache / index input is rejected");
  const ir::TupleType* tu = ir::as_tuple(r);
  if (!tu || tu->fields().size() != 2) ctx.error("rope must produce a (q_rope, k_rope) tuple");
  std::vector<ir::TypePtr> fields;
  for (size_t i = 0; i < 2; ++i) {
    const ShardLayout* l = shard_of(ctx, i);
    if (l) {
      for (size_t m = 0; m < l->attrs().size(); ++m)
        if (l->attrs()[m].is_partial() && l->attrs()[m].reduction != Reduction::kSum)
          reject_partial(ctx, i, *l, m, "rope is linear in q / k: only reduction=\"sum\" commutes");
      auto logical = logical_or_reject(ctx, i, *l);
      for (const auto& a : logical)
        if (a.is_split() && a.pos == static_cast<int64_t>(ctx.tensor(i).rank()) - 1)
          reject_layout(ctx, i, *l, "not Split on the rotated last axis");
    }
    fields.push_back(shard::with_layout(*ir::as_tensor(tu->fields()[i]), ctx.tensor(i).layout()));
  }
  return ir::TupleType::make(std::move(fields));
}

// Conv2D(x, w[, bias]): multilinear; a Partial(sum) on x survives only when w
// is replicated and there is no bias (with one the op is affine); any Partial
// on w or bias, and any Split, fail closed.
ir::TypePtr rule_conv2d(const ir::Op&, const TypeCtx& ctx, const ir::TypePtr& r) {
  const ir::TensorType& rt = result_tensor(ctx, r);
  require_replicated(ctx, 1, "a secondary Partial on weight or bias cannot be preserved by the result layout");
  const ShardLayout* l = shard_of(ctx, 0);
  if (!l) return r;
  const ir::TupleType* bias = ir::as_tuple(ctx.type(2));
  bool has_bias = bias ? !bias->fields().empty() : ir::as_tensor(ctx.type(2)) != nullptr;
  std::vector<ShardAttr> out = l->attrs();
  for (size_t m = 0; m < out.size(); ++m) {
    if (out[m].is_partial() && out[m].reduction != Reduction::kSum)
      reject_partial(ctx, 0, *l, m, "conv2d is linear in its input: only reduction=\"sum\" commutes");
    // With a bias conv2d is affine: summing the instances would add it once each.
    if (out[m].is_partial() && has_bias)
      reject_partial(ctx, 0, *l, m, "conv2d with a bias is affine in its input, not linear: summing the per-instance "
                                    "results would add the bias once per instance");
    if (out[m].is_split()) reject_layout(ctx, 0, *l, "not Split (a sharded conv2d input)");
  }
  return shard::with_layout(rt, canonical_or_reject(ctx, l->mesh(), out, rt.shape()));
}

bool any_shard(const std::vector<ir::TypePtr>& types) {
  for (const auto& t : types)
    for (const auto& leaf : ir::flatten_tensor_types(t))
      if (ir::as_shard_layout(leaf->layout())) return true;
  return false;
}

ir::TypePtr strip(const ir::TypePtr& t) {
  if (const ir::TensorType* tt = ir::as_tensor(t))
    return ir::as_shard_layout(tt->layout()) ? shard::with_layout(*tt, nullptr) : t;
  if (const ir::TupleType* tu = ir::as_tuple(t)) {
    std::vector<ir::TypePtr> f;
    for (const auto& x : tu->fields()) f.push_back(strip(x));
    return ir::TupleType::make(std::move(f));
  }
  return t;
}

// An op without a rule: the first sharded operand is rejected, with the fix.
[[noreturn]] void fail_closed(const ir::Op& op, const TypeCtx& sharded) {
  for (size_t i = 0; i < sharded.num_operands(); ++i)
    for (const auto& leaf : ir::flatten_tensor_types(sharded.type(i)))
      if (const ShardLayout* l = ir::as_shard_layout(leaf->layout()))
        sharded.operand_error(i, "unsharded: '" + op.surface_name() + "' has no sharding rule (fail closed); " +
                                     broadcast_fix(sharded, i, *l) + " or take local(x)");
  ir::fail(ir::ErrorKind::kInternal, "no sharded operand where the driver found one");
}

// The record's sharding statement applied to a typed application.
ir::TypePtr apply_shard_spec(const OpInfo& info, const ir::Op& op, const TypeCtx& sharded, const ir::TypePtr& result) {
  const ShardSpec& spec = info.shard;
  if (spec.kind == ShardSpec::Kind::kElementwise) {
    const Commutes& c = spec.commutes_for(op.surface_name());
    return elementwise(sharded, result, c, op.surface_name() + " " + c.reason);
  }
  if (spec.kind == ShardSpec::Kind::kRule && spec.rule_fn) return spec.rule_fn(op, sharded, result);
  fail_closed(op, sharded);  // fail_closed(), or nothing stated
}

}  // namespace

namespace shard_rules {
const ShardRuleFn binary = rule_binary;
const ShardRuleFn where = rule_where;
const ShardRuleFn cast = rule_cast;
const ShardRuleFn reduce = rule_reduce;
const ShardRuleFn matmul = rule_matmul;
const ShardRuleFn normalize = rule_normalize;
const ShardRuleFn gather = rule_gather;
const ShardRuleFn topk = rule_topk;
const ShardRuleFn reshape = rule_reshape;
const ShardRuleFn insert_slice = rule_insert_slice;
const ShardRuleFn cache_update = rule_cache_update;
const ShardRuleFn cache_scatter = rule_cache_scatter;
const ShardRuleFn rope = rule_rope;
const ShardRuleFn conv2d = rule_conv2d;
}  // namespace shard_rules

bool aligns_replicated_operands(const ShardSpec& spec) {
  if (spec.kind == ShardSpec::Kind::kElementwise) return true;
  return spec.kind == ShardSpec::Kind::kRule &&
         (spec.rule_fn == rule_binary || spec.rule_fn == rule_where || spec.rule_fn == rule_cast ||
          spec.rule_fn == rule_normalize);
}

ir::TypePtr infer_op_type(const OpInfo& info, const ir::Op& op, std::vector<ir::TypePtr> types,
                          const ir::Span& span) {
  if (!info.typeinfer)
    ir::fail(ir::ErrorKind::kUnsupported, "op '" + info.name + "' has no typeinfer in its definition");
  if (info.shard.kind == ShardSpec::Kind::kShardAware || !any_shard(types)) {
    TypeCtx ctx(op.surface_name(), &info.operands, std::move(types), span);
    return info.typeinfer(op, ctx);
  }
  TypeCtx sharded(op.surface_name(), &info.operands, types, span);
  std::vector<ir::TypePtr> plain;
  for (const auto& t : types) plain.push_back(strip(t));
  TypeCtx ctx(op.surface_name(), &info.operands, std::move(plain), span);
  ir::TypePtr result = info.typeinfer(op, ctx);
  return apply_shard_spec(info, op, sharded, result);
}

}  // namespace tf::ops
