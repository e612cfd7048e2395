// libtf_emulated_cuda.so: the part of the CUDA driver API the CUDA backend
// calls, over the emulated device (emulated_module.h), so that the whole
// path from the C ABI (and torch) down to a kernel launch runs on machines
// without a GPU. Loaded in place of libcuda with TF_CUDA_DRIVER_LIBRARY.
//
// Device memory is host memory (malloc), so a test reads its results
// directly. It exports tf_cuda_driver_takes_source: the backend then hands
// cuModuleLoadData the CUDA C++ source instead of a CUBIN, which the
// emulator compiles for the host. Two devices of compute capability 9.0,
// one multiprocessor each (a grid-strided launch is then 8 blocks).
//
// What the tests observe (tf_emu_* functions): module loads, launches and their streams,
// stream synchronizations, live allocations, and a stream marked as being
// captured into a graph (cuStreamIsCapturing says so; a synchronize or an
// allocation outside the stream-ordered allocator on it is an error, as on
// a device).
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "emulated_module.h"

// The handle types with <cuda.h>'s names, as the backend declares them
// (core/compiler/cuda/driver.h): the same function types, which UBSan's
// function check compares.
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
using CUcontext = CUctx_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;
using CUstream = CUstream_st*;

namespace {

using CUresult = int;
using CUdeviceptr = unsigned long long;  // cuda.h's type, which callers are compiled against
constexpr CUresult kSuccess = 0, kInvalidValue = 1, kOutOfMemory = 2, kInvalidDevice = 101,
                   kInvalidImage = 200, kInvalidContext = 201, kNotFound = 500, kLaunchFailed = 719,
                   kCaptureUnsupported = 900;
constexpr int kDevices = 2;

struct Function {
  std::shared_ptr<tf::cudaemu::EmulatedModule> module;
  std::string name;
};

// A loaded module (a CUmodule): its code, shared by every load of the same
// source, and the functions taken from it, freed with it.
struct Module {
  std::shared_ptr<tf::cudaemu::EmulatedModule> code;
  std::vector<std::unique_ptr<Function>> functions;
};

struct State {
  std::mutex mu;
  std::map<void*, size_t> allocations;  // live device memory
  std::set<const void*> capturing;      // streams being captured
  std::map<std::string, std::shared_ptr<tf::cudaemu::EmulatedModule>> modules;  // by source
  int64_t launches = 0, synchronizations = 0, plain_allocations = 0, all_allocations = 0, module_loads = 0;
  const void* last_stream = nullptr;
  int last_grid = 0, last_block = 0;
};

State& state() {
  static State* s = new State;  // never destroyed: kernels may be released at exit
  return *s;
}

// A context per device; a thread's stack of current contexts.
char g_contexts[kDevices];
thread_local std::vector<CUcontext> t_current;

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

CUresult allocate(CUdeviceptr* out, size_t bytes) {
  void* p = std::aligned_alloc(256, (bytes + 255) / 256 * 256 + 256);
  if (!p) return kOutOfMemory;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.allocations[p] = bytes;
  ++s.all_allocations;
  *out = reinterpret_cast<CUdeviceptr>(p);
  return kSuccess;
}

CUresult release(CUdeviceptr d) {
  void* p = reinterpret_cast<void*>(d);
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.allocations.erase(p) == 0) return kInvalidValue;
  std::free(p);
  return kSuccess;
}

bool capturing(const void* stream) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.capturing.count(stream) != 0;
}

}  // namespace

