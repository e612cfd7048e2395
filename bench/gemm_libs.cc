// Standalone f32 GEMM benchmark: the project's tf::runtime::sgemm against the
// libraries it could dispatch to (the BLAS's cblas_sgemm and oneDNN's
// dnnl_sgemm), on 1 and 2 threads, GFLOP/s medians. Not part of the build.
//
// Build (from the repository root; needs libopenblas-dev and libdnnl-dev):
//   g++ -O3 -fopenmp -fopenmp-simd -I. bench/gemm_libs.cc core/runtime/gemm.cc core/runtime/threads.cc \
//       -o /tmp/gemm_libs -lopenblas -ldnnl
// Run:
//   /tmp/gemm_libs [max_threads]            # default 2
// Library variants, same binary (the BLAS column is whatever provides
// cblas_sgemm at load time; the header line names it):
//   OPENBLAS_CORETYPE=SkylakeX /tmp/gemm_libs   # OpenBLAS's AVX-512 kernels
//   LD_LIBRARY_PATH=<dir of another libopenblas.so.0> /tmp/gemm_libs
//   LD_PRELOAD=<libblis.so.4> /tmp/gemm_libs
//
// Threads: omp_set_num_threads covers our code and oneDNN (Debian builds it
// on GNU OpenMP, the runtime our code uses); openblas_set_num_threads
// covers OpenBLAS's own pool (pthread build) or its OpenMP use, and
// bli_thread_set_num_threads BLIS's.
#include <cblas.h>
#include <dlfcn.h>
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "core/runtime/gemm.h"

namespace {

struct Shape {
  int64_t m, n, k;
};

// The timed call runs until ~min_s of samples are in (at least 5 samples),
// so small shapes get many samples and 1024^3 a handful.
double median_seconds(const std::function<void()>& f, double min_s = 0.3) {
  f();  // warm: first-touch, packing buffers, JIT (oneDNN)
  std::vector<double> t;
  double total = 0;
  while (t.size() < 5 || (total < min_s && t.size() < 2000)) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    t.push_back(s);
    total += s;
  }
  std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
  return t[t.size() / 2];
}

double max_rel_err(const std::vector<float>& got, const std::vector<float>& want) {
  double e = 0, scale = 1e-30;
  for (size_t i = 0; i < want.size(); ++i) scale = std::max(scale, double(std::fabs(want[i])));
  for (size_t i = 0; i < want.size(); ++i) e = std::max(e, double(std::fabs(got[i] - want[i])));
  return e / scale;
}

using SetThreads = void (*)(int);
using CoreName = char* (*)();

template <typename Fn>
Fn blas_symbol(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, name));
}

void set_threads(int t) {
  omp_set_num_threads(t);
  if (auto f = blas_symbol<SetThreads>("openblas_set_num_threads")) f(t);
  if (auto f = blas_symbol<SetThreads>("bli_thread_set_num_threads")) f(t);
}

std::string blas_name() {
  Dl_info info{};
  std::string lib = dladdr(reinterpret_cast<void*>(&cblas_sgemm), &info) && info.dli_fname ? info.dli_fname : "?";
  if (auto f = blas_symbol<CoreName>("openblas_get_corename")) lib += std::string(" core=") + f();
  return lib;
}

}  // namespace

int main(int argc, char** argv) {
  const int max_threads = argc > 1 ? std::atoi(argv[1]) : 2;
  // The shapes (cubes; decode: M = 1..16, K = N = 4096), then the
  // ones that place the small loop / library boundary (m, n, k order).
  const std::vector<Shape> shapes = {
      {64, 64, 64},       {256, 256, 256},  {1024, 1024, 1024}, {1, 4096, 4096},  {2, 4096, 4096},
      {4, 4096, 4096},    {8, 4096, 4096},  {16, 4096, 4096},   {16, 16, 16},     {32, 32, 32},
      {128, 128, 128},    {512, 512, 512},  {4096, 256, 256},   {64, 256, 2048},  {1, 512, 256}};
  std::printf("cblas_sgemm from: %s\n", blas_name().c_str());
  std::printf("%-16s %3s %9s %9s %9s   (GFLOP/s, median; max rel err vs ours)\n", "m x n x k", "thr", "tf",
              "cblas", "dnnl");
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (const Shape& s : shapes) {
    std::vector<float> a(s.m * s.k), b(s.k * s.n), c0(s.m * s.n), c1(s.m * s.n), c2(s.m * s.n);
    for (auto& v : a) v = dist(rng);
    for (auto& v : b) v = dist(rng);
    for (int t = 1; t <= max_threads; ++t) {
      set_threads(t);
      const double flops = 2.0 * s.m * s.n * s.k;
      auto ours = [&] { tf::runtime::sgemm(0, 0, s.m, s.n, s.k, a.data(), s.k, b.data(), s.n, c0.data(), s.n); };
      auto blas = [&] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s.m, s.n, s.k, 1.f, a.data(), s.k, b.data(), s.n,
                    0.f, c1.data(), s.n);
      };
      auto dnnl = [&] {
        dnnl_sgemm('N', 'N', s.m, s.n, s.k, 1.f, a.data(), s.k, b.data(), s.n, 0.f, c2.data(), s.n);
      };
      const double g0 = flops / median_seconds(ours) / 1e9;
      const double g1 = flops / median_seconds(blas) / 1e9;
      const double g2 = flops / median_seconds(dnnl) / 1e9;
      char label[64];
      std::snprintf(label, sizeof label, "%ldx%ldx%ld", long(s.m), long(s.n), long(s.k));
      std::printf("%-16s %3d %9.1f %9.1f %9.1f   err cblas %.1e dnnl %.1e\n", label, t, g0, g1, g2,
                  max_rel_err(c1, c0), max_rel_err(c2, c0));
      std::fflush(stdout);
    }
  }
}
