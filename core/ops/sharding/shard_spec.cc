#include "core/ops/sharding/shard_spec.h"

namespace tf::ops {

bool Commutes::with(ir::Reduction r) const {
  return r == ir::Reduction::kSum ? sum : r == ir::Reduction::kMax ? max : min;
}

Commutes monotone() {
  return {false, true, true, "is monotone non-decreasing: it commutes with max / min but not sum"};
}
Commutes linear(const std::string& note) {
  return {true, false, false, "is linear: it commutes with sum but not max / min" + (note.empty() ? "" : " " + note)};
}
Commutes not_monotone() { return {false, false, false, "is not monotone and commutes with no reduction"}; }
Commutes unproven() { return {false, false, false, "is not proven to commute with any reduction"}; }
Commutes every_reduction() { return {true, true, true, ""}; }

ShardSpec ShardSpec::fail_closed() {
  ShardSpec s;
  s.kind = Kind::kFailClosed;
  return s;
}

ShardSpec ShardSpec::shard_aware() {
  ShardSpec s;
  s.kind = Kind::kShardAware;
  return s;
}

ShardSpec ShardSpec::elementwise(Commutes c) {
  ShardSpec s;
  s.kind = Kind::kElementwise;
  s.commutes = std::move(c);
  return s;
}

ShardSpec ShardSpec::rule(ShardRuleFn f) {
  ShardSpec s;
  s.kind = Kind::kRule;
  s.rule_fn = f;
  return s;
}

ShardSpec& ShardSpec::except(std::initializer_list<const char*> surfaces, const Commutes& c) {
  for (const char* name : surfaces) by_surface[name] = c;
  return *this;
}

const Commutes& ShardSpec::commutes_for(std::string_view surface) const {
  auto it = by_surface.find(surface);
  return it == by_surface.end() ? commutes : it->second;
}

}  // namespace tf::ops
