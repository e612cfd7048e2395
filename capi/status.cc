// tf_status_name: the static name of every status code.
#include <cstring>

#include "tilefoundry/tilefoundry.h"

// X(status) — one row per tf_status value (tilefoundry.h).
#define TF_STATUS_LIST(X)    \
  X(TF_OK)                   \
  X(TF_ERR_PARSE)            \
  X(TF_ERR_TYPE)             \
  X(TF_ERR_VERIFY)           \
  X(TF_ERR_NOT_FOUND)        \
  X(TF_ERR_INVALID_ARGUMENT) \
  X(TF_ERR_UNSUPPORTED)      \
  X(TF_ERR_RUNTIME)          \
  X(TF_ERR_OUT_OF_MEMORY)    \
  X(TF_ERR_INTERNAL)         \
  X(TF_ERR_INVALID_HANDLE)

extern "C" const char* tf_status_name(tf_status s) {
  // Rationale: a C caller may pass any int. In C++ a tf_status outside its
  // enumerators' range (0..15) is undefined behaviour to load as the enum
  // (UBSan: -fsanitize=enum), so its bytes are read as the int they are.
  int code = 0;
  static_assert(sizeof code == sizeof s, "tf_status is int-sized");
  std::memcpy(&code, &s, sizeof code);
  switch (code) {
#define TF_X(name) \
  case name: return #name;
    TF_STATUS_LIST(TF_X)
#undef TF_X
  }
  return "TF_UNKNOWN_STATUS";
}
