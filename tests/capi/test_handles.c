/* TF_ERR_INVALID_HANDLE for released, foreign and wrong-kind handles at every
 * function that takes a handle (none of them may crash), and the lifetime
 * rules: kernel refcounts, a kernel outliving its module handle. */
#include "tf_test.h"

#define NOT_LIVE "not a live"

/* Every module entry point on a handle that is not a live module. */
static void check_bad_module(tf_module m) {
  char* text = NULL;
  size_t n = 99;
  const char* name = NULL;
  tf_kernel k = NULL;
  CHECK_STATUS(tf_module_print(m, &text), TF_ERR_INVALID_HANDLE, NOT_LIVE);
  CHECK_STATUS(tf_module_num_functions(m, &n), TF_ERR_INVALID_HANDLE, NOT_LIVE);
  CHECK_STATUS(tf_module_function_name(m, 0, &name), TF_ERR_INVALID_HANDLE, NOT_LIVE);
  CHECK_STATUS(tf_module_signature(m, "rmsnorm", &text), TF_ERR_INVALID_HANDLE, NOT_LIVE);
  CHECK_STATUS(tf_kernel_compile(m, "rmsnorm", NULL, &k), TF_ERR_INVALID_HANDLE, NOT_LIVE);
  CHECK(text == NULL && n == 99 && name == NULL && k == NULL);
  tf_module_release(m); /* ignored, not freed twice */
  CHECK(strstr(tf_last_error(), "tf_module_release") != NULL);
}

/* Every kernel entry point on a handle that is not a live kernel. */
static void check_bad_kernel(tf_kernel k) {
  float x[4] = {1, 2, 3, 4}, w[4] = {1, 1, 1, 1}, y[4];
  int64_t xs[2] = {1, 4}, ws[1] = {4}, shape[TF_MAX_NDIM];
  DLDataType f32 = tf_test_dtype(kDLFloat, 32), dt;
  DLTensor in[2], out[1];
  DLManagedTensor* managed[1] = {NULL};
  int32_t i32 = -1;
  size_t n = 99;
  const char* s = NULL;
  int64_t words[4] = {0, 0, 0, 0};
  tf_input_axis axis;

  memset(&axis, 0, sizeof axis);
  axis.struct_size = sizeof axis;
  in[0] = tf_test_tensor(x, f32, 2, xs);
  in[1] = tf_test_tensor(w, f32, 1, ws);
  out[0] = tf_test_tensor(y, f32, 2, xs);
  tf_test_fill_sentinel(y, sizeof y);
  tf_test_fill_sentinel(shape, sizeof shape);

  CHECK_STATUS(tf_kernel_backend(k, &i32), TF_ERR_INVALID_HANDLE, NOT_LIVE);
  CHECK_STATUS(tf_kernel_name(k, &s), TF_ERR_INVALID_HANDLE, NOT_LIVE);
  CHECK_STATUS(tf_kernel_num_inputs(k, &n), TF_ERR_INVALID_HANDLE, NOT_LIVE);
  CHECK_STATUS(tf_kernel_num_outputs(k, &n), TF_ERR_INVALID_HANDLE, NOT_LIVE);
  CHECK_STATUS(tf_kernel_input_name(k, 0, &s), TF_ERR_INVALID_HANDLE, NOT_LIVE);
  CHECK_STATUS(tf_kernel_input_desc(k, 0, &dt, &i32), TF_ERR_INVALID_HANDLE, NOT_LIVE);
  CHECK_STATUS(tf_kernel_output_desc(k, in, 2, 0, &dt, &i32, shape), TF_ERR_INVALID_HANDLE,
               NOT_LIVE);
  CHECK_STATUS(tf_kernel_run(k, in, 2, out, 1), TF_ERR_INVALID_HANDLE, NOT_LIVE);
  CHECK_STATUS(tf_kernel_call(k, in, 2, managed, 1), TF_ERR_INVALID_HANDLE, NOT_LIVE);
  CHECK_STATUS(tf_kernel_retain(k), TF_ERR_INVALID_HANDLE, NOT_LIVE);
  CHECK_STATUS(tf_kernel_output_type(k, 0, &dt, &i32), TF_ERR_INVALID_HANDLE, NOT_LIVE);
  CHECK_STATUS(tf_kernel_input_axis(k, 0, 0, &axis), TF_ERR_INVALID_HANDLE, NOT_LIVE);
  CHECK_STATUS(tf_kernel_input_extent(k, 0, 0, words, 4, &n), TF_ERR_INVALID_HANDLE, NOT_LIVE);
  CHECK_STATUS(tf_kernel_output_extent(k, 0, 0, words, 4, &n), TF_ERR_INVALID_HANDLE, NOT_LIVE);
  CHECK(axis.rule == 0 && words[0] == 0);
  CHECK(i32 == -1 && n == 99 && s == NULL && managed[0] == NULL);
  CHECK(tf_test_untouched(y, sizeof y) && tf_test_untouched(shape, sizeof shape));
  tf_kernel_release(k); /* ignored, not freed twice */
  CHECK(strstr(tf_last_error(), "tf_kernel_release") != NULL);
}

