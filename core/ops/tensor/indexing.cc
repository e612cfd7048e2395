// The indexing and write ops: Gather, InsertSlice, CacheUpdate, TopK — their
// typeinfer and their definitions (each names its rule in shard_rules.h).
#include <set>

#include "core/ops/registry.h"
#include "core/ops/sharding/shard_rules.h"
#include "core/ops/tensor/tensor.h"

namespace tf::ops {
namespace {

std::string str(int64_t v) { return std::to_string(v); }

void require_unsharded(const TypeCtx& ctx, size_t i, const ir::TensorType& t) {
  if (t.layout()) ctx.operand_error(i, "an unsharded tensor (sharding rules for this op are not supported yet)");
}

bool known_equal(const ir::ShapeDim& a, const ir::ShapeDim& b) { return a.structural_equal(b); }

ir::TypePtr infer_gather(const ir::Op& op, TypeCtx& ctx) {
  auto& g = static_cast<const Gather&>(op);
  const ir::TensorType& x = ctx.tensor(0);
  const ir::TensorType& idx = ctx.tensor(1);
  require_unsharded(ctx, 0, x);
  require_unsharded(ctx, 1, idx);
  if (x.rank() == 0) ctx.operand_error(0, "of rank >= 1");
  if (idx.dtype() != ir::DType::kI32 && idx.dtype() != ir::DType::kI64)
    ctx.operand_error(1, "an i32 or i64 tensor");
  const int64_t axis = normalize_axis(ctx, g.axis, x.rank());
  const int64_t b = g.batch_dims;
  if (b < 0 || b > axis || b > static_cast<int64_t>(idx.rank()))
    ctx.error("batch_dims must satisfy 0 <= batch_dims <= min(axis, rank(indices)) = min(" + str(axis) + ", " +
              str(static_cast<int64_t>(idx.rank())) + "), but got " + str(b));
  for (int64_t i = 0; i < b; ++i)
    if (!known_equal(x.shape()[i], idx.shape()[i]))
      ctx.operand_error(1, "equal to x on batch axis " + str(i) + " (" + x.shape()[i].to_string() + ")");
  ir::Shape out(x.shape().begin(), x.shape().begin() + axis);
  out.insert(out.end(), idx.shape().begin() + b, idx.shape().end());
  out.insert(out.end(), x.shape().begin() + axis + 1, x.shape().end());
  return ir::TensorType::make(out, x.dtype(), nullptr, result_storage({&x, &idx}));
}

ir::TypePtr infer_insert_slice(const ir::Op& op, TypeCtx& ctx) {
  auto& is = static_cast<const InsertSlice&>(op);
  const ir::TensorType& dst = ctx.tensor(0);
  const ir::TensorType& up = ctx.tensor(1);
  require_unsharded(ctx, 0, dst);
  require_unsharded(ctx, 1, up);
  if (dst.rank() == 0) ctx.operand_error(0, "of rank >= 1");
  if (up.rank() != dst.rank()) ctx.operand_error(1, "of dst's rank (" + str(static_cast<int64_t>(dst.rank())) + ")");
  if (up.dtype() != dst.dtype())
    ctx.operand_error(1, "of dst's dtype (" + std::string(ir::dtype_name(dst.dtype())) + ")");
  const bool bare_ok = dst.rank() == 1;
  if (!bare_ok && ir::as_tensor(ctx.type(2)))
    ctx.operand_error(2, "a tuple of " + str(static_cast<int64_t>(dst.rank())) +
                             " integer scalars (a bare scalar offset is for a rank-1 dst only)");
  std::vector<const ir::TensorType*> offs = ctx.tensors(2, bare_ok);
  if (offs.size() != dst.rank())
    ctx.operand_error(2, "a tuple of one offset per axis of dst (" + str(static_cast<int64_t>(dst.rank())) + ")");
  for (const auto* o : offs)
    if (!is_int_scalar(*o)) ctx.operand_error(2, "rank-0 i32 / i64 scalars");
  if (!is.literal.empty() && is.literal.size() != dst.rank())
    ctx.error("has " + str(static_cast<int64_t>(is.literal.size())) + " literal offsets for a rank-" +
              str(static_cast<int64_t>(dst.rank())) + " dst");
  for (size_t a = 0; a < dst.rank(); ++a) {
    const ir::ShapeDim& n = dst.shape()[a];
    const ir::ShapeDim& u = up.shape()[a];
    if (n.is_static() && u.is_static() && u.value() > n.value())
      ctx.operand_error(1, "no longer than dst on axis " + str(static_cast<int64_t>(a)) + " (" + n.to_string() + ")");
    if (is.literal.empty() || !is.literal[a]) continue;
    const int64_t off = *is.literal[a];
    if (off < 0 || (n.is_static() && u.is_static() && off + u.value() > n.value()))
      ctx.error("window [" + str(off) + ", " + str(off) + " + " + u.to_string() + ") on axis " +
                str(static_cast<int64_t>(a)) + " is out of bounds for dst extent " + n.to_string());
  }
  return ir::TensorType::make(dst.shape(), dst.dtype(), nullptr, dst.storage());
}

ir::TypePtr infer_cache_update(const ir::Op&, TypeCtx& ctx) {
  const ir::TensorType& cache = ctx.tensor(0);
  const ir::TensorType& new_ = ctx.tensor(3);
  require_unsharded(ctx, 0, cache);
  require_unsharded(ctx, 3, new_);
  if (cache.rank() != 4) ctx.operand_error(0, "rank-4 [B, len, kv_heads, head_dim]");
  if (new_.rank() != 4) ctx.operand_error(3, "rank-4 [B, len, kv_heads, head_dim]");
  if (new_.dtype() != cache.dtype())
    ctx.operand_error(3, "of cache's dtype (" + std::string(ir::dtype_name(cache.dtype())) + ")");
  const char* names[] = {"B", "len", "kv_heads", "head_dim"};
  for (size_t a : {0u, 2u, 3u})
    if (!known_equal(cache.shape()[a], new_.shape()[a]))
      ctx.operand_error(3, std::string("equal to cache on ") + names[a] + " (" + cache.shape()[a].to_string() + ")");
  const ir::ShapeDim &cl = cache.shape()[1], &nl = new_.shape()[1];
  if (cl.is_static() && nl.is_static() && nl.value() > cl.value())
    ctx.operand_error(3, "no longer than cache on len (" + cl.to_string() + ")");
  for (size_t i : {1u, 2u})
    if (!is_int_scalar(ctx.tensor(i), /*i32_only=*/true)) ctx.operand_error(i, "an i32 scalar tensor");
  return ir::TensorType::make(cache.shape(), cache.dtype(), nullptr, cache.storage());
}

// cache [B, len, ...], new [B, n, ...] (the same trailing extents and dtype),
// pos [B] of i32 / i64. Rank 2 and up: a KV cache's [B, len, heads, dim] and
// a flat [B, len] both qualify.
ir::TypePtr infer_cache_scatter(const ir::Op&, TypeCtx& ctx) {
  const ir::TensorType& cache = ctx.tensor(0);
  const ir::TensorType& new_ = ctx.tensor(1);
  const ir::TensorType& pos = ctx.tensor(2);
  require_unsharded(ctx, 0, cache);
  require_unsharded(ctx, 1, new_);
  require_unsharded(ctx, 2, pos);
  if (cache.rank() < 2) ctx.operand_error(0, "of rank >= 2 [B, len, ...]");
  if (new_.rank() != cache.rank())
    ctx.operand_error(1, "of cache's rank (" + str(static_cast<int64_t>(cache.rank())) + ")");
  if (new_.dtype() != cache.dtype())
    ctx.operand_error(1, "of cache's dtype (" + std::string(ir::dtype_name(cache.dtype())) + ")");
  for (size_t a = 0; a < cache.rank(); ++a)
    if (a != 1 && !known_equal(cache.shape()[a], new_.shape()[a]))
      ctx.operand_error(1, "equal to cache on axis " + str(static_cast<int64_t>(a)) + " (" +
                               cache.shape()[a].to_string() + ")");
  const ir::ShapeDim &cl = cache.shape()[1], &nl = new_.shape()[1];
  if (cl.is_static() && nl.is_static() && nl.value() > cl.value())
    ctx.operand_error(1, "no longer than cache on len (" + cl.to_string() + ")");
  if (pos.rank() != 1 || (pos.dtype() != ir::DType::kI32 && pos.dtype() != ir::DType::kI64) ||
      !known_equal(pos.shape()[0], cache.shape()[0]))
    ctx.operand_error(2, "a rank-1 i32 / i64 tensor of one position per batch row [" + cache.shape()[0].to_string() + "]");
  return ir::TensorType::make(cache.shape(), cache.dtype(), nullptr, cache.storage());
}

// Rationale (TopK's k bound): k's upper bound is checked only when it composes
// statically (ShapeDim::upper_bound); otherwise the check fails open.
ir::TypePtr infer_topk(const ir::Op& op, TypeCtx& ctx) {
  auto& t = static_cast<const TopK&>(op);
  const ir::TensorType& x = ctx.tensor(0);
  require_unsharded(ctx, 0, x);
  if (x.rank() == 0) ctx.operand_error(0, "of rank >= 1");
  if (ir::is_bool(x.dtype())) ctx.operand_error(0, "a numeric (non-bool) tensor");
  const int64_t axis = normalize_axis(ctx, t.axis, x.rank());
  const ir::ShapeDim& len = x.shape()[axis];
  if (t.k.is_static() && t.k.value() < 0) ctx.error("k must be non-negative, but got " + t.k.to_string());
  if (len.is_static()) {
    std::optional<int64_t> hi = t.k.upper_bound();
    if (hi && *hi > len.value())
      ctx.error("k (" + t.k.to_string() + ", at most " + str(*hi) + ") must not exceed the length " +
                len.to_string() + " of axis " + str(axis));
  }
  std::map<std::string, std::pair<int64_t, int64_t>> kvars, xvars;
  t.k.collect_vars(&kvars);
  for (const auto& d : x.shape()) d.collect_vars(&xvars);
  for (const auto& [name, range] : kvars)
    if (!xvars.count(name))
      ctx.error("k (" + t.k.to_string() + ") uses DimVar " + name + ", which does not appear in x's shape " +
                ir::shape_to_string(x.shape()) + "; k must be resolvable from x");
  ir::Shape out = x.shape();
  out[axis] = t.k;
  return ir::TupleType::make({ir::TensorType::make(out, x.dtype(), nullptr, x.storage()),
                              ir::TensorType::make(out, ir::DType::kI64, nullptr, x.storage())});
}

}  // namespace

bool is_int_scalar(const ir::TensorType& t, bool i32_only) {
  if (i32_only ? t.dtype() != ir::DType::kI32 : !ir::is_int(t.dtype())) return false;
  for (const auto& d : t.shape())
    if (!d.is_static() || d.value() != 1) return false;
  return true;
}

std::vector<std::optional<int64_t>> insert_slice_literals(const ir::ExprPtr& offsets) {
  auto literal = [](const ir::ExprPtr& e) -> std::optional<int64_t> {
    if (e->kind() == ir::ExprKind::kConstant) return ir::expr_as<ir::Constant>(e)->int_value();
    return std::nullopt;
  };
  if (offsets->kind() != ir::ExprKind::kTuple) return {literal(offsets)};
  std::vector<std::optional<int64_t>> out;
  for (const auto& f : ir::expr_as<ir::Tuple>(offsets)->fields()) out.push_back(literal(f));
  return out;
}

std::vector<ir::Attr> InsertSlice::attrs() const {
  std::vector<int64_t> values, known;
  for (const auto& v : literal) {
    values.push_back(v.value_or(0));
    known.push_back(v.has_value());
  }
  return {{"literal_offsets", values}, {"literal_known", known}};
}

namespace {

using Attrs = std::vector<ir::AttrValue>;

OpInfo gather_def() {
  OpInfo d;
  d.name = "Gather";
  d.summary = "Gather along one axis, optionally batched";
  d.operands = {"x", "indices"};
  d.attrs = {"axis", "batch_dims"};
  d.surfaces = {{"gather",
                 {tensor_param("x"), tensor_param("indices"), attr_param("axis", AttrType::kInt),
                  attr_param("batch_dims", AttrType::kInt, int64_t{0})},
                 [](const Attrs& a) -> ir::OpPtr {
                   return std::make_shared<Gather>(attr_arg<int64_t>(a, 0), attr_arg<int64_t>(a, 1));
                 }}};
  d.typeinfer = infer_gather;
  d.shard = ShardSpec::rule(shard_rules::gather);
  return d;
}

OpInfo insert_slice_def() {
  OpInfo d;
  d.name = "InsertSlice";
  d.summary = "Write update into a window of dst";
  d.operands = {"dst", "update", "offsets"};
  d.attrs = {"literal_offsets", "literal_known"};
  d.surfaces = {{"insert_slice", {tensor_param("dst"), tensor_param("update"), tuple_param("offsets")},
                 [](const Attrs&) -> ir::OpPtr { return std::make_shared<InsertSlice>(); }}};
  d.typeinfer = infer_insert_slice;
  d.shard = ShardSpec::rule(shard_rules::insert_slice);
  return d;
}

OpInfo cache_update_def() {
  OpInfo d;
  d.name = "CacheUpdate";
  d.summary = "Write new[:, :s] into cache at cur_pos";
  d.operands = {"cache", "cur_pos", "s", "new"};
  d.surfaces = {{"cache_update",
                 {tensor_param("cache"), tensor_param("cur_pos"), tensor_param("s"), tensor_param("new")},
                 [](const Attrs&) -> ir::OpPtr { return std::make_shared<CacheUpdate>(); }}};
  d.typeinfer = infer_cache_update;
  d.shard = ShardSpec::rule(shard_rules::cache_update);
  return d;
}

OpInfo cache_scatter_def() {
  OpInfo d;
  d.name = "CacheScatter";
  d.summary = "Write new[b] into cache[b] at pos[b], one position per batch row";
  d.operands = {"cache", "new", "pos"};
  d.surfaces = {{"cache_scatter", {tensor_param("cache"), tensor_param("new"), tensor_param("pos")},
                 [](const Attrs&) -> ir::OpPtr { return std::make_shared<CacheScatter>(); }}};
  d.typeinfer = infer_cache_scatter;
  d.shard = ShardSpec::rule(shard_rules::cache_scatter);
  return d;
}

OpInfo topk_def() {
  OpInfo d;
  d.name = "TopK";
  d.summary = "The k largest / smallest entries along an axis and their i64 indices";
  d.operands = {"x"};
  d.attrs = {"k", "axis", "largest", "sorted"};
  d.surfaces = {{"topk",
                 {tensor_param("x"), attr_param("k", AttrType::kDim), attr_param("axis", AttrType::kInt, int64_t{-1}),
                  attr_param("largest", AttrType::kBool, true), attr_param("sorted", AttrType::kBool, true)},
                 [](const Attrs& a) -> ir::OpPtr {
                   const ir::Shape& k = attr_arg<ir::Shape>(a, 0);  // one dim (kDim)
                   return std::make_shared<TopK>(k[0], attr_arg<int64_t>(a, 1), attr_arg<bool>(a, 2),
                                                 attr_arg<bool>(a, 3));
                 }}};
  d.typeinfer = infer_topk;
  d.shard = ShardSpec::rule(shard_rules::topk);
  return d;
}

}  // namespace

void register_indexing_ops(Registry& r) {
  r.add(gather_def());
  r.add(insert_slice_def());
  r.add(cache_update_def());
  r.add(cache_scatter_def());
  r.add(topk_def());
}

}  // namespace tf::ops
