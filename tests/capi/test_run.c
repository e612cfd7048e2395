/* Running kernels: correct results (against a double-precision reference
 * computed here), compact and strided inputs, caller-allocated and
 * library-allocated outputs; and every run-time error — wrong number of
 * tensors, dtype, rank, static extent, DimVar range, output shape, device,
 * malformed DLTensors, a runtime check — each leaving the caller's output
 * bytes exactly as they were; and in-place outputs. */
#include <math.h>

#include "tf_test.h"

#define ROWS 3
#define COLS 4

static const char* kRuntimeSrc =
    "from tilefoundry.dsl import *\n"
    "\n"
    "@func\n"
    "def idiv(a: Tensor[(4,), i32], b: Tensor[(4,), i32]) -> Tensor[(4,), i32]:\n"
    "    return a / b\n";

/* An in-place result beside a fresh one. */
static const char* kInPlaceSrc =
    "from tilefoundry.dsl import *\n"
    "B = DimVar(\"B\", 1, 16)\n"
    "\n"
    "@func(inplace=(\"cache\", None))\n"
    "def append(cache: Tensor[(B, 6), f32], new: Tensor[(B, 1), f32], pos: Tensor[(B,), i32]\n"
    "           ) -> tuple[Tensor[(B, 6), f32], Tensor[(B, 1), f32]]:\n"
    "    return cache_scatter(cache, new, pos), new * 2.0\n";

static float x_[ROWS * COLS], w_[COLS];
static int64_t x_shape[2] = {ROWS, COLS}, w_shape[1] = {COLS};

static void init_inputs(void) {
  int i;
  for (i = 0; i < ROWS * COLS; ++i) x_[i] = (float)((i * 7) % 11) * 0.25f - 1.0f;
  for (i = 0; i < COLS; ++i) w_[i] = 0.5f + 0.25f * (float)i;
}

/* y = x / sqrt(mean(x^2 over the row) + eps) * w, in double. */
static void rmsnorm_ref(const float* x, const float* w, int rows, int cols, double* y) {
  int r, c;
  for (r = 0; r < rows; ++r) {
    double ss = 0;
    for (c = 0; c < cols; ++c) ss += (double)x[r * cols + c] * x[r * cols + c];
    for (c = 0; c < cols; ++c) {
      y[r * cols + c] = (double)x[r * cols + c] / sqrt(ss / cols + 1e-6) * w[c];
    }
  }
}

static double max_err(const float* got, const double* want, int n) {
  double m = 0;
  int i;
  for (i = 0; i < n; ++i) {
    double e = fabs((double)got[i] - want[i]) / (1.0 + fabs(want[i]));
    if (!(e <= m)) m = e; /* NaN propagates */
  }
  return m;
}

static void test_rmsnorm_run(tf_kernel k) {
  float y[ROWS * COLS];
  double want[ROWS * COLS];
  float x_copy[ROWS * COLS];
  DLDataType f32 = tf_test_dtype(kDLFloat, 32), dt;
  DLTensor in[2], out[1];
  int64_t shape[TF_MAX_NDIM];
  int32_t ndim = -1;

  in[0] = tf_test_tensor(x_, f32, 2, x_shape);
  in[1] = tf_test_tensor(w_, f32, 1, w_shape);
  out[0] = tf_test_tensor(y, f32, 2, x_shape);
  memcpy(x_copy, x_, sizeof x_);
  rmsnorm_ref(x_, w_, ROWS, COLS, want);

  CHECK_OK(tf_kernel_output_desc(k, in, 2, 0, &dt, &ndim, shape));
  CHECK(dt.code == kDLFloat && dt.bits == 32 && dt.lanes == 1);
  CHECK(ndim == 2 && shape[0] == ROWS && shape[1] == COLS);

  CHECK_OK(tf_kernel_run(k, in, 2, out, 1));
  CHECK(max_err(y, want, ROWS * COLS) < 1e-5);
  CHECK(memcmp(x_copy, x_, sizeof x_) == 0); /* inputs are never written */
}

