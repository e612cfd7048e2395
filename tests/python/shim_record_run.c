/* LD_PRELOAD shim for test_zero_copy.py: interposes tf_kernel_run as seen by
 * libtilefoundry_torch.so, appends what actually crosses the ABI (data
 * pointer, byte_offset, strides of every input and output) to $TF_SHIM_LOG,
 * then forwards to the real tf_kernel_run in libtilefoundry.so. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include <tilefoundry/tilefoundry.h>

typedef tf_status (*run_fn)(tf_kernel, const DLTensor*, size_t, DLTensor*, size_t);

static void record(FILE* f, const char* role, const DLTensor* t) {
  fprintf(f, "%s %llu %llu", role, (unsigned long long)(uintptr_t)t->data,
          (unsigned long long)t->byte_offset);
  for (int32_t d = 0; t->strides && d < t->ndim; ++d) fprintf(f, " %lld", (long long)t->strides[d]);
  fprintf(f, "\n");
}

tf_status tf_kernel_run(tf_kernel k, const DLTensor* in, size_t n_in, DLTensor* out, size_t n_out) {
  /* By soname: libtilefoundry.so.0 from a build tree or make install, the
   * unversioned libtilefoundry.so from a wheel. */
  void* real_lib = dlopen("libtilefoundry.so.0", RTLD_LAZY | RTLD_NOLOAD);
  if (!real_lib) real_lib = dlopen("libtilefoundry.so", RTLD_LAZY | RTLD_NOLOAD);
  run_fn real = real_lib ? (run_fn)dlsym(real_lib, "tf_kernel_run") : NULL;
  if (!real || real == tf_kernel_run) abort();
  FILE* f = fopen(getenv("TF_SHIM_LOG"), "a");
  if (f) {
    for (size_t i = 0; i < n_in; ++i) record(f, "in", &in[i]);
    for (size_t i = 0; i < n_out; ++i) record(f, "out", &out[i]);
    fclose(f);
  }
  return real(k, in, n_in, out, n_out);
}
