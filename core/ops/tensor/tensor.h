// The tensor family: structural tensor ops. Consensus ops
// follow torch / numpy.
#pragma once

#include <optional>
#include <string_view>

#include "core/ir/expr.h"
#include "core/ir/op.h"

namespace tf::ops {

// Convert the element dtype.
struct Cast final : ir::Op {
  explicit Cast(ir::DType d) : dtype(d) {}
  ir::DType dtype;
  std::string_view name() const override { return "Cast"; }
  std::string surface_name() const override { return "cast"; }
  std::vector<ir::Attr> attrs() const override { return {{"dtype", dtype}}; }
};

// X(enumerator, name)
#define TF_REDUCE_KIND_LIST(X) \
  X(kMean, "mean")             \
  X(kSum, "sum")               \
  X(kMax, "max")               \
  X(kAbsMax, "abs_max")

enum class ReduceKind : uint8_t {
#define TF_X(e, s) e,
  TF_REDUCE_KIND_LIST(TF_X)
#undef TF_X
};
std::string_view reduce_kind_name(ReduceKind k);
std::optional<ReduceKind> reduce_kind_from_name(std::string_view name);

// Reduce x over axes (numpy rules; axes may be negative, must be distinct).
struct Reduce final : ir::Op {
  Reduce(std::vector<int64_t> a, bool k, ReduceKind r) : axes(std::move(a)), keepdim(k), kind(r) {}
  std::vector<int64_t> axes;
  bool keepdim = true;
  ReduceKind kind = ReduceKind::kMean;
  std::string_view name() const override { return "Reduce"; }
  std::string surface_name() const override { return "reduce"; }
  std::vector<ir::Attr> attrs() const override {
    return {{"axes", axes}, {"keepdim", keepdim}, {"kind", std::string(reduce_kind_name(kind))}};
  }
};

// Reshape to new_shape (unsharded); the element count must be unchanged.
struct Reshape final : ir::Op {
  explicit Reshape(ir::Shape s) : new_shape(std::move(s)) {}
  ir::Shape new_shape;
  std::string_view name() const override { return "Reshape"; }
  std::string surface_name() const override { return "reshape"; }
  std::vector<ir::Attr> attrs() const override { return {{"shape", new_shape}}; }
};

// Permute axes; axes is a full permutation (negative entries allowed).
struct Transpose final : ir::Op {
  explicit Transpose(std::vector<int64_t> a) : axes(std::move(a)) {}
  std::vector<int64_t> axes;
  std::string_view name() const override { return "Transpose"; }
  std::string surface_name() const override { return "transpose"; }
  std::vector<ir::Attr> attrs() const override { return {{"axes", axes}}; }
};

// Strided window per axis: [begin, end) step strides, Python slice semantics
// (negative static bounds count from the end and are clamped). One entry per
// axis of x; rank is preserved.
struct Slice final : ir::Op {
  Slice(ir::Shape b, ir::Shape e, std::vector<int64_t> s)
      : begin(std::move(b)), end(std::move(e)), strides(std::move(s)) {}
  ir::Shape begin, end;
  std::vector<int64_t> strides;
  std::string_view name() const override { return "Slice"; }
  std::string surface_name() const override { return "slice"; }
  std::vector<ir::Attr> attrs() const override {
    return {{"begin", begin}, {"end", end}, {"strides", strides}};
  }
};

// A zero-initialized tensor.
struct Zeros final : ir::Op {
  Zeros(ir::Shape s, ir::DType d, ir::StorageKind st) : shape(std::move(s)), dtype(d), storage(st) {}
  ir::Shape shape;
  ir::DType dtype;
  ir::StorageKind storage = ir::StorageKind::kGmem;
  std::string_view name() const override { return "Zeros"; }
  std::string surface_name() const override { return "zeros"; }
  std::vector<ir::Attr> attrs() const override {
    return {{"shape", shape}, {"dtype", dtype}, {"storage", storage}};
  }
};

// The resolved [begin, end) and extent of one Slice axis of extent `dim`.
struct SliceAxis {
  ir::ShapeDim begin, end, extent;
};
// Python slice normalization for one axis; static bounds are clamped.
SliceAxis resolve_slice_axis(const ir::ShapeDim& begin, const ir::ShapeDim& end, int64_t stride,
                             const ir::ShapeDim& dim);

// ---- Indexing and writes (typeinfer in indexing.cc) ---------------------------

// out[c.., i.., t..] = x[c.., indices[b.., i..], t..]; the first batch_dims
// axes of x and indices are shared (batching only when batch_dims > 0).
struct Gather final : ir::Op {
  Gather(int64_t a, int64_t b) : axis(a), batch_dims(b) {}
  int64_t axis;
  int64_t batch_dims = 0;
  std::string_view name() const override { return "Gather"; }
  std::string surface_name() const override { return "gather"; }
  std::vector<ir::Attr> attrs() const override { return {{"axis", axis}, {"batch_dims", batch_dims}}; }
};

// Operands (dst, update, offsets): offsets is a rank-0 integer tensor (rank-1
// dst) or a Tuple of them, one per axis. `literal` holds, per offset, the
// value when the builder knew it as a literal (typeinfer checks those
// windows; the others are checked at run time). It is derived from the
// offset operands (see insert_slice_literals), so it is not a printed attr.
struct InsertSlice final : ir::Op {
  explicit InsertSlice(std::vector<std::optional<int64_t>> lit = {}) : literal(std::move(lit)) {}
  std::vector<std::optional<int64_t>> literal;
  std::string_view name() const override { return "InsertSlice"; }
  std::string surface_name() const override { return "insert_slice"; }
  std::vector<ir::Attr> attrs() const override;
  std::vector<ir::Attr> surface_attrs() const override { return {}; }
};

// Operands (cache, cur_pos, s, new): writes new[:, :s] at cache[:, cur_pos:].
struct CacheUpdate final : ir::Op {
  std::string_view name() const override { return "CacheUpdate"; }
  std::string surface_name() const override { return "cache_update"; }
  std::vector<ir::Attr> attrs() const override { return {}; }
};

// Operands (cache, new, pos): cache_update with one position per batch row,
// cache[b, pos[b] : pos[b] + new.len] = new[b] (an extension beyond the HIR
// catalog: a paged / per-sequence KV cache's write).
struct CacheScatter final : ir::Op {
  std::string_view name() const override { return "CacheScatter"; }
  std::string surface_name() const override { return "cache_scatter"; }
  std::vector<ir::Attr> attrs() const override { return {}; }
};

// ---- Bits and creation (typeinfer in bits.cc) -----------------------------------

// The same bits read as another dtype of the same width (torch's
// Tensor.view(dtype) for equal widths): no value changes, NaN payloads kept.
struct Bitcast final : ir::Op {
  explicit Bitcast(ir::DType d) : dtype(d) {}
  ir::DType dtype;
  std::string_view name() const override { return "Bitcast"; }
  std::string surface_name() const override { return "bitcast"; }
  std::vector<ir::Attr> attrs() const override { return {{"dtype", dtype}}; }
};

// The rank-1 tensor [start, start + step, ..., start + (n - 1) * step] of
// dtype: torch.arange(start, start + n * step, step) with the element count
// given, so it may be a dim variable.
struct Arange final : ir::Op {
  Arange(ir::ShapeDim count, double s, double st, ir::DType d) : n(std::move(count)), start(s), step(st), dtype(d) {}
  ir::ShapeDim n;
  double start = 0, step = 1;
  ir::DType dtype;
  std::string_view name() const override { return "Arange"; }
  std::string surface_name() const override { return "arange"; }
  std::vector<ir::Attr> attrs() const override {
    return {{"n", ir::Shape{n}}, {"start", start}, {"step", step}, {"dtype", dtype}};
  }
};

// (values, indices) of the k largest (or smallest) entries along axis.
struct TopK final : ir::Op {
  TopK(ir::ShapeDim kk, int64_t a, bool l, bool s) : k(std::move(kk)), axis(a), largest(l), sorted(s) {}
  ir::ShapeDim k;
  int64_t axis = -1;
  bool largest = true;
  bool sorted = true;
  std::string_view name() const override { return "TopK"; }
  std::string surface_name() const override { return "topk"; }
  std::vector<ir::Attr> attrs() const override {
    return {{"k", ir::Shape{k}}, {"axis", axis}, {"largest", largest}, {"sorted", sorted}};
  }
};

// ---- Combining and shape queries (typeinfer in combine.cc) --------------------

// Operand: a Tuple of tensors joined along an existing axis.
struct Concat final : ir::Op {
  explicit Concat(int64_t a) : axis(a) {}
  int64_t axis;
  std::string_view name() const override { return "Concat"; }
  std::string surface_name() const override { return "concat"; }
  std::vector<ir::Attr> attrs() const override { return {{"axis", axis}}; }
};

// Operand: a Tuple of equal-shape tensors joined along a new axis.
struct Stack final : ir::Op {
  explicit Stack(int64_t a) : axis(a) {}
  int64_t axis;
  std::string_view name() const override { return "Stack"; }
  std::string surface_name() const override { return "stack"; }
  std::vector<ir::Attr> attrs() const override { return {{"axis", axis}}; }
};

// x's shape as an i64 tensor of length rank(x) (a "shape value").
struct ShapeOf final : ir::Op {
  std::string_view name() const override { return "ShapeOf"; }
  std::string surface_name() const override { return "shape_of"; }
  std::vector<ir::Attr> attrs() const override { return {}; }
};

// rank(x) as a rank-0 i64 tensor.
struct Rank final : ir::Op {
  std::string_view name() const override { return "Rank"; }
  std::string surface_name() const override { return "rank"; }
  std::vector<ir::Attr> attrs() const override { return {}; }
};

// The InsertSlice `literal` list for an offsets operand (a Constant or a
// Tuple of Exprs): each Constant's value, nullopt for a runtime operand.
std::vector<std::optional<int64_t>> insert_slice_literals(const ir::ExprPtr& offsets);

// Shared typing helpers of the tensor family.
// A rank-0 (or all-literal-1) tensor of an integer dtype; `i32_only` narrows it.
bool is_int_scalar(const ir::TensorType& t, bool i32_only = false);

}  // namespace tf::ops
