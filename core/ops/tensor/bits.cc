// Typeinfer of Bitcast and Arange: a reinterpretation of an element's bits
// and the one creation op with values (Zeros aside).
#include <cmath>

#include "core/ops/registry.h"
#include "core/ops/tensor/tensor.h"

namespace tf::ops {
namespace {

using Attrs = std::vector<ir::AttrValue>;

// Whole-byte dtypes other than bool: a bool byte holds only 0 or 1, so bits
// cast into it would be values no op expects; a sub-byte dtype has no element
// of its own to reinterpret.
bool bitcastable(ir::DType d) { return !ir::is_bool(d) && ir::dtype_bits(d) % 8 == 0; }

ir::TypePtr infer_bitcast(const ir::Op& op, TypeCtx& ctx) {
  const ir::DType to = static_cast<const Bitcast&>(op).dtype;
  const ir::TensorType& x = ctx.tensor(0);
  const std::string from = std::string(ir::dtype_name(x.dtype())), name = std::string(ir::dtype_name(to));
  if (!bitcastable(x.dtype())) ctx.operand_error(0, "a tensor of a whole-byte non-bool dtype (got " + from + ")");
  if (!bitcastable(to)) ctx.error("bitcast target must be a whole-byte non-bool dtype, but got " + name);
  if (ir::dtype_bits(to) != ir::dtype_bits(x.dtype()))
    ctx.error("bitcast keeps the element width: " + from + " has " + std::to_string(ir::dtype_bits(x.dtype())) +
              " bits, " + name + " has " + std::to_string(ir::dtype_bits(to)));
  return ir::TensorType::make(x.shape(), to, x.layout(), x.storage());
}

// An integer arange takes integral start and step that a double holds
// exactly (|v| <= 2^53), so every element is computed exactly in i64.
ir::TypePtr infer_arange(const ir::Op& op, TypeCtx& ctx) {
  const auto& a = static_cast<const Arange&>(op);
  if (a.n.is_static() && a.n.value() < 0) ctx.error("n must be non-negative, but got " + std::to_string(a.n.value()));
  if (ir::is_bool(a.dtype)) ctx.error("arange needs a numeric dtype, but got bool");
  if (!std::isfinite(a.start) || !std::isfinite(a.step))
    ctx.error("start and step must be finite, but got start=" + ir::format_double(a.start) +
              ", step=" + ir::format_double(a.step));
  constexpr double kExact = 9007199254740992.0;  // 2^53
  if (!ir::is_float(a.dtype))
    for (double v : {a.start, a.step})
      if (v != std::floor(v) || std::fabs(v) > kExact)
        ctx.error("an integer arange (" + std::string(ir::dtype_name(a.dtype)) +
                  ") takes integral start and step of magnitude at most 2^53, but got " + ir::format_double(v));
  return ir::TensorType::make(ir::Shape{a.n}, a.dtype, nullptr, ir::StorageKind::kGmem);
}

OpInfo bitcast_def() {
  OpInfo d;
  d.name = "Bitcast";
  d.summary = "Reinterpret each element's bits as another dtype of the same width";
  d.operands = {"x"};
  d.attrs = {"dtype"};
  d.surfaces = {{"bitcast", {tensor_param("x"), attr_param("dtype", AttrType::kDType)}, [](const Attrs& a) -> ir::OpPtr {
                   return std::make_shared<Bitcast>(attr_arg<ir::DType>(a, 0));
                 }}};
  d.typeinfer = infer_bitcast;
  // Splits carry over element by element; no reduction commutes with a
  // reinterpretation of bits.
  d.shard = ShardSpec::elementwise(not_monotone());
  return d;
}

OpInfo arange_def() {
  OpInfo d;
  d.name = "Arange";
  d.summary = "n evenly spaced values start + i * step (torch.arange by count)";
  d.attrs = {"n", "start", "step", "dtype"};
  d.surfaces = {{"arange",
                 {attr_param("n", AttrType::kDim), attr_param("start", AttrType::kFloat, 0.0),
                  attr_param("step", AttrType::kFloat, 1.0), attr_param("dtype", AttrType::kDType, ir::DType::kI64)},
                 [](const Attrs& a) -> ir::OpPtr {
                   return std::make_shared<Arange>(attr_arg<ir::Shape>(a, 0)[0], attr_arg<double>(a, 1),
                                                   attr_arg<double>(a, 2), attr_arg<ir::DType>(a, 3));
                 }}};
  d.typeinfer = infer_arange;
  d.shard = ShardSpec::fail_closed();  // no operands: nothing to shard
  return d;
}

}  // namespace

void register_bits_ops(Registry& r) {
  r.add(bitcast_def());
  r.add(arange_def());
}

}  // namespace tf::ops
