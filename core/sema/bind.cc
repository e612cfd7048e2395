#include "core/sema/bind.h"

#include "core/ir/error.h"

namespace tf::sema {
namespace {

std::string shape_str(const std::vector<int64_t>& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + (s.size() == 1 ? ",)" : ")");
}

[[noreturn]] void arg_error(const ir::Function& fn, size_t i, const std::string& what) {
  ir::fail(ir::ErrorKind::kInvalidArgument, "'" + fn.name() + "' argument #" + std::to_string(i) + " (" +
                                                fn.params()[i]->name() + "): " + what);
}

}  // namespace

ir::DimBindings bind_arguments(const ir::Function& fn, const std::vector<ArgDesc>& args) {
  if (args.size() != fn.params().size())
    ir::fail(ir::ErrorKind::kInvalidArgument, "'" + fn.name() + "' takes " + std::to_string(fn.params().size()) +
                                                  " input tensor(s), but got " + std::to_string(args.size()));
  ir::DimBindings bindings;
  std::map<std::string, size_t> bound_by;
  // First pass: static extents and plain DimVars; DimExprs need every var bound.
  for (size_t i = 0; i < args.size(); ++i) {
    const ir::TensorType* t = ir::as_tensor(fn.params()[i]->type());
    if (!t) ir::fail(ir::ErrorKind::kUnsupported, "'" + fn.name() + "' has a non-tensor parameter");
    const ArgDesc& a = args[i];
    if (a.dtype != t->dtype())
      arg_error(fn, i, "dtype must be " + std::string(ir::dtype_name(t->dtype())) + ", but got " +
                           std::string(ir::dtype_name(a.dtype)));
    if (a.shape.size() != t->rank())
      arg_error(fn, i, "rank must be " + std::to_string(t->rank()) + " " + ir::shape_to_string(t->shape()) +
                           ", but got shape " + shape_str(a.shape));
    for (size_t d = 0; d < t->rank(); ++d) {
      const ir::ShapeDim& dim = t->shape()[d];
      int64_t got = a.shape[d];
      std::string axis = "axis " + std::to_string(d) + " ";
      if (dim.is_static() && dim.value() != got)
        arg_error(fn, i, axis + "must be " + std::to_string(dim.value()) + ", but got " + std::to_string(got));
      if (dim.kind() != ir::DimKind::kVar) continue;
      if (got < dim.var_lo() || got >= dim.var_hi())
        arg_error(fn, i, axis + "binds DimVar " + dim.var_name() + " = " + std::to_string(got) +
                             ", outside its range [" + std::to_string(dim.var_lo()) + ", " +
                             std::to_string(dim.var_hi()) + ")");
      auto [it, fresh] = bindings.emplace(dim.var_name(), got);
      if (!fresh && it->second != got)
        arg_error(fn, i, axis + "is " + std::to_string(got) + ", but DimVar " + dim.var_name() + " = " +
                             std::to_string(it->second) + " from argument #" +
                             std::to_string(bound_by[dim.var_name()]));
      bound_by.emplace(dim.var_name(), i);
    }
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const ir::TensorType* t = ir::as_tensor(fn.params()[i]->type());
    for (size_t d = 0; d < t->rank(); ++d) {
      const ir::ShapeDim& dim = t->shape()[d];
      if (dim.is_static() || dim.kind() == ir::DimKind::kVar) continue;
      int64_t want = dim.evaluate(bindings);
      if (want != args[i].shape[d])
        arg_error(fn, i, "axis " + std::to_string(d) + " must be " + dim.to_string() + " = " +
                             std::to_string(want) + ", but got " + std::to_string(args[i].shape[d]));
    }
  }
  return bindings;
}

std::vector<ArgDesc> output_descs(const ir::Function& fn, const ir::DimBindings& bindings) {
  std::vector<ArgDesc> out;
  for (const auto& t : ir::flatten_tensor_types(fn.return_type())) {
    ArgDesc d{t->dtype(), {}};
    for (const auto& dim : t->shape()) {
      int64_t v = dim.evaluate(bindings);
      if (v < 0) ir::fail(ir::ErrorKind::kRuntime, "output extent " + dim.to_string() + " evaluates to " + std::to_string(v));
      d.shape.push_back(v);
    }
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace tf::sema
