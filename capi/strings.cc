#include "capi/strings.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "tilefoundry/tilefoundry.h"

namespace tf::capi {

char* to_c_string(const std::string& s) {
  char* p = static_cast<char*>(std::malloc(s.size() + 1));
  if (p == nullptr) throw std::bad_alloc();
  std::memcpy(p, s.c_str(), s.size() + 1);
  return p;
}

}  // namespace tf::capi

extern "C" void tf_string_free(char* s) { std::free(s); }
