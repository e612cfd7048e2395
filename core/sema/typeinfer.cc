#include "core/sema/typeinfer.h"

#include <map>

#include "core/ir/error.h"
#include "core/ops/registry.h"
#include "core/ops/sharding/shard_rules.h"
#include "core/sema/elaborate.h"

namespace tf::sema {
namespace {

std::string where(const ir::Span& span) {
  std::string loc = span.to_string();
  return loc.empty() ? "" : loc + ": ";
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
  // The op's typeinfer plus its sharding rule (core/ops/sharding/shard_rules.h).
  ir::TypePtr type = ops::infer_op_type(*info, *op, std::move(types), span);
  return ir::Call::make_op(std::move(op), std::move(args), std::move(type), std::move(span));
}

ir::CallPtr make_function_call(ir::FunctionPtr callee, std::vector<ir::ExprPtr> args, ir::Span span) {
  TF_CHECK(callee != nullptr, "make_function_call without a callee");
  if (callee->is_variant())
    ir::fail(ir::ErrorKind::kType, where(span) + "error: '" + callee->name() +
                                       "' is a dispatch variant; call its base function");
  std::vector<ir::TypePtr> arg_types;
  for (const auto& a : args) {
    TF_CHECK(a && a->type(), "untyped argument");
    arg_types.push_back(a->type());
  }
  // Elaboration: the Call's target is the concrete instance for these
  // argument types, and its type is that instance's re-derived return type.
  ir::FunctionPtr instance = elaborate(callee, arg_types, span);
  Binding binding = bind_call(*instance, arg_types, span);
  ir::TypePtr ret = call_result_type(*instance, binding);
  return ir::Call::make_function(std::move(instance), std::move(args), std::move(ret), std::move(span));
}

}  // namespace tf::sema
