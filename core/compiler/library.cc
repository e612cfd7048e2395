#include "core/compiler/library.h"

#include <dlfcn.h>

#include "core/ir/error.h"

namespace tf::compiler {

Library::Library(const std::string& path) : path_(path) {
  // RTLD_NODELETE: a kernel library pulls in libgomp, whose idle worker
  // threads would crash if dlclose unloaded it under them.
  handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!handle_) {
    const char* why = dlerror();
    ir::fail(ir::ErrorKind::kNotFound, "cannot load kernel library '" + path + "': " + (why ? why : "?"));
  }
  omp_get_max_threads = reinterpret_cast<int (*)()>(dlsym(handle_, "omp_get_max_threads"));
  omp_set_num_threads = reinterpret_cast<void (*)(int)>(dlsym(handle_, "omp_set_num_threads"));
  if (!omp_get_max_threads || !omp_set_num_threads) omp_get_max_threads = nullptr, omp_set_num_threads = nullptr;
}

Library::~Library() {
  if (handle_) dlclose(handle_);
}

void* Library::symbol(const std::string& name) const { return dlsym(handle_, name.c_str()); }

}  // namespace tf::compiler
