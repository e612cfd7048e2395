/* TF_ERR_INVALID_ARGUMENT for NULL at every pointer parameter of every
 * function, with the parameter named in the message; the other
 * out-parameters stay untouched. */
#include "tf_test.h"

#define NULL_HANDLE "handle is NULL"

static void test_module_functions(tf_module m) {
  const char* src = TF_TEST_MODULE_SRC;
  tf_module out = NULL;
  char* text = NULL;
  size_t n = 99;
  const char* name = NULL;

  CHECK_STATUS(tf_module_parse(NULL, 3, "x.tf", &out), TF_ERR_INVALID_ARGUMENT, "src is NULL");
  CHECK_STATUS(tf_module_parse(src, strlen(src), "x.tf", NULL), TF_ERR_INVALID_ARGUMENT,
               "out is NULL");
  CHECK(out == NULL);
  CHECK_OK(tf_module_parse(src, strlen(src), NULL, &out)); /* filename may be NULL */
  tf_module_release(out);

  CHECK_STATUS(tf_module_print(NULL, &text), TF_ERR_INVALID_ARGUMENT, NULL_HANDLE);
  CHECK_STATUS(tf_module_print(m, NULL), TF_ERR_INVALID_ARGUMENT, "out_text is NULL");
  CHECK(text == NULL);

  CHECK_STATUS(tf_module_num_functions(NULL, &n), TF_ERR_INVALID_ARGUMENT, NULL_HANDLE);
  CHECK_STATUS(tf_module_num_functions(m, NULL), TF_ERR_INVALID_ARGUMENT, "out is NULL");
  CHECK(n == 99);

  CHECK_STATUS(tf_module_function_name(NULL, 0, &name), TF_ERR_INVALID_ARGUMENT, NULL_HANDLE);
  CHECK_STATUS(tf_module_function_name(m, 0, NULL), TF_ERR_INVALID_ARGUMENT, "out is NULL");
  CHECK(name == NULL);

  CHECK_STATUS(tf_module_signature(NULL, "rmsnorm", &text), TF_ERR_INVALID_ARGUMENT, NULL_HANDLE);
  CHECK_STATUS(tf_module_signature(m, NULL, &text), TF_ERR_INVALID_ARGUMENT, "fn is NULL");
  CHECK_STATUS(tf_module_signature(m, "rmsnorm", NULL), TF_ERR_INVALID_ARGUMENT,
               "out_text is NULL");
  CHECK(text == NULL);

  CHECK_STATUS(tf_surface_function_count(NULL), TF_ERR_INVALID_ARGUMENT, "out is NULL");
  CHECK_STATUS(tf_surface_function_name(0, NULL), TF_ERR_INVALID_ARGUMENT, "out is NULL");

  tf_module_release(NULL); /* a no-op */
}

