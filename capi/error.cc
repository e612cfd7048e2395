#include "capi/error.h"

#include <new>

#include "core/ir/error.h"

namespace tf::capi {
namespace {

// Rationale: a std::string per thread keeps the pointer tf_last_error hands
// out valid until this thread's next failure.
thread_local std::string t_last_error;

tf_status record(tf_status status, const char* message) noexcept {
  set_last_error(message);
  return status;
}

}  // namespace

void fail(tf_status status, const std::string& message) { throw ApiError(status, message); }

void set_last_error(const char* message) noexcept {
  try {
    t_last_error = message ? message : "";
  } catch (...) {
    t_last_error.clear();  // shrinking never allocates
  }
}

const char* last_error() noexcept { return t_last_error.c_str(); }

tf_status translate_current_exception() noexcept {
  try {
    throw;
  } catch (const ApiError& e) {
    return record(e.status(), e.what());
  } catch (const ir::Error& e) {
    return record(static_cast<tf_status>(e.kind()), e.what());
  } catch (const std::bad_alloc&) {
    return record(TF_ERR_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    try {
      std::string msg = std::string("internal error: ") + e.what();
      return record(TF_ERR_INTERNAL, msg.c_str());
    } catch (...) {
      return record(TF_ERR_INTERNAL, "internal error");
    }
  } catch (...) {
    return record(TF_ERR_INTERNAL, "internal error: unknown exception");
  }
}

}  // namespace tf::capi

extern "C" const char* tf_last_error(void) { return tf::capi::last_error(); }
