#include "core/ir/structural.h"

#include <functional>
#include <unordered_map>

namespace tf::ir {
namespace {

inline size_t mix(size_t h, size_t v) { return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); }

// Equality as a partial bijection between the nodes of the two sides: a node
// on the left matches exactly one node on the right, which is what makes the
// comparison sensitive to sharing.
class EqualChecker {
 public:
  bool eq(const ExprPtr& a, const ExprPtr& b) {
    if (!a || !b) return a == b;
    auto it = l2r_.find(a.get());
    if (it != l2r_.end()) return it->second == b.get();
    if (r2l_.count(b.get())) return false;
    if (a->kind() != b->kind()) return false;
    if (a->kind() == ExprKind::kVar) return a == b;  // a free Var: identity
    if (!eq_node(*a, *b)) return false;
    record(a.get(), b.get());
    return true;
  }

  bool eq_function(const Function& a, const Function& b) {
    if (a.name() != b.name() || a.params().size() != b.params().size()) return false;
    if (!type_equal(a.return_type(), b.return_type())) return false;
    if (!(a.specializations() == b.specializations())) return false;
    if (a.inplace() != b.inplace()) return false;
    for (size_t i = 0; i < a.params().size(); ++i)
      if (!bind(a.params()[i], b.params()[i])) return false;
    if (!eq(a.body(), b.body())) return false;
    if (a.variants().size() != b.variants().size()) return false;
    for (size_t i = 0; i < a.variants().size(); ++i)
      if (!eq(a.variants()[i], b.variants()[i])) return false;
    return true;
  }

 private:
  void record(const Expr* a, const Expr* b) {
    l2r_[a] = b;
    r2l_[b] = a;
  }

  bool bind(const VarPtr& a, const VarPtr& b) {
    if (!type_equal(a->type(), b->type())) return false;
    if (l2r_.count(a.get()) || r2l_.count(b.get())) return l2r_[a.get()] == b.get();
    record(a.get(), b.get());
    return true;
  }

  bool eq_list(const std::vector<ExprPtr>& a, const std::vector<ExprPtr>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!eq(a[i], b[i])) return false;
    return true;
  }

  bool eq_node(const Expr& a, const Expr& b) {
    switch (a.kind()) {
      case ExprKind::kVar: return false;  // handled in eq()
      case ExprKind::kConstant: {
        auto& x = static_cast<const Constant&>(a);
        auto& y = static_cast<const Constant&>(b);
        return x.dtype() == y.dtype() && x.int_value() == y.int_value() &&
               attr_value_equal(x.value(), y.value());
      }
      case ExprKind::kCall: {
        auto& x = static_cast<const Call&>(a);
        auto& y = static_cast<const Call&>(b);
        if (!type_equal(x.type(), y.type())) return false;
        if ((x.op() == nullptr) != (y.op() == nullptr)) return false;
        if (x.op() ? !x.op()->structural_equal(*y.op()) : !eq(x.callee(), y.callee())) return false;
        return eq_list(x.args(), y.args());
      }
      case ExprKind::kTuple:
        return eq_list(static_cast<const Tuple&>(a).fields(), static_cast<const Tuple&>(b).fields());
      case ExprKind::kTupleGetItem: {
        auto& x = static_cast<const TupleGetItem&>(a);
        auto& y = static_cast<const TupleGetItem&>(b);
        return x.index() == y.index() && eq(x.tuple(), y.tuple());
      }
      case ExprKind::kFunction:
        return eq_function(static_cast<const Function&>(a), static_cast<const Function&>(b));
      case ExprKind::kGridRegion: {
        auto& x = static_cast<const GridRegionExpr&>(a).fields();
        auto& y = static_cast<const GridRegionExpr&>(b).fields();
        if (!x.extent.structural_equal(y.extent) || !x.step.structural_equal(y.step) ||
            !x.start.structural_equal(y.start) || x.carried_args.size() != y.carried_args.size())
          return false;
        if (!eq_list(x.init_args, y.init_args)) return false;
        if (!bind(x.induction_var, y.induction_var)) return false;
        for (size_t i = 0; i < x.carried_args.size(); ++i)
          if (!bind(x.carried_args[i], y.carried_args[i])) return false;
        return eq(x.body, y.body) && eq_list(x.yield_values, y.yield_values);
      }
    }
    return false;
  }