extern "C" {

int tf_cuda_driver_takes_source = 1;

CUresult cuInit(unsigned) { return kSuccess; }
CUresult cuDriverGetVersion(int* v) {
  *v = 12040;
  return kSuccess;
}
CUresult cuDeviceGetCount(int* n) {
  *n = kDevices;
  return kSuccess;
}
CUresult cuDeviceGet(int* dev, int ordinal) {
  if (ordinal < 0 || ordinal >= kDevices) return kInvalidDevice;
  *dev = ordinal;
  return kSuccess;
}
CUresult cuDeviceGetAttribute(int* v, int attr, int dev) {
  if (dev < 0 || dev >= kDevices) return kInvalidDevice;
  switch (attr) {
    case 75: *v = 9; return kSuccess;  // compute capability 9.0
    case 76: *v = 0; return kSuccess;
    case 16: *v = 1; return kSuccess;  // multiprocessors
    default: return kInvalidValue;
  }
}
CUresult cuDevicePrimaryCtxRetain(CUcontext* ctx, int dev) {
  if (dev < 0 || dev >= kDevices) return kInvalidDevice;
  *ctx = reinterpret_cast<CUcontext>(&g_contexts[dev]);
  return kSuccess;
}
CUresult cuCtxGetCurrent(CUcontext* ctx) {
  *ctx = t_current.empty() ? nullptr : t_current.back();
  return kSuccess;
}
CUresult cuCtxPushCurrent_v2(CUcontext ctx) {
  t_current.push_back(ctx);
  return kSuccess;
}
CUresult cuCtxPopCurrent_v2(CUcontext* ctx) {
  if (t_current.empty()) return kInvalidContext;
  if (ctx) *ctx = t_current.back();
  t_current.pop_back();
  return kSuccess;
}

CUresult cuCtxSetCurrent(CUcontext ctx) {
  if (t_current.empty())
    t_current.push_back(ctx);
  else
    t_current.back() = ctx;
  return kSuccess;
}
// Streams are opaque here: every queue runs at once, in order.
CUresult cuStreamCreate(CUstream* stream, unsigned) {
  *stream = reinterpret_cast<CUstream>(new char);
  return kSuccess;
}
CUresult cuStreamDestroy_v2(CUstream stream) {
  delete reinterpret_cast<char*>(stream);
  return kSuccess;
}

CUresult cuModuleLoadData(CUmodule* module, const void* image) {
  if (t_current.empty()) return kInvalidContext;
  const std::string source(static_cast<const char*>(image));
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  ++s.module_loads;
  auto& m = s.modules[source];
  if (!m) {
    try {
      m = std::make_shared<tf::cudaemu::EmulatedModule>(
          source, env_or("TF_CC", "c++"), "-std=c++17 -O1 -fno-math-errno -ffp-contract=off -fPIC -w",
          env_or("TF_CACHE_DIR", env_or("HOME", "/tmp") + "/.cache/tilefoundry"));
    } catch (const std::exception&) {
      s.modules.erase(source);
      return kInvalidImage;
    }
  }
  *module = reinterpret_cast<CUmodule>(new Module{m, {}});
  return kSuccess;
}
CUresult cuModuleUnload(CUmodule module) {
  delete reinterpret_cast<Module*>(module);
  return kSuccess;
}
CUresult cuModuleGetFunction(CUfunction* fn, CUmodule module, const char* name) {
  auto* m = reinterpret_cast<Module*>(module);
  if (!m->code->has(name)) return kNotFound;
  m->functions.push_back(std::make_unique<Function>(Function{m->code, name}));
  *fn = reinterpret_cast<CUfunction>(m->functions.back().get());
  return kSuccess;
}
CUresult cuLaunchKernel(CUfunction fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, CUstream stream, void** params, void** extra) {
  if (t_current.empty()) return kInvalidContext;
  if (gy != 1 || gz != 1 || by != 1 || bz != 1 || shared != 0 || extra != nullptr || !params || gx == 0 ||
      bx == 0 || bx > 1024)
    return kInvalidValue;
  auto* f = reinterpret_cast<Function*>(fn);
  {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    ++s.launches;
    s.last_stream = stream;
    s.last_grid = static_cast<int>(gx);
    s.last_block = static_cast<int>(bx);
  }
  try {
    f->module->launch(f->name, gx, bx, params[0]);
  } catch (const std::exception&) {
    return kLaunchFailed;
  }
  return kSuccess;
}

CUresult cuMemAlloc_v2(CUdeviceptr* p, size_t bytes) {
  {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mu);
    ++s.plain_allocations;
  }
  return allocate(p, bytes);
}
CUresult cuMemFree_v2(CUdeviceptr p) { return release(p); }
CUresult cuMemAllocAsync(CUdeviceptr* p, size_t bytes, CUstream) { return allocate(p, bytes); }
CUresult cuMemFreeAsync(CUdeviceptr p, CUstream) { return release(p); }
CUresult cuMemsetD8Async(CUdeviceptr p, unsigned char v, size_t n, CUstream) {
  std::memset(reinterpret_cast<void*>(p), v, n);
  return kSuccess;
}
CUresult cuMemsetD32Async(CUdeviceptr p, unsigned v, size_t n, CUstream) {
  auto* words = reinterpret_cast<unsigned*>(p);
  for (size_t i = 0; i < n; ++i) words[i] = v;
  return kSuccess;
}
CUresult cuMemcpyDtoHAsync_v2(void* dst, CUdeviceptr src, size_t n, CUstream) {
  std::memcpy(dst, reinterpret_cast<const void*>(src), n);
  return kSuccess;
}
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream) {
  std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), n);
  return kSuccess;
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void* src, size_t n) {
  std::memcpy(reinterpret_cast<void*>(dst), src, n);
  return kSuccess;
}
CUresult cuMemcpyDtoH_v2(void* dst, CUdeviceptr src, size_t n) {
  std::memcpy(dst, reinterpret_cast<const void*>(src), n);
  return kSuccess;
}
CUresult cuStreamSynchronize(CUstream stream) {
  if (capturing(stream)) return kCaptureUnsupported;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  ++s.synchronizations;
  return kSuccess;
}
CUresult cuStreamIsCapturing(CUstream stream, int* status) {
  *status = capturing(stream) ? 1 : 0;
  return kSuccess;
}
CUresult cuGetErrorName(CUresult r, const char** name) {
  switch (r) {
    case kSuccess: *name = "CUDA_SUCCESS"; return kSuccess;
    case kInvalidValue: *name = "CUDA_ERROR_INVALID_VALUE"; return kSuccess;
    case kOutOfMemory: *name = "CUDA_ERROR_OUT_OF_MEMORY"; return kSuccess;
    case kInvalidDevice: *name = "CUDA_ERROR_INVALID_DEVICE"; return kSuccess;
    case kInvalidImage: *name = "CUDA_ERROR_INVALID_IMAGE"; return kSuccess;
    case kInvalidContext: *name = "CUDA_ERROR_INVALID_CONTEXT"; return kSuccess;
    case kNotFound: *name = "CUDA_ERROR_NOT_FOUND"; return kSuccess;
    case kLaunchFailed: *name = "CUDA_ERROR_LAUNCH_FAILED"; return kSuccess;
    case kCaptureUnsupported: *name = "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"; return kSuccess;
    default: *name = nullptr; return kInvalidValue;
  }
}
CUresult cuGetErrorString(CUresult r, const char** text) {
  *text = r == kSuccess ? "no error" : "reported by the emulated CUDA driver";
  return kSuccess;
}

