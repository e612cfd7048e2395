// The completeness check: every registered op has every part it needs. The
// record's own parts (a surface, a typeinfer, a sharding statement) are
// checked here; each layer above describes the part it keeps per op (the
// evaluator: eval::kernel_part(); the native compiler attaches its lowering
// the same way) and passes it in, since ops may not depend on those layers.
// Run by a test; a gap is a line saying what is missing where.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/ops/registry.h"

namespace tf::ops {

struct OpPart {
  std::string what;  // "an evaluator kernel", as in "<Op> lacks <what>"
  std::function<bool(const OpInfo&)> has;
  // The op names the layer holds this part under, so that a part for an op
  // that is not registered (a misspelt key) is reported too. Empty for a
  // part that lives on the record.
  std::function<std::vector<std::string>()> keys;
};

// The parts every record must state: surface, typeinfer, sharding.
std::vector<OpPart> record_parts();

// One line per gap: an op of `ops` without one of the record's parts or of
// layer_parts, or a layer part kept for a name no registered op has:
//   "Foo lacks an evaluator kernel"
//   "an evaluator kernel is registered for 'Fooo', which is not a registered op"
//   "Unary: its shard traits name 'nope', which is not one of its surface functions"
std::vector<std::string> missing_parts(const OpList& ops, const std::vector<OpPart>& layer_parts);

}  // namespace tf::ops
