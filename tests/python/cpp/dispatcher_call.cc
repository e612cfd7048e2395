// A libtorch C++ program using TileFoundry the way a C++ torch user would:
// parse a kernel, compile it, register it as tilefoundry::<op>, and call it
// through c10::Dispatcher. Checks that the kernel runs on the backend asked
// for (a native compile that fell back to the evaluator fails), the answer
// against ATen's own RMSNorm arithmetic, and that a bad call surfaces as
// c10::Error.
//
// usage: tf_torch_cpp_example [evaluator|native]     exit 0 = all checks passed
#include <cstdio>
#include <cstring>
#include <string>

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <tilefoundry/tilefoundry_torch.h>

namespace {

const char kSource[] = R"(from tilefoundry.dsl import *

N = DimVar("N", 1, 1024)

@func
def cpp_rmsnorm(x: Tensor[(N, 64), f32], w: Tensor[(64,), f32]) -> Tensor[(N, 64), f32]:
    return rms_norm(x, w, eps=1e-6)
)";

int fail(const char* what) {
  std::fprintf(stderr, "FAIL: %s: %s | %s\n", what, tf_last_error(), tf_torch_last_error());
  return 1;
}

tf_kernel compile(tf_backend backend) {
  tf_module m = nullptr;
  if (tf_module_parse(kSource, sizeof(kSource) - 1, "cpp_rmsnorm.tf", &m) != TF_OK) return nullptr;
  tf_compile_options opts;
  std::memset(&opts, 0, sizeof opts);
  opts.struct_size = sizeof opts;
  opts.backend = backend;
  tf_kernel k = nullptr;
  tf_status s = tf_kernel_compile(m, "cpp_rmsnorm", &opts, &k);
  tf_module_release(m);  // the kernel keeps its module alive
  return s == TF_OK ? k : nullptr;
}

at::Tensor reference(const at::Tensor& x, const at::Tensor& w) {
  return x * at::rsqrt(x.pow(2).mean(-1, /*keepdim=*/true) + 1e-6) * w;
}

}  // namespace

int main(int argc, char** argv) {
  bool native = argc > 1 && std::string(argv[1]) == "native";
  const tf_backend want = native ? TF_BACKEND_NATIVE : TF_BACKEND_EVALUATOR;
  tf_kernel k = compile(want);
  if (!k) return fail("compile");
  int32_t runs = -1;
  if (tf_kernel_backend(k, &runs) != TF_OK) return fail("tf_kernel_backend");
  std::printf("backend: %s\n", runs == TF_BACKEND_NATIVE ? "native" : runs == TF_BACKEND_EVALUATOR ? "evaluator" : "other");
  if (runs != want) {
    std::fprintf(stderr, "FAIL: asked for backend %d, the kernel runs on backend %d\n", static_cast<int>(want),
                 static_cast<int>(runs));
    return 1;
  }
  if (tf_torch_register(k, nullptr) != TF_OK) return fail("tf_torch_register");
  tf_kernel_release(k);  // the registration holds its own reference
  if (tf_torch_register(k, "cpp_rmsnorm") != TF_ERR_INVALID_ARGUMENT ||
      std::strstr(tf_torch_last_error(), "already registered") == nullptr) {
    std::fprintf(stderr, "FAIL: a second registration was not refused\n");
    return 1;
  }

  auto op = c10::Dispatcher::singleton()
                .findSchemaOrThrow("tilefoundry::cpp_rmsnorm", "")
                .typed<at::Tensor(const at::Tensor&, const at::Tensor&)>();
  std::printf("schema: %s\n", c10::toString(op.schema()).c_str());
  at::manual_seed(0);
  at::Tensor x = at::randn({5, 64});
  at::Tensor w = at::randn({64});
  at::Tensor y = op.call(x, w);
  double err = (y - reference(x, w)).abs().max().item<double>();
  std::printf("max abs error vs ATen: %g\n", err);
  if (!(err < 1e-4)) return std::fprintf(stderr, "FAIL: wrong answer\n"), 1;

  try {
    op.call(x.to(at::kDouble), w);
    std::fprintf(stderr, "FAIL: an f64 input was accepted by an f32 kernel\n");
    return 1;
  } catch (const c10::Error& e) {
    std::printf("bad dtype -> c10::Error: %s\n", e.what_without_backtrace());
  }
  std::printf("OK\n");
  return 0;
}
