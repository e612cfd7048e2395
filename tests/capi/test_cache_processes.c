/*
 * The JIT cache is safe when several processes compile the same kernel at
 * once: four children, forked before anything is compiled,
 * share one fresh TF_CACHE_DIR, each compiles the same function natively and
 * checks its answer; afterwards the cache holds the finished library and no
 * half-written temporary.
 */
#define _XOPEN_SOURCE 700
#include <dirent.h>
#include <math.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tf_test.h"

#define ROWS 5
#define COLS 8
#define KIDS 4

static const char* kSource =
    "N = DimVar(\"N\", 1, 64)\n"
    "@func\n"
    "def cache_probe(x: Tensor[(N, 8), f32], w: Tensor[(8,), f32]) -> Tensor[(N, 8), f32]:\n"
    "    return rms_norm(x, w, eps=1e-05) * 3.0\n";

/* One child: parse, compile natively, run, compare with a double reference.
 * Returns the number of problems (the exit status). */
static int child(void) {
  float x[ROWS * COLS], w[COLS], y[ROWS * COLS];
  int64_t xs[2] = {ROWS, COLS}, ws[1] = {COLS};
  DLDataType f32 = tf_test_dtype(kDLFloat, 32);
  DLTensor in[2], out[1];
  tf_module m = NULL;
  tf_kernel k = NULL;
  int32_t backend = -1;
  int r, c, bad = 0;
  for (r = 0; r < ROWS * COLS; ++r) x[r] = (float)((r * 7) % 11) - 5.0f;
  for (c = 0; c < COLS; ++c) w[c] = 0.5f + 0.25f * (float)c;
  if (tf_module_parse(kSource, strlen(kSource), "probe.tf", &m) != TF_OK) return 100;
  if (tf_kernel_compile(m, "cache_probe", NULL, &k) != TF_OK) return 101;
  if (tf_kernel_backend(k, &backend) != TF_OK || backend != TF_BACKEND_NATIVE) bad += 1;
  in[0] = tf_test_tensor(x, f32, 2, xs);
  in[1] = tf_test_tensor(w, f32, 1, ws);
  out[0] = tf_test_tensor(y, f32, 2, xs);
  if (tf_kernel_run(k, in, 2, out, 1) != TF_OK) return 102;
  for (r = 0; r < ROWS; ++r) {
    double ss = 0;
    for (c = 0; c < COLS; ++c) ss += (double)x[r * COLS + c] * x[r * COLS + c];
    for (c = 0; c < COLS; ++c) {
      double want = x[r * COLS + c] / sqrt(ss / COLS + 1e-5) * w[c] * 3.0;
      if (fabs(want - y[r * COLS + c]) > 1e-4 * (1.0 + fabs(want))) bad += 1;
    }
  }
  tf_kernel_release(k);
  tf_module_release(m);
  return bad;
}

int main(void) {
  char dir[] = "/tmp/tf_cache_processes_XXXXXX";
  pid_t kids[KIDS];
  int i, status, libraries = 0, temporaries = 0;
  DIR* d;
  struct dirent* e;
  CHECK(mkdtemp(dir) != NULL);
  CHECK(setenv("TF_CACHE_DIR", dir, 1) == 0);
  fflush(NULL);
  for (i = 0; i < KIDS; ++i) {
    kids[i] = fork();
    if (kids[i] == 0) _exit(child());
    CHECK(kids[i] > 0);
  }
  for (i = 0; i < KIDS; ++i) {
    if (kids[i] <= 0) continue;
    CHECK(waitpid(kids[i], &status, 0) == kids[i]);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
      fprintf(stderr, "child %d exited with %d\n", i, WEXITSTATUS(status));
  }
  d = opendir(dir);
  CHECK(d != NULL);
  while (d && (e = readdir(d)) != NULL) {
    size_t n = strlen(e->d_name);
    if (strstr(e->d_name, ".tmp.")) ++temporaries;
    else if (n > 3 && strcmp(e->d_name + n - 3, ".so") == 0) ++libraries;
  }
  if (d) closedir(d);
  CHECK(libraries >= 1);  /* the finished library is there */
  CHECK(temporaries == 0);  /* no half-written file is left behind */
  if ((d = opendir(dir)) != NULL) { /* clean up the private cache */
    char path[512];
    while ((e = readdir(d)) != NULL) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
      unlink(path);
    }
    closedir(d);
    rmdir(dir);
  }
  TF_TEST_SUMMARY();
}
