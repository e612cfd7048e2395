// Strings handed across the C ABI: malloc'ed, NUL-terminated, freed by the
// caller with tf_string_free.
#pragma once

#include <string>

namespace tf::capi {

// A malloc'ed copy of s. Throws std::bad_alloc when malloc fails.
char* to_c_string(const std::string& s);

}  // namespace tf::capi
