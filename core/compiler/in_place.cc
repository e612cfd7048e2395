#include "core/compiler/in_place.h"

#include <functional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/compiler/scalar_lowering.h"
#include "core/compiler/stage_lowering.h"

namespace tf::compiler {

using ir::Expr;
using ir::ExprPtr;

namespace {

// How many times each node is an operand of another (a DAG: each edge once
// per parent's argument slot); false when the body has a loop.
bool count_uses(const ExprPtr& root, std::unordered_map<const Expr*, int>* uses) {
  std::unordered_set<const Expr*> seen;
  std::vector<const Expr*> stack{root.get()};
  while (!stack.empty()) {
    const Expr* e = stack.back();
    stack.pop_back();
    if (!seen.insert(e).second) continue;
    std::vector<ExprPtr> operands;
    switch (e->kind()) {
      case ir::ExprKind::kGridRegion: return false;
      case ir::ExprKind::kCall: operands = static_cast<const ir::Call&>(*e).args(); break;
      case ir::ExprKind::kTuple: operands = static_cast<const ir::Tuple&>(*e).fields(); break;
      case ir::ExprKind::kTupleGetItem: operands = {static_cast<const ir::TupleGetItem&>(*e).tuple()}; break;
      default: break;
    }
    for (const ExprPtr& o : operands) {
      ++(*uses)[o.get()];
      stack.push_back(o.get());
    }
  }
  return true;
}

// The body's tensor leaves in order, when the body spells them out (a
// tensor, or a Tuple of them, nested); empty otherwise (a tuple-valued op).
void leaves_of(const ExprPtr& e, std::vector<ExprPtr>* out, bool* spelled) {
  if (e->type()->kind() != ir::TypeKind::kTuple) {
    out->push_back(e);
    return;
  }
  if (e->kind() != ir::ExprKind::kTuple) {
    *spelled = false;
    return;
  }
  for (const ExprPtr& f : static_cast<const ir::Tuple&>(*e).fields()) leaves_of(f, out, spelled);
}

std::vector<ExprPtr> operands_of(const Expr& e) {
  switch (e.kind()) {
    case ir::ExprKind::kCall: return static_cast<const ir::Call&>(e).args();
    case ir::ExprKind::kTuple: return static_cast<const ir::Tuple&>(e).fields();
    case ir::ExprKind::kTupleGetItem: return {static_cast<const ir::TupleGetItem&>(e).tuple()};
    default: return {};
  }
}

// An elementwise update of the parameter: every node between the result
// and the parameter is an elementwise op (one with a scalar lowering) of the
// result's shape, so every stage that reads the parameter reads it at the
// index it writes, or stores a temporary before the result's stage runs;
// and every use of those nodes and of the parameter is on such a path, so
// no other value reads them after the result's stage wrote.
bool elementwise_update(const Expr* root, const Expr* param, const std::unordered_map<const Expr*, int>& uses) {
  const auto* shape = dynamic_cast<const ir::TensorType*>(root->type().get());
  if (!shape) return false;
  std::unordered_map<const Expr*, bool> reaches;  // memo: does the node reach param
  std::vector<const Expr*> cone;                  // the nodes that do, below root
  std::function<bool(const Expr*)> walk = [&](const Expr* e) -> bool {
    if (e == param) return true;
    auto it = reaches.find(e);
    if (it != reaches.end()) return it->second;
    bool r = false;
    for (const ExprPtr& o : operands_of(*e)) r = walk(o.get()) || r;
    reaches[e] = r;
    if (r) cone.push_back(e);
    return r;
  };
  if (!walk(root)) return false;
  std::unordered_map<const Expr*, int> inside;  // uses from within the cone
  for (const Expr* e : cone) {
    auto* c = dynamic_cast<const ir::Call*>(e);
    if (!c || !c->op() || !find_scalar_lowering(c->op()->name())) return false;
    auto* t = dynamic_cast<const ir::TensorType*>(e->type().get());
    if (!t || t->shape() != shape->shape()) return false;
    for (const ExprPtr& o : c->args()) ++inside[o.get()];
  }
  for (const Expr* e : cone)
    if (e != root && inside[e] != uses.at(e)) return false;
  return inside[param] == uses.at(param);
}

// allow_elementwise: the elementwise form needs its stage's output pointer
// not to be __restrict, which codegen knows for a function's own in-place
// results only (a dispatch variant's are the prototype's).
bool body_writes_in_place(const ir::Function& fn, size_t leaf, size_t param, bool allow_elementwise) {
  if (!fn.body() || param >= fn.params().size()) return false;
  std::vector<ExprPtr> leaves;
  bool spelled = true;
  leaves_of(fn.body(), &leaves, &spelled);
  if (!spelled || leaf >= leaves.size()) return false;
  std::unordered_map<const Expr*, int> uses;
  if (!count_uses(fn.body(), &uses)) return false;
  // Being returned is a use: a Tuple's fields are counted as its operands,
  // a body that is one tensor is not an operand of anything.
  if (fn.body()->kind() != ir::ExprKind::kTuple) ++uses[fn.body().get()];
  const Expr* p = fn.params()[param].get();
  const Expr* e = leaves[leaf].get();
  if (uses[e] != 1) return false;  // returned twice, or read by another value
  if (allow_elementwise && elementwise_update(e, p, uses)) return true;
  if (uses[p] != 1) return false;
  for (;;) {
    auto* c = dynamic_cast<const ir::Call*>(e);
    if (!c || !c->op() || c->args().empty()) return false;
    const StageLowering* l = find_stage_lowering(c->op()->name());
    if (!l || !l->in_place) return false;
    const Expr* dst = c->args()[0].get();
    if (dst == p) return true;
    if (uses[dst] != 1) return false;
    e = dst;
  }
}

}  // namespace

bool writes_in_place(const ir::Function& fn, size_t leaf, size_t param) {
  if (!fn.is_prototype()) return body_writes_in_place(fn, leaf, param, true);
  for (const ir::FunctionPtr& v : fn.variants())
    if (!body_writes_in_place(*v, leaf, param, false)) return false;
  return true;
}

bool writes_all_in_place(const ir::Function& fn) {
  for (size_t r = 0; r < fn.inplace().size(); ++r)
    if (fn.inplace()[r] >= 0 && !writes_in_place(fn, r, static_cast<size_t>(fn.inplace()[r]))) return false;
  return true;
}

}  // namespace tf::compiler
