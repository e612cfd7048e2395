#include "core/ir/expr.h"

#include <set>

#include "core/ir/error.h"

namespace tf::ir {

std::string Span::to_string() const {
  if (line <= 0) return "";
  return (file ? *file : std::string("<input>")) + ":" + std::to_string(line) + ":" + std::to_string(col);
}

VarPtr Var::make(std::string name, TypePtr type, Span span) {
  TF_CHECK(type != nullptr, "Var '" + name + "' needs a type annotation");
  return std::make_shared<const Var>(std::move(name), std::move(type), std::move(span));
}

std::shared_ptr<const Constant> Constant::make_float(double value, DType dtype, Span span) {
  TF_CHECK(is_float(dtype), "make_float needs a float dtype");
  return std::make_shared<const Constant>(value, 0, TensorType::make({}, dtype), std::move(span));
}

std::shared_ptr<const Constant> Constant::make_int(int64_t value, DType dtype, Span span) {
  TF_CHECK(!is_float(dtype), "make_int needs an int or bool dtype");
  if (is_bool(dtype)) value = value != 0;
  return std::make_shared<const Constant>(static_cast<double>(value), value,
                                          TensorType::make({}, dtype), std::move(span));
}

DType Constant::dtype() const { return as_tensor(type())->dtype(); }

static void check_args(const std::vector<ExprPtr>& args, const TypePtr& type) {
  TF_CHECK(type != nullptr, "a Call needs its type");
  for (const auto& a : args) TF_CHECK(a != nullptr && a->type() != nullptr, "null or untyped Call argument");
}

CallPtr Call::make_op(OpPtr op, std::vector<ExprPtr> args, TypePtr type, Span span) {
  TF_CHECK(op != nullptr, "Call::make_op needs an op");
  check_args(args, type);
  return std::make_shared<const Call>(std::move(op), nullptr, std::move(args), std::move(type), std::move(span));
}

CallPtr Call::make_function(FunctionPtr callee, std::vector<ExprPtr> args, TypePtr type, Span span) {
  TF_CHECK(callee != nullptr, "Call::make_function needs a callee");
  check_args(args, type);
  return std::make_shared<const Call>(nullptr, std::move(callee), std::move(args), std::move(type),
                                      std::move(span));
}

std::shared_ptr<const Tuple> Tuple::make(std::vector<ExprPtr> fields, Span span) {
  std::vector<TypePtr> types;
  for (const auto& f : fields) {
    TF_CHECK(f != nullptr && f->type() != nullptr, "null or untyped Tuple field");
    types.push_back(f->type());
  }
  return std::make_shared<const Tuple>(std::move(fields), TupleType::make(std::move(types)), std::move(span));
}

std::shared_ptr<const TupleGetItem> TupleGetItem::make(ExprPtr tuple, int64_t index, Span span) {
  TF_CHECK(tuple != nullptr, "null TupleGetItem operand");
  const TupleType* tt = as_tuple(tuple->type());
  if (!tt)
    fail(ErrorKind::kType, "'TupleGetItem' operand #0 (tuple) must be a tuple, but got " +
                               (tuple->type() ? tuple->type()->to_string() : std::string("untyped")));
  if (index < 0 || index >= static_cast<int64_t>(tt->fields().size()))
    fail(ErrorKind::kType, "'TupleGetItem' index " + std::to_string(index) + " is out of range for " +
                               tt->to_string());
  TypePtr t = tt->fields()[index];
  return std::make_shared<const TupleGetItem>(std::move(tuple), index, std::move(t), std::move(span));
}

namespace {

// Rationale: the caller's buffer of an in-place parameter receives the result
// as it is, so the two types must be the same (dtype, shape, layout), and
// one buffer cannot receive two results.
void check_inplace(const Function::Fields& f, const std::string& where) {
  if (f.inplace.empty()) return;
  const std::vector<TensorTypePtr> leaves = flatten_tensor_types(f.return_type);
  if (f.inplace.size() != leaves.size())
    fail(ErrorKind::kType, where + ": inplace names " + std::to_string(f.inplace.size()) + " results, but the function has " +
                               std::to_string(leaves.size()));
  std::set<int64_t> taken;
  for (size_t r = 0; r < leaves.size(); ++r) {
    const int64_t p = f.inplace[r];
    if (p < 0) continue;
    if (p >= static_cast<int64_t>(f.params.size()))
      fail(ErrorKind::kType, where + ": result " + std::to_string(r) + " is in place of parameter " +
                                 std::to_string(p) + ", but there are " + std::to_string(f.params.size()));
    const VarPtr& param = f.params[static_cast<size_t>(p)];
    if (!taken.insert(p).second)
      fail(ErrorKind::kType, where + ": parameter '" + param->name() + "' receives two results in place");
    if (!type_equal(param->type(), leaves[r]))
      fail(ErrorKind::kType, where + ": result " + std::to_string(r) + " (" + leaves[r]->to_string() +
                                 ") is written in place of parameter '" + param->name() + "' (" +
                                 param->type()->to_string() + "), which needs the same type");
  }
}

}  // namespace

FunctionPtr Function::make(Fields f) {
  const std::string where = "function '" + f.name + "'";
  if (!f.return_type) fail(ErrorKind::kVerify, where + " has no return type");
  std::set<const Var*> seen;
  std::vector<TypePtr> param_types;
  for (const auto& p : f.params) {
    if (!p) fail(ErrorKind::kVerify, where + ": Function.params entries MUST be Vars");
    if (!seen.insert(p.get()).second)
      fail(ErrorKind::kVerify, where + ": parameter '" + p->name() + "' appears twice");
    param_types.push_back(p->type());
  }
  if (!f.specializations.empty()) {
    if (!f.variants.empty())
      fail(ErrorKind::kVerify, where + ": a variant MUST NOT itself carry variants");
    if (!f.body) fail(ErrorKind::kVerify, where + ": a variant needs a body");
  }
  if (f.body && !f.variants.empty())
    fail(ErrorKind::kVerify, where + ": a real body combined with variants is invalid");
  check_inplace(f, where);
  auto type = CallableType::make(std::move(param_types), f.return_type);
  return std::make_shared<const Function>(std::move(f), std::move(type));
}

std::string Function::canonical_signature() const {
  std::string s;
  for (size_t i = 0; i < f_.specializations.size(); ++i) {
    const auto& p = f_.specializations[i];
    if (i) s += ";";
    s += p.dim_var + "$" + std::to_string(p.lo) + "_" + std::to_string(p.hi);
  }
  return s;
}

std::shared_ptr<const GridRegionExpr> GridRegionExpr::make(Fields f) {
  TF_CHECK(f.induction_var && f.body, "GridRegionExpr needs an induction var and a body");
  if (f.carried_args.size() != f.init_args.size() || f.init_args.size() != f.yield_values.size())
    fail(ErrorKind::kVerify, "GridRegionExpr carry chain lengths differ (carried_args, init_args, yield_values)");
  TypePtr type;
  if (f.carried_args.size() == 1) {
    type = f.carried_args[0]->type();
  } else {
    std::vector<TypePtr> ts;
    for (const auto& c : f.carried_args) ts.push_back(c->type());
    type = TupleType::make(std::move(ts));
  }
  return std::make_shared<const GridRegionExpr>(std::move(f), std::move(type));
}

}  // namespace tf::ir
