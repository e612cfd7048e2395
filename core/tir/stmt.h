// TIR statements: loop nests over memory. A kernel is one Function whose
// body is a Stmt tree (stmt.h's nodes), printed by one printer per target.
//
// Scoping is structural: a For binds its index over its body, a LetStmt its
// variable over its body, an Allocate its buffer over its body; a mutable
// variable (an accumulator) is declared by a LetStmt with its initial value
// and changed by Assign. A variable is never bound again inside its own
// scope (the verifier checks it), so passes can move statements without
// renaming; a copy of a subtree (a specialization) may bind the same
// variables in another branch.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/tir/expr.h"

namespace tf::tir {

#define TF_TIR_STMT_LIST(X)  \
  X(kFor, For)               \
  X(kLetStmt, LetStmt)       \
  X(kStore, Store)           \
  X(kAssign, Assign)         \
  X(kIfThenElse, IfThenElse) \
  X(kAllocate, Allocate)     \
  X(kEvaluate, Evaluate)     \
  X(kSeq, Seq)               \
  X(kBarrier, Barrier)       \
  X(kReturn, Return)         \
  X(kComment, Comment)

enum class StmtKind : uint8_t {
#define TF_X(e, c) e,
  TF_TIR_STMT_LIST(TF_X)
#undef TF_X
};

class Stmt;
#define TF_X(e, c) class c;
TF_TIR_STMT_LIST(TF_X)
#undef TF_X
using StmtPtr = std::shared_ptr<const Stmt>;

class Stmt {
 public:
  virtual ~Stmt() = default;
  StmtKind kind() const { return kind_; }

 protected:
  explicit Stmt(StmtKind k) : kind_(k) {}

 private:
  StmtKind kind_;
};

template <typename T>
const T* as(const StmtPtr& s) {
  return s && s->kind() == T::kKind ? static_cast<const T*>(s.get()) : nullptr;
}

// How a loop's iterations run. kVectorized promises the iterations are
// independent except for the declared reductions (a printer may emit SIMD);
// kParallel runs them on threads; the GPU kinds bind the index to a block or
// thread index of a launch.
enum class ForKind : uint8_t { kSerial, kParallel, kVectorized, kUnrolled, kGpuBlock, kGpuThread };
const char* for_kind_name(ForKind k);

// A vectorized loop's reduction into a mutable variable: var = var OP value
// in every iteration, OP associative ("+" or "max"), so lanes may combine in
// any order.
struct Reduction {
  VarPtr var;
  BinaryOp op;  // kAdd or kMax
};

class For final : public Stmt {
 public:
  static constexpr StmtKind kKind = StmtKind::kFor;
  // A kParallel loop may carry `min_work`: a bool expression of values bound
  // outside the loop; the loop runs on one thread when it is false (the
  // parallel-threshold pass makes that an explicit branch).
  static StmtPtr make(VarPtr var, ExprPtr min, ExprPtr extent, ForKind kind, StmtPtr body,
                      std::vector<Reduction> reductions = {}, ExprPtr min_work = nullptr);
  const VarPtr& var() const { return var_; }
  const ExprPtr& min() const { return min_; }
  const ExprPtr& extent() const { return extent_; }
  ForKind for_kind() const { return for_kind_; }
  const StmtPtr& body() const { return body_; }
  const std::vector<Reduction>& reductions() const { return reductions_; }
  const ExprPtr& min_work() const { return min_work_; }
  For(VarPtr v, ExprPtr mn, ExprPtr ex, ForKind k, StmtPtr b, std::vector<Reduction> r, ExprPtr mw)
      : Stmt(kKind), var_(std::move(v)), min_(std::move(mn)), extent_(std::move(ex)), for_kind_(k),
        body_(std::move(b)), reductions_(std::move(r)), min_work_(std::move(mw)) {}

 private:
  VarPtr var_;
  ExprPtr min_, extent_;
  ForKind for_kind_;
  StmtPtr body_;
  std::vector<Reduction> reductions_;
  ExprPtr min_work_;
};

// var = value over body. A pointer-typed var with `no_alias` promises that
// memory reached through it is not reached through any other pointer in
// its scope (C's restrict), which lets a printer vectorize without checks.
class LetStmt final : public Stmt {
 public:
  static constexpr StmtKind kKind = StmtKind::kLetStmt;
  static StmtPtr make(VarPtr var, ExprPtr value, StmtPtr body, bool no_alias = false);
  const VarPtr& var() const { return var_; }
  const ExprPtr& value() const { return value_; }
  const StmtPtr& body() const { return body_; }
  bool no_alias() const { return no_alias_; }
  LetStmt(VarPtr v, ExprPtr x, StmtPtr b, bool na)
      : Stmt(kKind), var_(std::move(v)), value_(std::move(x)), body_(std::move(b)), no_alias_(na) {}

 private:
  VarPtr var_;
  ExprPtr value_;
  StmtPtr body_;
  bool no_alias_;
};

// base[index] = value; value has the element dtype of base.
class Store final : public Stmt {
 public:
  static constexpr StmtKind kKind = StmtKind::kStore;
  static StmtPtr make(VarPtr base, ExprPtr index, ExprPtr value);
  const VarPtr& base() const { return base_; }
  const ExprPtr& index() const { return index_; }
  const ExprPtr& value() const { return value_; }
  Store(VarPtr b, ExprPtr i, ExprPtr v) : Stmt(kKind), base_(std::move(b)), index_(std::move(i)), value_(std::move(v)) {}

