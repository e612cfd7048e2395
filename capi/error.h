// Error discipline of the C ABI: nothing crosses the boundary. Every entry
// point's body sits between TF_C_API_BEGIN and TF_C_API_END, which turn any
// exception into a tf_status and record its message in the calling thread's
// last-error slot (tf_last_error).
#pragma once

#include <stdexcept>
#include <string>

#include "tilefoundry/tilefoundry.h"

namespace tf::capi {

// An error that only the C ABI knows (TF_ERR_INVALID_HANDLE), or a capi
// check that wants an explicit status. Core errors stay tf::ir::Error.
class ApiError : public std::runtime_error {
 public:
  ApiError(tf_status status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  tf_status status() const { return status_; }

 private:
  tf_status status_;
};

[[noreturn]] void fail(tf_status status, const std::string& message);

// Records message as this thread's last error. Never throws (on allocation
// failure it falls back to a static message).
void set_last_error(const char* message) noexcept;
// This thread's last error message; "" when none. Valid until the next failure.
const char* last_error() noexcept;

// Must be called from inside a catch block: maps the in-flight exception to
// its status (tf::ir::Error -> its kind, ApiError -> its status, bad_alloc ->
// TF_ERR_OUT_OF_MEMORY, anything else -> TF_ERR_INTERNAL) and records the
// message.
tf_status translate_current_exception() noexcept;

}  // namespace tf::capi

// Wraps an entry point's body; the body returns nothing itself and falls
// through to TF_OK on success.
#define TF_C_API_BEGIN try {
// Like TF_C_API_END, for an entry point whose checked prologue is followed
// by a call to another entry point (which has its own BEGIN / END).
#define TF_C_API_END_NO_RETURN                        \
  }                                                   \
  catch (...) {                                       \
    return ::tf::capi::translate_current_exception(); \
  }
#define TF_C_API_END                                  \
  }                                                   \
  catch (...) {                                       \
    return ::tf::capi::translate_current_exception(); \
  }                                                   \
  return TF_OK;
