// ir/hir/tensor: structural tensor ops (spec "ir/hir/tensor"). Consensus ops
// follow torch / numpy.
#pragma once

#include <optional>
#include <string_view>

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

}  // namespace tf::ops
