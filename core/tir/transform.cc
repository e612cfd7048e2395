#include "core/tir/transform.h"

#include "core/tir/functor.h"
#include "core/tir/op.h"

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
    if (const_int(n.min_work(), &k)) return k ? parallel : serial;
    return IfThenElse::make(n.min_work(), parallel, serial);
  }
};

}  // namespace

StmtPtr substitute(const StmtPtr& s, const VarMap& values) { return Substituter(values).mutate(s); }
ExprPtr substitute(const ExprPtr& e, const VarMap& values) { return Substituter(values).mutate(e); }

StmtPtr specialize(const StmtPtr& s, const ExprPtr& cond, const VarMap& values) {
  StmtPtr special = substitute(s, values);
  int64_t k;
  if (const_int(cond, &k)) return k ? special : s;
  return IfThenElse::make(cond, special, s);
}

StmtPtr split_parallel_threshold(const StmtPtr& s) { return ThresholdSplitter().mutate(s); }

}  // namespace tf::tir