static void test_kernel_describe(tf_module m, tf_kernel k) {
  tf_kernel out = NULL;
  int32_t backend = -1, ndim = -1;
  const char* s = NULL;
  size_t n = 99;
  DLDataType dt;
  int64_t words[4] = {0, 0, 0, 0};
  tf_input_axis axis;

  memset(&axis, 0, sizeof axis);
  axis.struct_size = sizeof axis;

  CHECK_STATUS(tf_kernel_compile(NULL, "rmsnorm", NULL, &out), TF_ERR_INVALID_ARGUMENT,
               NULL_HANDLE);
  CHECK_STATUS(tf_kernel_compile(m, NULL, NULL, &out), TF_ERR_INVALID_ARGUMENT, "fn is NULL");
  CHECK_STATUS(tf_kernel_compile(m, "rmsnorm", NULL, NULL), TF_ERR_INVALID_ARGUMENT, "out is NULL");
  CHECK(out == NULL);

  CHECK_STATUS(tf_kernel_backend(NULL, &backend), TF_ERR_INVALID_ARGUMENT, NULL_HANDLE);
  CHECK_STATUS(tf_kernel_backend(k, NULL), TF_ERR_INVALID_ARGUMENT, "out is NULL");
  CHECK_STATUS(tf_kernel_name(NULL, &s), TF_ERR_INVALID_ARGUMENT, NULL_HANDLE);
  CHECK_STATUS(tf_kernel_name(k, NULL), TF_ERR_INVALID_ARGUMENT, "out is NULL");
  CHECK_STATUS(tf_kernel_num_inputs(NULL, &n), TF_ERR_INVALID_ARGUMENT, NULL_HANDLE);
  CHECK_STATUS(tf_kernel_num_inputs(k, NULL), TF_ERR_INVALID_ARGUMENT, "out is NULL");
  CHECK_STATUS(tf_kernel_num_outputs(NULL, &n), TF_ERR_INVALID_ARGUMENT, NULL_HANDLE);
  CHECK_STATUS(tf_kernel_num_outputs(k, NULL), TF_ERR_INVALID_ARGUMENT, "out is NULL");
  CHECK_STATUS(tf_kernel_input_name(NULL, 0, &s), TF_ERR_INVALID_ARGUMENT, NULL_HANDLE);
  CHECK_STATUS(tf_kernel_input_name(k, 0, NULL), TF_ERR_INVALID_ARGUMENT, "out is NULL");
  CHECK_STATUS(tf_kernel_input_desc(NULL, 0, &dt, &ndim), TF_ERR_INVALID_ARGUMENT, NULL_HANDLE);
  CHECK_STATUS(tf_kernel_input_desc(k, 0, NULL, &ndim), TF_ERR_INVALID_ARGUMENT, "dtype is NULL");
  CHECK_STATUS(tf_kernel_input_desc(k, 0, &dt, NULL), TF_ERR_INVALID_ARGUMENT, "ndim is NULL");
  CHECK(backend == -1 && s == NULL && n == 99 && ndim == -1);
  CHECK_STATUS(tf_kernel_retain(NULL), TF_ERR_INVALID_ARGUMENT, NULL_HANDLE);

  CHECK_STATUS(tf_kernel_output_type(NULL, 0, &dt, &ndim), TF_ERR_INVALID_ARGUMENT, NULL_HANDLE);
  CHECK_STATUS(tf_kernel_output_type(k, 0, NULL, &ndim), TF_ERR_INVALID_ARGUMENT, "dtype is NULL");
  CHECK_STATUS(tf_kernel_output_type(k, 0, &dt, NULL), TF_ERR_INVALID_ARGUMENT, "ndim is NULL");
  CHECK_STATUS(tf_kernel_input_axis(NULL, 0, 0, &axis), TF_ERR_INVALID_ARGUMENT, NULL_HANDLE);
  CHECK_STATUS(tf_kernel_input_axis(k, 0, 0, NULL), TF_ERR_INVALID_ARGUMENT, "out is NULL");
  CHECK_STATUS(tf_kernel_input_extent(NULL, 0, 0, words, 4, &n), TF_ERR_INVALID_ARGUMENT,
               NULL_HANDLE);
  CHECK_STATUS(tf_kernel_input_extent(k, 0, 0, NULL, 4, &n), TF_ERR_INVALID_ARGUMENT,
               "program is NULL");
  CHECK_STATUS(tf_kernel_input_extent(k, 0, 0, words, 4, NULL), TF_ERR_INVALID_ARGUMENT,
               "length is NULL");
  CHECK_STATUS(tf_kernel_output_extent(NULL, 0, 0, words, 4, &n), TF_ERR_INVALID_ARGUMENT,
               NULL_HANDLE);
  CHECK_STATUS(tf_kernel_output_extent(k, 0, 0, NULL, 4, &n), TF_ERR_INVALID_ARGUMENT,
               "program is NULL");
  CHECK_STATUS(tf_kernel_output_extent(k, 0, 0, words, 4, NULL), TF_ERR_INVALID_ARGUMENT,
               "length is NULL");
  CHECK(ndim == -1 && n == 99 && axis.rule == 0 && words[0] == 0);
  tf_kernel_release(NULL); /* a no-op */
}

