// The CUDA driver API (libcuda), loaded with dlopen on first use: the
// library builds and runs on machines without an NVIDIA driver, where only
// the CUDA backend is missing and driver_status() says why.
//
// Where it is looked for: TF_CUDA_DRIVER_LIBRARY (a path or soname: another
// implementation of the driver API, such as the tests' emulated device),
// else libcuda.so.1, the driver's soname. The calls used are the driver's
// stable C ABI (the _v2 entry points CUDA has exported since 3.2, and the
// stream-ordered allocator of 11.2), declared here rather than taken from
// <cuda.h> so that the build does not need the toolkit.
//
// Contexts: every call runs in the device's primary context, the one the
// CUDA runtime (and so torch) uses; a caller's own current context is
// pushed aside for the call and restored after it (ContextScope).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

// The driver's handle types, declared at global scope with <cuda.h>'s
// names: a driver written against those names (the tests' emulated one)
// then has exactly the function types called here.
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;

namespace tf::compiler::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = uint64_t;
using CUcontext = ::CUctx_st*;
using CUmodule = ::CUmod_st*;
using CUfunction = ::CUfunc_st*;
using CUstream = ::CUstream_st*;

struct DriverApi {
  CUresult (*init)(unsigned);
  CUresult (*driver_version)(int*);
  CUresult (*device_count)(int*);
  CUresult (*device_get)(CUdevice*, int);
  CUresult (*device_attribute)(int*, int, CUdevice);
  CUresult (*primary_ctx_retain)(CUcontext*, CUdevice);
  CUresult (*ctx_get_current)(CUcontext*);
  CUresult (*ctx_push)(CUcontext);
  CUresult (*ctx_pop)(CUcontext*);
  CUresult (*module_load_data)(CUmodule*, const void*);
  CUresult (*module_unload)(CUmodule);
  CUresult (*module_function)(CUfunction*, CUmodule, const char*);
  CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                     void**, void**);
  CUresult (*mem_alloc)(CUdeviceptr*, size_t);
  CUresult (*mem_free)(CUdeviceptr);
  CUresult (*mem_alloc_async)(CUdeviceptr*, size_t, CUstream);
  CUresult (*mem_free_async)(CUdeviceptr, CUstream);
  CUresult (*memset_d8_async)(CUdeviceptr, unsigned char, size_t, CUstream);
  CUresult (*memset_d32_async)(CUdeviceptr, unsigned, size_t, CUstream);
  CUresult (*memcpy_dtoh_async)(void*, CUdeviceptr, size_t, CUstream);
  CUresult (*memcpy_dtod_async)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*memcpy_htod)(CUdeviceptr, const void*, size_t);
  CUresult (*memcpy_dtoh)(void*, CUdeviceptr, size_t);
  CUresult (*stream_synchronize)(CUstream);
  CUresult (*stream_is_capturing)(CUstream, int*);
  CUresult (*error_name)(CUresult, const char**);
  CUresult (*error_string)(CUresult, const char**);
};

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
