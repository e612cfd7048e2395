/* DLPack coverage of the C ABI: byte_offset, NULL strides
 * as compact row-major, zero-size tensors with data == NULL, zero and
 * negative strides, the legacy DLManagedTensor and DLPack 1.0's
 * DLManagedTensorVersioned with its read-only flag, and the 8-bit integer
 * spellings (kDLBool is bool, {kDLUInt, 8} is u8). Each positive case is
 * checked against a reference computed here; each negative case checks the
 * status, key words of the message, and that no output byte was written. */
#include "tf_test.h"

/* add(a, b) = a + b over (M, 4) f32, M in [0, 16): M = 0 is legal. */
static const char* kSrc =
    "from tilefoundry.dsl import *\n"
    "\n"
    "M = DimVar(\"M\", 0, 16)\n"
    "\n"
    "@func\n"
    "def add(a: Tensor[(M, 4), f32], b: Tensor[(M, 4), f32]) -> Tensor[(M, 4), f32]:\n"
    "    return a + b\n";

#define R 3
#define C 4

static DLDataType f32(void) { return tf_test_dtype(kDLFloat, 32); }

static float a_[R * C], b_[R * C];
static int64_t shape_[2] = {R, C};

static void init(void) {
  int i;
  for (i = 0; i < R * C; ++i) {
    a_[i] = (float)i * 0.5f - 2.0f;
    b_[i] = 10.0f + (float)(i % 5);
  }
}

/* 1 when y[r][c] == a(r, c) + b[r][c] for the a given by (pa, sr, sc). */
static int matches_sum(const float* y, const float* pa, int64_t sr, int64_t sc) {
  int r, c;
  for (r = 0; r < R; ++r)
    for (c = 0; c < C; ++c)
      if (y[r * C + c] != pa[r * sr + c * sc] + b_[r * C + c]) return 0;
  return 1;
}

static void run_add(tf_kernel k, DLTensor a, float* y) {
  DLTensor in[2], out[1];
  in[0] = a;
  in[1] = tf_test_tensor(b_, f32(), 2, shape_);
  out[0] = tf_test_tensor(y, f32(), 2, shape_);
  CHECK_OK(tf_kernel_run(k, in, 2, out, 1));
}

static void test_byte_offset_and_null_strides(tf_kernel k) {
  float buf[R * C + 3], y[R * C];
  int64_t compact[2] = {C, 1};
  DLTensor a;
  memcpy(buf + 3, a_, sizeof a_);
  a = tf_test_tensor(buf, f32(), 2, shape_);
  a.byte_offset = 3 * sizeof(float);
  run_add(k, a, y);
  CHECK(matches_sum(y, a_, C, 1));
  /* Explicit compact strides give the same answer as NULL strides. */
  a.strides = compact;
  memset(y, 0, sizeof y);
  run_add(k, a, y);
  CHECK(matches_sum(y, a_, C, 1));
}

static void test_zero_and_negative_strides(tf_kernel k) {
  float y[R * C];
  int64_t bcast[2] = {0, 1};       /* every row is row 0 */
  int64_t reversed[2] = {-C, 1};   /* rows in reverse order */
  int64_t mirrored[2] = {C, -1};   /* columns in reverse order */
  DLTensor a = tf_test_tensor(a_, f32(), 2, shape_);
  a.strides = bcast;
  run_add(k, a, y);
  CHECK(matches_sum(y, a_, 0, 1));

  a.strides = reversed;
  a.byte_offset = (R - 1) * C * sizeof(float); /* element (0, 0) is the last row's first */
  run_add(k, a, y);
  CHECK(matches_sum(y, a_ + (R - 1) * C, -C, 1));

  a.strides = mirrored;
  a.byte_offset = (C - 1) * sizeof(float);
  run_add(k, a, y);
  CHECK(matches_sum(y, a_ + C - 1, C, -1));
}

/* Outputs may have negative strides; overlapping outputs are refused. */
static void test_output_strides(tf_kernel k) {
  float y[R * C], got[R * C];
  int64_t reversed[2] = {-C, 1}, bcast[2] = {0, 1}, overlap[2] = {1, 1};
  DLTensor in[2], out[1];
  int r;
  in[0] = tf_test_tensor(a_, f32(), 2, shape_);
  in[1] = tf_test_tensor(b_, f32(), 2, shape_);
  out[0] = tf_test_tensor(y, f32(), 2, shape_);
  out[0].strides = reversed;
  out[0].byte_offset = (R - 1) * C * sizeof(float);
  CHECK_OK(tf_kernel_run(k, in, 2, out, 1));
  for (r = 0; r < R; ++r) memcpy(got + r * C, y + (R - 1 - r) * C, C * sizeof(float));
  CHECK(matches_sum(got, a_, C, 1));

  tf_test_fill_sentinel(y, sizeof y);
  out[0].byte_offset = 0;
  out[0].strides = bcast;
  CHECK_STATUS(tf_kernel_run(k, in, 2, out, 1), TF_ERR_INVALID_ARGUMENT, "overlap");
  out[0].strides = overlap;
  CHECK_STATUS(tf_kernel_run(k, in, 2, out, 1), TF_ERR_INVALID_ARGUMENT, "alias itself");
  CHECK(tf_test_untouched(y, sizeof y));
}

