#include "core/sema/verify.h"

#include <map>
#include <set>

#include "core/ir/error.h"
#include "core/ir/visitor.h"
#include "core/sema/boundary.h"
#include "core/sema/dispatch.h"
#include "core/sema/typeinfer.h"

namespace tf::sema {
namespace {

[[noreturn]] void verify_error(const ir::Function& fn, const std::string& rule) {
  std::string loc = fn.span().to_string();
  ir::fail(ir::ErrorKind::kVerify, (loc.empty() ? "" : loc + ": ") + "error: function '" + fn.name() + "': " + rule);
}

// Every occurrence of a same-name DimVar across params and return_type
// agrees on its (lo, hi) bounds.
void check_dimvar_bounds(const ir::Function& fn) {
  std::map<std::string, std::pair<std::pair<int64_t, int64_t>, std::string>> seen;
  auto scan = [&](const ir::TypePtr& t, const std::string& where) {
    for (const auto& tt : ir::flatten_tensor_types(t)) {
      std::map<std::string, std::pair<int64_t, int64_t>> vars;
      for (const auto& d : tt->shape()) d.collect_vars(&vars);
      for (const auto& [name, bounds] : vars) {
        auto [it, fresh] = seen.emplace(name, std::make_pair(bounds, where));
        if (!fresh && it->second.first != bounds)
          verify_error(fn, "DimVar '" + name + "' has bounds [" + std::to_string(bounds.first) + ", " +
                               std::to_string(bounds.second) + ") in " + where + " but [" +
                               std::to_string(it->second.first.first) + ", " +
                               std::to_string(it->second.first.second) + ") in " + it->second.second +
                               "; same-name DimVars MUST agree on their bounds");
      }
    }
  };
  for (const auto& p : fn.params()) scan(p->type(), "parameter '" + p->name() + "'");
  scan(fn.return_type(), "the return type");
}

// Re-derives every Call's type and checks every Var is bound.
class BodyChecker : public ir::ExprVisitor {
 public:
  BodyChecker(const ir::Function& fn) : fn_(fn) {
    for (const auto& p : fn.params()) {
      bound_.insert(p.get());
      for (const auto& t : ir::flatten_tensor_types(p->type()))
        for (const auto& d : t->shape()) d.collect_vars(&param_dims_);
    }
  }
  void bind(const ir::Var* v) { bound_.insert(v); }
  void bind_induction(const std::string& name) { inductions_.insert(name); }

 protected:
  void visit_var(const ir::Var& v) override {
    if (!bound_.count(&v))
      verify_error(fn_, "uses Var '" + v.name() + "', which is not one of its parameters");
  }
  void visit_call(const ir::Call& c) override {
    ir::CallPtr again = c.op() ? make_op_call(c.op(), c.args(), c.span())
                               : make_function_call(c.callee(), c.args(), c.span());
    if (!ir::type_equal(again->type(), c.type()))
      verify_error(fn_, "a Call to '" + (c.op() ? c.op()->surface_name() : c.callee()->name()) +
                            "' is stamped " + c.type()->to_string() + " but typeinfer derives " +
                            again->type()->to_string());
  }
  // The carry chain's yields come back with the carried types.
  void visit_grid_region(const ir::GridRegionExpr& g) override {
    const auto& f = g.fields();
    // Every DimVar of start / extent / step is bound by the
    // function's parameter shapes (or is an enclosing loop's variable).
    std::map<std::string, std::pair<int64_t, int64_t>> dims;
    for (const auto* d : {&f.start, &f.extent, &f.step}) d->collect_vars(&dims);
    for (const auto& [name, range] : dims)
      if (!param_dims_.count(name) && !inductions_.count(name))
        verify_error(fn_, "loop bound DimVar '" + name + "' is not bound by a parameter shape");
    for (size_t k = 0; k < f.yield_values.size(); ++k)
      if (!ir::type_equal(f.yield_values[k]->type(), f.carried_args[k]->type()))
        verify_error(fn_, "loop-carried '" + f.carried_args[k]->name() + "' has type " +
                              f.carried_args[k]->type()->to_string() + " but its yield has type " +
                              f.yield_values[k]->type()->to_string());
    for (size_t k = 0; k < f.init_args.size(); ++k)
      if (!ir::type_equal(f.init_args[k]->type(), f.carried_args[k]->type()))
        verify_error(fn_, "loop-carried '" + f.carried_args[k]->name() + "' has type " +
                              f.carried_args[k]->type()->to_string() + " but its init value has type " +
                              f.init_args[k]->type()->to_string());
  }

