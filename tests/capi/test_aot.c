/* AOT through the C ABI, in two processes (two ctest tests):
 *   tf_capi_test_aot export PATH   exports TF_TEST_MODULE_SRC to PATH
 *   tf_capi_test_aot load PATH LIB run with TF_CC naming no compiler: loads
 *       PATH, checks both kernels report TF_BACKEND_NATIVE and compute the
 *       right values (against a double reference computed here), that the
 *       same source parsed afresh can only fall back to the evaluator (so no
 *       compiler was at hand), and the load errors (a missing file, LIB: a
 *       shared library that is not a kernel library). */
#include <math.h>

#include "tf_test.h"

#define ROWS 5
#define COLS 4

static int export_library(const char* path) {
  tf_module m = tf_test_parse(TF_TEST_MODULE_SRC);
  CHECK_OK(tf_module_export_library(m, path));
  CHECK_STATUS(tf_module_export_library(m, NULL), TF_ERR_INVALID_ARGUMENT, "path");
  tf_module_release(m);
  TF_TEST_SUMMARY();
}

static int32_t backend_of(tf_kernel k) {
  int32_t b = -1;
  CHECK_OK(tf_kernel_backend(k, &b));
  return b;
}

static double rel_err(float got, double want) { return fabs((double)got - want) / (1.0 + fabs(want)); }

static void check_rmsnorm(tf_kernel k) {
  float x[ROWS * COLS], w[COLS], y[ROWS * COLS];
  int64_t xs[2] = {ROWS, COLS}, ws[1] = {COLS};
  DLDataType f32 = tf_test_dtype(kDLFloat, 32);
  DLTensor in[2], out[1];
  double worst = 0;
  int r, c;
  for (r = 0; r < ROWS * COLS; ++r) x[r] = (float)((r * 5) % 9) * 0.5f - 2.0f;
  for (c = 0; c < COLS; ++c) w[c] = 1.0f - 0.25f * (float)c;
  in[0] = tf_test_tensor(x, f32, 2, xs);
  in[1] = tf_test_tensor(w, f32, 1, ws);
  out[0] = tf_test_tensor(y, f32, 2, xs);
  CHECK_OK(tf_kernel_run(k, in, 2, out, 1));
  for (r = 0; r < ROWS; ++r) {
    double ss = 0;
    for (c = 0; c < COLS; ++c) ss += (double)x[r * COLS + c] * x[r * COLS + c];
    for (c = 0; c < COLS; ++c) {
      double e = rel_err(y[r * COLS + c], x[r * COLS + c] / sqrt(ss / COLS + 1e-6) * w[c]);
      if (!(e <= worst)) worst = e;
    }
  }
  CHECK(worst < 1e-5);
}

static void check_addmul(tf_kernel k) {
  float a[ROWS * COLS], b[ROWS * COLS], h[ROWS * COLS], p[ROWS * COLS];
  int64_t s[2] = {ROWS, COLS};
  DLDataType f32 = tf_test_dtype(kDLFloat, 32);
  DLTensor in[2], out[2];
  double worst = 0;
  int i;
  for (i = 0; i < ROWS * COLS; ++i) {
    a[i] = (float)i * 0.125f - 1.0f;
    b[i] = 2.0f - (float)(i % 7) * 0.5f;
  }
  in[0] = tf_test_tensor(a, f32, 2, s);
  in[1] = tf_test_tensor(b, f32, 2, s);
  out[0] = tf_test_tensor(h, f32, 2, s);
  out[1] = tf_test_tensor(p, f32, 2, s);
  CHECK_OK(tf_kernel_run(k, in, 2, out, 2));
  for (i = 0; i < ROWS * COLS; ++i) {
    double hw = (double)a[i] + b[i], e1 = rel_err(h[i], hw), e2 = rel_err(p[i], hw * b[i]);
    if (!(e1 <= worst)) worst = e1;
    if (!(e2 <= worst)) worst = e2;
  }
  CHECK(worst < 1e-6);
}

static int load_library(const char* path, const char* not_a_kernel_library) {
  tf_module m = NULL, fresh, bad = NULL;
  tf_kernel rms, addmul, fallback;
  CHECK_OK(tf_module_load_library(path, &m));
  if (m == NULL) TF_TEST_SUMMARY();
  rms = tf_test_compile(m, "rmsnorm");
  addmul = tf_test_compile(m, "addmul");
  CHECK(backend_of(rms) == TF_BACKEND_NATIVE);
  CHECK(backend_of(addmul) == TF_BACKEND_NATIVE);
  check_rmsnorm(rms);
  check_addmul(addmul);
  /* The control: without the library, this process cannot compile. */
  fresh = tf_test_parse(TF_TEST_MODULE_SRC);
  fallback = tf_test_compile(fresh, "rmsnorm");
  CHECK(backend_of(fallback) == TF_BACKEND_EVALUATOR);
  CHECK_STATUS(tf_module_load_library("/nonexistent/kernels.so", &bad), TF_ERR_NOT_FOUND, "cannot load");
  CHECK_STATUS(tf_module_load_library(not_a_kernel_library, &bad), TF_ERR_INVALID_ARGUMENT,
               "not a TileFoundry kernel library");
  CHECK(bad == NULL);
  CHECK_STATUS(tf_module_load_library(path, NULL), TF_ERR_INVALID_ARGUMENT, "out");
  tf_kernel_release(fallback);
  tf_module_release(fresh);
  /* Kernels keep the module (and its library) alive after the handle goes. */
  tf_module_release(m);
  check_rmsnorm(rms);
  tf_kernel_release(rms);
  tf_kernel_release(addmul);
  TF_TEST_SUMMARY();
}

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "export") == 0) return export_library(argv[2]);
  if (argc == 4 && strcmp(argv[1], "load") == 0) return load_library(argv[2], argv[3]);
  fprintf(stderr, "usage: %s export PATH | load PATH NOT_A_KERNEL_LIBRARY\n", argv[0]);
  return 2;
}