 private:
  VarPtr base_;
  ExprPtr index_, value_;
};

// A mutable variable's new value.
class Assign final : public Stmt {
 public:
  static constexpr StmtKind kKind = StmtKind::kAssign;
  static StmtPtr make(VarPtr var, ExprPtr value);
  const VarPtr& var() const { return var_; }
  const ExprPtr& value() const { return value_; }
  Assign(VarPtr v, ExprPtr x) : Stmt(kKind), var_(std::move(v)), value_(std::move(x)) {}

 private:
  VarPtr var_;
  ExprPtr value_;
};

class IfThenElse final : public Stmt {
 public:
  static constexpr StmtKind kKind = StmtKind::kIfThenElse;
  static StmtPtr make(ExprPtr cond, StmtPtr then_case, StmtPtr else_case = nullptr);
  const ExprPtr& cond() const { return cond_; }
  const StmtPtr& then_case() const { return then_; }
  const StmtPtr& else_case() const { return else_; }  // may be null
  IfThenElse(ExprPtr c, StmtPtr t, StmtPtr e) : Stmt(kKind), cond_(std::move(c)), then_(std::move(t)), else_(std::move(e)) {}

 private:
  ExprPtr cond_;
  StmtPtr then_, else_;
};

// Where an allocation lives: kLocal is per-thread scratch (a CPU stack
// array, GPU registers / local memory), kShared a GPU block's shared memory,
// kGlobal heap / device memory.
enum class MemoryScope : uint8_t { kLocal, kShared, kGlobal };
const char* memory_scope_name(MemoryScope s);

// `extent` elements of var's dtype, 64-byte aligned, bound to the pointer
// var over body. A kLocal extent is a compile-time constant; a kGlobal
// allocation of a run-time extent is freed where its body ends (no Return
// leaves it).
class Allocate final : public Stmt {
 public:
  static constexpr StmtKind kKind = StmtKind::kAllocate;
  static StmtPtr make(VarPtr var, ExprPtr extent, MemoryScope scope, StmtPtr body);
  const VarPtr& var() const { return var_; }
  const ExprPtr& extent() const { return extent_; }
  MemoryScope scope() const { return scope_; }
  const StmtPtr& body() const { return body_; }
  Allocate(VarPtr v, ExprPtr e, MemoryScope s, StmtPtr b)
      : Stmt(kKind), var_(std::move(v)), extent_(std::move(e)), scope_(s), body_(std::move(b)) {}

 private:
  VarPtr var_;
  ExprPtr extent_;
  MemoryScope scope_;
  StmtPtr body_;
};

// A call run for its effect (Call::kExtern).
class Evaluate final : public Stmt {
 public:
  static constexpr StmtKind kKind = StmtKind::kEvaluate;
  static StmtPtr make(ExprPtr call);
  const ExprPtr& value() const { return value_; }
  explicit Evaluate(ExprPtr v) : Stmt(kKind), value_(std::move(v)) {}

 private:
  ExprPtr value_;
};

class Seq final : public Stmt {
 public:
  static constexpr StmtKind kKind = StmtKind::kSeq;
  // Nested Seqs are flattened; a one-statement Seq is that statement.
  static StmtPtr make(std::vector<StmtPtr> stmts);
  const std::vector<StmtPtr>& stmts() const { return stmts_; }
  explicit Seq(std::vector<StmtPtr> s) : Stmt(kKind), stmts_(std::move(s)) {}

 private:
  std::vector<StmtPtr> stmts_;
};

// Every thread of the enclosing parallel team (CPU) or block (GPU) waits
// here until all have arrived.
class Barrier final : public Stmt {
 public:
  static constexpr StmtKind kKind = StmtKind::kBarrier;
  static StmtPtr make();
  Barrier() : Stmt(kKind) {}
};

// Leaves the entry with an i32 status; only outside parallel loops (checks
// that run before anything is written).
class Return final : public Stmt {
 public:
  static constexpr StmtKind kKind = StmtKind::kReturn;
  static StmtPtr make(ExprPtr code);
  const ExprPtr& code() const { return code_; }
  explicit Return(ExprPtr c) : Stmt(kKind), code_(std::move(c)) {}

 private:
  ExprPtr code_;
};

// Text carried into the printed forms (what a stage computes).
class Comment final : public Stmt {
 public:
  static constexpr StmtKind kKind = StmtKind::kComment;
  static StmtPtr make(std::string text);
  const std::string& text() const { return text_; }
  explicit Comment(std::string t) : Stmt(kKind), text_(std::move(t)) {}

 private:
  std::string text_;
};

// A kernel entry: its parameters (pointers and i64 values the caller binds)
// and its body. What the parameters mean is the lowering's contract with
// the target's entry ABI.
struct Function {
  std::string name;
  std::vector<VarPtr> params;
  StmtPtr body;
};

}  // namespace tf::tir