static void test_strided(tf_kernel k) {
  /* x stored transposed (column-major): element (r, c) at xt[c * ROWS + r];
   * y written into every other float of a wider buffer. */
  float xt[COLS * ROWS], ywide[ROWS * COLS * 2], y[ROWS * COLS];
  double want[ROWS * COLS];
  int64_t x_strides[2] = {1, ROWS}, y_strides[2] = {COLS * 2, 2};
  DLDataType f32 = tf_test_dtype(kDLFloat, 32);
  DLTensor in[2], out[1];
  int r, c;
  for (r = 0; r < ROWS; ++r)
    for (c = 0; c < COLS; ++c) xt[c * ROWS + r] = x_[r * COLS + c];
  in[0] = tf_test_tensor(xt, f32, 2, x_shape);
  in[0].strides = x_strides;
  in[1] = tf_test_tensor(w_, f32, 1, w_shape);
  out[0] = tf_test_tensor(ywide, f32, 2, x_shape);
  out[0].strides = y_strides;
  tf_test_fill_sentinel(ywide, sizeof ywide);
  rmsnorm_ref(x_, w_, ROWS, COLS, want);
  CHECK_OK(tf_kernel_run(k, in, 2, out, 1));
  for (r = 0; r < ROWS; ++r)
    for (c = 0; c < COLS; ++c) y[r * COLS + c] = ywide[r * COLS * 2 + c * 2];
  CHECK(max_err(y, want, ROWS * COLS) < 1e-5);
  /* The gaps between strided elements are not written. */
  for (r = 0; r < ROWS * COLS; ++r) CHECK(tf_test_untouched(&ywide[2 * r + 1], sizeof(float)));
}

static void test_two_outputs(tf_kernel k) {
  float a[ROWS * COLS], b[ROWS * COLS], h[ROWS * COLS], p[ROWS * COLS];
  DLDataType f32 = tf_test_dtype(kDLFloat, 32);
  DLTensor in[2], out[2];
  DLManagedTensor* managed[2] = {NULL, NULL};
  int i, ok = 1;
  for (i = 0; i < ROWS * COLS; ++i) {
    a[i] = (float)i * 0.5f;
    b[i] = 3.0f - (float)i;
  }
  in[0] = tf_test_tensor(a, f32, 2, x_shape);
  in[1] = tf_test_tensor(b, f32, 2, x_shape);
  out[0] = tf_test_tensor(h, f32, 2, x_shape);
  out[1] = tf_test_tensor(p, f32, 2, x_shape);
  CHECK_OK(tf_kernel_run(k, in, 2, out, 2));
  for (i = 0; i < ROWS * COLS; ++i) ok = ok && h[i] == a[i] + b[i] && p[i] == (a[i] + b[i]) * b[i];
  CHECK(ok);

  CHECK_OK(tf_kernel_call(k, in, 2, managed, 2));
  CHECK(managed[0] != NULL && managed[1] != NULL);
  if (managed[0] != NULL && managed[1] != NULL) {
    const DLTensor* t0 = &managed[0]->dl_tensor;
    const DLTensor* t1 = &managed[1]->dl_tensor;
    const float* d0 = (const float*)((const char*)t0->data + t0->byte_offset);
    const float* d1 = (const float*)((const char*)t1->data + t1->byte_offset);
    CHECK(t0->device.device_type == kDLCPU && t0->ndim == 2 && t0->shape[0] == ROWS &&
          t0->shape[1] == COLS);
    CHECK(t0->dtype.code == kDLFloat && t0->dtype.bits == 32 && t0->dtype.lanes == 1);
    CHECK(t0->strides == NULL || (t0->strides[0] == COLS && t0->strides[1] == 1));
    CHECK(t0->data != (void*)a && t0->data != (void*)b && t0->data != t1->data);
    ok = 1;
    for (i = 0; i < ROWS * COLS; ++i)
      ok = ok && d0[i] == a[i] + b[i] && d1[i] == (a[i] + b[i]) * b[i];
    CHECK(ok);
    CHECK(managed[0]->deleter != NULL && managed[1]->deleter != NULL);
    managed[0]->deleter(managed[0]);
    managed[1]->deleter(managed[1]);
  }
}

/* Runs k and expects failure with status want and word in the message
 * (every tensor in this file has 4-byte elements);
 * every output byte must be unchanged, and tf_kernel_call must leave its
 * out slots alone. */