static void test_released(void) {
  tf_module m = tf_test_parse(TF_TEST_MODULE_SRC);
  tf_kernel k = tf_test_compile(m, "rmsnorm");
  tf_kernel_release(k);
  check_bad_kernel(k);
  tf_module_release(m);
  check_bad_module(m);
}

static void test_foreign(void) {
  /* Addresses that were never handles: stack, static and heap memory, a
   * misaligned pointer. None is dereferenced. */
  static uint64_t static_word = 0x544d4f44544b524eULL;
  uint64_t stack_words[4] = {0x544d4f44u, 0x544b524eu, 0, 0};
  void* heap = malloc(64);
  if (heap != NULL) memset(heap, 0x44, 64);
  check_bad_module((tf_module)(void*)&static_word);
  check_bad_module((tf_module)(void*)stack_words);
  check_bad_module((tf_module)heap);
  check_bad_module((tf_module)(void*)((char*)stack_words + 1));
  check_bad_kernel((tf_kernel)(void*)&static_word);
  check_bad_kernel((tf_kernel)(void*)stack_words);
  check_bad_kernel((tf_kernel)heap);
  check_bad_kernel((tf_kernel)(void*)((char*)stack_words + 3));
  free(heap);
}

static void test_wrong_kind(void) {
  tf_module m = tf_test_parse(TF_TEST_MODULE_SRC);
  tf_kernel k = tf_test_compile(m, "rmsnorm");
  check_bad_module((tf_module)(void*)k);
  check_bad_kernel((tf_kernel)(void*)m);
  /* Both are still live and usable: the misuse released nothing. */
  {
    size_t n = 0;
    CHECK_OK(tf_module_num_functions(m, &n));
    CHECK(n == 2);
    CHECK_OK(tf_kernel_num_inputs(k, &n));
    CHECK(n == 2);
  }
  tf_kernel_release(k);
  tf_module_release(m);
}

static void test_refcount(void) {
  tf_module m = tf_test_parse(TF_TEST_MODULE_SRC);
  tf_kernel k = tf_test_compile(m, "rmsnorm");
  const char* name = NULL;
  tf_module_release(m); /* the kernel keeps the module's contents alive */
  CHECK_OK(tf_kernel_retain(k));
  CHECK_OK(tf_kernel_retain(k));
  tf_kernel_release(k);
  tf_kernel_release(k);
  CHECK_OK(tf_kernel_name(k, &name)); /* one reference left */
  CHECK(name != NULL && strcmp(name, "rmsnorm") == 0);
  tf_kernel_release(k); /* the last one */
  CHECK_STATUS(tf_kernel_name(k, &name), TF_ERR_INVALID_HANDLE, NOT_LIVE);
}

int main(void) {
  test_released();
  test_foreign();
  test_wrong_kind();
  test_refcount();
  TF_TEST_SUMMARY();
}
