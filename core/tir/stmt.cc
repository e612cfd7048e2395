#include "core/tir/stmt.h"

#include "core/ir/error.h"

namespace tf::tir {

const char* for_kind_name(ForKind k) {
  switch (k) {
    case ForKind::kSerial: return "serial";
    case ForKind::kParallel: return "parallel";
    case ForKind::kVectorized: return "vectorized";
    case ForKind::kUnrolled: return "unrolled";
    case ForKind::kGpuBlock: return "gpu_block";
    case ForKind::kGpuThread: return "gpu_thread";
  }
  return "?";
}

const char* memory_scope_name(MemoryScope s) {
  switch (s) {
    case MemoryScope::kLocal: return "local";
    case MemoryScope::kShared: return "shared";
    case MemoryScope::kGlobal: return "global";
  }
  return "?";
}

namespace {
void check_int(const ExprPtr& e, const char* what) {
  TF_CHECK(e && !e->type().handle && ir::is_int(e->dtype()), std::string("tir: ") + what + " is not an integer");
}
void check_bool(const ExprPtr& e, const char* what) {
  TF_CHECK(e && e->type() == Type::scalar(DType::kBool), std::string("tir: ") + what + " is not a bool");
}
}  // namespace

StmtPtr For::make(VarPtr var, ExprPtr min, ExprPtr extent, ForKind kind, StmtPtr body, std::vector<Reduction> reductions,
                  ExprPtr min_work) {
  TF_CHECK(var && !var->type().handle && ir::is_int(var->dtype()) && !var->is_mutable(), "tir: a For index");
  check_int(min, "a For's min");
  check_int(extent, "a For's extent");
  TF_CHECK(body, "tir: a For without a body");
  for (const Reduction& r : reductions)
    TF_CHECK(r.var && r.var->is_mutable() && (r.op == BinaryOp::kAdd || r.op == BinaryOp::kMax),
             "tir: a reduction of an immutable variable or a non-associative op");
  TF_CHECK(reductions.empty() || kind == ForKind::kVectorized, "tir: reductions on a non-vectorized For");
  if (min_work) {
    TF_CHECK(kind == ForKind::kParallel, "tir: min_work on a non-parallel For");
    check_bool(min_work, "min_work");
  }
  return std::make_shared<For>(std::move(var), std::move(min), std::move(extent), kind, std::move(body),
                               std::move(reductions), std::move(min_work));
}

StmtPtr LetStmt::make(VarPtr var, ExprPtr value, StmtPtr body, bool no_alias) {
  TF_CHECK(var && value && body, "tir: an incomplete LetStmt");
  TF_CHECK(var->type() == value->type(), "tir: let " + var->name() + " of type " + type_name(var->type()) +
                                             " bound to a " + type_name(value->type()));
  TF_CHECK(!no_alias || var->type().handle, "tir: no_alias on a non-pointer");
  return std::make_shared<LetStmt>(std::move(var), std::move(value), std::move(body), no_alias);
}

StmtPtr Store::make(VarPtr base, ExprPtr index, ExprPtr value) {
  TF_CHECK(base && base->type().handle && !base->type().opaque, "tir: a Store to a non-pointer");
  check_int(index, "a Store index");
  TF_CHECK(value && value->type() == Type::scalar(base->dtype()),
           "tir: a Store of " + (value ? type_name(value->type()) : std::string("null")) + " to " +
               type_name(base->type()));
  return std::make_shared<Store>(std::move(base), std::move(index), std::move(value));
}

StmtPtr Assign::make(VarPtr var, ExprPtr value) {
  TF_CHECK(var && var->is_mutable(), "tir: an Assign to an immutable variable");
  TF_CHECK(value && value->type() == var->type(), "tir: an Assign of another type to " + var->name());
  return std::make_shared<Assign>(std::move(var), std::move(value));
}

StmtPtr IfThenElse::make(ExprPtr cond, StmtPtr then_case, StmtPtr else_case) {
  check_bool(cond, "an if condition");
  TF_CHECK(then_case, "tir: an if without a then case");
  return std::make_shared<IfThenElse>(std::move(cond), std::move(then_case), std::move(else_case));
}

StmtPtr Allocate::make(VarPtr var, ExprPtr extent, MemoryScope scope, StmtPtr body) {
  TF_CHECK(var && var->type().handle && !var->type().opaque && !var->is_mutable(), "tir: an Allocate of a non-pointer");
  check_int(extent, "an Allocate's extent");
  TF_CHECK(body, "tir: an Allocate without a body");
  return std::make_shared<Allocate>(std::move(var), std::move(extent), scope, std::move(body));
}

StmtPtr Evaluate::make(ExprPtr call) {
  TF_CHECK(call && call->kind() == ExprKind::kCall, "tir: Evaluate of a non-call");
  return std::make_shared<Evaluate>(std::move(call));
}

StmtPtr Seq::make(std::vector<StmtPtr> stmts) {
  std::vector<StmtPtr> flat;
  for (StmtPtr& s : stmts) {
    TF_CHECK(s, "tir: a null statement in a Seq");
    if (auto* q = as<Seq>(s)) flat.insert(flat.end(), q->stmts().begin(), q->stmts().end());
    else flat.push_back(std::move(s));
  }
  if (flat.size() == 1) return flat[0];
  return std::make_shared<Seq>(std::move(flat));
}

StmtPtr Barrier::make() { return std::make_shared<Barrier>(); }

StmtPtr Return::make(ExprPtr code) {
  check_int(code, "a Return code");
  return std::make_shared<Return>(std::move(code));
}

StmtPtr Comment::make(std::string text) {
  TF_CHECK(text.find('\n') == std::string::npos, "tir: a multi-line Comment");
  return std::make_shared<Comment>(std::move(text));
}

}  // namespace tf::tir
