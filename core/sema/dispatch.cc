#include "core/sema/dispatch.h"

#include <algorithm>
#include <map>
#include <set>

#include "core/ir/error.h"

namespace tf::sema {
namespace {

std::string range_str(int64_t lo, int64_t hi) {
  return "[" + std::to_string(lo) + ", " + std::to_string(hi) + ")";
}

std::string variant_name(const ir::Function& v) {
  return v.label().empty() ? "'" + v.name() + "' " + v.canonical_signature() : "'" + v.label() + "'";
}

[[noreturn]] void dispatch_error(const ir::Function& base, const std::string& rule) {
  std::string loc = base.span().to_string();
  ir::fail(ir::ErrorKind::kVerify, (loc.empty() ? "" : loc + ": ") + "error: dispatched function '" + base.name() +
                                       "': " + rule);
}

// The envelopes of the DimVars reachable from the input parameters.
std::map<std::string, std::pair<int64_t, int64_t>> input_dimvars(const ir::Function& fn) {
  std::map<std::string, std::pair<int64_t, int64_t>> vars;
  for (const auto& p : fn.params())
    for (const auto& t : ir::flatten_tensor_types(p->type()))
      for (const auto& d : t->shape())
        if (d.kind() == ir::DimKind::kVar) d.collect_vars(&vars);
  return vars;
}

void check_signature_shared(const ir::Function& base, const ir::Function& v) {
  if (v.name() != base.name())
    dispatch_error(base, "variant " + variant_name(v) + " is named '" + v.name() +
                             "'; every variant MUST share the base's name");
  bool same = v.params().size() == base.params().size() && ir::type_equal(v.return_type(), base.return_type());
  for (size_t i = 0; same && i < v.params().size(); ++i)
    same = v.params()[i]->name() == base.params()[i]->name() &&
           ir::type_equal(v.params()[i]->type(), base.params()[i]->type());
  if (!same)
    dispatch_error(base, "variant " + variant_name(v) +
                             " MUST share the base's params and return_type (a variant specializes the body, "
                             "not the signature)");
  if (!v.body()) dispatch_error(base, "variant " + variant_name(v) + " has no body");
  if (!v.variants().empty()) dispatch_error(base, "variant " + variant_name(v) + " MUST NOT carry variants");
}

}  // namespace

void check_dispatch(const ir::Function& base) {
  if (base.variants().empty()) return;
  if (base.body()) dispatch_error(base, "a function with variants MUST have no body (a 'pass' prototype)");
  auto anchors = input_dimvars(base);
  std::set<std::string> signatures;
  std::string dim_var;
  std::vector<std::pair<std::pair<int64_t, int64_t>, const ir::Function*>> ranges;
  for (const auto& v : base.variants()) {
    check_signature_shared(base, *v);
    if (v->specializations().size() != 1)
      dispatch_error(base, "variant " + variant_name(*v) + " MUST carry exactly one DimVarRangePat, but has " +
                               std::to_string(v->specializations().size()));
    const ir::DimVarRangePat& p = v->specializations()[0];
    auto it = anchors.find(p.dim_var);
    if (it == anchors.end())
      dispatch_error(base, "variant " + variant_name(*v) + " specializes '" + p.dim_var +
                               "', which is not a DimVar of an input parameter's shape");
    auto [lo, hi] = it->second;
    if (p.lo >= p.hi || p.lo < lo || p.hi > hi)
      dispatch_error(base, "variant " + variant_name(*v) + " range " + p.dim_var + " in " + range_str(p.lo, p.hi) +
                               " MUST be non-empty and inside the envelope " + range_str(lo, hi));
    if (!dim_var.empty() && dim_var != p.dim_var)
      dispatch_error(base, "variants specialize both '" + dim_var + "' and '" + p.dim_var +
                               "'; all variants of a base MUST partition one DimVar's envelope");
    dim_var = p.dim_var;
    if (!signatures.insert(v->canonical_signature()).second)
      dispatch_error(base, "two variants have the canonical signature '" + v->canonical_signature() +
                               "'; signatures MUST be distinct");
    ranges.push_back({{p.lo, p.hi}, v.get()});
  }
  // Partition: sorted by lo, each range starts where the previous one ended.
  std::sort(ranges.begin(), ranges.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  auto [lo, hi] = anchors[dim_var];
  int64_t cursor = lo;
  for (const auto& [r, v] : ranges) {
    if (r.first > cursor)
      dispatch_error(base, "the variants do not cover " + dim_var + " in " + range_str(cursor, r.first) +
                               " (a gap in the envelope " + range_str(lo, hi) +
                               "); the variants MUST partition the envelope");
    if (r.first < cursor)
      dispatch_error(base, "variant " + variant_name(*v) + " overlaps another on " + dim_var + " in " +
                               range_str(r.first, std::min(cursor, r.second)) +
                               "; the variants MUST be pairwise disjoint");
    cursor = r.second;
  }
  if (cursor < hi)
    dispatch_error(base, "the variants do not cover " + dim_var + " in " + range_str(cursor, hi) +
                             " (a gap in the envelope " + range_str(lo, hi) +
                             "); the variants MUST partition the envelope");
}

void PrototypeBuilder::add_variant(ir::FunctionPtr variant) {
  if (sealed_)
    ir::fail(ir::ErrorKind::kVerify, "dispatched function '" + base_.name +
                                         "' is sealed (it entered a Module or was called); a later variant " +
                                         variant_name(*variant) + " is rejected");
  variants_.push_back(std::move(variant));
}

ir::FunctionPtr PrototypeBuilder::seal() {
  if (sealed_) return sealed_;
  ir::Function::Fields f = base_;
  f.body = nullptr;
  f.variants = variants_;
  ir::FunctionPtr fn = ir::Function::make(std::move(f));
  if (fn->variants().empty())
    ir::fail(ir::ErrorKind::kVerify, fn->span().to_string() + (fn->span().line ? ": " : "") + "error: function '" +
                                         fn->name() + "' has no body and no variants: a prototype ('pass') "
                                         "needs @" + fn->name() + ".specialize(...) variants");
  check_dispatch(*fn);
  sealed_ = fn;
  return fn;
}

const ir::Function& select_variant(const ir::Function& base, const ir::DimBindings& bindings) {
  for (const ir::FunctionPtr& v : base.variants()) {
    bool match = true;
    for (const ir::DimVarRangePat& p : v->specializations()) {
      auto it = bindings.find(p.dim_var);
      match = match && it != bindings.end() && it->second >= p.lo && it->second < p.hi;
    }
    if (match) return *v;
  }
  std::string detail;
  if (!base.variants().empty() && !base.variants()[0]->specializations().empty()) {
    const std::string& dv = base.variants()[0]->specializations()[0].dim_var;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (const auto& v : base.variants())
      for (const auto& p : v->specializations()) lo = std::min(lo, p.lo), hi = std::max(hi, p.hi);
    auto it = bindings.find(dv);
    detail = ": " + dv + " = " + (it == bindings.end() ? std::string("<unbound>") : std::to_string(it->second)) +
             " is outside the dispatch envelope " + range_str(lo, hi);
  }
  ir::fail(ir::ErrorKind::kInvalidArgument,
           "'" + base.name() + "': no variant matches the argument shapes" + detail);
}

}  // namespace tf::sema
