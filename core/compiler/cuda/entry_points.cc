#include "core/compiler/cuda/entry_points.h"

#include <dlfcn.h>

namespace tf::compiler::cuda {

bool bind_symbol(void* lib, const char* symbol, void** fn, std::string* why) {
  *fn = dlsym(lib, symbol);
  if (!*fn) *why = std::string("it lacks ") + symbol;
  return *fn != nullptr;
}

}  // namespace tf::compiler::cuda
