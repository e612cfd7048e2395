#include "core/sema/boundary.h"

#include "core/ir/shard.h"

namespace tf::sema {
namespace {

std::string dim_spelling(const ir::ShapeDim& d) {
  if (d.kind() != ir::DimKind::kVar) return d.to_string();
  return "DimVar('" + d.var_name() + "', " + std::to_string(d.var_lo()) + ", " + std::to_string(d.var_hi()) + ")";
}

// The first difference that matters at the boundary, or "".
std::string leaf_difference(const ir::TensorType& a, const ir::TensorType& b) {
  if (a.dtype() != b.dtype())
    return "dtype " + std::string(ir::dtype_name(a.dtype())) + " in the returned value but " +
           std::string(ir::dtype_name(b.dtype())) + " in the return annotation";
  if (a.rank() != b.rank())
    return "rank " + std::to_string(a.rank()) + " in the returned value but " + std::to_string(b.rank()) +
           " in the return annotation";
  for (size_t k = 0; k < a.rank(); ++k) {
    const ir::ShapeDim &x = a.shape()[k], &y = b.shape()[k];
    if (x.structural_equal(y)) continue;
    return "axis " + std::to_string(k) + ": " + dim_spelling(x) + " in the returned value but " + dim_spelling(y) +
           " in the return annotation";
  }
  const ir::ShardLayout* sa = ir::as_shard_layout(a.layout());
  const ir::ShardLayout* sb = ir::as_shard_layout(b.layout());
  if (!sa != !sb)
    return sa ? "the returned value is sharded (" + sa->to_string() + ") but the return annotation is not"
              : "the return annotation is sharded (" + sb->to_string() + ") but the returned value is not";
  if (sa) {
    if (!sa->mesh()->structural_equal(*sb->mesh()))
      return "mesh " + sa->mesh()->to_string() + " in the returned value but " + sb->mesh()->to_string() +
             " in the return annotation";
    for (size_t m = 0; m < sa->attrs().size() && m < sb->attrs().size(); ++m)
      if (!(sa->attrs()[m] == sb->attrs()[m]))
        return "mesh axis " + std::to_string(m) + " is " + sa->attrs()[m].to_string() + " in the returned value but " +
               sb->attrs()[m].to_string() + " in the return annotation (only an explicit reshard changes it)";
    if (!ir::shape_equal(sa->shape(), sb->shape()))
      return "layout positions " + ir::shape_to_string(sa->shape()) + " in the returned value but " +
             ir::shape_to_string(sb->shape()) + " in the return annotation";
  }
  return "";
}

std::string difference(const ir::TypePtr& a, const ir::TypePtr& b) {
  const ir::TensorType* ta = ir::as_tensor(a);
  const ir::TensorType* tb = ir::as_tensor(b);
  if (ta && tb) return leaf_difference(*ta, *tb);
  const ir::TupleType* ua = ir::as_tuple(a);
  const ir::TupleType* ub = ir::as_tuple(b);
  if (ua && ub) {
    if (ua->fields().size() != ub->fields().size())
      return std::to_string(ua->fields().size()) + " results in the returned value but " +
             std::to_string(ub->fields().size()) + " in the return annotation";
    for (size_t i = 0; i < ua->fields().size(); ++i) {
      std::string d = difference(ua->fields()[i], ub->fields()[i]);
      if (!d.empty()) return "result " + std::to_string(i) + ": " + d;
    }
    return "";
  }
  if (ir::type_equal(a, b)) return "";
  return "the returned value is a " + std::string(ta ? "tensor" : ua ? "tuple" : "callable") +
         " but the return annotation a " + std::string(tb ? "tensor" : ub ? "tuple" : "callable");
}

}  // namespace

std::optional<std::string> return_mismatch(const ir::TypePtr& value, const ir::TypePtr& declared) {
  std::string d = difference(value, declared);
  if (d.empty()) return std::nullopt;
  return d;
}

}  // namespace tf::sema
