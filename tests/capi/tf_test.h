/*
 * tf_test.h — a tiny test harness for the C ABI tests (C99, header only).
 * Each test program includes it once, runs its checks and ends with
 * TF_TEST_SUMMARY(), which prints "N passed, M failed" and returns nonzero
 * when anything failed.
 */
#ifndef TF_TEST_H_
#define TF_TEST_H_

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tilefoundry/tilefoundry.h>

static int tf_test_passed = 0;
static int tf_test_failed = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (cond) {                                                                \
      ++tf_test_passed;                                                        \
    } else {                                                                   \
      ++tf_test_failed;                                                        \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                          \
  } while (0)

/* Records whether got == want and, for a failure, whether the thread's last
 * error message contains word (NULL: no message check). */
static inline void tf_test_check_status(tf_status got, tf_status want, const char* word,
                                        const char* expr, const char* file, int line) {
  const char* msg = tf_last_error();
  int ok = got == want && (got == TF_OK || word == NULL || strstr(msg, word) != NULL);
  if (ok) {
    ++tf_test_passed;
    return;
  }
  ++tf_test_failed;
  fprintf(stderr, "%s:%d: %s\n  returned %s, expected %s", file, line, expr, tf_status_name(got),
          tf_status_name(want));
  if (word != NULL) fprintf(stderr, " with \"%s\" in the message", word);
  fprintf(stderr, "\n  last error: %s\n", msg);
}

#define CHECK_STATUS(expr, want, word) \
  tf_test_check_status((expr), (want), (word), #expr, __FILE__, __LINE__)

#define CHECK_OK(expr) CHECK_STATUS(expr, TF_OK, NULL)

#define TF_TEST_SUMMARY()                                             \
  do {                                                                \
    printf("%d passed, %d failed\n", tf_test_passed, tf_test_failed); \
    return tf_test_failed == 0 ? 0 : 1;                               \
  } while (0)

/* The module most tests use: a single-output and a two-output kernel over a
 * DimVar N in [1, 64) and a static extent 4. */
#define TF_TEST_MODULE_SRC                                                              \
  "from tilefoundry.dsl import *\n"                                                     \
  "\n"                                                                                  \
  "N = DimVar(\"N\", 1, 64)\n"                                                          \
  "\n"                                                                                  \
  "@func\n"                                                                             \
  "def rmsnorm(x: Tensor[(N, 4), f32], w: Tensor[(4,), f32]) -> Tensor[(N, 4), f32]:\n" \
  "    return rms_norm(x, w, eps=1e-6)\n"                                               \
  "\n"                                                                                  \
  "@func\n"                                                                             \
  "def addmul(a: Tensor[(N, 4), f32], b: Tensor[(N, 4), f32]\n"                         \
  "           ) -> tuple[Tensor[(N, 4), f32], Tensor[(N, 4), f32]]:\n"                  \
  "    h = a + b\n"                                                                     \
  "    return h, h * b\n"

/* Parses src (NUL-terminated) or aborts the test program: a module the test
 * depends on must exist. */
static inline tf_module tf_test_parse(const char* src) {
  tf_module m = NULL;
  tf_status s = tf_module_parse(src, strlen(src), "test.tf", &m);
  if (s != TF_OK) {
    fprintf(stderr, "cannot parse the test module: %s: %s\n", tf_status_name(s), tf_last_error());
    printf("%d passed, %d failed\n", tf_test_passed, tf_test_failed + 1);
    exit(1);
  }
  return m;
}

static inline tf_kernel tf_test_compile(tf_module m, const char* fn) {
  tf_kernel k = NULL;
  tf_status s = tf_kernel_compile(m, fn, NULL, &k);
  if (s != TF_OK) {
    fprintf(stderr, "cannot compile %s: %s: %s\n", fn, tf_status_name(s), tf_last_error());
    printf("%d passed, %d failed\n", tf_test_passed, tf_test_failed + 1);
    exit(1);
  }
  return k;
}

/* A compact CPU DLTensor over data. shape must outlive the tensor. */
static inline DLTensor tf_test_tensor(void* data, DLDataType dtype, int32_t ndim, int64_t* shape) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.device.device_type = kDLCPU;
  t.device.device_id = 0;
  t.ndim = ndim;
  t.dtype = dtype;
  t.shape = shape;
  t.strides = NULL;
  t.byte_offset = 0;
  return t;
}

static inline DLDataType tf_test_dtype(uint8_t code, uint8_t bits) {
  DLDataType d;
  d.code = code;
  d.bits = bits;
  d.lanes = 1;
  return d;
}

#define TF_SENTINEL 0xA5

static inline void tf_test_fill_sentinel(void* p, size_t n) { memset(p, TF_SENTINEL, n); }

/* 1 when all n bytes still hold the sentinel. */
static inline int tf_test_untouched(const void* p, size_t n) {
  const unsigned char* b = (const unsigned char*)p;
  size_t i;
  for (i = 0; i < n; ++i) {
    if (b[i] != TF_SENTINEL) return 0;
  }
  return 1;
}

#endif /* TF_TEST_H_ */
