// The C entry points of the CUDA libraries the backend calls — the driver
// (libcuda), NVRTC and cuBLAS — and the enum values it passes them.
//
// They are declared here, not taken from the toolkit's headers, so that the
// library builds on machines without the toolkit, and each library is
// opened with dlopen on first use (driver.h, nvrtc.h, cublas.h). Each table
// of function pointers comes with an X-macro that pairs every member with
// the symbol dlsym looks up: the versioned name the toolkit's headers
// declare (cuMemAlloc_v2, which <cuda.h> maps cuMemAlloc to; a superseded
// symbol, such as the 32-bit cuMemAlloc, is still exported for old binaries
// and would be called with the wrong types).
//
// The handle types have the toolkit's own struct names at global scope, so
// a pointer to one is the very type the headers use. The status and enum
// types are int here (the headers' enums are int-sized).
//
// tests/compiler/test_cuda_entry_points.cc compiles against the toolkit's
// headers and checks each member's type, symbol and constant against them,
// so a declaration that drifts from the real API fails in CI rather than on
// a GPU. (The emulated device, written against these declarations, could
// not catch it.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
struct _nvrtcProgram;  // NOLINT(bugprone-reserved-identifier): <nvrtc.h>'s name
struct cublasContext;

namespace tf::compiler::cuda {

// *fn = `symbol`'s address in `lib` (a dlopen handle). False, with *why =
// "it lacks <symbol>", when lib does not export it.
bool bind_symbol(void* lib, const char* symbol, void** fn, std::string* why);
template <typename F>
bool bind_symbol(void* lib, const char* symbol, F* fn, std::string* why) {
  void* p = nullptr;
  const bool found = bind_symbol(lib, symbol, &p, why);
  *fn = reinterpret_cast<F>(p);
  return found;
}

// One per entry an X-macro lists: each table below is asserted to hold
// exactly as many function pointers as its lists name, so a member added
// without its symbol (left null, a crash at its first call) does not build.
#define TF_COUNT_ENTRY_POINT(member, symbol) +1
#define TF_ENTRY_POINT_BYTES(LIST) ((0 LIST(TF_COUNT_ENTRY_POINT)) * sizeof(void (*)()))

// ---- The driver (cuda.h) ----

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;  // NOLINT(google-runtime-int): cuda.h's type
using CUcontext = ::CUctx_st*;
using CUmodule = ::CUmod_st*;
using CUfunction = ::CUfunc_st*;
using CUstream = ::CUstream_st*;

inline constexpr CUresult kCudaSuccess = 0;            // CUDA_SUCCESS
inline constexpr CUresult kCudaErrorOutOfMemory = 2;   // CUDA_ERROR_OUT_OF_MEMORY
inline constexpr int kAttrMultiprocessors = 16;        // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
inline constexpr int kAttrComputeMajor = 75;           // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
inline constexpr int kAttrComputeMinor = 76;           // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
inline constexpr int kStreamCaptureStatusNone = 0;     // CU_STREAM_CAPTURE_STATUS_NONE

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

#define TF_CUDA_DRIVER_ENTRY_POINTS(X)                                                                       \
  X(init, cuInit)                                                                                            \
  X(driver_version, cuDriverGetVersion)                                                                      \
  X(device_count, cuDeviceGetCount)                                                                          \
  X(device_get, cuDeviceGet)                                                                                 \
  X(device_attribute, cuDeviceGetAttribute)                                                                  \
  X(primary_ctx_retain, cuDevicePrimaryCtxRetain)                                                            \
  X(ctx_get_current, cuCtxGetCurrent)                                                                        \
  X(ctx_push, cuCtxPushCurrent_v2)                                                                           \
  X(ctx_pop, cuCtxPopCurrent_v2)                                                                             \
  X(module_load_data, cuModuleLoadData)                                                                      \
  X(module_unload, cuModuleUnload)                                                                           \
  X(module_function, cuModuleGetFunction)                                                                    \
  X(launch, cuLaunchKernel)                                                                                  \
  X(mem_alloc, cuMemAlloc_v2)                                                                                \
  X(mem_free, cuMemFree_v2)                                                                                  \
  X(mem_alloc_async, cuMemAllocAsync)                                                                        \
  X(mem_free_async, cuMemFreeAsync)                                                                          \
  X(memset_d8_async, cuMemsetD8Async)                                                                        \
  X(memset_d32_async, cuMemsetD32Async)                                                                      \
  X(memcpy_dtoh_async, cuMemcpyDtoHAsync_v2)                                                                 \
  X(memcpy_dtod_async, cuMemcpyDtoDAsync_v2)                                                                 \
  X(memcpy_htod, cuMemcpyHtoD_v2)                                                                            \
  X(memcpy_dtoh, cuMemcpyDtoH_v2)                                                                            \
  X(stream_synchronize, cuStreamSynchronize)                                                                 \
  X(stream_is_capturing, cuStreamIsCapturing)                                                                \
  X(error_name, cuGetErrorName)                                                                              \
  X(error_string, cuGetErrorString)
static_assert(sizeof(DriverApi) == TF_ENTRY_POINT_BYTES(TF_CUDA_DRIVER_ENTRY_POINTS),
              "every DriverApi member is listed in TF_CUDA_DRIVER_ENTRY_POINTS");

// ---- NVRTC (nvrtc.h) ----

using nvrtcProgram = ::_nvrtcProgram*;
using nvrtcResult = int;

inline constexpr nvrtcResult kNvrtcSuccess = 0;  // NVRTC_SUCCESS

struct NvrtcApi {
  nvrtcResult (*version)(int*, int*);
  nvrtcResult (*create)(nvrtcProgram*, const char*, const char*, int, const char* const*, const char* const*);
  nvrtcResult (*compile)(nvrtcProgram, int, const char* const*);
  nvrtcResult (*destroy)(nvrtcProgram*);
  nvrtcResult (*log_size)(nvrtcProgram, size_t*);
  nvrtcResult (*log)(nvrtcProgram, char*);
  nvrtcResult (*ptx_size)(nvrtcProgram, size_t*);
  nvrtcResult (*ptx)(nvrtcProgram, char*);
  nvrtcResult (*cubin_size)(nvrtcProgram, size_t*);
  nvrtcResult (*cubin)(nvrtcProgram, char*);
  const char* (*error_string)(nvrtcResult);
};

#define TF_NVRTC_ENTRY_POINTS(X)              \
  X(version, nvrtcVersion)                    \
  X(create, nvrtcCreateProgram)               \
  X(compile, nvrtcCompileProgram)             \
  X(destroy, nvrtcDestroyProgram)             \
  X(log_size, nvrtcGetProgramLogSize)         \
  X(log, nvrtcGetProgramLog)                  \
  X(ptx_size, nvrtcGetPTXSize)                \
  X(ptx, nvrtcGetPTX)                         \
  X(cubin_size, nvrtcGetCUBINSize)            \
  X(cubin, nvrtcGetCUBIN)                     \
  X(error_string, nvrtcGetErrorString)
static_assert(sizeof(NvrtcApi) == TF_ENTRY_POINT_BYTES(TF_NVRTC_ENTRY_POINTS),
              "every NvrtcApi member is listed in TF_NVRTC_ENTRY_POINTS");

// ---- cuBLAS (cublas_api.h) ----

using cublasHandle = ::cublasContext*;
using cublasStatus = int;

inline constexpr cublasStatus kCublasSuccess = 0;  // CUBLAS_STATUS_SUCCESS
inline constexpr int kCublasOpN = 0;               // CUBLAS_OP_N
inline constexpr int kCublasOpT = 1;               // CUBLAS_OP_T
inline constexpr int kCudaR32F = 0;                // cudaDataType CUDA_R_32F
inline constexpr int kCudaR64F = 1;                // CUDA_R_64F
inline constexpr int kCudaR16F = 2;                // CUDA_R_16F
inline constexpr int kCudaR16BF = 14;              // CUDA_R_16BF
inline constexpr int kCublasCompute32F = 68;       // CUBLAS_COMPUTE_32F
inline constexpr int kCublasCompute64F = 70;       // CUBLAS_COMPUTE_64F
inline constexpr int kCublasDefaultMath = 0;       // CUBLAS_DEFAULT_MATH: no TF32
inline constexpr int kCublasGemmDefault = -1;      // CUBLAS_GEMM_DEFAULT
inline constexpr int kMajorVersion = 0;            // libraryPropertyType MAJOR_VERSION

struct CublasApi {
  cublasStatus (*get_property)(int, int*);
  cublasStatus (*create)(cublasHandle*);
  cublasStatus (*set_stream)(cublasHandle, CUstream);
  cublasStatus (*set_math_mode)(cublasHandle, int);
  cublasStatus (*set_workspace)(cublasHandle, void*, size_t);
  cublasStatus (*gemm)(cublasHandle, int, int, int, int, int, const void*, const void*, int, int, long long,
                       const void*, int, int, long long, const void*, void*, int, int, long long, int, int, int);
  const char* (*status_string)(cublasStatus);  // optional: CUDA 11.4 and later
};

// The entry points a cuBLAS must have; status_string is looked up apart.
#define TF_CUBLAS_ENTRY_POINTS(X)            \
  X(get_property, cublasGetProperty)         \
  X(create, cublasCreate_v2)                 \
  X(set_stream, cublasSetStream_v2)          \
  X(set_math_mode, cublasSetMathMode)        \
  X(set_workspace, cublasSetWorkspace_v2)    \
  X(gemm, cublasGemmStridedBatchedEx)
#define TF_CUBLAS_OPTIONAL_ENTRY_POINTS(X) X(status_string, cublasGetStatusString)
static_assert(sizeof(CublasApi) ==
                  TF_ENTRY_POINT_BYTES(TF_CUBLAS_ENTRY_POINTS) + TF_ENTRY_POINT_BYTES(TF_CUBLAS_OPTIONAL_ENTRY_POINTS),
              "every CublasApi member is listed in TF_CUBLAS_ENTRY_POINTS or TF_CUBLAS_OPTIONAL_ENTRY_POINTS");

}  // namespace tf::compiler::cuda
