/* tf_set_num_threads bounds the threads compiled kernels run on, takes
 * effect at the next call, and leaves the calling thread's own OpenMP
 * setting as it was. Observed from outside: the process's thread count
 * (/proc/self/task) after a kernel whose loop is large enough to run in
 * parallel, and omp_get_max_threads of the OpenMP runtime the kernel loaded. */
#define _POSIX_C_SOURCE 200112L
#include <dirent.h>
#include <dlfcn.h>

#include "tf_test.h"

static int process_threads(void) {
  int n = 0;
  struct dirent* e;
  DIR* d = opendir("/proc/self/task");
  if (d == NULL) return -1;
  while ((e = readdir(d)) != NULL) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

static const char* kScale =
    "from tilefoundry.dsl import *\n"
    "N = DimVar(\"N\", 1, 8192)\n"
    "@func\n"
    "def scale(x: Tensor[(N, 1024), f32]) -> Tensor[(N, 1024), f32]:\n"
    "    return x * 2.0\n";

#define ROWS 4096
static float x_[ROWS * 1024], y_[ROWS * 1024];

static void run(tf_kernel k) {
  int64_t shape[2] = {ROWS, 1024};
  DLTensor in = tf_test_tensor(x_, tf_test_dtype(kDLFloat, 32), 2, shape);
  DLTensor out = tf_test_tensor(y_, tf_test_dtype(kDLFloat, 32), 2, shape);
  CHECK_OK(tf_kernel_run(k, &in, 1, &out, 1));
}

int main(void) {
  int32_t n = -1, more;
  int alone, before, (*max_threads)(void) = NULL;
  void* gomp;
  tf_module m = tf_test_parse(kScale);
  tf_kernel k = tf_test_compile(m, "scale");
  int32_t backend = -1;
  CHECK_OK(tf_kernel_backend(k, &backend));
  CHECK(backend == TF_BACKEND_NATIVE);
  /* The OpenMP runtime the kernel library loaded, and the caller's setting in it. */
  gomp = dlopen("libgomp.so.1", RTLD_NOW | RTLD_NOLOAD);
  CHECK(gomp != NULL);
  if (gomp == NULL) TF_TEST_SUMMARY();
  *(void**)&max_threads = dlsym(gomp, "omp_get_max_threads");
  CHECK(max_threads != NULL);
  if (max_threads == NULL) TF_TEST_SUMMARY();
  before = max_threads();

  CHECK_OK(tf_get_num_threads(&n));
  CHECK(n == 0);
  CHECK_STATUS(tf_set_num_threads(-1), TF_ERR_INVALID_ARGUMENT, "must be >= 0");
  CHECK_STATUS(tf_get_num_threads(NULL), TF_ERR_INVALID_ARGUMENT, "out is NULL");

  /* One thread: the kernel's OpenMP runtime starts no workers. */
  alone = process_threads();
  CHECK_OK(tf_set_num_threads(1));
  CHECK_OK(tf_get_num_threads(&n));
  CHECK(n == 1);
  run(k);
  CHECK(process_threads() == alone);

  /* More than the caller's own setting: that many threads run the loop
   * (workers join the calling thread, on any number of cores), and the
   * caller's setting is what it was. */
  more = before + 1;
  CHECK_OK(tf_set_num_threads(more));
  run(k);
  CHECK(process_threads() >= alone + more - 1);
  CHECK(max_threads() == before);

  CHECK_OK(tf_set_num_threads(0));
  CHECK_OK(tf_get_num_threads(&n));
  CHECK(n == 0);
  tf_kernel_release(k);
  tf_module_release(m);
  TF_TEST_SUMMARY();
}
