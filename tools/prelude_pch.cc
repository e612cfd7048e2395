// Build step: precompiles the kernel prelude for the default toolchain into
// the directory given (the build's library directory / tilefoundry-pch),
// where compile_shared finds it beside libtilefoundry.so. Every cold kernel
// compile then skips parsing the prelude and the system headers it includes
// (<immintrin.h> alone is a third of a second here).
//   tf_prelude_pch <dir>
#include <cstdio>
#include <exception>

#include "core/compiler/prelude.h"
#include "core/compiler/toolchain.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <dir>\n", argv[0]);
    return 2;
  }
  try {
    tf::compiler::write_precompiled_header(tf::compiler::prelude_source(), argv[1]);
  } catch (const std::exception& e) {
    // Not fatal to the build: kernels then compile the prelude's text.
    std::fprintf(stderr, "tf_prelude_pch: %s (kernels will compile the prelude's text)\n", e.what());
  }
  return 0;
}
