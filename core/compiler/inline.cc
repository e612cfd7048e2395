#include "core/compiler/inline.h"

#include <map>
#include <string>
#include <unordered_map>

#include "core/ir/error.h"
#include "core/ir/visitor.h"
#include "core/sema/elaborate.h"

namespace tf::compiler {
namespace {

[[noreturn]] void unsupported(const std::string& what) {
  ir::fail(ir::ErrorKind::kUnsupported, "native codegen: " + what + " is not compiled yet");
}

class Inliner : public ir::ExprMutator {
 public:
  // `params`: the callee parameters this instance substitutes (empty at top).
  // `dims`: the callee's DimVars in terms of the caller's extents, so that
  // every inlined node's type is evaluable under the caller's bindings.
  explicit Inliner(std::unordered_map<const ir::Var*, ir::ExprPtr> params = {},
                   std::map<std::string, ir::ShapeDim> dims = {})
      : params_(std::move(params)), dims_(std::move(dims)) {}

 protected:
  ir::ExprPtr mutate_var(const ir::VarPtr& v) override {
    auto it = params_.find(v.get());
    return it == params_.end() ? v : it->second;
  }

  ir::ExprPtr mutate_call(const ir::CallPtr& c) override {
    ir::ExprPtr rebuilt = ir::ExprMutator::mutate_call(c);
    auto* call = ir::expr_as<ir::Call>(rebuilt);
    if (!call || call->op()) return rebuilt;
    const ir::Function& callee = *call->callee();
    if (callee.is_prototype() || !callee.body())
      unsupported("a call of the dispatch prototype '" + callee.name() + "'");
    std::unordered_map<const ir::Var*, ir::ExprPtr> bound;
    std::map<std::string, ir::ShapeDim> dims;
    for (size_t i = 0; i < callee.params().size(); ++i) {
      const ir::ExprPtr& arg = call->args().at(i);
      bound[callee.params()[i].get()] = arg;
      bind_dims(*callee.params()[i], *arg, &dims);
    }
    // A fresh inliner per call site: the callee's nodes are rebuilt for
    // these arguments, never shared with another site's.
    return Inliner(std::move(bound), std::move(dims)).mutate(callee.body());
  }

  // Retypes a rebuilt call of the callee's body in the caller's extents;
  // dtypes and ranks never change.
  ir::CallPtr rebuild_call(const ir::Call& old, std::vector<ir::ExprPtr> args) override {
    ir::TypePtr type = dims_.empty() ? old.type() : sema::substitute_type(old.type(), dims_);
    return old.op() ? ir::Call::make_op(old.op(), std::move(args), type, old.span())
                    : ir::Call::make_function(old.callee(), std::move(args), type, old.span());
  }

  // Each parameter axis that is exactly a DimVar binds it to the argument's extent.
  static void bind_dims(const ir::Var& param, const ir::Expr& arg, std::map<std::string, ir::ShapeDim>* dims) {
    auto* p = dynamic_cast<const ir::TensorType*>(param.type().get());
    auto* a = dynamic_cast<const ir::TensorType*>(arg.type().get());
    if (!p || !a) unsupported("a call with a non-tensor argument");
    if (p->dtype() != a->dtype() || p->rank() != a->rank()) unsupported("a call whose argument types differ");
    for (size_t d = 0; d < p->rank(); ++d)
      if (p->shape()[d].kind() == ir::DimKind::kVar) dims->emplace(p->shape()[d].var_name(), a->shape()[d]);
  }

  ir::ExprPtr mutate_tuple_get_item(const ir::ExprPtr& e) override {
    ir::ExprPtr rebuilt = ir::ExprMutator::mutate_tuple_get_item(e);
    auto* g = ir::expr_as<ir::TupleGetItem>(rebuilt);
    if (!g) return rebuilt;
    if (auto* t = ir::expr_as<ir::Tuple>(g->tuple())) return t->fields().at(g->index());
    return rebuilt;
  }

 private:
  std::unordered_map<const ir::Var*, ir::ExprPtr> params_;
  std::map<std::string, ir::ShapeDim> dims_;
};

class ProjectionCanon : public ir::ExprMutator {
 public:
  // The canonical projection #i of the (already canonical) tuple-valued call.
  ir::ExprPtr project(const ir::ExprPtr& call, int64_t i) {
    auto* tt = dynamic_cast<const ir::TupleType*>(call->type().get());
    if (!tt) unsupported("a projection of a non-tuple value");
    const int64_t n = static_cast<int64_t>(tt->fields().size());
    if (i < 0) i += n;
    if (i < 0 || i >= n) unsupported("a tuple index out of range");
    ir::ExprPtr& slot = proj_[{call.get(), i}];
    if (!slot) slot = ir::TupleGetItem::make(call, i);
    return slot;
  }

  // Output positions: a tuple-valued call is split into its projections.
  ir::ExprPtr split_outputs(const ir::ExprPtr& e) {
    if (auto* t = ir::expr_as<ir::Tuple>(e)) {
      std::vector<ir::ExprPtr> fields;
      for (const ir::ExprPtr& f : t->fields()) fields.push_back(split_outputs(f));
      return ir::Tuple::make(std::move(fields));
    }
    if (e->kind() == ir::ExprKind::kCall) {
      if (auto* tt = dynamic_cast<const ir::TupleType*>(e->type().get())) {
        std::vector<ir::ExprPtr> fields;
        for (size_t i = 0; i < tt->fields().size(); ++i) fields.push_back(project(e, static_cast<int64_t>(i)));
        return ir::Tuple::make(std::move(fields));
      }
    }
    return e;
  }

 protected:
  ir::ExprPtr mutate_tuple_get_item(const ir::ExprPtr& e) override {
    ir::ExprPtr rebuilt = ir::ExprMutator::mutate_tuple_get_item(e);
    auto* g = ir::expr_as<ir::TupleGetItem>(rebuilt);
    if (!g || g->tuple()->kind() != ir::ExprKind::kCall) return rebuilt;
    return project(g->tuple(), g->index());
  }

 private:
  std::map<std::pair<const ir::Expr*, int64_t>, ir::ExprPtr> proj_;
};

}  // namespace

ir::ExprPtr split_tuple_calls(const ir::ExprPtr& body) {
  ProjectionCanon canon;
  return canon.split_outputs(canon.mutate(body));
}

ir::ExprPtr inline_calls(const ir::ExprPtr& body) {
  try {
    return Inliner().mutate(body);
  } catch (const ir::Error& e) {
    if (e.kind() == ir::ErrorKind::kUnsupported) throw;
    unsupported(std::string("inlining a call whose types do not line up (") + e.what() + ")");
  }
}

}  // namespace tf::compiler
