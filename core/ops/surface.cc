#include "core/ops/surface.h"

#include "core/ir/error.h"
#include "core/ops/math/math.h"
#include "core/ops/nn/nn.h"
#include "core/ops/shape/shape.h"
#include "core/ops/tensor/tensor.h"

namespace tf::ops {
namespace {

using ir::AttrValue;
using Attrs = std::vector<AttrValue>;

SurfaceParam tensor(const char* name) { return {name, true, AttrType::kInt, std::nullopt}; }
SurfaceParam attr(const char* name, AttrType t, std::optional<AttrValue> def = std::nullopt) {
  return {name, false, t, std::move(def)};
}

template <typename T>
const T& get(const Attrs& a, size_t i) { return std::get<T>(a[i]); }

void add_math(std::vector<SurfaceFn>& out) {
#define TF_X(e, s, o, c)                                                              \
  out.push_back({s, {tensor("lhs"), tensor("rhs")}, [](const Attrs&) -> ir::OpPtr {    \
                   return std::make_shared<Binary>(BinaryKind::e);                     \
                 }});
  TF_BINARY_KIND_LIST(TF_X)
#undef TF_X
#define TF_X(e, s, c)                                                                 \
  out.push_back({s, {tensor("x")}, [](const Attrs&) -> ir::OpPtr {                    \
                   return std::make_shared<Unary>(UnaryKind::e);                       \
                 }});
  TF_UNARY_KIND_LIST(TF_X)
#undef TF_X
}

ReduceKind reduce_kind(const std::string& s) {
  auto k = reduce_kind_from_name(s);
  if (!k) ir::fail(ir::ErrorKind::kType, "'reduce' kind must be one of mean, sum, max, abs_max, but got \"" + s + "\"");
  return *k;
}

void add_reduce(std::vector<SurfaceFn>& out, const char* name, ReduceKind kind) {
  out.push_back({name, {tensor("x"), attr("axes", AttrType::kAxes), attr("keepdim", AttrType::kBool, true)},
                 [kind](const Attrs& a) -> ir::OpPtr {
                   return std::make_shared<Reduce>(get<std::vector<int64_t>>(a, 0), get<bool>(a, 1), kind);
                 }});
}

void add_tensor(std::vector<SurfaceFn>& out) {
  out.push_back({"cast", {tensor("x"), attr("dtype", AttrType::kDType)}, [](const Attrs& a) -> ir::OpPtr {
                   return std::make_shared<Cast>(get<ir::DType>(a, 0));
                 }});
  add_reduce(out, "sum", ReduceKind::kSum);
  add_reduce(out, "mean", ReduceKind::kMean);
  add_reduce(out, "amax", ReduceKind::kMax);
  add_reduce(out, "abs_max", ReduceKind::kAbsMax);
  out.push_back({"reduce",
                 {tensor("x"), attr("axes", AttrType::kAxes), attr("keepdim", AttrType::kBool, true),
                  attr("kind", AttrType::kString, std::string("mean"))},
                 [](const Attrs& a) -> ir::OpPtr {
                   return std::make_shared<Reduce>(get<std::vector<int64_t>>(a, 0), get<bool>(a, 1),
                                                   reduce_kind(get<std::string>(a, 2)));
                 }});
  out.push_back({"reshape", {tensor("x"), attr("shape", AttrType::kShape)}, [](const Attrs& a) -> ir::OpPtr {
                   return std::make_shared<Reshape>(get<ir::Shape>(a, 0));
                 }});
  out.push_back({"transpose", {tensor("x"), attr("axes", AttrType::kInts)}, [](const Attrs& a) -> ir::OpPtr {
                   return std::make_shared<Transpose>(get<std::vector<int64_t>>(a, 0));
                 }});
  out.push_back({"slice",
                 {tensor("x"), attr("begin", AttrType::kShape), attr("end", AttrType::kShape),
                  attr("strides", AttrType::kInts)},
                 [](const Attrs& a) -> ir::OpPtr {
                   return std::make_shared<Slice>(get<ir::Shape>(a, 0), get<ir::Shape>(a, 1),
                                                  get<std::vector<int64_t>>(a, 2));
                 }});
  out.push_back({"zeros",
                 {attr("shape", AttrType::kShape), attr("dtype", AttrType::kDType),
                  attr("storage", AttrType::kStorage, ir::StorageKind::kGmem)},
                 [](const Attrs& a) -> ir::OpPtr {
                   return std::make_shared<Zeros>(get<ir::Shape>(a, 0), get<ir::DType>(a, 1),
                                                  get<ir::StorageKind>(a, 2));
                 }});
}

// Tuple-valued operands (concat / stack inputs, insert_slice offsets,
// shape_compose dims, conv2d's optional bias) are single tensor params here:
// the Call takes them as one ir::Tuple operand (see SurfaceParam::tuple).
SurfaceParam tuple_operand(const char* name) {
  SurfaceParam p = tensor(name);
  p.tuple = true;
  return p;
}

// An int or an (h, w) pair, as a pair.
std::vector<int64_t> pair_of(const std::vector<int64_t>& v) { return v.size() == 1 ? std::vector<int64_t>{v[0], v[0]} : v; }

void add_tensor_catalog(std::vector<SurfaceFn>& out) {
  out.push_back({"gather",
                 {tensor("x"), tensor("indices"), attr("axis", AttrType::kInt),
                  attr("batch_dims", AttrType::kInt, int64_t{0})},
                 [](const Attrs& a) -> ir::OpPtr {
                   return std::make_shared<Gather>(get<int64_t>(a, 0), get<int64_t>(a, 1));
                 }});
  out.push_back({"insert_slice", {tensor("dst"), tensor("update"), tuple_operand("offsets")},
                 [](const Attrs&) -> ir::OpPtr { return std::make_shared<InsertSlice>(); }});
  out.push_back({"cache_update", {tensor("cache"), tensor("cur_pos"), tensor("s"), tensor("new")},
                 [](const Attrs&) -> ir::OpPtr { return std::make_shared<CacheUpdate>(); }});
  out.push_back({"topk",
                 {tensor("x"), attr("k", AttrType::kDim), attr("axis", AttrType::kInt, int64_t{-1}),
                  attr("largest", AttrType::kBool, true), attr("sorted", AttrType::kBool, true)},
                 [](const Attrs& a) -> ir::OpPtr {
                   const ir::Shape& k = get<ir::Shape>(a, 0);  // one dim (kDim)
                   return std::make_shared<TopK>(k[0], get<int64_t>(a, 1), get<bool>(a, 2), get<bool>(a, 3));
                 }});
  out.push_back({"concat", {tuple_operand("inputs"), attr("axis", AttrType::kInt, int64_t{0})},
                 [](const Attrs& a) -> ir::OpPtr { return std::make_shared<Concat>(get<int64_t>(a, 0)); }});
  out.push_back({"stack", {tuple_operand("inputs"), attr("axis", AttrType::kInt, int64_t{0})},
                 [](const Attrs& a) -> ir::OpPtr { return std::make_shared<Stack>(get<int64_t>(a, 0)); }});
  out.push_back({"shape_of", {tensor("x")}, [](const Attrs&) -> ir::OpPtr { return std::make_shared<ShapeOf>(); }});
  out.push_back({"rank", {tensor("x")}, [](const Attrs&) -> ir::OpPtr { return std::make_shared<Rank>(); }});
  out.push_back({"shape_extract", {tensor("shape"), attr("index", AttrType::kInt)},
                 [](const Attrs& a) -> ir::OpPtr { return std::make_shared<ShapeExtract>(get<int64_t>(a, 0)); }});
  out.push_back({"shape_compose", {tuple_operand("dims")},
                 [](const Attrs&) -> ir::OpPtr { return std::make_shared<ShapeCompose>(); }});
}

void add_nn_catalog(std::vector<SurfaceFn>& out) {
  SurfaceParam bias = tuple_operand("bias");
  bias.optional = true;
  out.push_back({"conv2d",
                 {tensor("x"), tensor("weight"), bias, attr("stride", AttrType::kAxes, std::vector<int64_t>{1}),
                  attr("padding", AttrType::kAxes, std::vector<int64_t>{0}),
                  attr("dilation", AttrType::kAxes, std::vector<int64_t>{1}),
                  attr("groups", AttrType::kInt, int64_t{1})},
                 [](const Attrs& a) -> ir::OpPtr {
                   return std::make_shared<Conv2D>(pair_of(get<std::vector<int64_t>>(a, 0)),
                                                   pair_of(get<std::vector<int64_t>>(a, 1)),
                                                   pair_of(get<std::vector<int64_t>>(a, 2)), get<int64_t>(a, 3));
                 }});
  out.push_back({"sigmoid", {tensor("x")}, [](const Attrs&) -> ir::OpPtr { return std::make_shared<Sigmoid>(); }});
  out.push_back({"tanh", {tensor("x")}, [](const Attrs&) -> ir::OpPtr { return std::make_shared<Tanh>(); }});
  out.push_back({"layer_norm",
                 {tensor("x"), tensor("weight"), tensor("bias"), attr("eps", AttrType::kFloat, 1e-5)},
                 [](const Attrs& a) -> ir::OpPtr { return std::make_shared<LayerNorm>(get<double>(a, 0)); }});
  out.push_back({"rope", {tensor("q"), tensor("k"), tensor("cos_cache"), tensor("sin_cache"), tensor("pos_ids")},
                 [](const Attrs&) -> ir::OpPtr { return std::make_shared<RoPE>(); }});
}

void add_nn(std::vector<SurfaceFn>& out) {
  out.push_back({"matmul", {tensor("a"), tensor("b")}, [](const Attrs&) -> ir::OpPtr {
                   return std::make_shared<MatMul>();
                 }});
  out.push_back({"softmax", {tensor("x"), attr("axis", AttrType::kInt, int64_t{-1})},
                 [](const Attrs& a) -> ir::OpPtr { return std::make_shared<SoftMax>(get<int64_t>(a, 0)); }});
  out.push_back({"silu", {tensor("x")}, [](const Attrs&) -> ir::OpPtr { return std::make_shared<Silu>(); }});
  out.push_back({"gelu", {tensor("x"), attr("approximate", AttrType::kString, std::string("tanh"))},
                 [](const Attrs& a) -> ir::OpPtr { return std::make_shared<Gelu>(get<std::string>(a, 0)); }});
  out.push_back({"rms_norm", {tensor("x"), tensor("weight"), attr("eps", AttrType::kFloat, 1e-6)},
                 [](const Attrs& a) -> ir::OpPtr { return std::make_shared<RMSNorm>(get<double>(a, 0)); }});
}

}  // namespace

std::string_view attr_type_name(AttrType t) {
  switch (t) {
    case AttrType::kInt: return "an int";
    case AttrType::kFloat: return "a float";
    case AttrType::kBool: return "a bool";
    case AttrType::kString: return "a string";
    case AttrType::kDType: return "a dtype";
    case AttrType::kInts: return "a tuple of ints";
    case AttrType::kAxes: return "an int or a tuple of ints";
    case AttrType::kShape: return "a shape tuple";
    case AttrType::kDim: return "an int or a dim expression (a DimVar, N // 4, dim_min(512, N), ...)";
    case AttrType::kStorage: return "a storage kind (\"rmem\", \"smem\", \"gmem\")";
  }
  return "?";
}

const std::vector<SurfaceFn>& all_surfaces() {
  static const std::vector<SurfaceFn> table = [] {
    std::vector<SurfaceFn> t;
    add_math(t);
    add_tensor(t);
    add_nn(t);
    add_tensor_catalog(t);
    add_nn_catalog(t);
    return t;
  }();
  return table;
}

const SurfaceFn* find_surface(std::string_view name) {
  for (const auto& s : all_surfaces())
    if (s.name == name) return &s;
  return nullptr;
}

std::optional<AttrValue> coerce_attr(const AttrValue& v, AttrType t) {
  switch (t) {
    case AttrType::kInt:
      if (std::holds_alternative<int64_t>(v)) return v;
      return std::nullopt;
    case AttrType::kFloat:
      if (auto* d = std::get_if<double>(&v)) return *d;
      if (auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
      return std::nullopt;
    case AttrType::kBool:
      if (std::holds_alternative<bool>(v)) return v;
      return std::nullopt;
    case AttrType::kString:
      if (std::holds_alternative<std::string>(v)) return v;
      return std::nullopt;
    case AttrType::kDType:
      if (std::holds_alternative<ir::DType>(v)) return v;
      return std::nullopt;
    case AttrType::kAxes:
      if (auto* i = std::get_if<int64_t>(&v)) return std::vector<int64_t>{*i};
      [[fallthrough]];
    case AttrType::kInts:
      if (std::holds_alternative<std::vector<int64_t>>(v)) return v;
      if (auto* s = std::get_if<ir::Shape>(&v)) {  // a tuple the parser read as dims
        std::vector<int64_t> ints;
        for (const auto& d : *s) {
          if (!d.is_static()) return std::nullopt;
          ints.push_back(d.value());
        }
        return ints;
      }
      return std::nullopt;
    case AttrType::kShape:
      if (std::holds_alternative<ir::Shape>(v)) return v;
      if (auto* ints = std::get_if<std::vector<int64_t>>(&v)) return ir::Shape(ints->begin(), ints->end());
      if (auto* i = std::get_if<int64_t>(&v)) return ir::Shape{*i};
      return std::nullopt;
    case AttrType::kDim:  // one dim; the printer writes it as a one-element shape (k=(N,))
      if (auto* i = std::get_if<int64_t>(&v)) return ir::Shape{*i};
      if (auto* ints = std::get_if<std::vector<int64_t>>(&v); ints && ints->size() == 1) return ir::Shape{(*ints)[0]};
      if (auto* s = std::get_if<ir::Shape>(&v); s && s->size() == 1) return v;
      return std::nullopt;
    case AttrType::kStorage:
      if (std::holds_alternative<ir::StorageKind>(v)) return v;
      if (auto* s = std::get_if<std::string>(&v)) {
        if (auto k = ir::storage_from_name(*s)) return *k;
      }
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace tf::ops
