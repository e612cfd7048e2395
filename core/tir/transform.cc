#include "core/tir/transform.h"

#include <map>
#include <string>
#include <unordered_set>

#include "core/tir/functor.h"
#include "core/tir/op.h"
#include "core/tir/printer.h"

namespace tf::tir {

namespace {

class Substituter final : public Mutator {
 public:
  explicit Substituter(const VarMap& v) : values_(v) {}

 protected:
  ExprPtr mutate_Var(const Var& n, const ExprPtr& self) override {
    auto it = values_.find(&n);
    return it == values_.end() ? self : it->second;
  }

 private:
  const VarMap& values_;
};

class ThresholdSplitter final : public Mutator {
 public:
  explicit ThresholdSplitter(ExprPtr threads) : threads_(std::move(threads)) {}

 protected:
  StmtPtr mutate_For(const For& n, const StmtPtr& self) override {
    StmtPtr body = mutate(n.body());
    if (n.for_kind() != ForKind::kParallel || !n.min_work()) {
      if (body == n.body()) return self;
      return For::make(n.var(), n.min(), n.extent(), n.for_kind(), body, n.reductions(), n.min_work());
    }
    StmtPtr parallel = For::make(n.var(), n.min(), n.extent(), ForKind::kParallel, body);
    StmtPtr serial = For::make(n.var(), n.min(), n.extent(), ForKind::kSerial, body);
    int64_t k;
    if (const_int(n.min_work(), &k) && !k) return serial;
    const ExprPtr team = gt(threads_, i64(1));
    return IfThenElse::make(const_int(n.min_work(), &k) ? team : land(n.min_work(), team), parallel, serial);
  }

 private:
  ExprPtr threads_;
};

// The boolean variables the statement's IfThenElses test, in first-use order.
struct BranchVars final : Visitor {
  std::vector<VarPtr> vars;
  void visit_IfThenElse(const IfThenElse& n) override {
    if (n.cond()->kind() == ExprKind::kVar) {
      VarPtr v = std::static_pointer_cast<const Var>(n.cond());
      bool seen = false;
      for (const VarPtr& w : vars) seen = seen || w == v;
      if (!seen) vars.push_back(v);
    }
    Visitor::visit_IfThenElse(n);
  }
};

// Each IfThenElse on a variable of `values` replaced by the branch its
// value takes (nothing where that is a missing else).
class BranchResolver final : public Mutator {
 public:
  explicit BranchResolver(const std::map<const Var*, bool>& v) : values_(v) {}

 protected:
  StmtPtr mutate_IfThenElse(const IfThenElse& n, const StmtPtr& self) override {
    if (n.cond()->kind() != ExprKind::kVar) return Mutator::mutate_IfThenElse(n, self);
    auto it = values_.find(static_cast<const Var*>(n.cond().get()));
    if (it == values_.end()) return Mutator::mutate_IfThenElse(n, self);
    if (it->second) return mutate(n.then_case());
    return n.else_case() ? mutate(n.else_case()) : Seq::make({});
  }

 private:
  const std::map<const Var*, bool>& values_;
};

// The variables a statement binds or assigns anywhere inside it.
class Binders final : public Visitor {
 public:
  std::unordered_set<const Var*> vars;

 protected:
  void visit_For(const For& n) override {
    vars.insert(n.var().get());
    Visitor::visit_For(n);
  }
  void visit_LetStmt(const LetStmt& n) override {
    vars.insert(n.var().get());
    Visitor::visit_LetStmt(n);
  }
  void visit_Allocate(const Allocate& n) override {
    vars.insert(n.var().get());
    Visitor::visit_Allocate(n);
  }
  void visit_Assign(const Assign& n) override {  // an accumulator changes inside
    vars.insert(n.var().get());
    Visitor::visit_Assign(n);
  }
};

// Whether e reads no variable of `varying`, loads nothing and calls no
// extern routine; `costly` is set when it contains a call.
bool invariant(const ExprPtr& e, const std::unordered_set<const Var*>& varying, bool* costly) {
  switch (e->kind()) {
    case ExprKind::kIntImm:
    case ExprKind::kFloatImm: return true;
    case ExprKind::kVar: return !varying.count(static_cast<const Var*>(e.get()));
    case ExprKind::kLoad:
    case ExprKind::kAddress: return false;
    case ExprKind::kCall: {
      auto& c = static_cast<const Call&>(*e);
      if (c.effect() != Call::kPure) return false;
      for (const ExprPtr& a : c.args())
        if (!invariant(a, varying, costly)) return false;
      *costly = true;
      return true;
    }
    case ExprKind::kBinary: {
      // An integer division may trap: it stays where the loop guards it.
      auto& b = static_cast<const Binary&>(*e);
      if ((b.op() == BinaryOp::kDiv || b.op() == BinaryOp::kMod) && !ir::is_float(b.dtype())) return false;
      return invariant(b.a(), varying, costly) && invariant(b.b(), varying, costly);
    }
    case ExprKind::kUnary: return invariant(static_cast<const Unary&>(*e).a(), varying, costly);
    case ExprKind::kCast: return invariant(static_cast<const Cast&>(*e).value(), varying, costly);
    case ExprKind::kSelect: {
      auto& s = static_cast<const Select&>(*e);
      return invariant(s.cond(), varying, costly) && invariant(s.t(), varying, costly) &&
             invariant(s.f(), varying, costly);
    }
  }
  return false;
}

// Replaces the costly invariant subexpressions of one loop's body by
// variables (one per distinct expression, by its printed form).
class InvariantReplacer final : public Mutator {
 public:
  explicit InvariantReplacer(const std::unordered_set<const Var*>& varying) : varying_(varying) {}
  std::vector<std::pair<VarPtr, ExprPtr>> hoisted;

