#include "core/compiler/cuda/driver.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <vector>

#include "core/ir/error.h"

namespace tf::compiler::cuda {
namespace {

DriverApi g_api{};
DriverStatus g_status;

bool bind_all(void* lib, std::string* why) {
#define TF_BIND(member, symbol) &&bind_symbol(lib, #symbol, &g_api.member, why)
  return true TF_CUDA_DRIVER_ENTRY_POINTS(TF_BIND);
#undef TF_BIND
}

std::string describe(CUresult r) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (g_api.error_name) g_api.error_name(r, &name);
  if (g_api.error_string) g_api.error_string(r, &text);
  return std::string(name ? name : "CUDA error " + std::to_string(r)) + (text ? std::string(": ") + text : "");
}

void load() {
  const char* env = std::getenv("TF_CUDA_DRIVER_LIBRARY");
  const std::string path = env && *env ? env : "libcuda.so.1";
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* e = dlerror();
    g_status.why = "the CUDA driver could not be loaded (" + (e ? std::string(e) : path + ": not found") +
                   "); an NVIDIA GPU and its driver are needed";
    return;
  }
  std::string why;
  if (!bind_all(lib, &why)) {
    g_status.why = "the CUDA driver " + path + " is too old: " + why;
    return;
  }
  if (CUresult r = g_api.init(0); r != kCudaSuccess) {
    g_status.why = "cuInit failed: " + describe(r);
    return;
  }
  g_api.driver_version(&g_status.version);
  g_api.device_count(&g_status.devices);
  if (g_status.devices <= 0) {
    g_status.why = "the CUDA driver " + path + " sees no device";
    return;
  }
  g_status.library = path;
  g_status.takes_source = dlsym(lib, "tf_cuda_driver_takes_source") != nullptr;
  g_status.available = true;
}

}  // namespace

namespace {

// Whether a driver of `driver_version` runs code and libraries of CUDA
// `major`: its own major version or older.
bool driver_runs(int major, int driver_version) { return major * 1000 <= driver_version; }

}  // namespace

int64_t pick_for_driver(const std::vector<int>& majors, int driver_version) {
  if (majors.empty()) return -1;
  for (size_t i = 0; i < majors.size(); ++i)
    if (driver_runs(majors[i], driver_version)) return static_cast<int64_t>(i);
  return 0;
}

OpenedLibrary open_for_driver(const std::vector<std::string>& candidates,
                              const std::function<int(void* lib, std::string* why)>& probe, std::string* tried) {
  const DriverStatus& driver = driver_status();
  const int driver_version = driver.available ? driver.version : 0;
  std::vector<OpenedLibrary> found;
  std::vector<int> majors;
  for (const std::string& path : candidates) {
    void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* e = dlerror();
      *tried += "\n  " + (e ? std::string(e) : path + ": not found");
      continue;
    }
    std::string why;
    const int major = probe(lib, &why);
    if (major < 0) {
      *tried += "\n  " + path + ": " + why;
      dlclose(lib);
      continue;
    }
    found.push_back({lib, path});
    majors.push_back(major);
    // No later candidate changes the pick: the first one without a driver,
    // the first one the driver runs with it.
    if (driver_version == 0 || driver_runs(major, driver_version)) break;
  }
  const int64_t pick = pick_for_driver(majors, driver_version);
  for (int64_t i = 0; i < static_cast<int64_t>(found.size()); ++i)
    if (i != pick) dlclose(found[static_cast<size_t>(i)].lib);
  return pick < 0 ? OpenedLibrary{} : found[static_cast<size_t>(pick)];
}

const DriverStatus& driver_status() {
  static std::once_flag once;
  std::call_once(once, load);
  return g_status;
}

const DriverApi& driver() {
  const DriverStatus& s = driver_status();
  if (!s.available) ir::fail(ir::ErrorKind::kUnsupported, "the CUDA backend is unavailable: " + s.why);
  return g_api;
}

void check(CUresult r, const char* what) {
  if (r == kCudaSuccess) return;
  ir::fail(r == kCudaErrorOutOfMemory ? ir::ErrorKind::kOutOfMemory : ir::ErrorKind::kRuntime,
           std::string(what) + ": " + describe(r));
}

namespace {

int attribute(int device, int attr) {
  const DriverApi& d = driver();
  CUdevice dev = 0;
  check(d.device_get(&dev, device), "cuDeviceGet");
  int v = 0;
  check(d.device_attribute(&v, attr, dev), "cuDeviceGetAttribute");
  return v;
}

}  // namespace

int compute_capability(int device) {
  return 10 * attribute(device, kAttrComputeMajor) + attribute(device, kAttrComputeMinor);
}

int multiprocessor_count(int device) { return attribute(device, kAttrMultiprocessors); }

namespace {

// Primary contexts are retained once per device for the process's life (the
// CUDA runtime holds them the same way).
CUcontext primary_context(int device) {
  static std::mutex mu;
  static std::vector<CUcontext> contexts;
  const DriverApi& d = driver();
  const DriverStatus& s = driver_status();
  if (device < 0 || device >= s.devices)
    ir::fail(ir::ErrorKind::kInvalidArgument, "CUDA device " + std::to_string(device) + " does not exist (" +
                                                  std::to_string(s.devices) + " device" +
                                                  (s.devices == 1 ? "" : "s") + ")");
  std::lock_guard<std::mutex> lock(mu);
  if (contexts.empty()) contexts.assign(static_cast<size_t>(s.devices), nullptr);
  CUcontext& c = contexts[static_cast<size_t>(device)];
  if (!c) {
    CUdevice dev = 0;
    check(d.device_get(&dev, device), "cuDeviceGet");
    check(d.primary_ctx_retain(&c, dev), "cuDevicePrimaryCtxRetain");
  }
  return c;
}

}  // namespace

ContextScope::ContextScope(int device) {
  const CUcontext want = primary_context(device);
  const DriverApi& d = driver();
  CUcontext current = nullptr;
  check(d.ctx_get_current(&current), "cuCtxGetCurrent");
  if (current == want) return;
  check(d.ctx_push(want), "cuCtxPushCurrent");
  pushed_ = true;
}

ContextScope::~ContextScope() {
  if (!pushed_) return;
  CUcontext popped = nullptr;
  g_api.ctx_pop(&popped);
}

void* device_alloc(int device, size_t bytes) {
  ContextScope scope(device);
  CUdeviceptr p = 0;
  check(driver().mem_alloc(&p, bytes == 0 ? 1 : bytes), "cuMemAlloc");
  return reinterpret_cast<void*>(p);
}

void device_free(int device, void* p) {
  if (p == nullptr) return;
  try {
    ContextScope scope(device);
    driver().mem_free(reinterpret_cast<CUdeviceptr>(p));
  } catch (const ir::Error&) {
    // A deleter cannot report; the driver reclaims the memory with the process.
  }
}

void copy_to_device(int device, void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  ContextScope scope(device);
  check(driver().memcpy_htod(reinterpret_cast<CUdeviceptr>(dst), src, bytes), "cuMemcpyHtoD");
}

void copy_to_host(int device, void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  ContextScope scope(device);
  check(driver().memcpy_dtoh(dst, reinterpret_cast<CUdeviceptr>(src), bytes), "cuMemcpyDtoH");
}

bool stream_is_capturing(CUstream stream) {
  int status = kStreamCaptureStatusNone;
  check(driver().stream_is_capturing(stream, &status), "cuStreamIsCapturing");
  return status != kStreamCaptureStatusNone;
}

}  // namespace tf::compiler::cuda
