#include "core/compiler/entry_vars.h"

namespace tf::compiler {

using namespace tir;

ExprPtr extent(const SlotVars& s, size_t axis) { return load(s.shape, i64(static_cast<int64_t>(axis))); }
ExprPtr stride(const SlotVars& s, size_t axis) { return load(s.strides, i64(static_cast<int64_t>(axis))); }

ExprPtr extents_product(const SlotVars& s, size_t first, size_t last) {
  ExprPtr n = i64(1);
  for (size_t a = first; a < last; ++a) n = mul(n, extent(s, a));
  return n;
}

ExprPtr element_count(const SlotVars& s) { return extents_product(s, 0, s.type->rank()); }

ExprPtr scalar_value(const SlotVars& s) { return cast(ir::DType::kI64, load(s.data, i64(0))); }

VarPtr Lets::bind(const std::string& name, ExprPtr value) {
  VarPtr v = Var::make(name, value->type());
  list_.push_back(Binding{v, std::move(value), false});
  return v;
}

VarPtr Lets::bind_pointer(const std::string& name, ExprPtr address, bool no_alias) {
  VarPtr v = Var::make(name, address->type());
  list_.push_back(Binding{v, std::move(address), no_alias});
  return v;
}

StmtPtr Lets::wrap(StmtPtr body) const {
  for (auto it = list_.rbegin(); it != list_.rend(); ++it) body = LetStmt::make(it->var, it->value, body, it->no_alias);
  return body;
}

std::vector<ExprPtr> row_major_offsets(const ExprPtr& flat, const std::vector<ExprPtr>& extents,
                                       const std::vector<std::vector<ExprPtr>>& strides, Lets& lets,
                                       const std::string& name) {
  std::vector<ExprPtr> off(strides.size(), i64(0));
  ExprPtr rem = flat;
  for (size_t a = extents.size(); a-- > 0;) {
    const ExprPtr digit = lets.bind(name + std::to_string(a), a == 0 ? rem : mod(rem, extents[a]));
    for (size_t o = 0; o < strides.size(); ++o) off[o] = add(off[o], mul(digit, strides[o].at(a)));
    if (a > 0) rem = lets.bind("rem" + std::to_string(a), div(rem, extents[a]));
  }
  return off;
}

StmtPtr store_info(const EntryVars& e, const std::vector<ExprPtr>& details) {
  std::vector<StmtPtr> out;
  for (size_t i = 0; i < details.size(); ++i)
    out.push_back(Store::make(e.info, i64(static_cast<int64_t>(i)), cast(ir::DType::kI64, details[i])));
  return Seq::make(std::move(out));
}

StmtPtr record_error(const EntryVars& e, int code, const std::vector<ExprPtr>& details) {
  return Seq::make({store_info(e, details), Evaluate::make(extern_call("tf_fail", {e.err, i32(code)}))});
}

StmtPtr stage_comment(const std::string& what, size_t s) {
  return Comment::make("stage: " + what + " -> slot " + std::to_string(s));
}

}  // namespace tf::compiler
