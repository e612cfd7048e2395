/* One check per bug that fuzzing or the sanitizers found (docs/robustness.md,
 * "Findings and fixes"); the crashing inputs themselves are replayed by
 * fuzz_*_replay from tests/fuzz/regressions/. */
#include "tf_test.h"

static tf_status parse(const char* src, size_t len, tf_module* m) {
  *m = NULL;
  return tf_module_parse(src, len, "regression.tf", m);
}

#define HEAD "from tilefoundry.dsl import *\n"
#define FN "@func\ndef f(x: Tensor[(N,), f32]) -> Tensor[(N,), f32]:\n    return x\n"

/* Finding 1: any int is a valid argument from C. */
static void test_status_name_of_any_int(void) {
  CHECK(strcmp(tf_status_name((tf_status)1234), "TF_UNKNOWN_STATUS") == 0);
  CHECK(strcmp(tf_status_name((tf_status)-1), "TF_UNKNOWN_STATUS") == 0);
}

/* Findings 2-4: the parser refuses what the printer could not write back,
 * and escapes what it can. */
static void test_parser_round_trip_fixes(void) {
  static const char bad_name[] = HEAD "N = DimVar(\"N-1\", 1, 8)\n" FN;
  static const char bad_shift[] = HEAD "N = DimVar(\"N\", 0 - 1 << 20, 8)\n" FN;
  static const char nul[] = HEAD "TARGET = Target(\"c\0pu\")\nN = DimVar(\"N\", 1, 8)\n" FN;
  static const char escaped_nul[] = HEAD "TARGET = Target(\"c\\\0pu\")\nN = DimVar(\"N\", 1, 8)\n" FN;
  static const char escapes[] =
      HEAD "TARGET = Target(\"cpu\", topology=((\"a\\\"b\\\\c\\nd\", 1), (\"cta\", 2)))\n"
           "N = DimVar(\"N\", 1, 8)\n" FN;
  tf_module m, again;
  char *text = NULL, *text2 = NULL;
  CHECK_STATUS(parse(bad_name, strlen(bad_name), &m), TF_ERR_PARSE, "must be an identifier");
  CHECK_STATUS(parse(bad_shift, strlen(bad_shift), &m), TF_ERR_PARSE, "'<<' needs a non-negative");
  /* sizeof - 1: the source holds a NUL byte inside the string literal. */
  CHECK_STATUS(parse(nul, sizeof nul - 1, &m), TF_ERR_PARSE, "NUL byte");
  /* Finding 14: the same NUL behind a backslash escape. */
  CHECK_STATUS(parse(escaped_nul, sizeof escaped_nul - 1, &m), TF_ERR_PARSE, "NUL byte");
  CHECK_OK(parse(escapes, strlen(escapes), &m));
  if (m == NULL) return;
  CHECK_OK(tf_module_print(m, &text));
  CHECK(text != NULL && strstr(text, "\"a\\\"b\\\\c\\nd\"") != NULL);
  CHECK_OK(parse(text, strlen(text), &again));
  CHECK_OK(tf_module_print(again, &text2));
  CHECK(text != NULL && text2 != NULL && strcmp(text, text2) == 0);
  tf_string_free(text);
  tf_string_free(text2);
  tf_module_release(again);
  tf_module_release(m);
}

/* Findings 5-6: an empty tensor addresses nothing, whatever its strides and
 * byte_offset say. */
static void test_empty_tensors_with_wild_descriptors(void) {
  static const char src[] = HEAD "M = DimVar(\"M\", 0, 4)\n"
                                 "@func\ndef add(a: Tensor[(M, 4), f32], b: Tensor[(M, 4), f32])"
                                 " -> Tensor[(M, 4), f32]:\n    return a + b\n";
  tf_module m = tf_test_parse(src);
  tf_kernel k = tf_test_compile(m, "add");
  float dummy[4];
  int64_t shape[2] = {0, 4}, huge[2] = {1, INT64_MIN};
  DLTensor in[2], out[1];
  DLManagedTensor* res[1] = {NULL};
  DLDataType f32 = tf_test_dtype(kDLFloat, 32);
  in[0] = tf_test_tensor(dummy, f32, 2, shape);
  in[0].strides = huge;
  in[1] = tf_test_tensor(dummy, f32, 2, shape);
  in[1].byte_offset = UINT64_MAX - 3;
  out[0] = tf_test_tensor(NULL, f32, 2, shape);
  CHECK_OK(tf_kernel_run(k, in, 2, out, 1));
  CHECK_OK(tf_kernel_call(k, in, 2, res, 1));
  if (res[0] != NULL) res[0]->deleter(res[0]);
  tf_kernel_release(k);
  tf_module_release(m);
}

/* Finding 9: a non-empty tensor whose strides reach exactly INT64_MAX
 * elements; adding its last element to the reach overflowed. */
static void test_reach_of_int64_max_elements(void) {
  static const char src[] = HEAD "@func\ndef neg(a: Tensor[(2,), f32]) -> Tensor[(2,), f32]:\n    return -a\n";
  tf_module m = tf_test_parse(src);
  tf_kernel k = tf_test_compile(m, "neg");
  float data[2] = {1, 2};
  int64_t shape[1] = {2}, stride[1] = {INT64_MAX};
  DLDataType f32 = tf_test_dtype(kDLFloat, 32);
  DLTensor in = tf_test_tensor(data, f32, 1, shape);
  in.strides = stride;
  DLDataType dt;
  int32_t ndim = 0;
  int64_t out_shape[TF_MAX_NDIM];
  CHECK_STATUS(tf_kernel_output_desc(k, &in, 1, 0, &dt, &ndim, out_shape), TF_ERR_INVALID_ARGUMENT,
               "reach beyond 2^63");
  tf_kernel_release(k);
  tf_module_release(m);
}

/* Finding 10: one DimVar name with two ranges in a module parsed, but its
 * print could not declare the name twice; the second declaration is refused. */
static void test_dimvar_name_with_two_ranges(void) {
  static const char src[] = HEAD "N = DimVar(\"N\", 2, 8)\n" FN "M = DimVar(\"N\", 1, 8)\n"
                                 "@func\ndef g(x: Tensor[(M,), f32]) -> Tensor[(M,), f32]:\n    return x\n";
  tf_module m;
  CHECK_STATUS(parse(src, strlen(src), &m), TF_ERR_VERIFY, "DimVar 'N' is declared with bounds [1, 8) here but [2, 8)");
}

/* Finding 11: thousands of nested unary operators overflowed the parser's
 * stack (ASan); nesting beyond 200 levels is a parse error. */
static void test_nesting_is_bounded(void) {
  enum { kDepth = 5000 };
  static const char head[] = HEAD "@func\ndef f(x: Tensor[(4,), f32]) -> Tensor[(4,), f32]:\n    return ";
  static char src[sizeof head + kDepth + 8];
  size_t n = strlen(head);
  memcpy(src, head, n);
  memset(src + n, '~', kDepth);
  memcpy(src + n + kDepth, "x\n", 3);
  tf_module m;
  CHECK_STATUS(parse(src, strlen(src), &m), TF_ERR_PARSE, "nested more than 200 levels deep");
}

int main(void) {
  test_status_name_of_any_int();
  test_parser_round_trip_fixes();
  test_empty_tensors_with_wild_descriptors();
  test_reach_of_int64_max_elements();
  test_dimvar_name_with_two_ranges();
  test_nesting_is_bounded();
  TF_TEST_SUMMARY();
}
