#include "core/tir/verifier.h"

#include <unordered_set>

#include "core/ir/error.h"
#include "core/tir/functor.h"

namespace tf::tir {

namespace {

class Verifier final : public Visitor {
 public:
  void run(const Function& f) {
    for (const VarPtr& p : f.params) bind(p);
    visit(f.body);
  }

 protected:
  void visit_Var(const Var& v) override {
    if (!in_scope_.count(&v)) fail("variable '" + v.name() + "' used outside the scope that binds it");
  }
  void visit_Binary(const Binary& n) override {
    if (!is_compute_dtype(n.a()->dtype()) && !n.a()->type().handle)
      fail(std::string("arithmetic (") + binary_spelling(n.op()) + ") on storage type " + type_name(n.a()->type()));
    Visitor::visit_Binary(n);
  }
  void visit_Unary(const Unary& n) override {
    if (!is_compute_dtype(n.a()->dtype())) fail("arithmetic on storage type " + type_name(n.a()->type()));
    Visitor::visit_Unary(n);
  }

  void visit_For(const For& n) override {
    visit(n.min());
    visit(n.extent());
    if (n.min_work()) visit(n.min_work());
    for (const Reduction& r : n.reductions())
      if (!in_scope_.count(r.var.get())) fail("reduction variable '" + r.var->name() + "' not bound outside its loop");
    bind(n.var());
    ++loops_;
    const bool parallel = n.for_kind() == ForKind::kParallel || n.for_kind() == ForKind::kGpuBlock ||
                          n.for_kind() == ForKind::kGpuThread;
    parallel_ += parallel;
    visit(n.body());
    parallel_ -= parallel;
    --loops_;
    unbind(n.var());
  }
  void visit_LetStmt(const LetStmt& n) override {
    visit(n.value());
    bind(n.var());
    visit(n.body());
    unbind(n.var());
  }
  void visit_Assign(const Assign& n) override {
    if (!in_scope_.count(n.var().get())) fail("assignment to '" + n.var()->name() + "' outside its scope");
    visit(n.value());
  }
  void visit_Allocate(const Allocate& n) override {
    visit(n.extent());
    if (n.scope() == MemoryScope::kLocal && n.extent()->kind() != ExprKind::kIntImm)
      fail("local allocation '" + n.var()->name() + "' of a run-time extent");
    bind(n.var());
    const bool heap = n.scope() == MemoryScope::kGlobal;
    heap_ += heap;
    visit(n.body());
    heap_ -= heap;
    unbind(n.var());
  }
  void visit_Return(const Return& n) override {
    if (loops_) fail("return inside a loop");
    if (heap_) fail("return inside a global allocation (it would not be freed)");
    Visitor::visit_Return(n);
  }
  void visit_Barrier(const Barrier&) override {
    if (!parallel_) fail("barrier outside a parallel loop");
  }

 private:
  [[noreturn]] static void fail(const std::string& what) { ir::fail(ir::ErrorKind::kInternal, "tir verifier: " + what); }

  void bind(const VarPtr& v) {
    if (!in_scope_.insert(v.get()).second) fail("variable '" + v->name() + "' bound again inside its own scope");
  }
  void unbind(const VarPtr& v) { in_scope_.erase(v.get()); }

  std::unordered_set<const Var*> in_scope_;
  int loops_ = 0, parallel_ = 0, heap_ = 0;
};

}  // namespace

void verify(const Function& f) {
  TF_CHECK(f.body, "tir: a Function without a body");
  Verifier().run(f);
}

}  // namespace tf::tir