static void expect_run_error(tf_kernel k, DLTensor* in, size_t n_in, DLTensor* out, size_t n_out,
                             tf_status want, const char* word, int also_call) {
  size_t i;
  for (i = 0; i < n_out; ++i) {
    size_t bytes = sizeof(float);
    int32_t d;
    for (d = 0; d < out[i].ndim && out[i].shape != NULL && out[i].shape[d] >= 0; ++d)
      bytes *= (size_t)out[i].shape[d];
    if (out[i].data != NULL) tf_test_fill_sentinel(out[i].data, bytes);
  }
  CHECK_STATUS(tf_kernel_run(k, in, n_in, out, n_out), want, word);
  for (i = 0; i < n_out; ++i) {
    size_t bytes = sizeof(float);
    int32_t d;
    for (d = 0; d < out[i].ndim && out[i].shape != NULL && out[i].shape[d] >= 0; ++d)
      bytes *= (size_t)out[i].shape[d];
    if (out[i].data != NULL) CHECK(tf_test_untouched(out[i].data, bytes));
  }
  if (also_call) {
    DLManagedTensor* sentinel = (DLManagedTensor*)(void*)&k;
    DLManagedTensor* slots[2];
    slots[0] = slots[1] = sentinel;
    CHECK_STATUS(tf_kernel_call(k, in, n_in, slots, n_out > 2 ? 2 : n_out), want, word);
    CHECK(slots[0] == sentinel && slots[1] == sentinel);
  }
}