 protected:
  ExprPtr mutate_Binary(const Binary& n, const ExprPtr& self) override { return hoist(self, [&] { return Mutator::mutate_Binary(n, self); }); }
  ExprPtr mutate_Unary(const Unary& n, const ExprPtr& self) override { return hoist(self, [&] { return Mutator::mutate_Unary(n, self); }); }
  ExprPtr mutate_Cast(const Cast& n, const ExprPtr& self) override { return hoist(self, [&] { return Mutator::mutate_Cast(n, self); }); }
  ExprPtr mutate_Select(const Select& n, const ExprPtr& self) override { return hoist(self, [&] { return Mutator::mutate_Select(n, self); }); }
  ExprPtr mutate_Call(const Call& n, const ExprPtr& self) override { return hoist(self, [&] { return Mutator::mutate_Call(n, self); }); }
  // Loops nested inside are handled by the pass's own walk.
  StmtPtr mutate_For(const For&, const StmtPtr& self) override { return self; }

 private:
  template <typename F>
  ExprPtr hoist(const ExprPtr& e, F descend) {
    bool costly = false;
    if (!invariant(e, varying_, &costly)) return descend();
    if (!costly) return e;
    const std::string key = to_string(e);
    for (const auto& [v, x] : hoisted)
      if (to_string(x) == key) return v;
    VarPtr v = Var::make("inv" + std::to_string(hoisted.size()), e->type());
    hoisted.emplace_back(v, e);
    return v;
  }

  const std::unordered_set<const Var*>& varying_;
};

// Takes out of a serial loop's body the lets of hoisted float values
// (`hoisted`) that read no variable the loop binds, wherever they sit in
// it. Hoisted values read no memory (invariant() leaves loads), and a
// float one cannot trap, so computing it once before the loop, even when
// a branch inside would not have, changes nothing but the work.
class HoistedLetLifter final : public Mutator {
 public:
  HoistedLetLifter(const std::unordered_set<const Var*>& hoisted, const std::unordered_set<const Var*>& bound)
      : hoisted_(hoisted), bound_(bound) {}
  std::vector<std::pair<VarPtr, ExprPtr>> lifted;

 protected:
  StmtPtr mutate_LetStmt(const LetStmt& n, const StmtPtr& self) override {
    const DType d = n.value()->dtype();
    if (!hoisted_.count(n.var().get()) || (d != DType::kF32 && d != DType::kF64) ||
        !independent_of(n.value(), bound_, {}))
      return Mutator::mutate_LetStmt(n, self);
    lifted.emplace_back(n.var(), n.value());
    return mutate(n.body());
  }

 private:
  const std::unordered_set<const Var*>& hoisted_;
  const std::unordered_set<const Var*>& bound_;
};

class InvariantHoister final : public Mutator {
 protected:
  StmtPtr mutate_For(const For& n, const StmtPtr& self) override {
    StmtPtr body = mutate(n.body());
    StmtPtr loop = body == n.body() ? self
                                    : For::make(n.var(), n.min(), n.extent(), n.for_kind(), body, n.reductions(),
                                                n.min_work());
    if (n.for_kind() == ForKind::kSerial) return lift(loop);
    if (n.for_kind() != ForKind::kVectorized) return loop;
    Binders b;
    b.visit(loop);
    for (const Reduction& r : n.reductions()) b.vars.insert(r.var.get());
    InvariantReplacer r(b.vars);
    StmtPtr inner = r.mutate(as<For>(loop)->body());
    if (r.hoisted.empty()) return loop;
    const For& f = *as<For>(loop);
    StmtPtr out = For::make(f.var(), f.min(), f.extent(), f.for_kind(), inner, f.reductions(), f.min_work());
    for (auto it = r.hoisted.rbegin(); it != r.hoisted.rend(); ++it) {
      hoisted_.insert(it->first.get());
      out = LetStmt::make(it->first, it->second, out);
    }
    return out;
  }

