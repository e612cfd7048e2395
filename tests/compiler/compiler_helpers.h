// Shared helpers of the compiler tests: run a function natively and on the
// evaluator, on the same random inputs, and compare element by element.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iomanip>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/compiler/compiler.h"
#include "cuda_check.h"
#include "cuda_device.h"
#include "cuda_emulator.h"
#include "core/eval/evaluator.h"
#include "core/ir/error.h"
#include "core/ir/module.h"
#include "core/runtime/float8.h"
#include "core/runtime/half.h"
#include "core/runtime/ndarray.h"
#include "core/runtime/sanitizers.h"
#include "core/sema/bind.h"
#include "core/sema/verify.h"

namespace tf::comptest {

using ir::DType;
using runtime::NDArray;

// The thread counts a parallel schedule is checked on. Under
// ThreadSanitizer one: libgomp is not instrumented, so a team's closing
// barrier is invisible to it, and the caller freeing or reading what the
// team wrote is reported as a race (the TSan suite runs with
// OMP_NUM_THREADS=1).
inline std::vector<int> team_sizes() {
#if defined(TF_UNDER_TSAN)
  return {1};
#else
  return {1, 2, 3};
#endif
}

// How many times `what` occurs in `text` (a generated TIR or source).
inline int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

// Uniform values in [lo, hi] (f32 / f64 / f16 / bf16; i32 / i64 take ten
// times the value, bool its sign).
inline NDArray uniform_array(DType d, const std::vector<int64_t>& shape, std::mt19937& rng, double lo, double hi) {
  NDArray a = NDArray::empty(d, shape);
  std::uniform_real_distribution<double> u(lo, hi);
  for (int64_t i = 0; i < a.numel(); ++i) {
    double v = u(rng);
    switch (d) {
      case DType::kF32: static_cast<float*>(a.data())[i] = static_cast<float>(v); break;
      case DType::kF64: static_cast<double*>(a.data())[i] = v; break;
      case DType::kF16: static_cast<runtime::Half*>(a.data())[i] = runtime::Half::from_float(static_cast<float>(v)); break;
      case DType::kBF16:
        static_cast<runtime::BFloat16*>(a.data())[i] = runtime::BFloat16::from_float(static_cast<float>(v));
        break;
      case DType::kI32: static_cast<int32_t*>(a.data())[i] = static_cast<int32_t>(v * 10); break;
      case DType::kI64: static_cast<int64_t*>(a.data())[i] = static_cast<int64_t>(v * 10); break;
      case DType::kBool: static_cast<bool*>(a.data())[i] = v > 0; break;
      default: ADD_FAILURE() << "uniform_array: unsupported dtype";
    }
  }
  return a;
}

// Uniform values in [-scale, scale].
inline NDArray random_array(DType d, const std::vector<int64_t>& shape, std::mt19937& rng, double scale = 2.0) {
  return uniform_array(d, shape, rng, -scale, scale);
}

inline double element(const NDArray& a, int64_t i) {
  switch (a.dtype()) {
    case DType::kF32: return static_cast<const float*>(a.data())[i];
    case DType::kF64: return static_cast<const double*>(a.data())[i];
    case DType::kF16: return static_cast<const runtime::Half*>(a.data())[i].to_float();
    case DType::kBF16: return static_cast<const runtime::BFloat16*>(a.data())[i].to_float();
    case DType::kI32: return static_cast<const int32_t*>(a.data())[i];
    case DType::kI64: return static_cast<double>(static_cast<const int64_t*>(a.data())[i]);
    case DType::kI8: return static_cast<const int8_t*>(a.data())[i];
    case DType::kU8: return static_cast<const uint8_t*>(a.data())[i];
    case DType::kFP8E4M3: return static_cast<const runtime::Float8E4M3*>(a.data())[i].to_float();
    case DType::kF8E8M0: return static_cast<const runtime::Float8E8M0*>(a.data())[i].to_float();
    case DType::kBool: return static_cast<const bool*>(a.data())[i];
    default: ADD_FAILURE() << "element: unsupported dtype"; return 0;
  }
}

struct Tolerance {
  double atol, rtol;
  // A multiple of the output's largest finite magnitude, added to every
  // element's bound: an element summed from terms that large (a MatMul's
  // dot product that cancels) carries their rounding, not its own.
  double of_largest = 0;
};
// f32 allows the compiled exp (~2 ulp) and reassociated row sums; f64 only
// reassociation.
// f16 / bf16: one unit in the last place of the stored value (an exp a few
// ulp off in float can round the other way).
inline Tolerance tolerance(DType d) {
  switch (d) {
    case DType::kF64: return {1e-12, 1e-9};
    case DType::kF16: return {1e-3, 1e-3};
    case DType::kBF16: return {1e-2, 8e-3};
    default: return {1e-5, 1e-4};
  }
}

// Counts elements where got and want differ beyond tolerance (NaN == NaN,
// inf == inf of the same sign). Returns a description of the first one.
inline std::string compare(const NDArray& got, const NDArray& want, Tolerance tol) {
  if (got.shape() != want.shape() || got.dtype() != want.dtype()) return "shape or dtype differs";
  double largest = 0;
  for (int64_t i = 0; tol.of_largest > 0 && i < want.numel(); ++i)
    if (std::isfinite(element(want, i))) largest = std::max(largest, std::abs(element(want, i)));
  for (int64_t i = 0; i < want.numel(); ++i) {
    double g = element(got, i), w = element(want, i);
    if (std::isnan(w) && std::isnan(g)) continue;
    if (std::isinf(w) && g == w) continue;
    if (!(std::abs(g - w) <= tol.atol + tol.rtol * std::abs(w) + tol.of_largest * largest))
      return "element " + std::to_string(i) + ": native " + std::to_string(g) + " vs evaluator " +
             std::to_string(w);
  }
  return "";
}

// The first element where got and want (one dtype and shape) hold
// different bits, or "" where none does. With any_nan, two NaNs match
// whatever their payloads (a device's conversions store its own NaN).
inline std::string first_bit_difference(const NDArray& got, const NDArray& want, bool any_nan = false) {
  if (got.shape() != want.shape() || got.dtype() != want.dtype()) return "shape or dtype differs";
  const size_t w = static_cast<size_t>(ir::dtype_bits(want.dtype()) / 8);
  for (int64_t i = 0; i < want.numel(); ++i) {
    if (std::memcmp(static_cast<const char*>(got.data()) + i * w, static_cast<const char*>(want.data()) + i * w, w) == 0)
      continue;
    if (any_nan && std::isnan(element(got, i)) && std::isnan(element(want, i))) continue;
    std::ostringstream m;
    m << "first difference at element " << i << " (" << std::setprecision(9) << element(got, i) << " vs "
      << element(want, i) << ")";
    return m.str();
  }
  return "";
}

// A sealed module of one function `f(params)` whose body is one loop with
// these fields (its body the yields), returning the loop's value: loops
// the DSL does not spell (an induction variable read as a value).
inline ir::ModulePtr loop_module(std::vector<ir::VarPtr> params, ir::GridRegionExpr::Fields g) {
  g.body = g.yield_values.size() == 1 ? g.yield_values[0] : ir::Tuple::make(g.yield_values);
  ir::ExprPtr body = ir::GridRegionExpr::make(g);
  ir::Function::Fields f;
  f.name = "f";
  f.params = std::move(params);
  f.return_type = body->type();
  f.body = body;
  return sema::seal(ir::Target::default_cpu(), {ir::Function::make(std::move(f))});
}

// Fresh contiguous outputs of fn for these inputs, plus the bindings.
inline std::vector<NDArray> run_native(const compiler::CompiledFunction& k, const ir::Function& fn,
                                       const std::vector<NDArray>& inputs) {
  std::vector<sema::ArgDesc> descs;
  for (const NDArray& a : inputs) descs.push_back({a.dtype(), a.shape()});
  ir::DimBindings b = sema::bind_arguments(fn, descs);
  std::vector<NDArray> outs;
  for (const sema::ArgDesc& d : sema::output_descs(fn, b)) outs.push_back(NDArray::empty(d.dtype, d.shape));
  k.run(inputs, outs, b);
  return outs;
}

// Runs fn's CUDA program on the emulated device (cuda_emulator.h) and
// expects the evaluator's outputs `want`.
inline void expect_emulated_agrees(const EmulatedCudaProgram& emu, const ir::Function& fn,
                                   const std::vector<NDArray>& inputs, const std::vector<NDArray>& want,
                                   const std::string& what) {
  std::vector<NDArray> outs;
  for (const NDArray& w : want) outs.push_back(NDArray::empty(w.dtype(), w.shape()));
  std::vector<sema::ArgDesc> descs;
  for (const NDArray& a : inputs) descs.push_back({a.dtype(), a.shape()});
  emu.run(inputs, outs, sema::bind_arguments(fn, descs));
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_EQ(compare(outs[i], want[i], tolerance(want[i].dtype())), "")
        << what << " on the emulated CUDA device, output #" << i;
}

// Runs fn through the CUDA backend on device 0 (cuda_device.h) and expects
// the evaluator's outputs `want`. What the CUDA target does not compile yet
// (its "not compiled for CUDA yet" errors) is left out.
inline void expect_device_agrees(const ir::Function& fn, const std::vector<NDArray>& inputs,
                                 const std::vector<NDArray>& want, const std::string& what) {
  std::shared_ptr<const compiler::cuda::CudaFunction> f;
  try {
    f = compiler::cuda::CudaFunction::compile(fn);
  } catch (const ir::Error& e) {
    if (e.kind() == ir::ErrorKind::kUnsupported && std::strstr(e.what(), "not compiled for CUDA yet")) return;
    ADD_FAILURE() << what << ": " << e.what();
    return;
  }
  const std::vector<NDArray> got = run_on_device(*f, fn, inputs);
  ASSERT_EQ(got.size(), want.size()) << what;
  // cuBLAS sums a MatMul's products in another order than the evaluator's
  // BLAS: a float result then differs by more than one rounding, within
  // k ulps of the products' magnitude.
  const bool gemm = f->has_gemm();
  for (size_t i = 0; i < want.size(); ++i) {
    Tolerance tol = tolerance(want[i].dtype());
    if (gemm && want[i].dtype() == DType::kF32) tol = {1e-4, 1e-3};
    EXPECT_EQ(compare(got[i], want[i], tol), "") << what << " on CUDA device 0, output #" << i;
  }
}

// Runs `run`, which must throw a run-time error whose message holds `words`.
inline void expect_runtime_error(const std::function<void()>& run, const std::string& words) {
  try {
    run();
    ADD_FAILURE() << "no error";
  } catch (const ir::Error& e) {
    EXPECT_EQ(e.kind(), ir::ErrorKind::kRuntime) << e.what();
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

// Runs both backends and expects agreement on every output.
// of_largest: Tolerance::of_largest of every float output, in units of its
// dtype's epsilon.
inline void expect_agree(const compiler::CompiledFunction& k, const ir::Module& m, const ir::Function& fn,
                         const std::vector<NDArray>& inputs, const std::string& what, double of_largest = 0) {
  std::vector<NDArray> want = eval::evaluate(m, fn, inputs);
  std::vector<NDArray> got = run_native(k, fn, inputs);
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    Tolerance tol = tolerance(want[i].dtype());
    if (want[i].dtype() == DType::kF32) tol.of_largest = of_largest * std::numeric_limits<float>::epsilon();
    if (want[i].dtype() == DType::kF64) tol.of_largest = of_largest * std::numeric_limits<double>::epsilon();
    std::string diff = compare(got[i], want[i], tol);
    EXPECT_EQ(diff, "") << what << ", output #" << i;
  }
  // The same function compiles for CUDA too; with TF_CUDA_EMULATE=1 its
  // straight-line programs also run on the emulated device and agree.
  std::function<void(compiler::cuda::CudaProgram)> emulate;
  if (const char* e = std::getenv("TF_CUDA_EMULATE"); e && std::string(e) == "1")
    emulate = [&](compiler::cuda::CudaProgram p) {
      // Whole straight-line functions only (a variant is chosen per call,
      // a loop's segments run from the host), without cuBLAS steps (the
      // emulator runs kernels; TF_CUDA_DEVICE=1 runs those through the
      // emulated driver and cuBLAS).
      if (fn.is_prototype() || compiler::loops::contains_loop(fn.body()) || compiler::cuda::has_gemm(p)) return;
      // The emulated device switches threads at every barrier: minutes for
      // a large tensor's calls. Smaller calls cover the same code.
      int64_t elements = 0;
      for (const NDArray& a : inputs) elements += a.numel();
      if (elements > (int64_t{1} << 16)) return;
      expect_emulated_agrees(EmulatedCudaProgram(std::move(p)), fn, inputs, want, what);
    };
  check_cuda_program(fn, what, emulate);
  // With TF_CUDA_DEVICE=1 it also runs through the CUDA backend on a device.
  if (device_runs_requested()) expect_device_agrees(fn, inputs, want, what);
}

}  // namespace tf::comptest
