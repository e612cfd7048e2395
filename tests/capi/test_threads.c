/* Thread-safety: one kernel run from several threads at once gives the
 * single-threaded result, and tf_last_error is per thread (each thread
 * sees its own failure's message, never another thread's). Also retain /
 * release from several threads; one module compiled from several threads
 * at once; and several processes compiling and running at once (there is no
 * shared on-disk state, so they must not interfere). */
#define _POSIX_C_SOURCE 200112L
#include <pthread.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tf_test.h"

#define THREADS 4
#define ITERS 40
#define ROWS 5

typedef struct {
  tf_kernel k;
  int index;
  const float* want;
  int wrong_results;  /* runs whose output differed from want */
  int wrong_messages; /* failures whose message was not this thread's */
  int bad_status;
} worker;

static float x_[ROWS * 4], w_[4];

static void* work(void* arg) {
  worker* me = (worker*)arg;
  float y[ROWS * 4];
  int64_t xs[2] = {ROWS, 4}, ws[1] = {4};
  /* Each thread's bad extent is distinct: 5 + index. */
  int64_t bad_w[1];
  char expect[64];
  DLDataType f32 = tf_test_dtype(kDLFloat, 32);
  DLTensor in[2], out[1];
  int i;
  bad_w[0] = 5 + me->index;
  sprintf(expect, "but got %d", 5 + me->index);
  in[0] = tf_test_tensor(x_, f32, 2, xs);
  out[0] = tf_test_tensor(y, f32, 2, xs);
  for (i = 0; i < ITERS; ++i) {
    in[1] = tf_test_tensor(w_, f32, 1, ws);
    if (tf_kernel_retain(me->k) != TF_OK) ++me->bad_status;
    if (tf_kernel_run(me->k, in, 2, out, 1) != TF_OK) ++me->bad_status;
    if (memcmp(y, me->want, sizeof y) != 0) ++me->wrong_results;
    in[1].shape = bad_w;
    if (tf_kernel_run(me->k, in, 2, out, 1) != TF_ERR_INVALID_ARGUMENT) ++me->bad_status;
    tf_kernel_release(me->k);
    if (strstr(tf_last_error(), expect) == NULL) ++me->wrong_messages;
  }
  return NULL;
}

/* Compiles m's rmsnorm and runs it once; nonzero when anything differs. */
typedef struct {
  tf_module m;
  const float* want;
  int failures;
} compiler;

static int compile_and_run(tf_module m, const float* want) {
  float y[ROWS * 4];
  int64_t xs[2] = {ROWS, 4}, ws[1] = {4};
  DLDataType f32 = tf_test_dtype(kDLFloat, 32);
  DLTensor in[2], out[1];
  tf_kernel k = NULL;
  int bad = 0;
  if (tf_kernel_compile(m, "rmsnorm", NULL, &k) != TF_OK) return 1;
  in[0] = tf_test_tensor(x_, f32, 2, xs);
  in[1] = tf_test_tensor(w_, f32, 1, ws);
  out[0] = tf_test_tensor(y, f32, 2, xs);
  if (tf_kernel_run(k, in, 2, out, 1) != TF_OK || memcmp(y, want, sizeof y) != 0) bad = 1;
  tf_kernel_release(k);
  return bad;
}

static void* compile_work(void* arg) {
  compiler* me = (compiler*)arg;
  int i;
  for (i = 0; i < ITERS / 4; ++i) me->failures += compile_and_run(me->m, me->want);
  return NULL;
}

/* Children parse their own module, compile and run; exit status = failures. */
static void test_processes(const float* want) {
  pid_t kids[3];
  int i, status;
  fflush(NULL);
  for (i = 0; i < 3; ++i) {
    kids[i] = fork();
    if (kids[i] == 0) {
      tf_module mine = NULL;
      int bad;
      const char* src = TF_TEST_MODULE_SRC;
      if (tf_module_parse(src, strlen(src), "child.tf", &mine) != TF_OK) _exit(100);
      bad = compile_and_run(mine, want) + compile_and_run(mine, want);
      tf_module_release(mine);
      _exit(bad);
    }
    CHECK(kids[i] > 0);
  }
  for (i = 0; i < 3; ++i) {
    if (kids[i] <= 0) continue;
    CHECK(waitpid(kids[i], &status, 0) == kids[i]);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
}

int main(void) {
  tf_module m = tf_test_parse(TF_TEST_MODULE_SRC);
  tf_kernel k = tf_test_compile(m, "rmsnorm");
  float want[ROWS * 4];
  int64_t xs[2] = {ROWS, 4}, ws[1] = {4};
  DLDataType f32 = tf_test_dtype(kDLFloat, 32);
  DLTensor in[2], out[1];
  pthread_t threads[THREADS];
  worker workers[THREADS];
  int i;
  for (i = 0; i < ROWS * 4; ++i) x_[i] = (float)(i % 7) - 3.0f;
  for (i = 0; i < 4; ++i) w_[i] = 1.0f + 0.5f * (float)i;
  in[0] = tf_test_tensor(x_, f32, 2, xs);
  in[1] = tf_test_tensor(w_, f32, 1, ws);
  out[0] = tf_test_tensor(want, f32, 2, xs);
  CHECK_OK(tf_kernel_run(k, in, 2, out, 1));

  for (i = 0; i < THREADS; ++i) {
    memset(&workers[i], 0, sizeof workers[i]);
    workers[i].k = k;
    workers[i].index = i;
    workers[i].want = want;
    CHECK(pthread_create(&threads[i], NULL, work, &workers[i]) == 0);
  }
  for (i = 0; i < THREADS; ++i) {
    CHECK(pthread_join(threads[i], NULL) == 0);
    CHECK(workers[i].bad_status == 0);
    CHECK(workers[i].wrong_results == 0);
    CHECK(workers[i].wrong_messages == 0);
  }
  /* One module, compiled from every thread at once. */
  {
    compiler compilers[THREADS];
    for (i = 0; i < THREADS; ++i) {
      compilers[i].m = m;
      compilers[i].want = want;
      compilers[i].failures = 0;
      CHECK(pthread_create(&threads[i], NULL, compile_work, &compilers[i]) == 0);
    }
    for (i = 0; i < THREADS; ++i) {
      CHECK(pthread_join(threads[i], NULL) == 0);
      CHECK(compilers[i].failures == 0);
    }
  }
  test_processes(want);
  /* All retains were matched: exactly one reference is left. */
  {
    size_t n = 0;
    CHECK_OK(tf_kernel_num_inputs(k, &n));
  }
  tf_kernel_release(k);
  CHECK_STATUS(tf_kernel_retain(k), TF_ERR_INVALID_HANDLE, "not a live");
  tf_module_release(m);
  TF_TEST_SUMMARY();
}
