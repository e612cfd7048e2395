#include "core/ops/tensor/tensor.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <set>

#include "core/ops/registry.h"
#include "core/ops/sharding/shard_rules.h"

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

// A sum's static content: (g, p) with d = g * p, g the gcd of its terms'
// coefficients and constant, so that 4 * P - 8 is 4 * (P - 2). A dim that
// is not a sum or a product by a constant is its own p (g = 1).
std::pair<int64_t, ir::ShapeDim> split_content(const ir::ShapeDim& d) {
  if (d.is_static()) return {d.value() < 0 ? -d.value() : d.value(), ir::ShapeDim(d.value() < 0 ? -1 : 1)};
  const ir::DimKind k = d.kind();
  if (k == ir::DimKind::kMul && (d.lhs().is_static() || d.rhs().is_static())) {
    const bool left = d.lhs().is_static();
    auto [g, p] = split_content(left ? d.rhs() : d.lhs());
    const int64_t c = left ? d.lhs().value() : d.rhs().value();
    return {g * (c < 0 ? -c : c), c < 0 ? ir::ShapeDim(0) - p : p};
  }
  if (k != ir::DimKind::kAdd && k != ir::DimKind::kSub) return {1, d};
  auto [ga, pa] = split_content(d.lhs());
  auto [gb, pb] = split_content(d.rhs());
  const int64_t g = std::gcd(ga, gb);
  if (g <= 1) return {1, d};
  const ir::ShapeDim a = pa * ir::ShapeDim(ga / g), b = pb * ir::ShapeDim(gb / g);
  return {g, k == ir::DimKind::kAdd ? a + b : a - b};
}

