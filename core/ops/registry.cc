#include "core/ops/registry.h"

#include <mutex>

#include "core/ir/error.h"

namespace tf::ops {

std::string Registry::refusal(const OpInfo& info) const {
  if (info.name.empty()) return "an op needs a name";
  if (by_name_.count(info.name)) return "op '" + info.name + "' is already registered";
  std::map<std::string, bool, std::less<>> seen;
  for (const SurfaceFn& s : info.surfaces) {
    if (s.name.empty()) return "op '" + info.name + "' has a surface function without a name";
    if (!s.make) return "op '" + info.name + "': surface function '" + s.name + "' has no builder";
    auto taken = by_surface_.find(s.name);
    if (taken != by_surface_.end())
      return "op '" + info.name + "': surface function '" + s.name + "' is already defined by op '" +
             taken->second.op->name + "'";
    if (!seen.emplace(s.name, true).second)
      return "op '" + info.name + "' defines surface function '" + s.name + "' twice";
  }
  return "";
}

void Registry::add(OpInfo info) {
  std::unique_lock lock(mu_);
  if (std::string why = refusal(info); !why.empty()) ir::fail(ir::ErrorKind::kInvalidArgument, why);
  const OpInfo& added = ops_.emplace_back(std::move(info));
  by_name_.emplace(added.name, &added);
  for (const SurfaceFn& s : added.surfaces) by_surface_.emplace(s.name, Surface{&added, &s});
}

const OpInfo* Registry::find(std::string_view name) const {
  std::shared_lock lock(mu_);
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

const SurfaceFn* Registry::find_surface(std::string_view name) const {
  std::shared_lock lock(mu_);
  auto it = by_surface_.find(name);
  return it == by_surface_.end() ? nullptr : it->second.fn;
}

OpList Registry::ops() const {
  std::shared_lock lock(mu_);
  return OpList(ops_.begin(), ops_.end());
}

std::vector<std::reference_wrapper<const SurfaceFn>> Registry::surfaces() const {
  std::shared_lock lock(mu_);
  std::vector<std::reference_wrapper<const SurfaceFn>> out;
  for (const OpInfo& op : ops_) out.insert(out.end(), op.surfaces.begin(), op.surfaces.end());
  return out;
}

Registry& registry() {
  static Registry r;
  static const bool builtins = [] {
    register_math_ops(r);
    register_tensor_ops(r);
    register_nn_ops(r);
    register_shape_ops(r);
    register_sharding_ops(r);
    return true;
  }();
  (void)builtins;
  return r;
}

const OpInfo* find_op(std::string_view name) { return registry().find(name); }

OpList all_ops() { return registry().ops(); }

void register_op(OpInfo info) { registry().add(std::move(info)); }

}  // namespace tf::ops
