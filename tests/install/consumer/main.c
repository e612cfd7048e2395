/* A downstream C program against an installed TileFoundry: checks the ABI
 * version, then parses, compiles and runs a kernel through the C ABI on its
 * own buffers and checks every element. Exit status 0 only when all holds. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <tilefoundry/tilefoundry.h>

static const char kSource[] =
    "from tilefoundry.dsl import *\n"
    "N = DimVar(\"N\", 1, 1 << 20)\n"
    "@func\n"
    "def axpy(x: Tensor[(N,), f32], y: Tensor[(N,), f32]) -> Tensor[(N,), f32]:\n"
    "    return x * 2.0 + y\n";

static int fail(const char* what, tf_status s) {
  fprintf(stderr, "consumer: %s: %s: %s\n", what, tf_status_name(s), tf_last_error());
  return 1;
}

static DLTensor vector(float* data, int64_t* n) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.device.device_type = kDLCPU;
  t.ndim = 1;
  t.dtype.code = kDLFloat;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  t.shape = n;
  return t;
}

int main(void) {
  enum { kN = 1000 };
  static float x[kN], y[kN], out[kN];
  int64_t n = kN;
  tf_module m = NULL;
  tf_kernel k = NULL;
  tf_status s;
  DLTensor in[2], result;
  int i;

  if (tf_abi_version() != TF_ABI_VERSION) {
    fprintf(stderr, "abi mismatch: %u vs %u\n", tf_abi_version(), (unsigned)TF_ABI_VERSION);
    return 1;
  }
  printf("consumer: TileFoundry ABI %u.%u\n", tf_abi_version() >> 16, tf_abi_version() & 0xffff);
  if ((s = tf_module_parse(kSource, sizeof kSource - 1, "axpy.tf", &m)) != TF_OK) return fail("parse", s);
  s = tf_kernel_compile(m, "axpy", NULL, &k);
  tf_module_release(m);
  if (s != TF_OK) return fail("compile", s);
  for (i = 0; i < kN; ++i) {
    x[i] = (float)i * 0.5f;
    y[i] = 3.0f - (float)i;
  }
  in[0] = vector(x, &n);
  in[1] = vector(y, &n);
  result = vector(out, &n);
  s = tf_kernel_run(k, in, 2, &result, 1);
  tf_kernel_release(k);
  if (s != TF_OK) return fail("run", s);
  for (i = 0; i < kN; ++i) {
    if (fabsf(out[i] - (x[i] * 2.0f + y[i])) > 1e-5f) {
      fprintf(stderr, "consumer: out[%d] = %g, want %g\n", i, out[i], x[i] * 2.0f + y[i]);
      return 1;
    }
  }
  printf("consumer: axpy over %d elements matches\n", kN);
  return 0;
}