static void test_bad_tensors(tf_kernel rms, tf_kernel two) {
  float x[ROWS * COLS] = {0}, w[8] = {0}, y[64 * COLS], y2[ROWS * COLS];
  int64_t bad_w[1] = {5}, wide[2] = {ROWS, 5}, rows64[2] = {64, COLS}, rows0[2] = {0, COLS};
  int64_t neg[2] = {-1, COLS}, big[TF_MAX_NDIM + 1];
  double xd[ROWS * COLS];
  DLDataType f32 = tf_test_dtype(kDLFloat, 32), f64 = tf_test_dtype(kDLFloat, 64),
             f16 = tf_test_dtype(kDLFloat, 16);
  DLTensor in[3], out[2];
  int i;
  for (i = 0; i < TF_MAX_NDIM + 1; ++i) big[i] = 1;

#define RESET()                                   \
  do {                                            \
    in[0] = tf_test_tensor(x, f32, 2, x_shape);   \
    in[1] = tf_test_tensor(w, f32, 1, w_shape);   \
    in[2] = in[1];                                \
    out[0] = tf_test_tensor(y, f32, 2, x_shape);  \
    out[1] = tf_test_tensor(y2, f32, 2, x_shape); \
  } while (0)

  /* Wrong number of tensors. */
  RESET();
  expect_run_error(rms, in, 1, out, 1, TF_ERR_INVALID_ARGUMENT, "takes 2 inputs, but got 1", 1);
  expect_run_error(rms, in, 3, out, 1, TF_ERR_INVALID_ARGUMENT, "takes 2 inputs, but got 3", 1);
  expect_run_error(rms, in, 2, out, 2, TF_ERR_INVALID_ARGUMENT, "takes 1 outputs, but got 2", 1);
  expect_run_error(rms, in, 2, out, 0, TF_ERR_INVALID_ARGUMENT, "takes 1 outputs, but got 0", 0);

  /* Wrong dtype, rank, static extent; DimVar out of [1, 64). */
  RESET();
  in[0] = tf_test_tensor(xd, f64, 2, x_shape);
  expect_run_error(rms, in, 2, out, 1, TF_ERR_INVALID_ARGUMENT, "(x)", 1);
  RESET();
  in[0].ndim = 1;
  expect_run_error(rms, in, 2, out, 1, TF_ERR_INVALID_ARGUMENT, "(x)", 1);
  RESET();
  in[1].shape = bad_w;
  expect_run_error(rms, in, 2, out, 1, TF_ERR_INVALID_ARGUMENT, "(w)", 1);
  RESET();
  in[0].shape = rows64;
  out[0].shape = rows64;
  {
    float* x64 = (float*)calloc(64 * COLS, sizeof(float));
    in[0].data = x64;
    expect_run_error(rms, in, 2, out, 1, TF_ERR_INVALID_ARGUMENT, "N", 1);
    free(x64);
  }
  RESET();
  in[0].shape = rows0;
  out[0].shape = rows0;
  expect_run_error(rms, in, 2, out, 1, TF_ERR_INVALID_ARGUMENT, "N", 1);

  /* Outputs that do not match exactly. */
  RESET();
  out[0].shape = wide;
  expect_run_error(rms, in, 2, out, 1, TF_ERR_INVALID_ARGUMENT,
                   "output #0: axis 1 must be 4, but got 5", 0);
  RESET();
  out[0].ndim = 1;
  expect_run_error(rms, in, 2, out, 1, TF_ERR_INVALID_ARGUMENT,
                   "output #0: rank must be 2, but got 1", 0);
  RESET();
  out[0].dtype = f16;
  expect_run_error(rms, in, 2, out, 1, TF_ERR_INVALID_ARGUMENT,
                   "output #0: dtype must be f32, but got f16", 0);
  /* Two outputs, the first fine, the second wrong: neither is written. */
  RESET();
  in[1] = tf_test_tensor(x, f32, 2, x_shape);
  out[1].shape = wide;
  expect_run_error(two, in, 2, out, 2, TF_ERR_INVALID_ARGUMENT, "output #1: axis 1", 0);

  /* Devices. */
  RESET();
  in[1].device.device_type = kDLCUDA;
  expect_run_error(rms, in, 2, out, 1, TF_ERR_UNSUPPORTED, "input #1 (w): a cuda:0 tensor, but 'rmsnorm' runs on the cpu", 1);
  RESET();
  out[0].device.device_type = kDLCUDA;
  expect_run_error(rms, in, 2, out, 1, TF_ERR_UNSUPPORTED, "output #0: a cuda:0 tensor", 0);
  RESET();
  in[0].device.device_type = kDLVulkan;
  expect_run_error(rms, in, 2, out, 1, TF_ERR_UNSUPPORTED, "input #0 (x): device vulkan", 1);

  /* Malformed DLTensors. */
  RESET();
  in[0].shape = neg;
  expect_run_error(rms, in, 2, out, 1, TF_ERR_INVALID_ARGUMENT, "negative extent", 1);
  RESET();
  in[0].ndim = -1;
  expect_run_error(rms, in, 2, out, 1, TF_ERR_INVALID_ARGUMENT, "ndim -1", 1);
  RESET();
  in[0].ndim = TF_MAX_NDIM + 1;
  in[0].shape = big;
  expect_run_error(rms, in, 2, out, 1, TF_ERR_INVALID_ARGUMENT, "ndim 9", 1);
  RESET();
  in[0].dtype.lanes = 4;
  expect_run_error(rms, in, 2, out, 1, TF_ERR_INVALID_ARGUMENT, "lanes", 1);
  RESET();
  in[0].dtype.code = 99;
  expect_run_error(rms, in, 2, out, 1, TF_ERR_UNSUPPORTED, "input #0 (x)", 1);

  /* tf_kernel_output_desc: the same input checks; an index out of range. */
  {
    DLDataType dt;
    int32_t ndim = -1;
    int64_t shape[TF_MAX_NDIM];
    RESET();
    tf_test_fill_sentinel(shape, sizeof shape);
    CHECK_STATUS(tf_kernel_output_desc(rms, in, 2, 1, &dt, &ndim, shape), TF_ERR_INVALID_ARGUMENT,
                 "out of range");
    in[1].shape = bad_w;
    CHECK_STATUS(tf_kernel_output_desc(rms, in, 2, 0, &dt, &ndim, shape), TF_ERR_INVALID_ARGUMENT,
                 "(w)");
    CHECK_STATUS(tf_kernel_output_desc(rms, in, 1, 0, &dt, &ndim, shape), TF_ERR_INVALID_ARGUMENT,
                 "takes 2 inputs");
    CHECK(ndim == -1 && tf_test_untouched(shape, sizeof shape));
    /* data is not needed to describe the outputs. */
    RESET();
    in[0].data = NULL;
    CHECK_OK(tf_kernel_output_desc(rms, in, 2, 0, &dt, &ndim, shape));
    CHECK(ndim == 2 && shape[0] == ROWS && shape[1] == COLS);
  }
#undef RESET
}

static void test_runtime_error(void) {
  tf_module m = NULL;
  tf_kernel k = NULL;
  int32_t num[4] = {7, -9, 12, 5}, den[4] = {2, 3, 0, 5}, q[4];
  int64_t shape[1] = {4};
  DLDataType i32 = tf_test_dtype(kDLInt, 32);
  DLTensor in[2], out[1];
  CHECK_OK(tf_module_parse(kRuntimeSrc, strlen(kRuntimeSrc), "idiv.tf", &m));
  if (m == NULL) return;
  CHECK_OK(tf_kernel_compile(m, "idiv", NULL, &k));
  if (k == NULL) {
    tf_module_release(m);
    return;
  }
  in[0] = tf_test_tensor(num, i32, 1, shape);
  in[1] = tf_test_tensor(den, i32, 1, shape);
  out[0] = tf_test_tensor(q, i32, 1, shape);
  /* A zero divisor is a check on runtime data: three quotients are
   * computable, yet no output byte may be written. */
  expect_run_error(k, in, 2, out, 1, TF_ERR_RUNTIME, "division by zero", 1);
  den[2] = 4;
  CHECK_OK(tf_kernel_run(k, in, 2, out, 1));
  CHECK(q[0] * 2 + num[0] % 2 == 7 && q[2] == 3 && q[3] == 1);
  tf_kernel_release(k);
  tf_module_release(m);
}