 private:
  // A value hoisted out of a vectorized loop that sits in a serial loop
  // (a line of a streamed store: stream_lines in the compiler) moves on
  // out of it too: GCC kept a LayerNorm's 1 / sqrt(max(var, 0) + eps),
  // whose max has a NaN branch, inside the loop over lines, a double
  // square root and division per 16 values.
  StmtPtr lift(const StmtPtr& loop) {
    Binders b;
    b.visit(loop);
    const For& f = *as<For>(loop);
    HoistedLetLifter l(hoisted_, b.vars);
    StmtPtr inner = l.mutate(f.body());
    if (l.lifted.empty()) return loop;
    StmtPtr out = For::make(f.var(), f.min(), f.extent(), f.for_kind(), inner, f.reductions(), f.min_work());
    for (auto it = l.lifted.rbegin(); it != l.lifted.rend(); ++it) out = LetStmt::make(it->first, it->second, out);
    return out;
  }

  std::unordered_set<const Var*> hoisted_;
};

// Unswitches parallel loops (transform.h). At most two variables per loop:
// four copies of its scaffolding.
class Unswitcher final : public Mutator {
 protected:
  StmtPtr mutate_For(const For& n, const StmtPtr& self) override {
    if (n.for_kind() != ForKind::kParallel) return Mutator::mutate_For(n, self);
    Binders inside;
    inside.visit(self);
    BranchVars tested;
    tested.visit(n.body());
    std::vector<VarPtr> vars;
    for (const VarPtr& v : tested.vars)
      if (vars.size() < 2 && !v->is_mutable() && !inside.vars.count(v.get())) vars.push_back(v);
    if (vars.empty()) return self;
    std::map<const Var*, bool> values;
    return copies(n, vars, 0, &values);
  }

 private:
  StmtPtr copies(const For& n, const std::vector<VarPtr>& vars, size_t k, std::map<const Var*, bool>* values) {
    if (k == vars.size())
      return For::make(n.var(), n.min(), n.extent(), n.for_kind(), BranchResolver(*values).mutate(n.body()),
                       n.reductions(), n.min_work());
    (*values)[vars[k].get()] = true;
    StmtPtr then_case = copies(n, vars, k + 1, values);
    (*values)[vars[k].get()] = false;
    StmtPtr else_case = copies(n, vars, k + 1, values);
    return IfThenElse::make(vars[k], then_case, else_case);
  }
};

}  // namespace

bool independent_of(const ExprPtr& e, const std::unordered_set<const Var*>& varying,
                    const std::unordered_set<const Var*>& stored) {
  struct Reader final : Visitor {
    const std::unordered_set<const Var*>* varying;
    const std::unordered_set<const Var*>* stored;
    bool ok = true;
    void visit_Var(const Var& v) override { ok = ok && !varying->count(&v); }
    void visit_Load(const Load& n) override {
      ok = ok && !stored->count(n.base().get());
      Visitor::visit_Load(n);
    }
  } r;
  r.varying = &varying;
  r.stored = &stored;
  r.visit(e);
  return r.ok;
}

namespace {

// The buffers a statement stores to.
struct StoreBases final : Visitor {
  std::unordered_set<const Var*> vars;
  void visit_Store(const Store& n) override {
    vars.insert(n.base().get());
    Visitor::visit_Store(n);
  }
};

// The pure calls of one loop body (not of loops nested in it) whose
// operands are fixed within an iteration, by printed form.
class CallCounter final : public Mutator {
 public:
  CallCounter(const std::unordered_set<const Var*>& varying, const std::unordered_set<const Var*>& stored)
      : varying_(varying), stored_(stored) {}
  std::map<std::string, std::pair<ExprPtr, int>> calls;

 protected:
  ExprPtr mutate_Call(const Call& n, const ExprPtr& self) override {
    if (n.effect() == Call::kPure && independent_of(self, varying_, stored_)) {
      auto& c = calls[to_string(self)];
      c.first = self;
      ++c.second;
    }
    return Mutator::mutate_Call(n, self);
  }
  StmtPtr mutate_For(const For&, const StmtPtr& self) override { return self; }

