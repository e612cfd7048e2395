// The fixed C++ prelude of every generated kernel source (see prelude.cc).
#pragma once

namespace tf::compiler {

const char* prelude_source();

}  // namespace tf::compiler
