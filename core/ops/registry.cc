#include "core/ops/registry.h"

namespace tf::ops {
namespace {
const Registry& registry() {
  static const Registry r = [] {
    Registry reg;
    register_math_ops(reg);
    register_tensor_ops(reg);
    register_nn_ops(reg);
    register_shape_ops(reg);
    register_sharding_ops(reg);
    return reg;
  }();
  return r;
}
}  // namespace

const OpInfo* find_op(std::string_view name) {
  for (const auto& info : registry().ops())
    if (info.name == name) return &info;
  return nullptr;
}

const std::vector<OpInfo>& all_ops() { return registry().ops(); }

}  // namespace tf::ops
