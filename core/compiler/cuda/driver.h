// The CUDA driver API (libcuda), loaded with dlopen on first use: the
// library builds and runs on machines without an NVIDIA driver, where only
// the CUDA backend is missing and driver_status() says why.
//
// Where it is looked for: TF_CUDA_DRIVER_LIBRARY (a path or soname: another
// implementation of the driver API, such as the tests' emulated device),
// else libcuda.so.1, the driver's soname. The calls used are the driver's
// stable C ABI (the _v2 entry points CUDA has exported since 3.2, and the
// stream-ordered allocator of 11.2), declared in entry_points.h rather than
// taken from <cuda.h> so that the build does not need the toolkit.
//
// Contexts: every call runs in the device's primary context, the one the
// CUDA runtime (and so torch) uses; a caller's own current context is
// pushed aside for the call and restored after it (ContextScope).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/compiler/cuda/entry_points.h"

namespace tf::compiler::cuda {

struct DriverStatus {
  bool available = false;
  std::string library;  // the file that was loaded
  int version = 0;      // cuDriverGetVersion: 12040 = 12.4
  int devices = 0;
  // An implementation that runs CUDA C++ source itself instead of a CUBIN
  // (it exports tf_cuda_driver_takes_source): the tests' emulated device.
  bool takes_source = false;
  std::string why;      // when not available: what was tried and what failed
};

// Loads the driver and runs cuInit once per process (thread-safe).
const DriverStatus& driver_status();

// Of the libraries found (NVRTCs, cuBLASes: their CUDA major versions, in
// search order), the one to use beside a driver of `driver_version`
// (cuDriverGetVersion's number, 12040 = 12.4; 0 for none): the first whose
// major version is not above the driver's, as a driver runs code and
// libraries of its own major version or older; else the first. -1 when
// none was found.
int64_t pick_for_driver(const std::vector<int>& majors, int driver_version);

// A library opened with dlopen: its handle (null when none) and path.
struct OpenedLibrary {
  void* lib = nullptr;
  std::string path;
};
// Opens the candidate paths (sonames or files) in order until one is the
// one pick_for_driver takes for this machine's driver, keeps it and closes
// the others.
// `probe` binds a candidate's entry points and returns its CUDA major
// version, or -1 with the reason in *why. What failed, and why, is added to
// *tried, a line each.
OpenedLibrary open_for_driver(const std::vector<std::string>& candidates,
                              const std::function<int(void* lib, std::string* why)>& probe, std::string* tried);
// The loaded API; throws Error(kUnsupported) with driver_status().why when
// there is none.
const DriverApi& driver();

// Throws Error(kRuntime) "<what>: CUDA_ERROR_...: <description>" unless
// r is CUDA_SUCCESS (out of memory is Error(kOutOfMemory)).
void check(CUresult r, const char* what);

// The device's compute capability as 10 * major + minor (90 for sm_90).
int compute_capability(int device);
// Its number of streaming multiprocessors.
int multiprocessor_count(int device);

// Makes `device`'s primary context current for the scope, restoring the
// caller's current context after. Throws for a device that does not exist.
class ContextScope {
 public:
  explicit ContextScope(int device);
  ~ContextScope();
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;

 private:
  bool pushed_ = false;
};

// Device memory of `bytes` (at least 1) on `device` (cuMemAlloc), freed by
// device_free (cuMemFree, which waits for the device's work on it).
void* device_alloc(int device, size_t bytes);
void device_free(int device, void* p);
// Synchronous copies between host memory and `device` (tests, tools).
void copy_to_device(int device, void* dst, const void* src, size_t bytes);
void copy_to_host(int device, void* dst, const void* src, size_t bytes);

// cuStreamIsCapturing: whether `stream` is being captured into a CUDA graph.
bool stream_is_capturing(CUstream stream);

}  // namespace tf::compiler::cuda
