#include "capi/handles.h"

#include <mutex>
#include <unordered_map>

#include "capi/error.h"

namespace tf::capi {
namespace {

// Live handle address -> its kind's magic. Rationale: the kind is known
// without touching the object, so a pointer of the other kind is never read
// through the wrong type; the magic inside the handle is a second check.
struct Registry {
  std::mutex mu;
  std::unordered_map<const void*, uint32_t> live;
};

// Rationale: leaked on purpose so that handles released from static
// destructors of client code, after ours have run, still find it.
Registry& registry() {
  static Registry* r = new Registry;
  return *r;
}

// Requires the registry lock. True when h is a live handle of H's kind; h is
// dereferenced only once the registry says it is live and of that kind.
template <typename H>
bool is_live(Registry& r, H h, uint32_t expected) {
  auto it = r.live.find(static_cast<const void*>(h));
  return it != r.live.end() && it->second == expected && h->magic == expected;
}

[[noreturn]] void bad_handle(const char* kind, const void* h) {
  if (h == nullptr) fail(TF_ERR_INVALID_ARGUMENT, std::string(kind) + " handle is NULL");
  fail(TF_ERR_INVALID_HANDLE,
       std::string(kind) + " handle is not a live " + kind + " (released, foreign or wrong kind)");
}

template <typename H>
H register_new(std::unique_ptr<typename std::remove_pointer<H>::type> h) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.live.emplace(h.get(), h->magic);
  return h.release();
}

}  // namespace

tf_module new_module_handle(ir::ModulePtr module) {
  auto h = std::make_unique<tf_module_s>();
  h->module = std::move(module);
  return register_new<tf_module>(std::move(h));
}

tf_kernel new_kernel_handle(std::shared_ptr<const Kernel> kernel) {
  auto h = std::make_unique<tf_kernel_s>();
  h->kernel = std::move(kernel);
  return register_new<tf_kernel>(std::move(h));
}

ir::ModulePtr module_of(tf_module m) {
  if (m != nullptr) {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mu);
    if (is_live(r, m, kModuleMagic)) return m->module;
  }
  bad_handle("module", m);
}

std::shared_ptr<const Kernel> kernel_of(tf_kernel k) {
  if (k != nullptr) {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mu);
    if (is_live(r, k, kKernelMagic)) return k->kernel;
  }
  bad_handle("kernel", k);
}

void retain_kernel_handle(tf_kernel k) {
  if (k != nullptr) {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mu);
    if (is_live(r, k, kKernelMagic)) {
      ++k->refs;
      return;
    }
  }
  bad_handle("kernel", k);
}

void release_module_handle(tf_module m) noexcept {
  if (m == nullptr) return;
  Registry& r = registry();
  {
    std::lock_guard<std::mutex> lock(r.mu);
    if (!is_live(r, m, kModuleMagic)) {
      set_last_error(
          "tf_module_release: module handle is not live (released, foreign or wrong kind)");
      return;
    }
    r.live.erase(m);
    m->magic = 0;
  }
  delete m;  // outside the lock: may free the whole Module
}

void release_kernel_handle(tf_kernel k) noexcept {
  if (k == nullptr) return;
  Registry& r = registry();
  {
    std::lock_guard<std::mutex> lock(r.mu);
    if (!is_live(r, k, kKernelMagic)) {
      set_last_error(
          "tf_kernel_release: kernel handle is not live (released, foreign or wrong kind)");
      return;
    }
    if (--k->refs > 0) return;
    r.live.erase(k);
    k->magic = 0;
  }
  delete k;
}

}  // namespace tf::capi
