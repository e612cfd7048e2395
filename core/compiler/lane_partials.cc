#include "core/compiler/lane_partials.h"

#include <limits>
#include <map>
#include <unordered_set>
#include <vector>

#include "core/tir/functor.h"
#include "core/tir/op.h"

namespace tf::compiler {

using namespace tir;

namespace {

const Type kIndexType = Type::scalar(DType::kI64);

bool carriable(const Reduction& r) {
  return r.op == BinaryOp::kAdd || (r.op == BinaryOp::kMax && is_float(r.var->dtype()));
}

ExprPtr identity(const Reduction& r) {
  return imm(r.var->dtype(), r.op == BinaryOp::kAdd ? 0.0 : -std::numeric_limits<double>::infinity());
}

ExprPtr combine(BinaryOp op, ExprPtr a, ExprPtr b) {
  return op == BinaryOp::kAdd ? add(std::move(a), std::move(b)) : max(std::move(a), std::move(b));
}

// The partials combined into one value by the prelude's routine (pairwise,
// in vector registers).
ExprPtr fold(const Reduction& r, const VarPtr& lanes, int64_t count) {
  return call(r.var->type(), r.op == BinaryOp::kAdd ? "tf_lanes_add" : "tf_lanes_max",
              {address(lanes, i64(0)), i64(count)});
}

// The vectorized reduction loops inside a statement whose every reduction
// can be carried, and the variables it declares (an accumulator is a
// mutable LetStmt variable).
class Scan final : public Visitor {
 public:
  std::vector<const For*> loops;
  std::unordered_set<const Var*> declared;

 protected:
  void visit_For(const For& n) override {
    bool all = !n.reductions().empty() && n.for_kind() == ForKind::kVectorized;
    for (const Reduction& r : n.reductions()) all = all && carriable(r);
    if (all) loops.push_back(&n);
    Visitor::visit_For(n);
  }
  void visit_LetStmt(const LetStmt& n) override {
    declared.insert(n.var().get());
    Visitor::visit_LetStmt(n);
  }
};

// Whether any of the variables is read or assigned in a statement outside
// the given loops.
class Reads final : public Visitor {
 public:
  Reads(const std::map<const Var*, VarPtr>& vars, const std::unordered_set<const For*>& skip)
      : vars_(vars), skip_(skip) {}
  bool any = false;

 protected:
  void visit_Var(const Var& n) override { any = any || vars_.count(&n) > 0; }
  void visit_Assign(const Assign& n) override {
    any = any || vars_.count(n.var().get()) > 0;
    Visitor::visit_Assign(n);
  }
  void visit_For(const For& n) override {
    if (!skip_.count(&n)) Visitor::visit_For(n);
  }

 private:
  const std::map<const Var*, VarPtr>& vars_;
  const std::unordered_set<const For*>& skip_;
};

// Inside a chosen loop's block: `acc = f(acc)` becomes `lanes[lane] = f(lanes[lane])`.
class ToLanes final : public Mutator {
 public:
  ToLanes(const std::map<const Var*, VarPtr>& lanes, ExprPtr lane) : lanes_(lanes), lane_(std::move(lane)) {}

 protected:
  StmtPtr mutate_Assign(const Assign& n, const StmtPtr& self) override {
    auto it = lanes_.find(n.var().get());
    if (it == lanes_.end()) return Mutator::mutate_Assign(n, self);
    at_ = it;
    StmtPtr s = Store::make(it->second, lane_, mutate(n.value()));
    at_ = lanes_.end();
    return s;
  }
  ExprPtr mutate_Var(const Var& n, const ExprPtr& self) override {
    return at_ != lanes_.end() && &n == at_->first ? load(at_->second, lane_) : self;
  }

 private:
  const std::map<const Var*, VarPtr>& lanes_;
  ExprPtr lane_;
  std::map<const Var*, VarPtr>::const_iterator at_ = lanes_.end();
};

// Each chosen loop as whole blocks of `count` iterations into the
// partials, then the remainder as the loop was, into the accumulator, only
// where there is one: the C compiler ends a vectorized reduction with its
// lane-by-lane epilogue even when it ran no iteration, and adding the
// remainder into the partials instead cost a row of 8 twice its time (its
// scalar stores, then the fold's vector loads of them).
class Blocked final : public Mutator {
 public:
  Blocked(const std::unordered_set<const For*>& chosen, const std::map<const Var*, VarPtr>& lanes, int64_t count)
      : chosen_(chosen), lanes_(lanes), count_(count) {}
  std::unordered_set<const For*> remainders;  // the loops that still reduce into accumulators

