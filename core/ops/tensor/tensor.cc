#include "core/ops/tensor/tensor.h"

#include <algorithm>
#include <functional>
#include <set>

#include "core/ops/registry.h"

namespace tf::ops {
namespace {

constexpr std::string_view kReduceNames[] = {
#define TF_X(e, s) s,
    TF_REDUCE_KIND_LIST(TF_X)
#undef TF_X
};

ir::TypePtr infer_cast(const ir::Op& op, TypeCtx& ctx) {
  const ir::TensorType& x = ctx.tensor(0);
  return ir::TensorType::make(x.shape(), static_cast<const Cast&>(op).dtype, x.layout(), x.storage());
}

ir::TypePtr infer_reduce(const ir::Op& op, TypeCtx& ctx) {
  auto& r = static_cast<const Reduce&>(op);
  const ir::TensorType& x = ctx.tensor(0);
  if (r.axes.empty()) ctx.error("axes must name at least one axis");
  if (r.kind == ReduceKind::kMean && !ir::is_float(x.dtype()))
    ctx.operand_error(0, "a floating-point tensor for kind \"mean\"");
  if (ir::is_bool(x.dtype()) && r.kind != ReduceKind::kMax)
    ctx.operand_error(0, "a numeric tensor for kind \"" + std::string(reduce_kind_name(r.kind)) + "\"");
  std::set<int64_t> reduced;
  for (int64_t a : r.axes)
    if (!reduced.insert(normalize_axis(ctx, a, x.rank(), "axes entry")).second)
      ctx.error("axes must be distinct, but axis " + std::to_string(a) + " repeats");
  ir::Shape out;
  for (size_t i = 0; i < x.rank(); ++i) {
    if (!reduced.count(static_cast<int64_t>(i))) out.push_back(x.shape()[i]);
    else if (r.keepdim) out.push_back(1);
  }
  return ir::TensorType::make(out, x.dtype(), nullptr, x.storage());
}

// A product of dims as (static coefficient, sorted symbolic factors), so that
// (N, 64, 64) and (N, 4096) are recognized as the same element count.
std::pair<int64_t, std::vector<std::string>> factor_numel(const ir::Shape& s) {
  int64_t coeff = 1;
  std::vector<std::string> sym;
  std::function<void(const ir::ShapeDim&)> factor = [&](const ir::ShapeDim& d) {
    if (d.is_static()) coeff *= d.value();
    else if (d.kind() == ir::DimKind::kMul) factor(d.lhs()), factor(d.rhs());
    else sym.push_back(d.to_string());
  };
  for (const auto& d : s) factor(d);
  std::sort(sym.begin(), sym.end());
  if (coeff == 0) sym.clear();
  return {coeff, sym};
}

ir::TypePtr infer_reshape(const ir::Op& op, TypeCtx& ctx) {
  auto& r = static_cast<const Reshape&>(op);
  const ir::TensorType& x = ctx.tensor(0);
  for (const auto& d : r.new_shape)
    if (d.is_static() && d.value() < 0)
      ctx.error("shape entries must be non-negative, but got " + ir::shape_to_string(r.new_shape));
  if (factor_numel(x.shape()) != factor_numel(r.new_shape))
    ctx.operand_error(0, "a tensor with as many elements as " + ir::shape_to_string(r.new_shape));
  if (x.layout()) ctx.operand_error(0, "an unsharded tensor (sharded Reshape is not supported yet)");
  return ir::TensorType::make(r.new_shape, x.dtype(), nullptr, x.storage());
}

ir::TypePtr infer_transpose(const ir::Op& op, TypeCtx& ctx) {
  auto& t = static_cast<const Transpose&>(op);
  const ir::TensorType& x = ctx.tensor(0);
  if (t.axes.size() != x.rank())
    ctx.error("axes must be a full permutation of " + std::to_string(x.rank()) + " axes, but has " +
              std::to_string(t.axes.size()) + " entries");
  std::set<int64_t> seen;
  ir::Shape out;
  for (int64_t a : t.axes) {
    int64_t n = normalize_axis(ctx, a, x.rank(), "axes entry");
    if (!seen.insert(n).second) ctx.error("axes must be a permutation, but axis " + std::to_string(a) + " repeats");
    out.push_back(x.shape()[n]);
  }
  return ir::TensorType::make(out, x.dtype(), nullptr, x.storage());
}

ir::TypePtr infer_slice(const ir::Op& op, TypeCtx& ctx) {
  auto& s = static_cast<const Slice&>(op);
  const ir::TensorType& x = ctx.tensor(0);
  if (s.begin.size() != x.rank() || s.end.size() != x.rank() || s.strides.size() != x.rank())
    ctx.error("begin, end and strides need one entry per axis of x (rank " + std::to_string(x.rank()) + ")");
  ir::Shape out;
  for (size_t i = 0; i < x.rank(); ++i) {
    if (s.strides[i] <= 0)
      ctx.error("strides must be positive, but axis " + std::to_string(i) + " has " + std::to_string(s.strides[i]));
    out.push_back(resolve_slice_axis(s.begin[i], s.end[i], s.strides[i], x.shape()[i]).extent);
  }
  return ir::TensorType::make(out, x.dtype(), nullptr, x.storage());
}

ir::TypePtr infer_zeros(const ir::Op& op, TypeCtx& ctx) {
  auto& z = static_cast<const Zeros&>(op);
  if (z.storage == ir::StorageKind::kUnmaterialized) ctx.error("storage must be concrete (rmem, smem or gmem)");
  for (const auto& d : z.shape)
    if (d.is_static() && d.value() < 0) ctx.error("shape entries must be non-negative, but got " + ir::shape_to_string(z.shape));
  return ir::TensorType::make(z.shape, z.dtype, nullptr, z.storage);
}

}  // namespace

std::string_view reduce_kind_name(ReduceKind k) { return kReduceNames[static_cast<int>(k)]; }
std::optional<ReduceKind> reduce_kind_from_name(std::string_view name) {
  for (size_t i = 0; i < std::size(kReduceNames); ++i)
    if (kReduceNames[i] == name) return static_cast<ReduceKind>(i);
  return std::nullopt;
}

SliceAxis resolve_slice_axis(const ir::ShapeDim& begin, const ir::ShapeDim& end, int64_t stride,
                             const ir::ShapeDim& dim) {
  auto norm = [&dim](const ir::ShapeDim& v) -> ir::ShapeDim {
    if (!v.is_static()) return v;
    int64_t x = v.value();
    if (dim.is_static()) {
      int64_t n = dim.value();
      if (x < 0) x += n;
      return std::clamp<int64_t>(x, 0, n);
    }
    if (x < 0) return dim + ir::ShapeDim(x);  // counts from the (symbolic) end
    return v;
  };
  ir::ShapeDim b = norm(begin), e = norm(end);
  ir::ShapeDim len = e - b;
  if (len.is_static() && len.value() <= 0) return {b, e, 0};
  ir::ShapeDim extent = dim_floordiv(len + ir::ShapeDim(stride - 1), stride);
  return {b, e, extent};
}

void register_indexing_ops(Registry& r);  // indexing.cc
void register_combine_ops(Registry& r);   // combine.cc

void register_tensor_ops(Registry& r) {
  r.add({"Cast", "Convert the element dtype", {"x"}, infer_cast});
  r.add({"Reduce", "Reduce over axes: mean, sum, max or abs_max", {"x"}, infer_reduce});
  r.add({"Reshape", "Reshape to a new logical shape of equal size", {"x"}, infer_reshape});
  r.add({"Transpose", "Permute axes", {"x"}, infer_transpose});
  r.add({"Slice", "Strided window per axis", {"x"}, infer_slice});
  r.add({"Zeros", "Zero-initialized tensor", {}, infer_zeros});
  register_indexing_ops(r);
  register_combine_ops(r);
}

}  // namespace tf::ops
