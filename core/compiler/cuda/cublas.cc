#include "core/compiler/cuda/cublas.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <map>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "core/compiler/cuda/entry_points.h"
#include "core/ir/error.h"

namespace tf::compiler::cuda {
namespace {

CublasApi g_api{};
std::string g_why;  // empty when loaded

bool bind_all(void* lib, CublasApi* api, std::string* why) {
#define TF_BIND(member, symbol) &&bind_symbol(lib, #symbol, &api->member, why)
  return true TF_CUBLAS_ENTRY_POINTS(TF_BIND);
#undef TF_BIND
}

// A candidate's major version, its entry points bound into *api.
int probe(void* lib, CublasApi* api, std::string* why) {
  int major = 0;
  if (!bind_all(lib, api, why)) return -1;
  if (api->get_property(kMajorVersion, &major) != kCublasSuccess) {
    *why = "cublasGetProperty failed";
    return -1;
  }
  std::string optional;  // before CUDA 11.4: a failure names its status by number
#define TF_BIND(member, symbol) bind_symbol(lib, #symbol, &api->member, &optional);
  TF_CUBLAS_OPTIONAL_ENTRY_POINTS(TF_BIND)
#undef TF_BIND
  return major;
}

// The first candidate the driver can run (open_for_driver): a cuBLAS of a
// CUDA newer than the driver loads but cannot start.
void load() {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("TF_CUBLAS_LIBRARY"); env && *env)
    candidates = {env};
  else
    candidates = {"libcublas.so.13", "libcublas.so.12", "libcublas.so.11", "libcublas.so"};
  std::string tried;
  const OpenedLibrary l = open_for_driver(
      candidates,
      [](void* lib, std::string* why) {
        CublasApi api;
        return probe(lib, &api, why);
      },
      &tried);
  std::string why;
  if (l.lib) {  // bound again into the table calls use (it answered once already)
    probe(l.lib, &g_api, &why);
    return;
  }
  g_why = "cuBLAS (for MatMul on CUDA) was not found; tried:" + tried +
          "\nInstall the CUDA toolkit's cuBLAS or set TF_CUBLAS_LIBRARY to libcublas.so's path.";
}

const CublasApi& api() {
  static std::once_flag once;
  std::call_once(once, load);
  if (!g_why.empty()) ir::fail(ir::ErrorKind::kUnsupported, g_why);
  return g_api;
}

void check_status(cublasStatus s, const char* what) {
  if (s == kCublasSuccess) return;
  const char* text = g_api.status_string ? g_api.status_string(s) : nullptr;
  ir::fail(ir::ErrorKind::kRuntime,
           std::string(what) + " failed: " + (text ? text : "cuBLAS status " + std::to_string(s)));
}

// This thread's handle on `device` (a handle is not to be shared by threads
// that set different streams on it), created in the current context and
// kept for the process's life (cuBLAS's own teardown at exit would race the
// driver's).
cublasHandle handle(int device) {
  static std::mutex mu;
  static auto* handles = new std::map<std::pair<std::thread::id, int>, cublasHandle>();
  std::lock_guard<std::mutex> lock(mu);
  cublasHandle& h = (*handles)[{std::this_thread::get_id(), device}];
  if (!h) {
    check_status(api().create(&h), "cublasCreate");
    check_status(g_api.set_math_mode(h, kCublasDefaultMath), "cublasSetMathMode");
  }
  return h;
}

int data_type(ir::DType d) {
  switch (d) {
    case ir::DType::kF16: return kCudaR16F;
    case ir::DType::kBF16: return kCudaR16BF;
    case ir::DType::kF32: return kCudaR32F;
    case ir::DType::kF64: return kCudaR64F;
    default: ir::fail(ir::ErrorKind::kUnsupported, "MatMul of " + std::string(ir::dtype_name(d)) + " on CUDA");
  }
}

int as_int(int64_t v, const char* what) {
  if (v < 0 || v > std::numeric_limits<int>::max())
    ir::fail(ir::ErrorKind::kUnsupported, std::string("MatMul on CUDA: ") + what + " " + std::to_string(v) +
                                              " does not fit cuBLAS's 32-bit sizes");
  return static_cast<int>(v);
}

// One operand as cuBLAS sees it: op and leading dimension of the
// column-major matrix over its memory.
struct Operand {
  int op;
  int ld;
};

// The row-major matrix X (rows x cols, strides s_rows, s_cols) read as
// cuBLAS's first operand of C^T = B^T A^T. The column-major matrix P with
// op(P)[c][r] = X[r][c]: X's memory with unit column stride is P = X^T
// (op N, ld = s_rows); with unit row stride it is P = X (op T, ld =
// s_cols). An axis of extent 1 has any stride; its ld is then the least
// cuBLAS accepts.
Operand operand(int64_t rows, int64_t cols, int64_t s_rows, int64_t s_cols, const char* name) {
  if (cols == 1 || s_cols == 1) {
    const int64_t ld = rows == 1 ? std::max<int64_t>(cols, 1) : s_rows;
    if (ld >= std::max<int64_t>(cols, 1)) return Operand{kCublasOpN, as_int(ld, "a leading dimension")};
  }
  if (rows == 1 || s_rows == 1) {
    const int64_t ld = cols == 1 ? std::max<int64_t>(rows, 1) : s_cols;
    if (ld >= std::max<int64_t>(rows, 1)) return Operand{kCublasOpT, as_int(ld, "a leading dimension")};
  }
  ir::fail(ir::ErrorKind::kUnsupported, std::string("MatMul on CUDA: operand ") + name + " (strides " +
                                            std::to_string(s_rows) + ", " + std::to_string(s_cols) +
                                            ") has no unit stride in its last two axes; make it contiguous first");
}

// Operand x's stride along result batch axis i of a rank-r result: 0 where x
// lacks the axis or has extent 1 there (it repeats).
int64_t batch_stride(const runtime::NDArray& x, size_t i, size_t r) {
  const size_t rx = x.ndim();
  if (i + rx < r) return 0;
  const size_t a = i + rx - r;
  return x.shape()[a] == 1 ? 0 : x.strides()[a];
}

}  // namespace

