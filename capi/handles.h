// The two opaque handle kinds of the C ABI and the registry that makes misuse
// detectable. Each handle carries a magic number naming its kind, and every
// live handle is listed in a process-wide, mutex-protected registry, so a
// NULL handle is TF_ERR_INVALID_ARGUMENT and a foreign, wrong-kind or
// released one is TF_ERR_INVALID_HANDLE — checked without ever dereferencing
// a pointer that is not live.
//
// Lifetime: a tf_module handle owns one reference to its (immutable) Module;
// a tf_kernel handle is reference counted (retain / release) and owns one
// reference to its Kernel, which in turn keeps its Module alive. Entry points
// copy the shared_ptr out under the registry lock, so the object they work on
// outlives a concurrent release of the handle.
#pragma once

#include <cstdint>
#include <memory>

#include "core/ir/module.h"
#include "tilefoundry/tilefoundry.h"

namespace tf::capi {
class Kernel;
constexpr uint32_t kModuleMagic = 0x544d4f44;  // "TMOD"
constexpr uint32_t kKernelMagic = 0x544b524e;  // "TKRN"
}  // namespace tf::capi

struct tf_module_s {
  uint32_t magic = tf::capi::kModuleMagic;
  tf::ir::ModulePtr module;
};

struct tf_kernel_s {
  uint32_t magic = tf::capi::kKernelMagic;
  int64_t refs = 1;  // guarded by the registry mutex
  std::shared_ptr<const tf::capi::Kernel> kernel;
};

namespace tf::capi {

// New registered handles (refcount 1 for a kernel).
tf_module new_module_handle(ir::ModulePtr module);
tf_kernel new_kernel_handle(std::shared_ptr<const Kernel> kernel);

// The object behind a live handle. Throws ApiError: TF_ERR_INVALID_ARGUMENT
// for NULL, TF_ERR_INVALID_HANDLE for a foreign, wrong-kind or released one.
ir::ModulePtr module_of(tf_module m);
std::shared_ptr<const Kernel> kernel_of(tf_kernel k);

void retain_kernel_handle(tf_kernel k);
// NULL is a no-op; a handle that is not live is ignored (and recorded as this
// thread's last error) rather than freed twice.
void release_module_handle(tf_module m) noexcept;
void release_kernel_handle(tf_kernel k) noexcept;

}  // namespace tf::capi
