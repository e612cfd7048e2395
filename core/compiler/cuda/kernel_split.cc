#include "core/compiler/cuda/kernel_split.h"

#include "core/tir/op.h"

namespace tf::compiler::cuda {

using namespace tir;

namespace {

size_t count_leaves(const StmtPtr& s) {
  if (!s) return 0;
  if (as<LetStmt>(s) && is_context(s)) return count_leaves(as<LetStmt>(s)->body());
  if (const IfThenElse* i = as<IfThenElse>(s)) return count_leaves(i->then_case()) + count_leaves(i->else_case());
  if (const Seq* q = as<Seq>(s)) {
    size_t n = 0;
    for (const StmtPtr& c : q->stmts()) n += count_leaves(c);
    return n;
  }
  if (as<Comment>(s)) return 0;
  return 1;
}

// s with only leaf number `k` (in program order) left; null when s holds
// none of it. `seen` counts the leaves passed so far.
StmtPtr keep_leaf(const StmtPtr& s, size_t k, size_t* seen) {
  if (!s) return nullptr;
  if (as<LetStmt>(s) && is_context(s)) {
    const LetStmt* l = as<LetStmt>(s);
    const StmtPtr body = keep_leaf(l->body(), k, seen);
    return body ? LetStmt::make(l->var(), l->value(), body, l->no_alias()) : nullptr;
  }
  if (const IfThenElse* i = as<IfThenElse>(s)) {
    const StmtPtr t = keep_leaf(i->then_case(), k, seen);
    const StmtPtr e = keep_leaf(i->else_case(), k, seen);
    if (t) return IfThenElse::make(i->cond(), t);
    if (e) return IfThenElse::make(lnot(i->cond()), e);
    return nullptr;
  }
  if (const Seq* q = as<Seq>(s)) {
    for (const StmtPtr& c : q->stmts())
      if (StmtPtr kept = keep_leaf(c, k, seen)) return kept;
    return nullptr;
  }
  if (as<Comment>(s)) return nullptr;
  return (*seen)++ == k ? s : nullptr;
}

}  // namespace

bool is_context(const StmtPtr& s) {
  const LetStmt* l = as<LetStmt>(s);
  return (l && !l->var()->is_mutable()) || as<IfThenElse>(s) || as<Seq>(s) || as<Comment>(s);
}

std::vector<StmtPtr> split_kernels(const StmtPtr& stage) {
  std::vector<StmtPtr> out;
  const size_t n = count_leaves(stage);
  for (size_t k = 0; k < n; ++k) {
    size_t seen = 0;
    out.push_back(keep_leaf(stage, k, &seen));
  }
  return out;
}

}  // namespace tf::compiler::cuda
