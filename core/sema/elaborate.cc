#include "core/sema/elaborate.h"

#include <optional>
#include <unordered_map>

#include "core/ir/error.h"
#include "core/ir/visitor.h"
#include "core/sema/typeinfer.h"

namespace tf::sema {
namespace {

thread_local ElaborationSession* g_active = nullptr;

std::string where(const ir::Span& span) {
  std::string loc = span.to_string();
  return loc.empty() ? "" : loc + ": ";
}

[[noreturn]] void arg_error(const ir::Span& span, const ir::Function& callee, size_t i, const std::string& rule) {
  const auto& p = callee.params()[i];
  ir::fail(ir::ErrorKind::kType, where(span) + "error: call to '" + callee.name() + "': argument #" +
                                     std::to_string(i) + " (" + p->name() + ") " + rule);
}

// Matches one argument dim against a parameter dim, extending `subst`.
// Envelope matching: a DimVar parameter accepts the same DimVar, a static
// extent inside its range, or another DimVar whose range lies inside it.
bool match_dim(const ir::ShapeDim& param, const ir::ShapeDim& arg, std::map<std::string, ir::ShapeDim>* subst,
               std::string* why) {
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

// Binds one tensor argument to a tensor parameter; returns the instance's
// parameter type.
ir::TypePtr bind_tensor(const ir::Function& callee, size_t i, const ir::TensorType& p, const ir::TypePtr& pt,
                        const ir::TensorType& a, const ir::TypePtr& at, Binding* b, const ir::Span& span) {
  if (p.dtype() != a.dtype() || p.rank() != a.rank())
    arg_error(span, callee, i, "must be " + pt->to_string() + ", but got " + at->to_string());
  for (size_t d = 0; d < p.rank(); ++d) {
    std::string why;
    if (!match_dim(p.shape()[d], a.shape()[d], &b->dims, &why))
      arg_error(span, callee, i, "axis " + std::to_string(d) + ": " + why);
  }
  if (p.layout()) {
    // An explicit layout contract: layout and storage must match exactly.
    if (!a.layout() || !a.layout()->structural_equal(*p.layout()) || a.storage() != p.storage())
      arg_error(span, callee, i, "must match its layout contract " + pt->to_string() + " exactly, but got " +
                                     at->to_string());
    return pt;
  }
  // A template wildcard: takes the argument's layout and storage; the shape
  // stays the parameter's (DimVars are matched, never monomorphized).
  if (!a.layout() && a.storage() == p.storage()) return pt;
  return ir::TensorType::make(p.shape(), p.dtype(), a.layout(), a.storage());
}

// Rebuilds a body under new parameter types, re-typeinferring every Call.
class Reconstructor : public ir::ExprMutator {
 public:
  void map_var(const ir::Var* from, ir::VarPtr to) { vars_[from] = std::move(to); }

 protected:
  ir::ExprPtr mutate_var(const ir::VarPtr& v) override {
    auto it = vars_.find(v.get());
    return it == vars_.end() ? v : it->second;
  }
  ir::CallPtr rebuild_call(const ir::Call& old, std::vector<ir::ExprPtr> args) override {
    return old.op() ? make_op_call(old.op(), std::move(args), old.span())
                    : make_function_call(old.callee(), std::move(args), old.span());
  }
  // A carried phi takes the type of its (possibly changed) init value; the
  // yields must come back with that same type.
  ir::ExprPtr mutate_grid_region(const ir::ExprPtr& e) override {
    const auto& g = static_cast<const ir::GridRegionExpr&>(*e);
    ir::GridRegionExpr::Fields f = g.fields();
    bool changed = false;
    for (size_t k = 0; k < f.init_args.size(); ++k) {
      ir::ExprPtr init = mutate(f.init_args[k]);
      changed |= init != f.init_args[k];
      f.init_args[k] = init;
      const ir::VarPtr& phi = g.fields().carried_args[k];
      if (!ir::type_equal(init->type(), phi->type())) {
        ir::VarPtr fresh = ir::Var::make(phi->name(), init->type(), phi->span());
        map_var(phi.get(), fresh);
        f.carried_args[k] = fresh;
        changed = true;
      }
    }
    ir::ExprPtr body = mutate(f.body);
    changed |= body != f.body;
    f.body = body;
    for (size_t k = 0; k < f.yield_values.size(); ++k) {
      ir::ExprPtr y = mutate(f.yield_values[k]);
      changed |= y != f.yield_values[k];
      f.yield_values[k] = y;
      if (!ir::type_equal(y->type(), f.carried_args[k]->type()))
        ir::fail(ir::ErrorKind::kType, where(y->span()) + "error: loop-carried '" + f.carried_args[k]->name() +
                                           "' enters the loop as " + f.carried_args[k]->type()->to_string() +
                                           " but is rebound to " + y->type()->to_string());
    }
    return changed ? ir::ExprPtr(ir::GridRegionExpr::make(std::move(f))) : e;
  }

 private:
  std::unordered_map<const ir::Var*, ir::VarPtr> vars_;
};

std::string describe_types(const std::vector<ir::TypePtr>& ts) {
  std::string s = "(";
  for (size_t i = 0; i < ts.size(); ++i) s += (i ? ", " : "") + ts[i]->to_string();
  return s + ")";
}

ir::FunctionPtr reconstruct(const ir::FunctionPtr& callee, const std::vector<ir::TypePtr>& param_types,
                            const ir::Span& span) {
  Reconstructor r;
  ir::Function::Fields f;
  f.name = callee->name();
  f.label = callee->label();
  f.span = callee->span();
  f.specializations = callee->specializations();
  for (size_t i = 0; i < param_types.size(); ++i) {
    const ir::VarPtr& p = callee->params()[i];
    ir::VarPtr np = ir::type_equal(p->type(), param_types[i]) ? p : ir::Var::make(p->name(), param_types[i], p->span());
    r.map_var(p.get(), np);
    f.params.push_back(np);
  }
  try {
    f.body = r.mutate(callee->body());
  } catch (const ir::Error& e) {
    ir::fail(e.kind(), where(span) + "error: in call to '" + callee->name() + "' elaborated for " +
                           describe_types(param_types) + ": " + e.what());
  }
  // The instance's return type is its re-derived body type, never the
  // declared one carried over (they differ only when a layout propagated).
  f.return_type = f.body->type();
  return ir::Function::make(std::move(f));
}

}  // namespace

ElaborationSession::ElaborationSession() : outer_(g_active) { g_active = this; }
ElaborationSession::~ElaborationSession() { g_active = outer_; }
ElaborationSession* ElaborationSession::active() { return g_active; }

ir::FunctionPtr ElaborationSession::find(const ir::Function* callee,
                                         const std::vector<ir::TypePtr>& param_types) const {
  for (const Entry& e : entries_) {
    if (e.callee != callee || e.param_types.size() != param_types.size()) continue;
    bool same = true;
    for (size_t i = 0; i < param_types.size() && same; ++i) same = ir::type_equal(e.param_types[i], param_types[i]);
    if (same) return e.instance;
  }
  return nullptr;
}

void ElaborationSession::remember(const ir::Function* callee, std::vector<ir::TypePtr> param_types,
                                  ir::FunctionPtr instance) {
  entries_.push_back({callee, std::move(param_types), std::move(instance)});
}

Binding bind_call(const ir::Function& callee, const std::vector<ir::TypePtr>& arg_types, const ir::Span& span) {
  if (arg_types.size() != callee.params().size())
    ir::fail(ir::ErrorKind::kType, where(span) + "error: call to '" + callee.name() + "' takes " +
                                       std::to_string(callee.params().size()) + " argument(s), but got " +
                                       std::to_string(arg_types.size()));
  Binding b;
  for (size_t i = 0; i < arg_types.size(); ++i) {
    const ir::TypePtr& pt = callee.params()[i]->type();
    const ir::TypePtr& at = arg_types[i];
    const ir::TensorType* p = ir::as_tensor(pt);
    const ir::TensorType* a = ir::as_tensor(at);
    if (p && a) {
      b.param_types.push_back(bind_tensor(callee, i, *p, pt, *a, at, &b, span));
      continue;
    }
    if (!ir::type_equal(pt, at)) arg_error(span, callee, i, "must be " + pt->to_string() + ", but got " + at->to_string());
    b.param_types.push_back(pt);
  }
  return b;
}

ir::FunctionPtr elaborate(const ir::FunctionPtr& callee, const std::vector<ir::TypePtr>& arg_types,
                          const ir::Span& span) {
  TF_CHECK(callee != nullptr, "elaborate without a callee");
  Binding b = bind_call(*callee, arg_types, span);
  // A dispatch prototype is never elaborated: its None body is not inspected.
  if (callee->is_prototype() || !callee->body()) return callee;
  bool unchanged = true;
  for (size_t i = 0; i < b.param_types.size(); ++i)
    unchanged = unchanged && ir::type_equal(b.param_types[i], callee->params()[i]->type());
  if (unchanged) return callee;  // dedup

  std::optional<ElaborationSession> own;
  if (!ElaborationSession::active()) own.emplace();
  ElaborationSession* session = ElaborationSession::active();
  if (ir::FunctionPtr hit = session->find(callee.get(), b.param_types)) return hit;
  ir::FunctionPtr instance = reconstruct(callee, b.param_types, span);
  session->remember(callee.get(), b.param_types, instance);
  return instance;
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

ir::TypePtr call_result_type(const ir::Function& instance, const Binding& binding) {
  return substitute_type(instance.return_type(), binding.dims);
}

}  // namespace tf::sema
