// libtf_emulated_cublas.so: the cuBLAS calls the CUDA backend makes, over
// the emulated device's memory (host memory), loaded in place of cuBLAS
// with TF_CUBLAS_LIBRARY. The GEMM is the reference definition, checking
// its arguments as cuBLAS documents them (an operand's leading dimension
// at least its rows), so a wrong transpose or leading dimension from the
// backend fails or gives a wrong product in the tests, as on a device.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <vector>

// cuBLAS's handle type and the stream type with their headers' names, as
// the backend declares them (core/compiler/cuda/cublas.cc, driver.h).
struct cublasContext;
struct CUstream_st;

namespace {

constexpr int kOk = 0, kInvalidValue = 7, kNotSupported = 15;
constexpr int kOpN = 0, kOpT = 1;
constexpr int kR32F = 0, kR64F = 1, kR16F = 2, kR16BF = 14;
constexpr int kCompute32F = 68, kCompute64F = 70;

std::mutex g_mu;
std::vector<char*>* g_handles = new std::vector<char*>();  // reachable for the process's life
int64_t g_gemms = 0;

float half_to_float(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  if (exp == 0) return std::ldexp(static_cast<float>(man), -24) * (sign ? -1.0f : 1.0f);
  if (exp == 31) return sign ? -INFINITY : (man ? NAN : INFINITY);
  const uint32_t bits = sign | ((exp + 112) << 23) | (man << 13);
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

uint16_t float_to_half(float f) {  // round to nearest even
  if (std::isnan(f)) return 0x7e00;
  const float a = std::fabs(f);
  const uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  if (a >= 65520.0f) return sign | 0x7c00;
  if (a < std::ldexp(1.0f, -14)) {  // subnormal: a multiple of 2^-24
    const float q = std::nearbyint(a * std::ldexp(1.0f, 24));
    return sign | static_cast<uint16_t>(q);
  }
  int e = 0;
  const float m = std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  const float q = std::nearbyint(std::ldexp(m, 11));  // 11 significant bits
  uint32_t mant = static_cast<uint32_t>(q);
  int exp = e - 1;
  if (mant == 2048) {
    mant = 1024;
    ++exp;
  }
  if (exp > 15) return sign | 0x7c00;
  return sign | static_cast<uint16_t>(((exp + 15) << 10) | (mant - 1024));
}

float bf16_to_float(uint16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

uint16_t float_to_bf16(float f) {  // round to nearest even
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  if (std::isnan(f)) return 0x7fc0;
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

double load(const void* p, int type, int64_t i) {
  switch (type) {
    case kR32F: return static_cast<const float*>(p)[i];
    case kR64F: return static_cast<const double*>(p)[i];
    case kR16F: return half_to_float(static_cast<const uint16_t*>(p)[i]);
    default: return bf16_to_float(static_cast<const uint16_t*>(p)[i]);
  }
}

void store(void* p, int type, int64_t i, double v) {
  switch (type) {
    case kR32F: static_cast<float*>(p)[i] = static_cast<float>(v); break;
    case kR64F: static_cast<double*>(p)[i] = v; break;
    case kR16F: static_cast<uint16_t*>(p)[i] = float_to_half(static_cast<float>(v)); break;
    default: static_cast<uint16_t*>(p)[i] = float_to_bf16(static_cast<float>(v)); break;
  }
}

bool known(int type) { return type == kR32F || type == kR64F || type == kR16F || type == kR16BF; }

}  // namespace

extern "C" {

// The emulated driver reports CUDA 12.4.
int cublasGetProperty(int type, int* value) {
  if (type < 0 || type > 2) return kInvalidValue;
  *value = type == 0 ? 12 : type == 1 ? 4 : 0;
  return kOk;
}
int cublasCreate_v2(cublasContext** handle) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_handles->push_back(new char(0));
  *handle = reinterpret_cast<cublasContext*>(g_handles->back());
  return kOk;
}
int cublasSetStream_v2(cublasContext*, CUstream_st*) { return kOk; }
int cublasSetMathMode(cublasContext*, int) { return kOk; }
int cublasSetWorkspace_v2(cublasContext*, void*, size_t) { return kOk; }
const char* cublasGetStatusString(int s) {
  return s == kOk ? "CUBLAS_STATUS_SUCCESS" : s == kInvalidValue ? "CUBLAS_STATUS_INVALID_VALUE"
                                                                 : "CUBLAS_STATUS_NOT_SUPPORTED";
}

// C = alpha op(A) op(B) + beta C, column-major, `batch` times.
int cublasGemmStridedBatchedEx(cublasContext*, int transa, int transb, int m, int n, int k, const void* alpha,
                               const void* A, int atype, int lda, long long stride_a, const void* B, int btype, int ldb,
                               long long stride_b, const void* beta, void* C, int ctype, int ldc, long long stride_c,
                               int batch, int compute, int) {
  if (m < 0 || n < 0 || k < 0 || batch < 0) return kInvalidValue;
  if (lda < std::max(1, transa == kOpN ? m : k) || ldb < std::max(1, transb == kOpN ? k : n) || ldc < std::max(1, m))
    return kInvalidValue;
  if ((transa != kOpN && transa != kOpT) || (transb != kOpN && transb != kOpT)) return kInvalidValue;
  if (!known(atype) || atype != btype || atype != ctype) return kNotSupported;
  if (compute != (atype == kR64F ? kCompute64F : kCompute32F)) return kNotSupported;
  const bool f64 = compute == kCompute64F;
  const double al = f64 ? *static_cast<const double*>(alpha) : *static_cast<const float*>(alpha);
  const double be = f64 ? *static_cast<const double*>(beta) : *static_cast<const float*>(beta);
  for (int q = 0; q < batch; ++q) {
    const int64_t oa = q * stride_a, ob = q * stride_b, oc = q * stride_c;
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        // The products summed in double, then rounded: closer than a
        // device's float sums (whose order nobody specifies), so what the
        // tests see is the backend's layout, not this loop's rounding.
        double acc = 0;
        for (int l = 0; l < k; ++l) {
          const double x = load(A, atype, oa + (transa == kOpN ? i + int64_t{l} * lda : l + int64_t{i} * lda));
          const double y = load(B, btype, ob + (transb == kOpN ? l + int64_t{j} * ldb : j + int64_t{l} * ldb));
          acc += f64 ? x * y : static_cast<double>(static_cast<float>(x) * static_cast<float>(y));
        }
        const int64_t c = oc + i + int64_t{j} * ldc;
        const double prior = be == 0 ? 0 : load(C, ctype, c);  // beta 0: C is not read (BLAS)
        store(C, ctype, c, al * acc + be * prior);
      }
  }
  std::lock_guard<std::mutex> lock(g_mu);
  ++g_gemms;
  return kOk;
}

// What tests observe.
int64_t tf_emu_gemms(void) {
  std::lock_guard<std::mutex> lock(g_mu);
  return g_gemms;
}

}  // extern "C"
