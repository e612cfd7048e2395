// The one error type of core. Every failure core reports is an Error whose
// kind maps one-to-one onto a C ABI status (capi translates; core never
// aborts on bad input).
#pragma once

#include <stdexcept>
#include <string>

namespace tf::ir {

// Kept in the order and numbering of tf_status (tilefoundry.h).
enum class ErrorKind {
  kParse = 1,
  kType = 2,
  kVerify = 3,
  kNotFound = 4,
  kInvalidArgument = 5,
  kUnsupported = 6,
  kRuntime = 7,
  kOutOfMemory = 8,
  kInternal = 9,
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

[[noreturn]] inline void fail(ErrorKind kind, const std::string& message) {
  throw Error(kind, message);
}

// Internal invariant check: a violation is a TileFoundry bug, reported as kInternal.
#define TF_CHECK(cond, msg)                                                          \
  do {                                                                               \
    if (!(cond))                                                                     \
      ::tf::ir::fail(::tf::ir::ErrorKind::kInternal,                                 \
                     std::string("internal: ") + (msg) + " (" #cond ") at " __FILE__); \
  } while (0)

}  // namespace tf::ir
