#include "core/ops/type_ctx.h"

#include <algorithm>

namespace tf::ops {

std::string TypeCtx::where() const {
  std::string loc = span_.to_string();
  return loc.empty() ? "" : loc + ": ";
}

void TypeCtx::operand_error(size_t i, const std::string& constraint) const {
  std::string name = names_ && i < names_->size() ? (*names_)[i] : "arg" + std::to_string(i);
  std::string got = i < types_.size() && types_[i] ? types_[i]->to_string() : "nothing";
  ir::fail(ir::ErrorKind::kType, where() + "error: '" + surface_ + "' operand #" + std::to_string(i) +
                                     " (" + name + ") must be " + constraint + ", but got " + got);
}

void TypeCtx::error(const std::string& rule) const {
  ir::fail(ir::ErrorKind::kType, where() + "error: '" + surface_ + "' " + rule);
}

const ir::TensorType& TypeCtx::tensor(size_t i) const {
  if (i >= types_.size()) operand_error(i, "present");
  const ir::TensorType* t = ir::as_tensor(types_[i]);
  if (!t) operand_error(i, "a tensor");
  return *t;
}

const ir::TensorType& TypeCtx::float_tensor(size_t i) const {
  const ir::TensorType& t = tensor(i);
  if (!ir::is_float(t.dtype())) operand_error(i, "a floating-point tensor");
  return t;
}

std::vector<const ir::TensorType*> TypeCtx::tensors(size_t i, bool allow_bare) const {
  if (i >= types_.size()) operand_error(i, "present");
  if (const ir::TensorType* t = ir::as_tensor(types_[i])) {
    if (!allow_bare) operand_error(i, "a tuple of tensors");
    return {t};
  }
  const ir::TupleType* tu = ir::as_tuple(types_[i]);
  if (!tu) operand_error(i, "a tuple of tensors");
  std::vector<const ir::TensorType*> out;
  for (const auto& f : tu->fields()) {
    const ir::TensorType* t = ir::as_tensor(f);
    if (!t) operand_error(i, "a tuple of tensors (not nested tuples)");
    out.push_back(t);
  }
  return out;
}

int64_t normalize_axis(const TypeCtx& ctx, int64_t axis, size_t rank, const char* attr) {
  int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r)
    ctx.error(std::string(attr) + " " + std::to_string(axis) + " is out of range for rank " +
              std::to_string(rank) + " (must be in [" + std::to_string(-r) + ", " + std::to_string(r) + "))");
  return axis < 0 ? axis + r : axis;
}

std::optional<ir::Shape> broadcast_shapes(const ir::Shape& a, const ir::Shape& b) {
  size_t n = std::max(a.size(), b.size());
  ir::Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    // Align from the right.
    const ir::ShapeDim* x = i + a.size() >= n ? &a[i + a.size() - n] : nullptr;
    const ir::ShapeDim* y = i + b.size() >= n ? &b[i + b.size() - n] : nullptr;
    if (!x) { out[i] = *y; continue; }
    if (!y) { out[i] = *x; continue; }
    if (x->structural_equal(*y)) out[i] = *x;
    else if (x->is_static() && x->value() == 1) out[i] = *y;
    else if (y->is_static() && y->value() == 1) out[i] = *x;
    else return std::nullopt;
  }
  return out;
}

ir::StorageKind result_storage(const std::vector<const ir::TensorType*>& operands) {
  // The enum's order is the addressability order rmem < smem < gmem, with
  // unmaterialized last: the minimum is the most local placed operand.
  ir::StorageKind s = operands.empty() ? ir::StorageKind::kGmem : operands[0]->storage();
  for (const auto* t : operands) s = std::min(s, t->storage());
  return s;
}

}  // namespace tf::ops