static void test_malformed_descriptors(tf_kernel k) {
  float y[R * C];
  int64_t huge[2] = {INT64_MAX / 2, 1};
  DLTensor in[2], out[1];
  in[0] = tf_test_tensor(a_, f32(), 2, shape_);
  in[1] = tf_test_tensor(b_, f32(), 2, shape_);
  out[0] = tf_test_tensor(y, f32(), 2, shape_);
  tf_test_fill_sentinel(y, sizeof y);
  in[0].strides = huge;
  CHECK_STATUS(tf_kernel_run(k, in, 2, out, 1), TF_ERR_INVALID_ARGUMENT, "2^63");
  in[0].strides = NULL;
  in[0].byte_offset = 2; /* f32 at a 2-byte offset */
  CHECK_STATUS(tf_kernel_run(k, in, 2, out, 1), TF_ERR_INVALID_ARGUMENT, "aligned");
  in[0].byte_offset = UINT64_MAX - 7;
  CHECK_STATUS(tf_kernel_run(k, in, 2, out, 1), TF_ERR_INVALID_ARGUMENT, "byte_offset");
  CHECK(tf_test_untouched(y, sizeof y));
}

/* M = 0: every tensor has no elements and data may be NULL. */
static void test_zero_size(tf_kernel k) {
  int64_t empty[2] = {0, C};
  DLTensor in[2], out[1];
  DLManagedTensor* res[1] = {NULL};
  DLDataType dt;
  int32_t ndim = -1;
  int64_t shape[TF_MAX_NDIM];
  in[0] = tf_test_tensor(NULL, f32(), 2, empty);
  in[1] = tf_test_tensor(NULL, f32(), 2, empty);
  out[0] = tf_test_tensor(NULL, f32(), 2, empty);
  CHECK_OK(tf_kernel_run(k, in, 2, out, 1));
  CHECK_OK(tf_kernel_output_desc(k, in, 2, 0, &dt, &ndim, shape));
  CHECK(ndim == 2 && shape[0] == 0 && shape[1] == C);
  CHECK_OK(tf_kernel_call(k, in, 2, res, 1));
  CHECK(res[0] != NULL && res[0]->dl_tensor.shape[0] == 0);
  if (res[0] != NULL) res[0]->deleter(res[0]);
}

/* A legacy DLManagedTensor from tf_kernel_call is a valid input, and its
 * deleter frees it (ASan checks the "frees"). */
static void test_legacy_managed(tf_kernel k) {
  DLTensor in[2];
  DLManagedTensor* first[1] = {NULL};
  float y[R * C], twice[R * C];
  int i;
  in[0] = tf_test_tensor(a_, f32(), 2, shape_);
  in[1] = tf_test_tensor(b_, f32(), 2, shape_);
  CHECK_OK(tf_kernel_call(k, in, 2, first, 1));
  if (first[0] == NULL) return;
  CHECK(first[0]->dl_tensor.device.device_type == kDLCPU && first[0]->deleter != NULL);
  in[0] = first[0]->dl_tensor; /* (a + b) + b */
  run_add(k, in[0], y);
  for (i = 0; i < R * C; ++i) twice[i] = (a_[i] + b_[i]) + b_[i];
  CHECK(memcmp(y, twice, sizeof y) == 0);
  first[0]->deleter(first[0]);
}

static DLManagedTensorVersioned versioned(float* data, uint64_t flags) {
  DLManagedTensorVersioned v;
  memset(&v, 0, sizeof v);
  v.version.major = TF_DLPACK_MAJOR_VERSION;
  v.version.minor = 0;
  v.flags = flags;
  v.dl_tensor = tf_test_tensor(data, f32(), 2, shape_);
  return v;
}

static int deleter_calls = 0;
static void count_deleter(DLManagedTensorVersioned* self) {
  (void)self;
  ++deleter_calls;
}

static void test_versioned_run(tf_kernel k) {
  float a_copy[R * C], y[R * C];
  DLManagedTensorVersioned va, vb, vy;
  const DLManagedTensorVersioned* in[2];
  DLManagedTensorVersioned* out[1];
  memcpy(a_copy, a_, sizeof a_);
  /* A read-only input is read, never written. */
  va = versioned(a_copy, DLPACK_FLAG_BITMASK_READ_ONLY);
  vb = versioned(b_, 0);
  vy = versioned(y, 0);
  va.deleter = vb.deleter = vy.deleter = count_deleter;
  in[0] = &va;
  in[1] = &vb;
  out[0] = &vy;
  CHECK_OK(tf_kernel_run_versioned(k, in, 2, out, 1));
  CHECK(matches_sum(y, a_, C, 1));
  CHECK(memcmp(a_copy, a_, sizeof a_) == 0);
  CHECK(deleter_calls == 0); /* borrowed: never released by the library */

  /* A read-only output is refused before anything is written. */
  tf_test_fill_sentinel(y, sizeof y);
  vy.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  CHECK_STATUS(tf_kernel_run_versioned(k, in, 2, out, 1), TF_ERR_INVALID_ARGUMENT, "read-only");
  CHECK(tf_test_untouched(y, sizeof y));
  vy.flags = 0;

  /* Another major version: no other field is trusted. */
  va.version.major = 2;
  CHECK_STATUS(tf_kernel_run_versioned(k, in, 2, out, 1), TF_ERR_UNSUPPORTED, "major version 2");
  va.version.major = TF_DLPACK_MAJOR_VERSION;
  in[1] = NULL;
  CHECK_STATUS(tf_kernel_run_versioned(k, in, 2, out, 1), TF_ERR_INVALID_ARGUMENT, "input #1");
  CHECK(tf_test_untouched(y, sizeof y));
  CHECK_STATUS(tf_kernel_run_versioned(NULL, in, 2, out, 1), TF_ERR_INVALID_ARGUMENT, NULL);
  CHECK(deleter_calls == 0);
}

