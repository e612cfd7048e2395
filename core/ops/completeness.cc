#include "core/ops/completeness.h"

namespace tf::ops {
namespace {

bool has_surface(const OpInfo& op) { return !op.surfaces.empty() || !op.surface_elsewhere.empty(); }
bool has_typeinfer(const OpInfo& op) { return op.typeinfer != nullptr; }
bool has_shard_statement(const OpInfo& op) {
  switch (op.shard.kind) {
    case ShardSpec::Kind::kUnset: return false;
    case ShardSpec::Kind::kRule: return op.shard.rule_fn != nullptr;
    default: return true;
  }
}

// Per-surface traits must name surfaces the op has: a misspelt kind would
// silently take the default traits.
void check_trait_keys(const OpInfo& op, std::vector<std::string>* gaps) {
  for (const auto& [surface, traits] : op.shard.by_surface) {
    bool found = false;
    for (const SurfaceFn& s : op.surfaces) found = found || s.name == surface;
    if (!found)
      gaps->push_back(op.name + ": its shard traits name '" + surface +
                      "', which is not one of its surface functions");
  }
}

void check_keys(const OpPart& part, std::vector<std::string>* gaps) {
  if (!part.keys) return;
  for (const std::string& key : part.keys())
    if (!find_op(key)) gaps->push_back(part.what + " is registered for '" + key + "', which is not a registered op");
}

}  // namespace

std::vector<OpPart> record_parts() {
  return {
      {"a surface (surface functions, or surface_elsewhere saying how the DSL spells it)", has_surface, nullptr},
      {"a typeinfer", has_typeinfer, nullptr},
      {"a sharding statement (a rule, elementwise traits, shard_aware, or fail_closed)", has_shard_statement,
       nullptr},
  };
}

std::vector<std::string> missing_parts(const OpList& ops, const std::vector<OpPart>& layer_parts) {
  std::vector<OpPart> parts = record_parts();
  parts.insert(parts.end(), layer_parts.begin(), layer_parts.end());
  std::vector<std::string> gaps;
  for (const OpInfo& op : ops) {
    for (const OpPart& part : parts)
      if (!part.has(op)) gaps.push_back(op.name + " lacks " + part.what);
    check_trait_keys(op, &gaps);
  }
  for (const OpPart& part : layer_parts) check_keys(part, &gaps);
  return gaps;
}

}  // namespace tf::ops
