#include "core/ops/math/math.h"

#include <cmath>
#include <limits>

#include "core/ops/registry.h"
#include "core/ops/sharding/shard_rules.h"

namespace tf::ops {
namespace {

struct BinaryRow { std::string_view name, op; char cls; };
constexpr BinaryRow kBinary[] = {
#define TF_X(e, s, o, c) {s, o, c},
    TF_BINARY_KIND_LIST(TF_X)
#undef TF_X
};
struct UnaryRow { std::string_view name; char cls; };
constexpr UnaryRow kUnary[] = {
#define TF_X(e, s, c) {s, c},
    TF_UNARY_KIND_LIST(TF_X)
#undef TF_X
};

// Rationale: Binary does not promote dtypes — a mismatch is an error, never
// a silent cast. Arithmetic on bool is rejected too (torch rejects sub/neg on
// bool, and a bool sum is a logical_or: ask for that by name).
ir::TypePtr infer_binary(const ir::Op& op, TypeCtx& ctx) {
  auto kind = static_cast<const Binary&>(op).kind;
  const ir::TensorType& a = ctx.tensor(0);
  const ir::TensorType& b = ctx.tensor(1);
  if (a.dtype() != b.dtype())
    ctx.operand_error(1, "of the same dtype as operand #0 (" + std::string(ir::dtype_name(a.dtype())) +
                             "); Binary does not promote dtypes, insert an explicit cast");
  char cls = binary_kind_class(kind);
  if (cls == 'a' && ir::is_bool(a.dtype())) ctx.operand_error(0, "a numeric (non-bool) tensor");
  if (cls == 'f' && !ir::is_float(a.dtype())) ctx.operand_error(0, "a floating-point tensor");
  auto shape = broadcast_shapes(a.shape(), b.shape());
  if (!shape)
    ctx.operand_error(1, "broadcast-compatible with operand #0 " + ir::shape_to_string(a.shape()));
  ir::DType out = cls == 'a' || cls == 'f' ? a.dtype() : ir::DType::kBool;
  return ir::TensorType::make(*shape, out, nullptr, result_storage({&a, &b}));
}

ir::TypePtr infer_unary(const ir::Op& op, TypeCtx& ctx) {
  auto kind = static_cast<const Unary&>(op).kind;
  const ir::TensorType& x = ctx.tensor(0);
  char cls = unary_kind_class(kind);
  if (cls == 'f' && !ir::is_float(x.dtype())) ctx.operand_error(0, "a floating-point tensor");
  if (cls == 'n' && ir::is_bool(x.dtype())) ctx.operand_error(0, "a numeric (non-bool) tensor");
  ir::DType out = cls == 'l' ? ir::DType::kBool : x.dtype();
  return ir::TensorType::make(x.shape(), out, x.layout(), x.storage());
}

// Rationale: cond must be bool (torch.where's rule; a mask of another dtype
// says what it means with an explicit comparison), and a / b do not promote.
ir::TypePtr infer_where(const ir::Op&, TypeCtx& ctx) {
  const ir::TensorType& c = ctx.tensor(0);
  const ir::TensorType& a = ctx.tensor(1);
  const ir::TensorType& b = ctx.tensor(2);
  if (!ir::is_bool(c.dtype())) ctx.operand_error(0, "a bool tensor (compare to build one: where(m != 0, a, b))");
  if (a.dtype() != b.dtype())
    ctx.operand_error(2, "of the same dtype as operand #1 (" + std::string(ir::dtype_name(a.dtype())) +
                             "); where does not promote dtypes, insert an explicit cast");
  auto ab = broadcast_shapes(a.shape(), b.shape());
  if (!ab) ctx.operand_error(2, "broadcast-compatible with operand #1 " + ir::shape_to_string(a.shape()));
  auto shape = broadcast_shapes(c.shape(), *ab);
  if (!shape) ctx.operand_error(0, "broadcast-compatible with the values' shape " + ir::shape_to_string(*ab));
  return ir::TensorType::make(*shape, a.dtype(), nullptr, result_storage({&c, &a, &b}));
}

// Bounds are converted to x's dtype when the op runs; here they must mean
// something in it: an integer tensor takes integral (or infinite) bounds.
ir::TypePtr infer_clamp(const ir::Op& op, TypeCtx& ctx) {
  const auto& c = static_cast<const Clamp&>(op);
  const ir::TensorType& x = ctx.tensor(0);
  if (ir::is_bool(x.dtype())) ctx.operand_error(0, "a numeric (non-bool) tensor");
  if (!ir::is_float(x.dtype()))
    for (double v : {c.min, c.max})
      if (std::isnan(v) || (std::isfinite(v) && v != std::floor(v)))
        ctx.error("clamp of an integer tensor (" + std::string(ir::dtype_name(x.dtype())) +
                  ") takes integral bounds, but got " + ir::format_double(v) + "; cast x to a float dtype first");
  return ir::TensorType::make(x.shape(), x.dtype(), x.layout(), x.storage());
}

}  // namespace

std::string_view binary_kind_name(BinaryKind k) { return kBinary[static_cast<int>(k)].name; }
std::string_view binary_kind_operator(BinaryKind k) { return kBinary[static_cast<int>(k)].op; }
char binary_kind_class(BinaryKind k) { return kBinary[static_cast<int>(k)].cls; }
std::optional<BinaryKind> binary_kind_from_name(std::string_view name) {
  for (size_t i = 0; i < std::size(kBinary); ++i)
    if (kBinary[i].name == name) return static_cast<BinaryKind>(i);
  return std::nullopt;
}
std::string_view unary_kind_name(UnaryKind k) { return kUnary[static_cast<int>(k)].name; }
char unary_kind_class(UnaryKind k) { return kUnary[static_cast<int>(k)].cls; }
std::optional<UnaryKind> unary_kind_from_name(std::string_view name) {
  for (size_t i = 0; i < std::size(kUnary); ++i)
    if (kUnary[i].name == name) return static_cast<UnaryKind>(i);
  return std::nullopt;
}

int64_t clamp_int_bound(double v, ir::DType d) {
  const int bits = ir::dtype_bits(d);
  if (ir::is_unsigned(d)) {  // [0, 2^bits - 1]; bits < 64
    const double top = std::ldexp(1.0, bits);
    return v <= 0 ? 0 : v >= top ? static_cast<int64_t>(top) - 1 : static_cast<int64_t>(v);
  }
  const double top = std::ldexp(1.0, bits - 1);  // 2^(bits-1), exact
  if (v >= top) return bits == 64 ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(top) - 1;
  if (v <= -top) return bits == 64 ? std::numeric_limits<int64_t>::min() : -static_cast<int64_t>(top);
  return static_cast<int64_t>(v);
}

namespace {

OpInfo binary_def() {
  OpInfo d;
  d.name = "Binary";
  d.summary = "Kind-tagged pointwise binary op, torch broadcasting, no promotion";
  d.operands = {"lhs", "rhs"};
  d.attrs = {"kind"};
#define TF_X(e, s, o, c)                                                                 \
  d.surfaces.push_back({s, {tensor_param("lhs"), tensor_param("rhs")},                    \
                        [](const std::vector<ir::AttrValue>&) -> ir::OpPtr {              \
                          return std::make_shared<Binary>(BinaryKind::e);                  \
                        }});
  TF_BINARY_KIND_LIST(TF_X)
#undef TF_X
  d.typeinfer = infer_binary;
  d.shard = ShardSpec::rule(shard_rules::binary);
  return d;
}

// Which kinds commute with which Partial reduction is stated per surface
// name (one per kind); the rest are not proven to commute with any.
ShardSpec unary_shard() {
  return ShardSpec::elementwise(unproven())
      .except({"exp", "log", "relu", "ceil", "round", "exp2", "log2"}, monotone())
      .except({"neg"}, linear("(negation reverses order)"));
}

OpInfo unary_def() {
  OpInfo d;
  d.name = "Unary";
  d.summary = "Kind-tagged pointwise unary op";
  d.operands = {"x"};
  d.attrs = {"kind"};
#define TF_X(e, s, c)                                                                    \
  d.surfaces.push_back({s, {tensor_param("x")}, [](const std::vector<ir::AttrValue>&) -> ir::OpPtr { \
                          return std::make_shared<Unary>(UnaryKind::e);                    \
                        }});
  TF_UNARY_KIND_LIST(TF_X)
#undef TF_X
  d.typeinfer = infer_unary;
  d.shard = unary_shard();
  return d;
}

OpInfo where_def() {
  OpInfo d;
  d.name = "Where";
  d.summary = "Elementwise select: a where cond, else b (torch.where)";
  d.operands = {"cond", "a", "b"};
  // cond is a mask, not a value: a literal a or b takes the other's dtype.
  SurfaceParam cond = tensor_param("cond");
  cond.literal_partner = false;
  d.surfaces = {{"where", {cond, tensor_param("a"), tensor_param("b")},
                 [](const std::vector<ir::AttrValue>&) -> ir::OpPtr { return std::make_shared<Where>(); }}};
  d.typeinfer = infer_where;
  d.shard = ShardSpec::rule(shard_rules::where);
  return d;
}

OpInfo clamp_def() {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  OpInfo d;
  d.name = "Clamp";
  d.summary = "Elementwise clamp to scalar bounds (torch.clamp)";
  d.operands = {"x"};
  d.attrs = {"min", "max"};
  d.surfaces = {{"clamp",
                 {tensor_param("x"), attr_param("min", AttrType::kFloat, -kInf),
                  attr_param("max", AttrType::kFloat, kInf)},
                 [](const std::vector<ir::AttrValue>& a) -> ir::OpPtr {
                   return std::make_shared<Clamp>(attr_arg<double>(a, 0), attr_arg<double>(a, 1));
                 }}};
  d.typeinfer = infer_clamp;
  // max(x, lo) and min(x, hi) are monotone non-decreasing in x.
  d.shard = ShardSpec::elementwise(monotone());
  return d;
}

}  // namespace

void register_math_ops(Registry& r) {
  r.add(binary_def());
  r.add(unary_def());
  r.add(where_def());
  r.add(clamp_def());
}

}  // namespace tf::ops