 private:
  const std::unordered_set<const Var*>& varying_;
  const std::unordered_set<const Var*>& stored_;
};

// Replaces the calls spelled `key` by v (outside nested loops).
class CallReplacer final : public Mutator {
 public:
  CallReplacer(std::string key, VarPtr v) : key_(std::move(key)), v_(std::move(v)) {}

 protected:
  ExprPtr mutate_Call(const Call& n, const ExprPtr& self) override {
    return to_string(self) == key_ ? ExprPtr(v_) : Mutator::mutate_Call(n, self);
  }
  StmtPtr mutate_For(const For&, const StmtPtr& self) override { return self; }

 private:
  std::string key_;
  VarPtr v_;
};

class CommonCallBinder final : public Mutator {
 protected:
  StmtPtr mutate_For(const For& n, const StmtPtr& self) override {
    StmtPtr body = mutate(n.body());
    if (n.for_kind() == ForKind::kVectorized) {
      // The outermost repeated call first (its operands' calls go with it).
      for (int bound = 0;; ++bound) {
        const Writes w = writes_of(body);
        CallCounter counter(w.vars, w.buffers);
        counter.mutate(body);
        const std::pair<const std::string, std::pair<ExprPtr, int>>* best = nullptr;
        for (const auto& c : counter.calls)
          if (c.second.second > 1 && (!best || c.first.size() > best->first.size())) best = &c;
        if (!best) break;
        VarPtr v = Var::make("e" + std::to_string(bound), best->second.first->type());
        body = LetStmt::make(v, best->second.first, CallReplacer(best->first, v).mutate(body));
      }
    }
    return body == n.body() ? self : For::make(n.var(), n.min(), n.extent(), n.for_kind(), body, n.reductions(), n.min_work());
  }
};

// The variables read anywhere: operands, loads' and stores' buffers.
class Reads final : public Visitor {
 public:
  std::unordered_set<const Var*> vars;

 protected:
  void visit_Var(const Var& n) override { vars.insert(&n); }
};

// Whether evaluating e has no effect but its value (no extern call).
bool effect_free(const ExprPtr& e) {
  struct Finder final : Visitor {
    bool found = false;
    void visit_Call(const Call& n) override {
      found = found || n.effect() != Call::kPure;
      Visitor::visit_Call(n);
    }
  } f;
  f.visit(e);
  return !f.found;
}

class UnusedLetRemover final : public Mutator {
 public:
  explicit UnusedLetRemover(const std::unordered_set<const Var*>& read) : read_(read) {}
  bool removed = false;

 protected:
  StmtPtr mutate_LetStmt(const LetStmt& n, const StmtPtr& self) override {
    StmtPtr body = mutate(n.body());
    // A mutable variable may be assigned without being read: it stays.
    if (!n.var()->is_mutable() && !read_.count(n.var().get()) && effect_free(n.value())) {
      removed = true;
      return body;
    }
    if (body == n.body()) return self;
    return LetStmt::make(n.var(), n.value(), body, n.no_alias());
  }

 private:
  const std::unordered_set<const Var*>& read_;
};

}  // namespace

StmtPtr remove_unused_lets(const StmtPtr& s) {
  StmtPtr out = s;
  for (;;) {
    Reads r;
    r.visit(out);
    UnusedLetRemover remover(r.vars);
    out = remover.mutate(out);
    if (!remover.removed) return out;
  }
}

StmtPtr hoist_loop_invariants(const StmtPtr& s) { return InvariantHoister().mutate(s); }

StmtPtr bind_common_calls(const StmtPtr& s) { return CommonCallBinder().mutate(s); }

Writes writes_of(const StmtPtr& s) {
  Binders b;
  b.visit(s);
  StoreBases st;
  st.visit(s);
  return Writes{std::move(b.vars), std::move(st.vars)};
}

StmtPtr substitute(const StmtPtr& s, const VarMap& values) { return Substituter(values).mutate(s); }
ExprPtr substitute(const ExprPtr& e, const VarMap& values) { return Substituter(values).mutate(e); }

StmtPtr specialize(const StmtPtr& s, const ExprPtr& cond, const VarMap& values) {
  StmtPtr special = substitute(s, values);
  int64_t k;
  if (const_int(cond, &k)) return k ? special : s;
  return IfThenElse::make(cond, special, s);
}

StmtPtr split_parallel_threshold(const StmtPtr& s, const ExprPtr& threads) { return ThresholdSplitter(threads).mutate(s); }

StmtPtr unswitch_parallel_loops(const StmtPtr& s) { return Unswitcher().mutate(s); }

}  // namespace tf::tir
