// The backend's own declarations of the CUDA libraries' C entry points
// (core/compiler/cuda/entry_points.h) against the toolkit's headers and
// libraries. The emulated device implements those declarations, so it
// cannot notice one that differs from the real API; a wrong type or a
// superseded symbol would first show as a crash on a GPU. Here, without one:
// * each function pointer has the type of the function the header declares
//   (an int where the header has an int-sized enum, an unsigned long long
//   CUdeviceptr), parameter by parameter;
// * each symbol is a name the header declares, not one it maps to a newer
//   version (cuMemAlloc -> cuMemAlloc_v2);
// * each constant is the header's enumerator;
// * the toolkit's libraries (the driver's link stub, cuBLAS, NVRTC) export
//   every symbol looked up.
// CMake passes the toolkit's include directory and libraries where it finds
// them; without them these tests skip, saying so.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <string>
#include <type_traits>
#include <vector>

#include "core/compiler/cuda/entry_points.h"

#if defined(TF_CUDA_TOOLKIT_HEADERS)
#include <cublas_v2.h>
#include <cuda.h>
#include <nvrtc.h>
#endif

namespace tf::comptest {
namespace {

namespace cu = compiler::cuda;

#define TF_STRINGIZE(x) #x
#define TF_EXPANDED_NAME(x) TF_STRINGIZE(x)

#if defined(TF_CUDA_TOOLKIT_HEADERS)

template <class T>
constexpr bool int_like = std::is_integral_v<T> || std::is_enum_v<T>;

template <class A, class B>
constexpr bool abi_same();

// Whether a function of type RB (*)(B...) may be called through a pointer
// of type RA (*)(A...): one parameter for each, each passed alike.
template <class RA, class... A, class RB, class... B>
constexpr bool same_signature(RA (*)(A...), RB (*)(B...)) {
  if constexpr (sizeof...(A) != sizeof...(B))
    return false;
  else
    return abi_same<RA, RB>() && (abi_same<A, B>() && ...);
}

// Whether a value of type A is passed exactly as one of type B: the same
// type; integers of one size and signedness; an enum and an integer of one
// size; pointers to such (const alike), or to functions of the same
// signature.
template <class A, class B>
constexpr bool abi_same() {
  if constexpr (std::is_same_v<A, B>) {
    return true;
  } else if constexpr (std::is_integral_v<A> && std::is_integral_v<B>) {
    return sizeof(A) == sizeof(B) && std::is_signed_v<A> == std::is_signed_v<B>;
  } else if constexpr (int_like<A> && int_like<B>) {
    return sizeof(A) == sizeof(B);
  } else if constexpr (std::is_pointer_v<A> && std::is_pointer_v<B>) {
    using PA = std::remove_pointer_t<A>;
    using PB = std::remove_pointer_t<B>;
    if constexpr (std::is_function_v<PA> && std::is_function_v<PB>)
      return same_signature(static_cast<A>(nullptr), static_cast<B>(nullptr));
    else
      return std::is_const_v<PA> == std::is_const_v<PB> &&
             abi_same<std::remove_const_t<PA>, std::remove_const_t<PB>>();
  } else {
    return false;
  }
}

// The trait itself, on the cases it must tell apart.
static_assert(abi_same<int, CUresult>() && abi_same<unsigned long long, CUdeviceptr>());
static_assert(!abi_same<int, unsigned>() && !abi_same<int, long long>() && !abi_same<int*, const int*>());
static_assert(!abi_same<void (*)(int), void (*)(int, int)>() && !abi_same<void (*)(int), void (*)(double)>());

// A member's type against the declared function's. `address` is only
// looked at, never taken: the test links none of the libraries.
#define TF_EXPECT_TYPE(Api, member, symbol, address)                                                           \
  do {                                                                                                         \
    constexpr bool same = same_signature(decltype(cu::Api::member){}, static_cast<decltype(address)>(nullptr)); \
    EXPECT_TRUE(same) << #Api "::" #member " does not have the type the toolkit's header gives " #symbol;       \
  } while (0);
// A symbol against the name the header's macros leave it as. Only the
// macro an X-macro list calls sees the symbol as written: an argument it
// passes on to another macro is expanded first, so each caller stringizes.
#define TF_EXPECT_DECLARED_NAME(member, written, declared) \
  EXPECT_STREQ(written, declared) << #member " looks up " written ", which the toolkit's header maps to another symbol";
#define TF_EXPECT_SYMBOL(member, symbol) TF_EXPECT_DECLARED_NAME(member, #symbol, TF_EXPANDED_NAME(symbol))
#define TF_EXPECT_DRIVER_ENTRY(member, symbol)                               \
  TF_EXPECT_DECLARED_NAME(member, #symbol, TF_EXPANDED_NAME(symbol)) \
  TF_EXPECT_TYPE(DriverApi, member, symbol, &::symbol)
#define TF_EXPECT_NVRTC_ENTRY(member, symbol)                                \
  TF_EXPECT_DECLARED_NAME(member, #symbol, TF_EXPANDED_NAME(symbol)) \
  TF_EXPECT_TYPE(NvrtcApi, member, symbol, &::symbol)

TEST(CudaEntryPoints, TheDriversAreDeclaredAsInCudaH) {
  TF_CUDA_DRIVER_ENTRY_POINTS(TF_EXPECT_DRIVER_ENTRY)
  EXPECT_TRUE((std::is_same_v<cu::CUcontext, ::CUcontext>));
  EXPECT_TRUE((std::is_same_v<cu::CUstream, ::CUstream>));
  EXPECT_TRUE((std::is_same_v<cu::CUdeviceptr, ::CUdeviceptr>));
  EXPECT_EQ(cu::kCudaSuccess, CUDA_SUCCESS);
  EXPECT_EQ(cu::kCudaErrorOutOfMemory, CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(cu::kAttrMultiprocessors, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  EXPECT_EQ(cu::kAttrComputeMajor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  EXPECT_EQ(cu::kAttrComputeMinor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  EXPECT_EQ(cu::kStreamCaptureStatusNone, CU_STREAM_CAPTURE_STATUS_NONE);
}

TEST(CudaEntryPoints, NvrtcsAreDeclaredAsInNvrtcH) {
  TF_NVRTC_ENTRY_POINTS(TF_EXPECT_NVRTC_ENTRY)
  EXPECT_TRUE((std::is_same_v<cu::nvrtcProgram, ::nvrtcProgram>));
  EXPECT_EQ(cu::kNvrtcSuccess, NVRTC_SUCCESS);
}

TEST(CudaEntryPoints, CublassAreDeclaredAsInCublasV2H) {
  TF_CUBLAS_ENTRY_POINTS(TF_EXPECT_SYMBOL)
  TF_CUBLAS_OPTIONAL_ENTRY_POINTS(TF_EXPECT_SYMBOL)
  // The types one by one: in C++ the header overloads
  // cublasGemmStridedBatchedEx with an inline form taking the compute type
  // as a cudaDataType; the exported C function is the one declared with
  // cublasComputeType_t.
  TF_EXPECT_TYPE(CublasApi, get_property, cublasGetProperty, &::cublasGetProperty)
  TF_EXPECT_TYPE(CublasApi, create, cublasCreate_v2, &::cublasCreate_v2)
  TF_EXPECT_TYPE(CublasApi, set_stream, cublasSetStream_v2, &::cublasSetStream_v2)
  TF_EXPECT_TYPE(CublasApi, set_math_mode, cublasSetMathMode, &::cublasSetMathMode)
  TF_EXPECT_TYPE(CublasApi, set_workspace, cublasSetWorkspace_v2, &::cublasSetWorkspace_v2)
  TF_EXPECT_TYPE(CublasApi, status_string, cublasGetStatusString, &::cublasGetStatusString)
  using CGemm = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                                   const void*, cudaDataType, int, long long, const void*, cudaDataType, int,
                                   long long, const void*, void*, cudaDataType, int, long long, int,
                                   cublasComputeType_t, cublasGemmAlgo_t);
  TF_EXPECT_TYPE(CublasApi, gemm, cublasGemmStridedBatchedEx, static_cast<CGemm>(&::cublasGemmStridedBatchedEx))
  // ... which are all the entries the lists hold.
  int listed = 0;
#define TF_COUNT(member, symbol) ++listed;
  TF_CUBLAS_ENTRY_POINTS(TF_COUNT)
  TF_CUBLAS_OPTIONAL_ENTRY_POINTS(TF_COUNT)
#undef TF_COUNT
  EXPECT_EQ(listed, 7);
  EXPECT_TRUE((std::is_same_v<cu::cublasHandle, ::cublasHandle_t>));
  EXPECT_EQ(cu::kCublasSuccess, CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cu::kCublasOpN, CUBLAS_OP_N);
  EXPECT_EQ(cu::kCublasOpT, CUBLAS_OP_T);
  EXPECT_EQ(cu::kCudaR32F, CUDA_R_32F);
  EXPECT_EQ(cu::kCudaR64F, CUDA_R_64F);
  EXPECT_EQ(cu::kCudaR16F, CUDA_R_16F);
  EXPECT_EQ(cu::kCudaR16BF, CUDA_R_16BF);
  EXPECT_EQ(cu::kCublasCompute32F, CUBLAS_COMPUTE_32F);
  EXPECT_EQ(cu::kCublasCompute64F, CUBLAS_COMPUTE_64F);
  EXPECT_EQ(cu::kCublasDefaultMath, CUBLAS_DEFAULT_MATH);
  EXPECT_EQ(cu::kCublasGemmDefault, CUBLAS_GEMM_DEFAULT);
  EXPECT_EQ(cu::kMajorVersion, MAJOR_VERSION);
}

#else

TEST(CudaEntryPoints, TheDriversAreDeclaredAsInCudaH) {
  GTEST_SKIP() << "the CUDA toolkit's headers were not found when this test was built";
}

#endif  // TF_CUDA_TOOLKIT_HEADERS

// The symbols of `symbols` that `library` does not export (each after a
// space); empty when it exports them all. The library stays loaded: what
// its initializers allocated would otherwise look leaked to LeakSanitizer.
std::string missing_symbols(const char* library, const std::vector<const char*>& symbols) {
  void* lib = dlopen(library, RTLD_LAZY | RTLD_LOCAL);
  if (!lib) return std::string("<cannot open: ") + dlerror() + ">";
  std::string missing;
  for (const char* s : symbols)
    if (!dlsym(lib, s)) missing += std::string(" ") + s;
  return missing;
}

#define TF_SYMBOL_NAME(member, symbol) #symbol,

TEST(CudaEntryPoints, TheToolkitsLibrariesExportEverySymbol) {
  const struct {
    const char* what;
    const char* path;
    std::vector<const char*> symbols;
  } libraries[] = {
      {"the CUDA driver's link stub", TF_CUDA_DRIVER_STUB, {TF_CUDA_DRIVER_ENTRY_POINTS(TF_SYMBOL_NAME)}},
      {"NVRTC", TF_CUDA_NVRTC_LIBRARY, {TF_NVRTC_ENTRY_POINTS(TF_SYMBOL_NAME)}},
      {"cuBLAS",
       TF_CUDA_CUBLAS_LIBRARY,
       {TF_CUBLAS_ENTRY_POINTS(TF_SYMBOL_NAME) TF_CUBLAS_OPTIONAL_ENTRY_POINTS(TF_SYMBOL_NAME)}},
  };
  std::string not_found;
  for (const auto& l : libraries) {
    if (!*l.path) {
      not_found += std::string(not_found.empty() ? "" : ", ") + l.what;
      continue;
    }
    EXPECT_EQ(missing_symbols(l.path, l.symbols), "") << l.what << " (" << l.path << ")";
  }
  if (!not_found.empty()) GTEST_SKIP() << not_found << ": not found when this test was built";
}

}  // namespace
}  // namespace tf::comptest
