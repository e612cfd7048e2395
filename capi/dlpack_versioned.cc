// tf_kernel_run_versioned / tf_kernel_call_versioned: the DLPack >= 1.0
// entry points, thin adapters over tf_kernel_run / tf_kernel_call.
//
// Ownership: tensors passed in are borrowed (their deleters are never
// called); a tensor handed out owns the legacy DLManagedTensor that
// tf_kernel_call produced, and its deleter releases both.
#include <memory>
#include <string>
#include <vector>

#include "capi/checks.h"
#include "capi/error.h"
#include "capi/handles.h"
#include "capi/kernel.h"

namespace tf::capi {
namespace {

// The versioned wrapper handed to the caller; manager_ctx points at it.
struct VersionedOwner {
  DLManagedTensorVersioned managed{};
  DLManagedTensor* legacy = nullptr;
};

void delete_versioned(DLManagedTensorVersioned* t) {
  if (t == nullptr) return;
  auto* owner = static_cast<VersionedOwner*>(t->manager_ctx);
  if (owner->legacy != nullptr && owner->legacy->deleter != nullptr)
    owner->legacy->deleter(owner->legacy);
  delete owner;
}

std::string label(const char* fn, const char* side, size_t i) {
  return std::string(fn) + ": " + side + " #" + std::to_string(i);
}

// The DLTensor inside t, once t's version says this library can read it.
const DLTensor& tensor_of(const DLManagedTensorVersioned* t, const std::string& what) {
  if (t == nullptr) fail(TF_ERR_INVALID_ARGUMENT, what + " is NULL");
  if (t->version.major != TF_DLPACK_MAJOR_VERSION) {
    fail(TF_ERR_UNSUPPORTED, what + ": DLPack major version " + std::to_string(t->version.major) +
                                 " is not supported (this library reads " +
                                 std::to_string(TF_DLPACK_MAJOR_VERSION) + ".x)");
  }
  return t->dl_tensor;
}

template <typename T>
void check_array(const T* p, size_t n, const char* fn, const char* param) {
  if (n != 0) require_non_null(p, fn, param);
}

}  // namespace
}  // namespace tf::capi

extern "C" {

tf_status tf_kernel_run_versioned(tf_kernel k, const DLManagedTensorVersioned* const* in,
                                  size_t n_in, DLManagedTensorVersioned* const* out,
                                  size_t n_out) {
  const char* fn = "tf_kernel_run_versioned";
  std::vector<DLTensor> ins, outs;
  TF_C_API_BEGIN
  tf::capi::kernel_of(k);  // NULL / foreign handles first, like every entry point
  tf::capi::check_array(in, n_in, fn, "in");
  tf::capi::check_array(out, n_out, fn, "out");
  for (size_t i = 0; i < n_in; ++i)
    ins.push_back(tf::capi::tensor_of(in[i], tf::capi::label(fn, "input", i)));
  for (size_t i = 0; i < n_out; ++i) {
    std::string what = tf::capi::label(fn, "output", i);
    outs.push_back(tf::capi::tensor_of(out[i], what));
    if (out[i]->flags & DLPACK_FLAG_BITMASK_READ_ONLY)
      tf::capi::fail(TF_ERR_INVALID_ARGUMENT,
                     what + " is read-only (DLPACK_FLAG_BITMASK_READ_ONLY); outputs are written");
  }
  TF_C_API_END_NO_RETURN
  return tf_kernel_run(k, ins.data(), ins.size(), outs.data(), outs.size());
}

tf_status tf_kernel_call_versioned(tf_kernel k, const DLTensor* in, size_t n_in,
                                   DLManagedTensorVersioned** out, size_t n_out) {
  std::vector<DLManagedTensor*> legacy;
  std::vector<std::unique_ptr<tf::capi::VersionedOwner>> owners;
  TF_C_API_BEGIN
  const char* fn = "tf_kernel_call_versioned";
  size_t expected = tf::capi::kernel_of(k)->num_outputs();
  tf::capi::check_array(out, n_out, fn, "out");
  if (n_out != expected) {
    tf::capi::fail(TF_ERR_INVALID_ARGUMENT, std::string(fn) + ": takes " +
                                                std::to_string(expected) + " outputs, but got " +
                                                std::to_string(n_out));
  }
  legacy.assign(n_out, nullptr);
  // Allocate the wrappers first: after tf_kernel_call succeeds nothing may fail.
  for (size_t i = 0; i < n_out; ++i) owners.push_back(std::make_unique<tf::capi::VersionedOwner>());
  TF_C_API_END_NO_RETURN
  tf_status s = tf_kernel_call(k, in, n_in, legacy.data(), n_out);
  if (s != TF_OK) return s;
  for (size_t i = 0; i < n_out; ++i) {
    tf::capi::VersionedOwner* o = owners[i].release();
    o->legacy = legacy[i];
    o->managed.version = DLPackVersion{TF_DLPACK_MAJOR_VERSION, TF_DLPACK_MINOR_VERSION};
    o->managed.manager_ctx = o;
    o->managed.deleter = tf::capi::delete_versioned;
    o->managed.flags = 0;
    o->managed.dl_tensor = legacy[i]->dl_tensor;
    out[i] = &o->managed;
  }
  return TF_OK;
}

}  // extern "C"