 protected:
  StmtPtr mutate_For(const For& n, const StmtPtr& self) override {
    if (!chosen_.count(&n)) return Mutator::mutate_For(n, self);
    const ExprPtr lo = n.min();
    // [lo, hi): hi spelled as the loop's own bound where it has one.
    auto* d = as<Binary>(n.extent());
    const ExprPtr hi = d && d->op() == BinaryOp::kSub && d->b() == lo ? d->a() : add(lo, n.extent());
    const VarPtr blocks = Var::make("nb", kIndexType), b = Var::make("b", kIndexType);
    const VarPtr jl = Var::make("jl", kIndexType), rest = Var::make("jr", kIndexType);
    const StmtPtr block = For::make(n.var(), jl, i64(count_), ForKind::kVectorized,
                                    ToLanes(lanes_, sub(n.var(), jl)).mutate(n.body()));
    const StmtPtr whole = For::make(b, i64(0), blocks, ForKind::kSerial,
                                    LetStmt::make(jl, add(lo, mul(b, i64(count_))), block));
    const StmtPtr tail = For::make(n.var(), rest, sub(hi, rest), ForKind::kVectorized, n.body(), n.reductions());
    remainders.insert(as<For>(tail));
    return LetStmt::make(blocks, div(n.extent(), i64(count_)),
                         Seq::make({whole, LetStmt::make(rest, add(lo, mul(blocks, i64(count_))),
                                                         IfThenElse::make(lt(rest, hi), tail))}));
  }

 private:
  const std::unordered_set<const For*>& chosen_;
  const std::map<const Var*, VarPtr>& lanes_;
  int64_t count_;
};

}  // namespace

int64_t reduce_lanes() {
#if defined(__x86_64__) || defined(__i386__)
  static const int64_t n = __builtin_cpu_supports("avx512f") ? 32 : 16;
  return n;
#else
  return 16;
#endif
}

StmtPtr carry_lane_partials(const StmtPtr& loop, const ExprPtr& blocks_run) {
  int64_t known = 1;
  if (!as<For>(loop) || (const_int(blocks_run, &known) && !known)) return loop;
  Scan scan;
  scan.visit(loop);
  // Accumulators bound outside the loop, in the order their loops come.
  std::vector<Reduction> accs;
  std::map<const Var*, VarPtr> lanes;
  std::unordered_set<const For*> chosen;
  for (const For* f : scan.loops) {
    bool outside = true;
    for (const Reduction& r : f->reductions()) outside = outside && !scan.declared.count(r.var.get());
    if (!outside) continue;
    chosen.insert(f);
    for (const Reduction& r : f->reductions())
      if (!lanes.count(r.var.get())) {
        accs.push_back(r);
        lanes[r.var.get()] = Var::make(r.var->name() + "_lanes", Type::pointer(r.var->dtype()));
      }
  }
  if (chosen.empty()) return loop;
  const int64_t count = reduce_lanes();
  Blocked blocking(chosen, lanes, count);
  const StmtPtr blocked = blocking.mutate(loop);
  // The partials stand for an accumulator's running value only if nothing
  // else in the loop reads or sets it.
  Reads other(lanes, blocking.remainders);
  other.visit(blocked);
  if (other.any) return loop;
  std::vector<StmtPtr> seq;
  const VarPtr l = Var::make("l", kIndexType);
  for (const Reduction& r : accs)
    seq.push_back(For::make(l, i64(0), i64(count), ForKind::kVectorized,
                            Store::make(lanes[r.var.get()], l, identity(r))));
  seq.push_back(blocked);
  std::vector<StmtPtr> folds;
  for (const Reduction& r : accs)
    folds.push_back(Assign::make(r.var, combine(r.op, r.var, fold(r, lanes[r.var.get()], count))));
  seq.push_back(const_int(blocks_run, &known) ? Seq::make(std::move(folds))
                                               : IfThenElse::make(blocks_run, Seq::make(std::move(folds))));
  StmtPtr out = Seq::make(std::move(seq));
  for (auto it = accs.rbegin(); it != accs.rend(); ++it)
    out = Allocate::make(lanes[it->var.get()], i64(count), MemoryScope::kLocal, out);
  return out;
}

}  // namespace tf::compiler
