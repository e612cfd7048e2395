// The tensor-level calls the parser spells itself instead of resolving them
// through the op surface table (ops::find_surface), because their arguments
// are not attribute literals: reshard's layout is a parse-time value, tile
// heads a loop, load_tile reads a loop variable, local sits beside reshard.
// Like the surface functions they only mean something inside a @func body.
// With the surface functions they are every name a kernel file calls that
// Python must know (the C ABI lists both: tf_surface_function_name).
#pragma once

#include <string>
#include <vector>

namespace tf::frontend {

const std::vector<std::string>& syntax_function_names();

}  // namespace tf::frontend