 private:
  const ir::Function& fn_;
  std::set<const ir::Var*> bound_;
  std::map<std::string, std::pair<int64_t, int64_t>> param_dims_;
  std::set<std::string> inductions_;
};

// Loop binders are in scope inside their region; collect them up front.
class BinderCollector : public ir::ExprVisitor {
 public:
  explicit BinderCollector(BodyChecker* checker) : checker_(checker) {}

 protected:
  void visit_grid_region(const ir::GridRegionExpr& g) override {
    checker_->bind(g.fields().induction_var.get());
    checker_->bind_induction(g.fields().induction_var->name());
    for (const auto& c : g.fields().carried_args) checker_->bind(c.get());
  }

 private:
  BodyChecker* checker_;
};

void check_body(const ir::Function& fn) {
  if (!fn.body()) return;
  BodyChecker checker(fn);
  BinderCollector(&checker).visit(fn.body());
  checker.visit(fn.body());
  // Return by value: storage and strides may differ (core/sema/boundary.h).
  if (auto why = return_mismatch(fn.body()->type(), fn.return_type()))
    ir::fail(ir::ErrorKind::kType,
             (fn.span().to_string().empty() ? "" : fn.span().to_string() + ": ") + "error: function '" +
                 fn.name() + "' declares return type " + fn.return_type()->to_string() +
                 ", but its body has type " + fn.body()->type()->to_string() + ": " + *why);
}

}  // namespace

void verify_function(const ir::Function& fn) {
  if (fn.is_variant())
    verify_error(fn, "a top-level Module.functions entry MUST NOT be a variant (it has specializations)");
  if (!fn.body() && fn.variants().empty())
    verify_error(fn, "has no body and no variants: a prototype with no variants is uncallable");
  check_dimvar_bounds(fn);
  check_body(fn);
  check_dispatch(fn);
  for (const auto& v : fn.variants()) {
    check_dimvar_bounds(*v);
    check_body(*v);
  }
}

namespace {
// True when `instance` is an elaboration of `fn`: same name and the same
// parameter shapes and dtypes (elaboration changes only layout and storage).
bool is_instance_of(const ir::Function& instance, const ir::Function& fn) {
  if (instance.name() != fn.name() || instance.params().size() != fn.params().size() || fn.is_prototype())
    return false;
  for (size_t i = 0; i < fn.params().size(); ++i) {
    auto a = ir::flatten_tensor_types(instance.params()[i]->type());
    auto b = ir::flatten_tensor_types(fn.params()[i]->type());
    if (a.size() != b.size()) return false;
    for (size_t k = 0; k < a.size(); ++k)
      if (a[k]->dtype() != b[k]->dtype() || !ir::shape_equal(a[k]->shape(), b[k]->shape())) return false;
  }
  return true;
}

// A Call's callee must be the module's function of that name (same node), or
// an elaborated instance of it, which is verified in turn.
class CalleeChecker : public ir::ExprVisitor {
 public:
  CalleeChecker(const std::map<std::string, const ir::Function*>& table, const ir::Function& fn)
      : table_(table), fn_(fn) {}

 protected:
  void visit_call(const ir::Call& c) override {
    if (!c.callee()) return;
    auto it = table_.find(c.callee()->name());
    if (it != table_.end() && it->second == c.callee().get()) return;
    if (it == table_.end() || !is_instance_of(*c.callee(), *it->second))
      verify_error(fn_, "calls '" + c.callee()->name() + "', which is not a function of this module");
    if (!checked_.insert(c.callee().get()).second) return;
    check_dimvar_bounds(*c.callee());
    check_body(*c.callee());
    CalleeChecker(table_, *c.callee()).visit(c.callee()->body());
  }

 private:
  std::set<const ir::Function*> checked_;
  const std::map<std::string, const ir::Function*>& table_;
  const ir::Function& fn_;
};
}  // namespace

ir::ModulePtr seal(ir::Target target, std::vector<ir::FunctionPtr> functions) {
  std::map<std::string, const ir::Function*> table;
  for (const auto& f : functions) {
    TF_CHECK(f != nullptr, "null function");
    table.emplace(f->name(), f.get());
  }
  for (const auto& f : functions) {
    verify_function(*f);
    CalleeChecker(table, *f).visit(f->body());
    for (const auto& v : f->variants()) CalleeChecker(table, *f).visit(v->body());
  }
  return ir::Module::make(std::move(target), std::move(functions));
}

}  // namespace tf::sema