void gemm(const runtime::NDArray& a, const runtime::NDArray& b, const runtime::NDArray& y, int device,
          CUstream stream, void* workspace, uint64_t workspace_bytes) {
  const size_t r = y.ndim(), ra = a.ndim(), rb = b.ndim();
  const int64_t M = y.shape()[r - 2], N = y.shape()[r - 1], K = a.shape()[ra - 1];
  const int64_t esize = ir::dtype_bytes(y.dtype());
  if (M == 0 || N == 0 || y.numel() == 0) return;
  if (K == 0) {  // an empty sum: zeros, as the evaluator
    check(driver().memset_d8_async(reinterpret_cast<CUdeviceptr>(y.data()), 0,
                                   static_cast<size_t>(y.numel() * esize), stream),
          "cuMemsetD8Async");
    return;
  }
  // C^T (N x M, column-major, ld N) = B^T A^T: cuBLAS's m = N, n = M.
  const Operand pb = operand(K, N, b.strides()[rb - 2], b.strides()[rb - 1], "b");
  // A (M x K) as the second operand: op(Q)[k][m] = A[m][k], the same rule on A^T.
  const Operand pa = operand(M, K, a.strides()[ra - 2], a.strides()[ra - 1], "a");
  const cublasHandle h = handle(device);
  check_status(g_api.set_stream(h, stream), "cublasSetStream");
  check_status(g_api.set_workspace(h, workspace, static_cast<size_t>(workspace_bytes)), "cublasSetWorkspace");
  const int type = data_type(y.dtype());
  const bool f64 = y.dtype() == ir::DType::kF64;
  const float one_f = 1.0f, zero_f = 0.0f;
  const double one_d = 1.0, zero_d = 0.0;
  const void* alpha = f64 ? static_cast<const void*>(&one_d) : &one_f;
  const void* beta = f64 ? static_cast<const void*>(&zero_d) : &zero_f;

  // The last batch axis is cuBLAS's batch; the ones before it are looped here.
  const size_t nb = r - 2;
  const int64_t inner = nb > 0 ? y.shape()[nb - 1] : 1;
  const int64_t sa = nb > 0 ? batch_stride(a, nb - 1, r) : 0, sb = nb > 0 ? batch_stride(b, nb - 1, r) : 0;
  int64_t outer = 1;
  for (size_t i = 0; i + 1 < nb; ++i) outer *= y.shape()[i];
  for (int64_t q = 0; q < outer; ++q) {
    int64_t oa = 0, ob = 0, rest = q;
    for (size_t i = nb >= 2 ? nb - 1 : 0; i-- > 0;) {  // row-major index of q over the outer batch axes
      const int64_t idx = rest % y.shape()[i];
      rest /= y.shape()[i];
      oa += idx * batch_stride(a, i, r);
      ob += idx * batch_stride(b, i, r);
    }
    const char* pa_ptr = static_cast<const char*>(a.data()) + oa * esize;
    const char* pb_ptr = static_cast<const char*>(b.data()) + ob * esize;
    char* py = static_cast<char*>(y.data()) + q * inner * M * N * esize;
    check_status(g_api.gemm(h, pb.op, pa.op, as_int(N, "N"), as_int(M, "M"), as_int(K, "K"), alpha, pb_ptr, type,
                            pb.ld, sb, pa_ptr, type, pa.ld, sa, beta, py, type, as_int(N, "N"), M * N,
                            as_int(inner, "a batch"), f64 ? kCublasCompute64F : kCublasCompute32F, kCublasGemmDefault),
                 "cublasGemmStridedBatchedEx");
  }
}

}  // namespace tf::compiler::cuda
