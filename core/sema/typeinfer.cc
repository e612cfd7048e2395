#include "core/sema/typeinfer.h"

#include <map>

#include "core/ir/error.h"
#include "core/ops/registry.h"

namespace tf::sema {
namespace {

std::string where(const ir::Span& span) {
  std::string loc = span.to_string();
  return loc.empty() ? "" : loc + ": ";
}

[[noreturn]] void call_error(const ir::Span& span, const ir::Function& callee, size_t i,
                             const std::string& rule) {
  const auto& p = callee.params()[i];
  ir::fail(ir::ErrorKind::kType, where(span) + "error: call to '" + callee.name() + "': argument #" +
                                     std::to_string(i) + " (" + p->name() + ") " + rule);
}

// Matches one argument dim against a parameter dim, extending `subst`
// (DimVar name -> the caller's dim). Envelope matching: a DimVar parameter
// accepts the same DimVar, a static extent inside its range, or another
// DimVar whose range lies inside it.
bool match_dim(const ir::ShapeDim& param, const ir::ShapeDim& arg,
               std::map<std::string, ir::ShapeDim>* subst, std::string* why) {
  if (param.kind() != ir::DimKind::kVar) {
    if (ir::substitute(param, *subst).structural_equal(arg)) return true;
    *why = "extent " + arg.to_string() + " does not match " + param.to_string();
    return false;
  }
  auto it = subst->find(param.var_name());
  if (it != subst->end()) {
    if (it->second.structural_equal(arg)) return true;
    *why = "extent " + arg.to_string() + " disagrees with " + param.var_name() + " = " + it->second.to_string() +
           " bound by an earlier argument";
    return false;
  }
  int64_t lo = param.var_lo(), hi = param.var_hi();
  bool inside = false;
  if (arg.is_static()) inside = arg.value() >= lo && arg.value() < hi;
  else if (arg.kind() == ir::DimKind::kVar) inside = arg.var_lo() >= lo && arg.var_hi() <= hi;
  if (!inside) {
    *why = "extent " + arg.to_string() + " is outside the envelope of DimVar " + param.var_name() + " [" +
           std::to_string(lo) + ", " + std::to_string(hi) + ")";
    return false;
  }
  subst->emplace(param.var_name(), arg);
  return true;
}

ir::TypePtr substitute_type(const ir::TypePtr& t, const std::map<std::string, ir::ShapeDim>& subst) {
  if (const ir::TensorType* tt = ir::as_tensor(t)) {
    ir::Shape s;
    for (const auto& d : tt->shape()) s.push_back(ir::substitute(d, subst));
    return ir::TensorType::make(s, tt->dtype(), tt->layout(), tt->storage());
  }
  if (const ir::TupleType* tu = ir::as_tuple(t)) {
    std::vector<ir::TypePtr> fields;
    for (const auto& f : tu->fields()) fields.push_back(substitute_type(f, subst));
    return ir::TupleType::make(std::move(fields));
  }
  return t;
}

}  // namespace

ir::CallPtr make_op_call(ir::OpPtr op, std::vector<ir::ExprPtr> args, ir::Span span) {
  TF_CHECK(op != nullptr, "make_op_call without an op");
  const ops::OpInfo* info = ops::find_op(op->name());
  if (!info) ir::fail(ir::ErrorKind::kInternal, "op '" + std::string(op->name()) + "' is not registered");
  if (args.size() != info->operands.size())
    ir::fail(ir::ErrorKind::kType, where(span) + "error: '" + op->surface_name() + "' takes " +
                                       std::to_string(info->operands.size()) + " operand(s), but got " +
                                       std::to_string(args.size()));
  std::vector<ir::TypePtr> types;
  for (const auto& a : args) {
    TF_CHECK(a && a->type(), "untyped operand");
    types.push_back(a->type());
  }
  ops::TypeCtx ctx(op->surface_name(), &info->operands, std::move(types), span);
  ir::TypePtr type = info->typeinfer(*op, ctx);
  return ir::Call::make_op(std::move(op), std::move(args), std::move(type), std::move(span));
}

ir::CallPtr make_function_call(ir::FunctionPtr callee, std::vector<ir::ExprPtr> args, ir::Span span) {
  TF_CHECK(callee != nullptr, "make_function_call without a callee");
  if (callee->is_variant())
    ir::fail(ir::ErrorKind::kType, where(span) + "error: '" + callee->name() +
                                       "' is a dispatch variant; call its base function");
  if (args.size() != callee->params().size())
    ir::fail(ir::ErrorKind::kType, where(span) + "error: call to '" + callee->name() + "' takes " +
                                       std::to_string(callee->params().size()) + " argument(s), but got " +
                                       std::to_string(args.size()));
  std::map<std::string, ir::ShapeDim> subst;
  for (size_t i = 0; i < args.size(); ++i) {
    const ir::TypePtr& pt = callee->params()[i]->type();
    const ir::TypePtr& at = args[i]->type();
    const ir::TensorType* p = ir::as_tensor(pt);
    const ir::TensorType* a = ir::as_tensor(at);
    if (!p || !a) {
      if (!ir::type_equal(pt, at)) call_error(span, *callee, i, "must be " + pt->to_string() + ", but got " + at->to_string());
      continue;
    }
    if (p->dtype() != a->dtype() || p->rank() != a->rank())
      call_error(span, *callee, i, "must be " + pt->to_string() + ", but got " + at->to_string());
    for (size_t d = 0; d < p->rank(); ++d) {
      std::string why;
      if (!match_dim(p->shape()[d], a->shape()[d], &subst, &why))
        call_error(span, *callee, i, "axis " + std::to_string(d) + ": " + why);
    }
  }
  ir::TypePtr ret = substitute_type(callee->return_type(), subst);
  return ir::Call::make_function(std::move(callee), std::move(args), std::move(ret), std::move(span));
}

}  // namespace tf::sema
