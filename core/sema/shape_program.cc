#include "core/sema/shape_program.h"

#include "core/ir/error.h"

namespace tf::sema {
namespace {

void append(const ir::ShapeDim& d, const DimVarSites& sites, DimProgram* out) {
  switch (d.kind()) {
    case ir::DimKind::kConst: out->push_back({ir::DimKind::kConst, d.value(), 0}); return;
    case ir::DimKind::kVar: {
      const AxisRef& site = sites.at(d.var_name());
      out->push_back(
          {ir::DimKind::kVar, static_cast<int64_t>(site.input), static_cast<int64_t>(site.axis)});
      return;
    }
    default:
      append(d.lhs(), sites, out);
      append(d.rhs(), sites, out);
      out->push_back({d.kind(), 0, 0});
  }
}

}  // namespace

DimVarSites dimvar_sites(const ir::Function& fn) {
  DimVarSites sites;
  for (size_t i = 0; i < fn.params().size(); ++i) {
    const ir::TensorType* t = ir::as_tensor(fn.params()[i]->type());
    if (!t) continue;
    for (size_t axis = 0; axis < t->rank(); ++axis) {
      const ir::ShapeDim& d = t->shape()[axis];
      if (d.kind() == ir::DimKind::kVar) sites.emplace(d.var_name(), AxisRef{i, axis});
    }
  }
  return sites;
}

DimProgram dim_program(const ir::ShapeDim& d, const DimVarSites& sites, const std::string& what) {
  std::map<std::string, std::pair<int64_t, int64_t>> vars;
  d.collect_vars(&vars);
  for (const auto& [name, range] : vars) {
    if (!sites.count(name))
      ir::fail(ir::ErrorKind::kUnsupported, what + " (" + d.to_string() + ") uses DimVar " + name +
                                                ", which no input axis binds");
  }
  DimProgram p;
  append(d, sites, &p);
  return p;
}

AxisRequirement input_axis_requirement(const ir::Function& fn, const DimVarSites& sites, size_t i,
                                       size_t axis) {
  const ir::TensorType* t = ir::as_tensor(fn.params().at(i)->type());
  TF_CHECK(t && axis < t->rank(), "input_axis_requirement: no such tensor axis");
  AxisRequirement r;
  r.dim = t->shape()[axis];
  switch (r.dim.kind()) {
    case ir::DimKind::kConst: r.rule = AxisRule::kStatic; break;
    case ir::DimKind::kVar:
      r.site = sites.at(r.dim.var_name());
      r.rule = r.site.input == i && r.site.axis == axis ? AxisRule::kBindsDimVar
                                                        : AxisRule::kEqualsDimVar;
      break;
    default: r.rule = AxisRule::kExpr;
  }
  return r;
}

}  // namespace tf::sema
