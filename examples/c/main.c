/*
 * tf_example_c — TileFoundry from plain C99.
 *
 * Reads a kernel file (examples/c/kernels.tf), parses it, compiles its
 * rmsnorm and swiglu kernels, runs each on buffers this program mallocs,
 * checks the results against a double-precision reference written here, and
 * exits nonzero on any error or mismatch.
 *
 * Usage: tf_example_c <kernels.tf> [rows]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tilefoundry/tilefoundry.h>

#define TOLERANCE 1e-5 /* max |got - want| / (1 + |want|) for f32 results */

/* Prints the failed call and its message; returns 1 when s is not TF_OK. */
static int failed(tf_status s, const char* what) {
  if (s == TF_OK) return 0;
  fprintf(stderr, "%s: %s: %s\n", what, tf_status_name(s), tf_last_error());
  return 1;
}

/* The whole file in a malloc'ed buffer; NULL on error. */
static char* read_file(const char* path, size_t* len) {
  FILE* f = fopen(path, "rb");
  char* buf = NULL;
  long n;
  if (f == NULL) return NULL;
  if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
    buf = (char*)malloc((size_t)n + 1);
    if (buf != NULL && fread(buf, 1, (size_t)n, f) == (size_t)n) {
      buf[n] = '\0';
      *len = (size_t)n;
    } else {
      free(buf);
      buf = NULL;
    }
  }
  fclose(f);
  return buf;
}

/* A compact row-major f32 CPU tensor; shape must outlive it. */
static DLTensor f32_tensor(float* data, int32_t ndim, int64_t* shape) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.device.device_type = kDLCPU;
  t.ndim = ndim;
  t.dtype.code = kDLFloat;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  t.shape = shape;
  return t; /* strides NULL = compact, byte_offset 0 */
}