// --- what tests observe ---
int64_t tf_emu_launches(void) {
  std::lock_guard<std::mutex> lock(state().mu);
  return state().launches;
}
int64_t tf_emu_synchronizations(void) {
  std::lock_guard<std::mutex> lock(state().mu);
  return state().synchronizations;
}
int64_t tf_emu_module_loads(void) {
  std::lock_guard<std::mutex> lock(state().mu);
  return state().module_loads;
}
int64_t tf_emu_live_allocations(void) {
  std::lock_guard<std::mutex> lock(state().mu);
  return static_cast<int64_t>(state().allocations.size());
}
int64_t tf_emu_plain_allocations(void) {
  std::lock_guard<std::mutex> lock(state().mu);
  return state().plain_allocations;
}
int64_t tf_emu_allocations(void) {
  std::lock_guard<std::mutex> lock(state().mu);
  return state().all_allocations;
}
const void* tf_emu_last_stream(void) {
  std::lock_guard<std::mutex> lock(state().mu);
  return state().last_stream;
}
void tf_emu_last_launch(int* grid, int* block) {
  std::lock_guard<std::mutex> lock(state().mu);
  *grid = state().last_grid;
  *block = state().last_block;
}
void tf_emu_set_capturing(const void* stream, int on) {
  std::lock_guard<std::mutex> lock(state().mu);
  if (on)
    state().capturing.insert(stream);
  else
    state().capturing.erase(stream);
}

}  // extern "C"
