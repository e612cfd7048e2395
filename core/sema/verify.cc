#include "core/sema/verify.h"

#include <map>
#include <set>

#include "core/ir/error.h"
#include "core/ir/visitor.h"
#include "core/sema/typeinfer.h"

namespace tf::sema {
namespace {

[[noreturn]] void verify_error(const ir::Function& fn, const std::string& rule) {
  std::string loc = fn.span().to_string();
  ir::fail(ir::ErrorKind::kVerify, (loc.empty() ? "" : loc + ": ") + "error: function '" + fn.name() + "': " + rule);
}

// Spec §1.1: every occurrence of a same-name DimVar across params and
// return_type agrees on its (lo, hi) bounds.
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
    for (const auto& p : fn.params()) bound_.insert(p.get());
  }
  void bind(const ir::Var* v) { bound_.insert(v); }

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
  void visit_grid_region(const ir::GridRegionExpr&) override {}

 private:
  const ir::Function& fn_;
  std::set<const ir::Var*> bound_;
};

// Loop binders are in scope inside their region; collect them up front.
class BinderCollector : public ir::ExprVisitor {
 public:
  explicit BinderCollector(BodyChecker* checker) : checker_(checker) {}

 protected:
  void visit_grid_region(const ir::GridRegionExpr& g) override {
    checker_->bind(g.fields().induction_var.get());
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
  if (!ir::type_equal(fn.body()->type(), fn.return_type()))
    ir::fail(ir::ErrorKind::kType,
             (fn.span().to_string().empty() ? "" : fn.span().to_string() + ": ") + "error: function '" +
                 fn.name() + "' declares return type " + fn.return_type()->to_string() +
                 ", but its body has type " + fn.body()->type()->to_string());
}

void check_variant_of(const ir::Function& base, const ir::Function& v) {
  if (!v.is_variant()) verify_error(base, "variant '" + v.label() + "' carries no specialization");
  if (v.name() != base.name()) verify_error(base, "every variant MUST share the base's name, but one is '" + v.name() + "'");
  if (!ir::type_equal(v.type(), base.type()))
    verify_error(base, "every variant MUST share the base's params and return_type");
}

}  // namespace

void verify_function(const ir::Function& fn) {
  if (fn.is_variant())
    verify_error(fn, "a top-level Module.functions entry MUST NOT be a variant (it has specializations)");
  if (!fn.body() && fn.variants().empty())
    verify_error(fn, "has no body and no variants: a prototype with no variants is uncallable");
  check_dimvar_bounds(fn);
  check_body(fn);
  for (const auto& v : fn.variants()) {
    check_variant_of(fn, *v);
    check_dimvar_bounds(*v);
    check_body(*v);
  }
}

namespace {
// A Call's callee must be the module's function of that name (same node).
class CalleeChecker : public ir::ExprVisitor {
 public:
  CalleeChecker(const std::map<std::string, const ir::Function*>& table, const ir::Function& fn)
      : table_(table), fn_(fn) {}

 protected:
  void visit_call(const ir::Call& c) override {
    if (!c.callee()) return;
    auto it = table_.find(c.callee()->name());
    if (it == table_.end() || it->second != c.callee().get())
      verify_error(fn_, "calls '" + c.callee()->name() + "', which is not a function of this module");
  }

 private:
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
