// The DSL frontend: parses a kernel file (a strict subset of Python, see
// docs/dsl.md) into a sealed Module. It owns the lexical
// environment: module-level DimVars and int constants, name rebinding and
// sharing (one Call node per bound name).
#pragma once

#include <string>
#include <string_view>

#include "core/ir/module.h"

namespace tf::frontend {

// Throws Error(kParse) for malformed source, in the shape
//   file:line:col: error: <message>
//       <the source line>
//       <caret under the column>
// and Error(kType / kVerify) (with the same location prefix) for typing rules.
ir::ModulePtr parse_module(std::string_view source, const std::string& filename = "<string>");

}  // namespace tf::frontend