/* An in-place output is passed as its input's own tensor; another buffer,
 * or one sharing memory with another argument, is refused with nothing
 * written; tf_kernel_call hands out a view of the input. */
static void test_in_place(void) {
  tf_module m = tf_test_parse(kInPlaceSrc);
  tf_kernel k = tf_test_compile(m, "append");
  float cache[12], newv[2] = {10.0f, 20.0f}, twice[2], other[12];
  int32_t pos[2] = {1, 5};
  int64_t cs[2] = {2, 6}, ns[2] = {2, 1}, ps[1] = {2}, alias = 7;
  DLDataType f32 = tf_test_dtype(kDLFloat, 32), i32 = tf_test_dtype(kDLInt, 32);
  DLTensor in[3], out[2];
  DLManagedTensor* res[2] = {NULL, NULL};
  int i;
  if (k == NULL) return;
  CHECK_OK(tf_kernel_output_alias(k, 0, &alias));
  CHECK(alias == 0);
  CHECK_OK(tf_kernel_output_alias(k, 1, &alias));
  CHECK(alias == -1);
  CHECK_STATUS(tf_kernel_output_alias(k, 2, &alias), TF_ERR_INVALID_ARGUMENT, "out of range");
  CHECK_STATUS(tf_kernel_output_alias(k, 0, NULL), TF_ERR_INVALID_ARGUMENT, "input");
  for (i = 0; i < 12; ++i) cache[i] = (float)i;
  in[0] = tf_test_tensor(cache, f32, 2, cs);
  in[1] = tf_test_tensor(newv, f32, 2, ns);
  in[2] = tf_test_tensor(pos, i32, 1, ps);
  out[0] = in[0];
  out[1] = tf_test_tensor(twice, f32, 2, ns);
  CHECK_OK(tf_kernel_run(k, in, 3, out, 2));
  for (i = 0; i < 12; ++i) CHECK(cache[i] == (i == 1 ? 10.0f : i == 11 ? 20.0f : (float)i));
  CHECK(twice[0] == 20.0f && twice[1] == 40.0f);
  out[0] = tf_test_tensor(other, f32, 2, cs);
  expect_run_error(k, in, 3, out, 2, TF_ERR_INVALID_ARGUMENT, "must be that tensor itself", 0);
  out[0] = in[0];
  in[1] = tf_test_tensor(cache + 3, f32, 2, ns); /* new inside the cache */
  expect_run_error(k, in, 3, out, 2, TF_ERR_INVALID_ARGUMENT, "shares memory with input #1 (new)", 0);
  in[1] = tf_test_tensor(newv, f32, 2, ns);
  pos[1] = 6;
  expect_run_error(k, in, 3, out, 2, TF_ERR_RUNTIME, "pos[1] = 6", 0);
  pos[1] = 0;
  CHECK_OK(tf_kernel_call(k, in, 3, res, 2));
  if (res[0] != NULL && res[1] != NULL) {
    CHECK((char*)res[0]->dl_tensor.data + res[0]->dl_tensor.byte_offset == (char*)cache);
    CHECK(cache[6] == 20.0f && cache[1] == 10.0f);
    CHECK(((float*)res[1]->dl_tensor.data)[1] == 40.0f);
    res[0]->deleter(res[0]);
    res[1]->deleter(res[1]);
  }
  tf_kernel_release(k);
  tf_module_release(m);
}

int main(void) {
  tf_module m = tf_test_parse(TF_TEST_MODULE_SRC);
  tf_kernel rms = tf_test_compile(m, "rmsnorm");
  tf_kernel two = tf_test_compile(m, "addmul");
  init_inputs();
  test_rmsnorm_run(rms);
  test_strided(rms);
  test_two_outputs(two);
  test_bad_tensors(rms, two);
  test_runtime_error();
  test_in_place();
  tf_kernel_release(two);
  tf_kernel_release(rms);
  tf_module_release(m);
  TF_TEST_SUMMARY();
}
