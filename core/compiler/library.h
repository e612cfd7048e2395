// Library: one dlopen'ed kernel library. Its handle closes with the last
// CompiledFunction using it, but the code stays mapped (RTLD_NODELETE).
#pragma once

#include <string>

namespace tf::compiler {

class Library {
 public:
  // Throws Error(kNotFound) with dlerror()'s text when dlopen fails.
  explicit Library(const std::string& path);
  ~Library();
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;
  // Null when the symbol is absent.
  void* symbol(const std::string& name) const;
  const std::string& path() const { return path_; }

  // The team-size controls of the OpenMP runtime this library's code links
  // (found through the library's own dependencies, so it is the runtime its
  // parallel loops use even when the process holds another); null when the
  // library links none.
  int (*omp_get_max_threads)() = nullptr;
  void (*omp_set_num_threads)(int) = nullptr;

 private:
  std::string path_;
  void* handle_ = nullptr;
};

}  // namespace tf::compiler
