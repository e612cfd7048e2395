// ScopedEnv: an environment variable set for a scope, the old value (or
// its absence) restored after it.
#pragma once

#include <cstdlib>
#include <string>

namespace tf::comptest {

// Sets an environment variable for the scope (the kernel cache's directory
// and the compiler are read from it on every use).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (had_)
      setenv(name_, old_.c_str(), 1);
    else
      unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

}  // namespace tf::comptest