  std::unordered_map<const Expr*, const Expr*> l2r_, r2l_;
};

// Hashes nodes in first-visit order; a revisit hashes as a back reference to
// the first visit's index, so sharing is part of the hash.
class Hasher {
 public:
  size_t hash(const ExprPtr& e) {
    if (!e) return 0x1234;
    auto it = index_.find(e.get());
    if (it != index_.end()) return mix(0xbac4, it->second);
    if (e->kind() == ExprKind::kVar) {  // free Var
      auto& v = static_cast<const Var&>(*e);
      return mix(std::hash<std::string>()(v.name()), v.type()->structural_hash());
    }
    size_t h = content(*e);
    index_.emplace(e.get(), next_++);
    return h;
  }

  size_t function(const Function& f) {
    size_t h = mix(std::hash<std::string>()(f.name()), f.return_type()->structural_hash());
    for (const auto& p : f.params()) h = mix(h, bind(p));
    for (const auto& s : f.specializations())
      h = mix(mix(mix(h, std::hash<std::string>()(s.dim_var)), s.lo), s.hi);
    h = mix(h, hash(f.body()));
    for (const auto& v : f.variants()) h = mix(h, hash(v));
    return h;
  }

 private:
  size_t bind(const VarPtr& v) {
    index_.emplace(v.get(), next_++);
    return mix(0xb14d, v->type()->structural_hash());
  }
  size_t list(size_t h, const std::vector<ExprPtr>& xs) {
    for (const auto& x : xs) h = mix(h, hash(x));
    return h;
  }
  size_t content(const Expr& e) {
    size_t h = static_cast<size_t>(e.kind()) + 1;
    switch (e.kind()) {
      case ExprKind::kVar: return h;
      case ExprKind::kConstant: {
        auto& c = static_cast<const Constant&>(e);
        return mix(mix(mix(h, static_cast<size_t>(c.dtype())), c.int_value()), std::hash<double>()(c.value()));
      }
      case ExprKind::kCall: {
        auto& c = static_cast<const Call&>(e);
        h = mix(h, c.type()->structural_hash());
        h = mix(h, c.op() ? c.op()->structural_hash() : hash(c.callee()));
        return list(h, c.args());
      }
      case ExprKind::kTuple: return list(h, static_cast<const Tuple&>(e).fields());
      case ExprKind::kTupleGetItem: {
        auto& t = static_cast<const TupleGetItem&>(e);
        return mix(mix(h, t.index()), hash(t.tuple()));
      }
      case ExprKind::kFunction: return mix(h, function(static_cast<const Function&>(e)));
      case ExprKind::kGridRegion: {
        auto& f = static_cast<const GridRegionExpr&>(e).fields();
        h = mix(mix(mix(h, f.extent.structural_hash()), f.step.structural_hash()), f.start.structural_hash());
        h = list(h, f.init_args);
        h = mix(h, bind(f.induction_var));
        for (const auto& c : f.carried_args) h = mix(h, bind(c));
        return list(mix(h, hash(f.body)), f.yield_values);
      }
    }
    return h;
  }

  std::unordered_map<const Expr*, size_t> index_;
  size_t next_ = 0;
};

}  // namespace

bool structural_equal(const ExprPtr& a, const ExprPtr& b) { return EqualChecker().eq(a, b); }

size_t structural_hash(const ExprPtr& e) { return Hasher().hash(e); }

bool structural_equal(const Module& a, const Module& b) {
  if (!(a.target() == b.target()) || a.functions().size() != b.functions().size()) return false;
  EqualChecker checker;  // one session: a callee shared by two functions matches once
  for (size_t i = 0; i < a.functions().size(); ++i)
    if (!checker.eq(a.functions()[i], b.functions()[i])) return false;
  return true;
}

size_t structural_hash(const Module& m) {
  Hasher hasher;
  size_t h = std::hash<std::string>()(m.target().name);
  for (const auto& [level, extent] : m.target().topology)
    h = mix(mix(h, std::hash<std::string>()(level)), extent);
  for (const auto& f : m.functions()) h = mix(h, hasher.hash(f));
  return h;
}

}  // namespace tf::ir