static void fill(float* p, size_t n, unsigned seed, float scale) {
  size_t i;
  for (i = 0; i < n; ++i) {
    seed = seed * 1103515245u + 12345u;
    p[i] = scale * ((float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f);
  }
}

static double max_error(const float* got, const double* want, size_t n) {
  double m = 0;
  size_t i;
  for (i = 0; i < n; ++i) {
    double e = fabs((double)got[i] - want[i]) / (1.0 + fabs(want[i]));
    if (!(e <= m)) m = e; /* a NaN sticks */
  }
  return m;
}

static void rmsnorm_ref(const float* x, const float* w, int64_t rows, int64_t d, double* y) {
  int64_t r, c;
  for (r = 0; r < rows; ++r) {
    double ss = 0;
    for (c = 0; c < d; ++c) ss += (double)x[r * d + c] * x[r * d + c];
    for (c = 0; c < d; ++c) y[r * d + c] = x[r * d + c] / sqrt(ss / (double)d + 1e-6) * w[c];
  }
}

static void swiglu_ref(const float* a, const float* b, size_t n, double* y) {
  size_t i;
  for (i = 0; i < n; ++i) y[i] = (double)a[i] / (1.0 + exp(-(double)a[i])) * b[i];
}

/* Compiles fn, shows what the library reports about it, and checks that its
 * only output has the shape of input 0 (what both kernels here promise). */
static tf_kernel compile_kernel(tf_module m, const char* fn, const DLTensor* in, size_t n_in) {
  tf_kernel k = NULL;
  int32_t backend = -1, ndim = 0;
  size_t n_out = 0;
  DLDataType dt;
  int64_t shape[TF_MAX_NDIM];
  int32_t d;
  if (failed(tf_kernel_compile(m, fn, NULL, &k), fn)) return NULL;
  if (failed(tf_kernel_backend(k, &backend), fn) || failed(tf_kernel_num_outputs(k, &n_out), fn) ||
      failed(tf_kernel_output_desc(k, in, n_in, 0, &dt, &ndim, shape), fn)) {
    tf_kernel_release(k);
    return NULL;
  }
  printf("  %-8s backend=%s outputs=%zu output[0]=(", fn,
         backend == TF_BACKEND_NATIVE ? "native" : "evaluator", n_out);
  for (d = 0; d < ndim; ++d) printf("%s%lld", d ? ", " : "", (long long)shape[d]);
  printf(")\n");
  if (n_out != 1 || ndim != in[0].ndim ||
      memcmp(shape, in[0].shape, sizeof(int64_t) * (size_t)ndim) != 0) {
    fprintf(stderr, "%s: unexpected output description\n", fn);
    tf_kernel_release(k);
    return NULL;
  }
  return k;
}

/* Runs fn on (in0 [rows, d], in1 [shape1]) into out [rows, d] and compares
 * with want. Returns 0 on success. */
static int run_and_check(tf_module m, const char* fn, float* in0, float* in1, int32_t ndim1,
                         int64_t* shape1, int64_t rows, int64_t d, const double* want) {
  int64_t shape0[2];
  DLTensor in[2], out;
  float* y = (float*)malloc(sizeof(float) * (size_t)(rows * d));
  tf_kernel k;
  double err;
  int rc = 1;
  shape0[0] = rows;
  shape0[1] = d;
  in[0] = f32_tensor(in0, 2, shape0);
  in[1] = f32_tensor(in1, ndim1, shape1);
  out = f32_tensor(y, 2, shape0);
  k = y != NULL ? compile_kernel(m, fn, in, 2) : NULL;
  if (k != NULL && !failed(tf_kernel_run(k, in, 2, &out, 1), fn)) {
    err = max_error(y, want, (size_t)(rows * d));
    printf("  %-8s max error %.3g (tolerance %.0e): %s\n", fn, err, TOLERANCE,
           err <= TOLERANCE ? "ok" : "MISMATCH");
    rc = err <= TOLERANCE ? 0 : 1;
  }
  tf_kernel_release(k);
  free(y);
  return rc;
}

int main(int argc, char** argv) {
  const int64_t d = 64;
  int64_t rows = argc > 2 ? atoll(argv[2]) : 37, w_shape[1], b_shape[2];
  size_t len = 0, n_fn = 0, i, n;
  char* src;
  tf_module m = NULL;
  float *x, *w, *a, *b;
  double* want;
  int bad = 0;

  if (argc < 2 || rows < 1) {
    fprintf(stderr, "usage: %s <kernels.tf> [rows >= 1]\n", argv[0]);
    return 2;
  }
  printf("TileFoundry C ABI %u.%u\n", tf_abi_version() >> 16, tf_abi_version() & 0xffffu);
  src = read_file(argv[1], &len);
  if (src == NULL) {
    fprintf(stderr, "cannot read %s\n", argv[1]);
    return 2;
  }
  bad = failed(tf_module_parse(src, len, argv[1], &m), "parse");
  free(src);
  if (bad) return 1;
  if (!failed(tf_module_num_functions(m, &n_fn), "functions")) {
    printf("%s: %zu functions:", argv[1], n_fn);
    for (i = 0; i < n_fn; ++i) {
      const char* name = "?";
      tf_module_function_name(m, i, &name);
      printf(" %s", name);
    }
    printf("\n");
  }

  n = (size_t)(rows * d);
  x = (float*)malloc(sizeof(float) * n);
  a = (float*)malloc(sizeof(float) * n);
  b = (float*)malloc(sizeof(float) * n);
  w = (float*)malloc(sizeof(float) * (size_t)d);
  want = (double*)malloc(sizeof(double) * n);
  if (x == NULL || a == NULL || b == NULL || w == NULL || want == NULL) {
    fprintf(stderr, "out of memory\n");
    bad = 1;
  } else {
    fill(x, n, 1u, 2.0f);
    fill(w, (size_t)d, 2u, 1.0f);
    fill(a, n, 3u, 4.0f);
    fill(b, n, 4u, 1.0f);
    w_shape[0] = d;
    rmsnorm_ref(x, w, rows, d, want);
    bad |= run_and_check(m, "rmsnorm", x, w, 1, w_shape, rows, d, want);
    b_shape[0] = rows;
    b_shape[1] = d;
    swiglu_ref(a, b, n, want);
    bad |= run_and_check(m, "swiglu", a, b, 2, b_shape, rows, d, want);
  }
  free(x);
  free(a);
  free(b);
  free(w);
  free(want);
  tf_module_release(m);
  printf("%s\n", bad ? "FAILED" : "all kernels match the reference");
  return bad ? 1 : 0;
}
