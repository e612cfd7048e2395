// Argument checks shared by the entry points. Each throws ApiError with
// TF_ERR_INVALID_ARGUMENT naming the function and the parameter.
#pragma once

#include <string>

#include "capi/error.h"

namespace tf::capi {

template <typename T>
void require_non_null(const T* p, const char* fn, const char* param) {
  if (p == nullptr) fail(TF_ERR_INVALID_ARGUMENT, std::string(fn) + ": " + param + " is NULL");
}

}  // namespace tf::capi