// A product of dims as (static coefficient, sorted symbolic factors), so that
// (N, 64, 64) and (N, 4096), or (N, P - 2, 4) and (N, 4 * P - 8), are
// recognized as the same element count.
std::pair<int64_t, std::vector<std::string>> factor_numel(const ir::Shape& s) {
  int64_t coeff = 1;
  std::vector<std::string> sym;
  std::function<void(const ir::ShapeDim&)> factor = [&](const ir::ShapeDim& d) {
    if (d.is_static()) {
      coeff *= d.value();
    } else if (d.kind() == ir::DimKind::kMul) {
      factor(d.lhs()), factor(d.rhs());
    } else if (auto [g, p] = split_content(d); g > 1) {
      coeff *= g;
      factor(p);
    } else {
      sym.push_back(d.to_string());
    }
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

namespace {

using Attrs = std::vector<ir::AttrValue>;

OpInfo cast_def() {
  OpInfo d;
  d.name = "Cast";
  d.summary = "Convert the element dtype";
  d.operands = {"x"};
  d.attrs = {"dtype"};
  d.surfaces = {{"cast", {tensor_param("x"), attr_param("dtype", AttrType::kDType)}, [](const Attrs& a) -> ir::OpPtr {
                   return std::make_shared<Cast>(attr_arg<ir::DType>(a, 0));
                 }}};
  d.typeinfer = infer_cast;
  d.shard = ShardSpec::rule(shard_rules::cast);
  return d;
}

ReduceKind reduce_kind(const std::string& s) {
  auto k = reduce_kind_from_name(s);
  if (!k) ir::fail(ir::ErrorKind::kType, "'reduce' kind must be one of mean, sum, max, abs_max, but got \"" + s + "\"");
  return *k;
}

SurfaceFn reduce_surface(const char* name, ReduceKind kind) {
  return {name, {tensor_param("x"), attr_param("axes", AttrType::kAxes), attr_param("keepdim", AttrType::kBool, true)},
          [kind](const Attrs& a) -> ir::OpPtr {
            return std::make_shared<Reduce>(attr_arg<std::vector<int64_t>>(a, 0), attr_arg<bool>(a, 1), kind);
          }};
}

OpInfo reduce_def() {
  OpInfo d;
  d.name = "Reduce";
  d.summary = "Reduce over axes: mean, sum, max or abs_max";
  d.operands = {"x"};
  d.attrs = {"axes", "keepdim", "kind"};
  d.surfaces = {reduce_surface("sum", ReduceKind::kSum), reduce_surface("mean", ReduceKind::kMean),
                reduce_surface("amax", ReduceKind::kMax), reduce_surface("abs_max", ReduceKind::kAbsMax)};
  d.surfaces.push_back({"reduce",
                        {tensor_param("x"), attr_param("axes", AttrType::kAxes),
                         attr_param("keepdim", AttrType::kBool, true),
                         attr_param("kind", AttrType::kString, std::string("mean"))},
                        [](const Attrs& a) -> ir::OpPtr {
                          return std::make_shared<Reduce>(attr_arg<std::vector<int64_t>>(a, 0), attr_arg<bool>(a, 1),
                                                          reduce_kind(attr_arg<std::string>(a, 2)));
                        }});
  d.typeinfer = infer_reduce;
  d.shard = ShardSpec::rule(shard_rules::reduce);
  return d;
}

OpInfo reshape_def() {
  OpInfo d;
  d.name = "Reshape";
  d.summary = "Reshape to a new logical shape of equal size";
  d.operands = {"x"};
  d.attrs = {"shape"};
  d.surfaces = {{"reshape", {tensor_param("x"), attr_param("shape", AttrType::kShape)},
                 [](const Attrs& a) -> ir::OpPtr { return std::make_shared<Reshape>(attr_arg<ir::Shape>(a, 0)); }}};
  d.typeinfer = infer_reshape;
  d.shard = ShardSpec::rule(shard_rules::reshape);
  return d;
}

OpInfo transpose_def() {
  OpInfo d;
  d.name = "Transpose";
  d.summary = "Permute axes";
  d.operands = {"x"};
  d.attrs = {"axes"};
  d.surfaces = {{"transpose", {tensor_param("x"), attr_param("axes", AttrType::kInts)},
                 [](const Attrs& a) -> ir::OpPtr {
                   return std::make_shared<Transpose>(attr_arg<std::vector<int64_t>>(a, 0));
                 }}};
  d.typeinfer = infer_transpose;
  d.shard = ShardSpec::fail_closed();
  return d;
}

OpInfo slice_def() {
  OpInfo d;
  d.name = "Slice";
  d.summary = "Strided window per axis";
  d.operands = {"x"};
  d.attrs = {"begin", "end", "strides"};
  d.surfaces = {{"slice",
                 {tensor_param("x"), attr_param("begin", AttrType::kShape), attr_param("end", AttrType::kShape),
                  attr_param("strides", AttrType::kInts)},
                 [](const Attrs& a) -> ir::OpPtr {
                   return std::make_shared<Slice>(attr_arg<ir::Shape>(a, 0), attr_arg<ir::Shape>(a, 1),
                                                  attr_arg<std::vector<int64_t>>(a, 2));
                 }}};
  d.typeinfer = infer_slice;
  d.shard = ShardSpec::fail_closed();
  return d;
}

OpInfo zeros_def() {
  OpInfo d;
  d.name = "Zeros";
  d.summary = "Zero-initialized tensor";
  d.attrs = {"shape", "dtype", "storage"};
  d.surfaces = {{"zeros",
                 {attr_param("shape", AttrType::kShape), attr_param("dtype", AttrType::kDType),
                  attr_param("storage", AttrType::kStorage, ir::StorageKind::kGmem)},
                 [](const Attrs& a) -> ir::OpPtr {
                   return std::make_shared<Zeros>(attr_arg<ir::Shape>(a, 0), attr_arg<ir::DType>(a, 1),
                                                  attr_arg<ir::StorageKind>(a, 2));
                 }}};
  d.typeinfer = infer_zeros;
  d.shard = ShardSpec::fail_closed();  // no operands: nothing to shard
  return d;
}

}  // namespace

void register_indexing_ops(Registry& r);  // indexing.cc
void register_combine_ops(Registry& r);   // combine.cc
void register_bits_ops(Registry& r);      // bits.cc

void register_tensor_ops(Registry& r) {
  r.add(cast_def());
  r.add(reduce_def());
  r.add(reshape_def());
  r.add(transpose_def());
  r.add(slice_def());
  r.add(zeros_def());
  register_indexing_ops(r);
  register_combine_ops(r);
  register_bits_ops(r);
}

}  // namespace tf::ops
