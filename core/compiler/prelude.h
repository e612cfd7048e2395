// The fixed C++ prelude of every generated kernel source (see prelude.cc).
#pragma once

namespace tf::compiler {

const char* prelude_source();

// The text of core/runtime/scalar_numerics.h, the scalar numerics generated
// kernels share with the evaluator; the prelude starts with it. Defined in a
// source the build generates from the header (cmake/embed_text.cmake).
const char* scalar_numerics_source();

}  // namespace tf::compiler