static void test_kernel_run_functions(tf_kernel k) {
  float x[2 * 4] = {1, 2, 3, 4, 5, 6, 7, 8}, w[4] = {1, 1, 1, 1}, y[2 * 4];
  int64_t xs[2] = {2, 4}, ws[1] = {4}, shape[TF_MAX_NDIM];
  DLDataType f32 = tf_test_dtype(kDLFloat, 32), dt;
  DLTensor in[2], out[1];
  DLManagedTensor* managed[1] = {NULL};
  int32_t ndim = -1;

  in[0] = tf_test_tensor(x, f32, 2, xs);
  in[1] = tf_test_tensor(w, f32, 1, ws);
  out[0] = tf_test_tensor(y, f32, 2, xs);
  tf_test_fill_sentinel(y, sizeof y);
  tf_test_fill_sentinel(shape, sizeof shape);

  CHECK_STATUS(tf_kernel_output_desc(NULL, in, 2, 0, &dt, &ndim, shape), TF_ERR_INVALID_ARGUMENT,
               NULL_HANDLE);
  CHECK_STATUS(tf_kernel_output_desc(k, NULL, 2, 0, &dt, &ndim, shape), TF_ERR_INVALID_ARGUMENT,
               "in is NULL");
  CHECK_STATUS(tf_kernel_output_desc(k, in, 2, 0, NULL, &ndim, shape), TF_ERR_INVALID_ARGUMENT,
               "dtype is NULL");
  CHECK_STATUS(tf_kernel_output_desc(k, in, 2, 0, &dt, NULL, shape), TF_ERR_INVALID_ARGUMENT,
               "ndim is NULL");
  CHECK_STATUS(tf_kernel_output_desc(k, in, 2, 0, &dt, &ndim, NULL), TF_ERR_INVALID_ARGUMENT,
               "shape is NULL");
  CHECK(ndim == -1 && tf_test_untouched(shape, sizeof shape));

  CHECK_STATUS(tf_kernel_run(NULL, in, 2, out, 1), TF_ERR_INVALID_ARGUMENT, NULL_HANDLE);
  CHECK_STATUS(tf_kernel_run(k, NULL, 2, out, 1), TF_ERR_INVALID_ARGUMENT, "in is NULL");
  CHECK_STATUS(tf_kernel_run(k, in, 2, NULL, 1), TF_ERR_INVALID_ARGUMENT, "out is NULL");
  CHECK(tf_test_untouched(y, sizeof y));

  CHECK_STATUS(tf_kernel_call(NULL, in, 2, managed, 1), TF_ERR_INVALID_ARGUMENT, NULL_HANDLE);
  CHECK_STATUS(tf_kernel_call(k, NULL, 2, managed, 1), TF_ERR_INVALID_ARGUMENT, "in is NULL");
  CHECK_STATUS(tf_kernel_call(k, in, 2, NULL, 1), TF_ERR_INVALID_ARGUMENT, "out is NULL");
  CHECK(managed[0] == NULL);

  /* NULL pointers inside a DLTensor. */
  in[0].shape = NULL;
  CHECK_STATUS(tf_kernel_run(k, in, 2, out, 1), TF_ERR_INVALID_ARGUMENT, "shape is NULL");
  CHECK_STATUS(tf_kernel_call(k, in, 2, managed, 1), TF_ERR_INVALID_ARGUMENT, "shape is NULL");
  CHECK_STATUS(tf_kernel_output_desc(k, in, 2, 0, &dt, &ndim, shape), TF_ERR_INVALID_ARGUMENT,
               "shape is NULL");
  in[0].shape = xs;
  in[1].data = NULL;
  CHECK_STATUS(tf_kernel_run(k, in, 2, out, 1), TF_ERR_INVALID_ARGUMENT,
               "input #1 (w): data is NULL");
  CHECK_STATUS(tf_kernel_call(k, in, 2, managed, 1), TF_ERR_INVALID_ARGUMENT, "data is NULL");
  in[1].data = w;
  out[0].data = NULL;
  CHECK_STATUS(tf_kernel_run(k, in, 2, out, 1), TF_ERR_INVALID_ARGUMENT, "output #0: data is NULL");
  out[0].data = y;
  out[0].shape = NULL;
  CHECK_STATUS(tf_kernel_run(k, in, 2, out, 1), TF_ERR_INVALID_ARGUMENT,
               "output #0: shape is NULL");
  CHECK(tf_test_untouched(y, sizeof y) && managed[0] == NULL);
}

int main(void) {
  tf_module m = tf_test_parse(TF_TEST_MODULE_SRC);
  tf_kernel k = tf_test_compile(m, "rmsnorm");
  test_module_functions(m);
  test_kernel_describe(m, k);
  test_kernel_run_functions(k);
  tf_kernel_release(k);
  tf_module_release(m);
  TF_TEST_SUMMARY();
}
