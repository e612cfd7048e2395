#include "core/compiler/cuda/vector_lanes.h"

#include <algorithm>
#include <map>
#include <string>

#include "core/tir/functor.h"
#include "core/tir/op.h"

namespace tf::compiler::cuda {

using namespace tir;

namespace {

// The widest access a thread makes at once.
constexpr int kWideBytes = 16;

bool is_var(const ExprPtr& e, const Var* v) { return e.get() == v; }

class Mentions : public Visitor {
 public:
  explicit Mentions(const Var* v) : v_(v) {}
  bool found = false;

 protected:
  void visit_Var(const Var& n) override { found = found || &n == v_; }

 private:
  const Var* v_;
};

bool mentions(const ExprPtr& e, const Var* v) {
  Mentions m(v);
  m.visit(e);
  return m.found;
}

// What the body does with memory at j.
class Survey : public Visitor {
 public:
  explicit Survey(const Var* j) : j_(j) {}
  // Rows accessed at exactly j, in the order the body first names them
  // (the printed source must not depend on addresses).
  std::vector<VarPtr> loaded, stored;
  bool other = false;  // anything that rules the widening out

  static bool has(const std::vector<VarPtr>& rows, const Var* v) {
    return std::any_of(rows.begin(), rows.end(), [&](const VarPtr& r) { return r.get() == v; });
  }
  // Whether a row's pointer is bound inside the body: its word could not
  // be loaded before the lanes.
  bool bound_inside(const VarPtr& base) const {
    return std::find(bound_.begin(), bound_.end(), base.get()) != bound_.end();
  }

 protected:
  void visit_Load(const Load& n) override {
    if (is_var(n.index(), j_)) add_row(&loaded, n.base());
    else if (mentions(n.index(), j_)) other = true;  // a strided or shifted access
    Visitor::visit_Load(n);
  }
  void visit_Address(const Address& n) override {
    if (mentions(n.index(), j_)) other = true;  // a pointer into the row: a helper's
    Visitor::visit_Address(n);
  }
  void visit_Store(const Store& n) override {
    if (is_var(n.index(), j_)) {
      if (conditional_ > 0) other = true;  // a lane register would be stored whatever the condition
      add_row(&stored, n.base());
    } else if (mentions(n.index(), j_)) {
      other = true;
    }
    Visitor::visit_Store(n);
  }
  void visit_IfThenElse(const IfThenElse& n) override {
    ++conditional_;
    Visitor::visit_IfThenElse(n);
    --conditional_;
  }
  void visit_For(const For& n) override {
    ++conditional_;  // a store in an inner loop runs a count of times
    Visitor::visit_For(n);
    --conditional_;
  }
  void visit_Call(const Call& n) override {
    if (n.effect() != Call::kPure) other = true;  // a routine over memory
    Visitor::visit_Call(n);
  }
  void visit_Allocate(const Allocate& n) override {
    other = true;
    Visitor::visit_Allocate(n);
  }
  void visit_Return(const Return& n) override {
    other = true;
    Visitor::visit_Return(n);
  }
  void visit_Barrier(const Barrier& n) override {
    other = true;
    Visitor::visit_Barrier(n);
  }
  void visit_LetStmt(const LetStmt& n) override {
    bound_.push_back(n.var().get());
    Visitor::visit_LetStmt(n);
  }

 private:
  static void add_row(std::vector<VarPtr>* rows, const VarPtr& base) {
    if (!has(*rows, base.get())) rows->push_back(base);
  }
  const Var* j_;
  int conditional_ = 0;
  std::vector<const Var*> bound_;
};

class Lane : public Mutator {
 public:
  Lane(const For& f, const LanePlan& p, int k, const VarPtr& j0) : j_(f.var().get()), k_(k) {
    at_ = add(ExprPtr(j0), i64(k));
    for (const LaneRow& r : p.loads) loads_[r.base.get()] = r.lanes.at(static_cast<size_t>(k));
    for (const LaneRow& r : p.stores) stores_[r.base.get()] = r.registers;
  }

 protected:
  ExprPtr mutate_Var(const Var& n, const ExprPtr& self) override { return &n == j_ ? at_ : self; }
  ExprPtr mutate_Load(const Load& n, const ExprPtr& self) override {
    if (is_var(n.index(), j_))
      if (auto it = loads_.find(n.base().get()); it != loads_.end()) return it->second;
    return Mutator::mutate_Load(n, self);
  }
  StmtPtr mutate_Store(const Store& n, const StmtPtr& self) override {
    if (is_var(n.index(), j_))
      if (auto it = stores_.find(n.base().get()); it != stores_.end())
        return Store::make(it->second, i64(k_), mutate(n.value()));
    return Mutator::mutate_Store(n, self);
  }

 private:
  const Var* j_;
  int k_;
  ExprPtr at_;
  std::map<const Var*, ExprPtr> loads_;
  std::map<const Var*, VarPtr> stores_;
};

int element_bytes(const VarPtr& base) { return ir::dtype_bits(base->type().dtype) / 8; }

}  // namespace

LanePlan plan_lanes(const For& f) {
  Survey s(f.var().get());
  s.visit(f.body());
  LanePlan p;
  if (s.other || (s.loaded.empty() && s.stored.empty())) return p;
  int widest = 0;
  for (const auto* rows : {&s.loaded, &s.stored})
    for (const VarPtr& base : *rows) {
      if (ir::dtype_bits(base->type().dtype) < 8) return p;  // packed 4-bit elements
      if (Survey::has(s.loaded, base.get()) && Survey::has(s.stored, base.get())) return p;  // read back after its store
      if (s.bound_inside(base)) return p;
      widest = std::max(widest, element_bytes(base));
    }
  p.lanes = kWideBytes / widest;
  if (p.lanes < 2) return LanePlan{};
  for (const VarPtr& base : s.loaded) {
    LaneRow r{base, {}, nullptr};
    for (int k = 0; k < p.lanes; ++k)
      r.lanes.push_back(Var::make(base->name() + "_l" + std::to_string(k), Type::scalar(base->type().dtype)));
    p.loads.push_back(std::move(r));
  }
  for (const VarPtr& base : s.stored)
    p.stores.push_back(LaneRow{base, {}, Var::make(base->name() + "_s", Type::pointer(base->type().dtype))});
  return p;
}

StmtPtr lane_body(const For& f, const LanePlan& p, int k, const VarPtr& j0) {
  Lane lane(f, p, k, j0);
  return lane.mutate(f.body());
}

}  // namespace tf::compiler::cuda