static void test_versioned_call(tf_kernel k) {
  DLTensor in[2];
  DLManagedTensorVersioned* res[1] = {NULL};
  DLManagedTensorVersioned* wrong[2] = {NULL, NULL};
  in[0] = tf_test_tensor(a_, f32(), 2, shape_);
  in[1] = tf_test_tensor(b_, f32(), 2, shape_);
  CHECK_OK(tf_kernel_call_versioned(k, in, 2, res, 1));
  if (res[0] == NULL) return;
  CHECK(res[0]->version.major == 1 && res[0]->version.minor == 0);
  CHECK(res[0]->flags == 0 && res[0]->deleter != NULL);
  CHECK(res[0]->dl_tensor.ndim == 2 && res[0]->dl_tensor.shape[0] == R);
  CHECK(matches_sum((const float*)res[0]->dl_tensor.data, a_, C, 1));
  res[0]->deleter(res[0]);
  CHECK_STATUS(tf_kernel_call_versioned(k, in, 2, wrong, 2), TF_ERR_INVALID_ARGUMENT, "outputs");
  CHECK(wrong[0] == NULL && wrong[1] == NULL);
}

/* mask(x, m) = where(m, x + x, x) over u8: a bool mask is kDLBool (code 6),
 * {kDLUInt, 8} is u8 and never bool (a u8 mask is a dtype error, and
 * nothing is written); u8 arithmetic wraps modulo 256. */
static const char* kMaskSrc =
    "from tilefoundry.dsl import *\n"
    "\n"
    "@func\n"
    "def mask(x: Tensor[(4,), u8], m: Tensor[(4,), bool]) -> Tensor[(4,), u8]:\n"
    "    return where(m, x + x, x)\n";

static void test_bool_and_u8_spellings(void) {
  tf_module m = tf_test_parse(kMaskSrc);
  tf_kernel k = tf_test_compile(m, "mask");
  uint8_t x[4] = {1, 100, 200, 255}, y[4];
  uint8_t mask[4] = {1, 0, 1, 1};
  int64_t shape[1] = {4};
  DLTensor in[2], out[1];
  DLDataType desc_dtype;
  int32_t ndim = 0;
  in[0] = tf_test_tensor(x, tf_test_dtype(kDLUInt, 8), 1, shape);
  in[1] = tf_test_tensor(mask, tf_test_dtype(6, 8), 1, shape); /* kDLBool */
  out[0] = tf_test_tensor(y, tf_test_dtype(kDLUInt, 8), 1, shape);
  CHECK_OK(tf_kernel_run(k, in, 2, out, 1));
  CHECK(y[0] == 2 && y[1] == 100 && y[2] == 144 && y[3] == 254); /* 400 and 510 wrap */
  CHECK_OK(tf_kernel_input_desc(k, 1, &desc_dtype, &ndim));
  CHECK(desc_dtype.code == 6 && desc_dtype.bits == 8 && ndim == 1);
  CHECK_OK(tf_kernel_input_desc(k, 0, &desc_dtype, &ndim));
  CHECK(desc_dtype.code == kDLUInt && desc_dtype.bits == 8);
  in[1].dtype = tf_test_dtype(kDLUInt, 8); /* torch 1.13's spelling of bool reads as u8 */
  tf_test_fill_sentinel(y, sizeof y);
  CHECK_STATUS(tf_kernel_run(k, in, 2, out, 1), TF_ERR_INVALID_ARGUMENT, "u8");
  CHECK(tf_test_untouched(y, sizeof y));
  tf_kernel_release(k);
  tf_module_release(m);
}

int main(void) {
  tf_module m = tf_test_parse(kSrc);
  tf_kernel k = tf_test_compile(m, "add");
  init();
  test_byte_offset_and_null_strides(k);
  test_zero_and_negative_strides(k);
  test_output_strides(k);
  test_malformed_descriptors(k);
  test_zero_size(k);
  test_legacy_managed(k);
  test_versioned_run(k);
  test_versioned_call(k);
  test_bool_and_u8_spellings();
  tf_kernel_release(k);
  tf_module_release(m);
  TF_TEST_SUMMARY();
}
