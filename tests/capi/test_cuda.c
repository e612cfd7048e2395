/* TF_BACKEND_CUDA through the C ABI, in one of two modes (argv[1]):
 *
 *  absent    no CUDA driver can be loaded (TF_CUDA_DRIVER_LIBRARY names
 *            none): the backend says it is unavailable and why, compiling
 *            for it fails the same way, CPU kernels are unaffected and
 *            refuse cuda tensors.
 *  emulated  the emulated device (TF_CUDA_DRIVER_LIBRARY is
 *            libtf_emulated_cuda.so, whose device memory is host memory):
 *            results against a double-precision reference, the caller's
 *            stream and workspace used as given (no allocation, no
 *            synchronization for a kernel that cannot fail, so a CUDA graph
 *            can capture it), library-allocated workspace and outputs freed,
 *            run-time errors with nothing written, and every device mistake
 *            a clear error.
 *
 * The mode is stated by the test's registration, so a machine where the
 * mode does not hold fails instead of passing a different test. */
#include <dlfcn.h>
#include <math.h>

#include "tf_test.h"

#define ROWS 5
#define COLS 4

static const char* kSrc =
    "from tilefoundry.dsl import *\n"
    "N = DimVar(\"N\", 1, 1024)\n"
    "D = DimVar(\"D\", 1, 4096)\n"
    "\n"
    "@func\n"
    "def rmsnorm(x: Tensor[(N, D), f32], w: Tensor[(D,), f32]) -> Tensor[(N, D), f32]:\n"
    "    return rms_norm(x, w, eps=1e-6)\n"
    "\n"
    "@func\n"
    "def idiv(a: Tensor[(N,), i32], b: Tensor[(N,), i32]) -> Tensor[(N,), i32]:\n"
    "    return a / b\n"
    "\n"
    "@func\n"
    "def two(x: Tensor[(N, D), f32]) -> tuple[Tensor[(N, D), f32], Tensor[(N, 1), f32]]:\n"
    "    s = softmax(x)\n"
    "    return s, sum(x, axes=-1)\n"
    "\n"
    "S = DimVar(\"S\", 1, 16)\n"
    "\n"
    "@func\n"
    "def scale(x: Tensor[(S, 4), f32]) -> Tensor[(S, 4), f32]:\n"
    "    pass\n"
    "\n"
    "@scale.specialize(S=(1, 4))\n"
    "def scale_small(x: Tensor[(S, 4), f32]) -> Tensor[(S, 4), f32]:\n"
    "    return x * 2.0\n"
    "\n"
    "@scale.specialize(S=(4, 16))\n"
    "def scale_large(x: Tensor[(S, 4), f32]) -> Tensor[(S, 4), f32]:\n"
    "    return x * 3.0\n";

/* What the emulated driver lets a test observe. */
static struct {
  int64_t (*launches)(void);
  int64_t (*synchronizations)(void);
  int64_t (*live_allocations)(void);
  int64_t (*module_loads)(void);
  int64_t (*plain_allocations)(void);
  const void* (*last_stream)(void);
  void (*set_capturing)(const void*, int);
} emu;

static void bind_emulator(void) {
  const char* path = getenv("TF_CUDA_DRIVER_LIBRARY");
  void* lib = path ? dlopen(path, RTLD_NOW) : NULL;
  if (lib == NULL) {
    fprintf(stderr, "the emulated driver is not loaded: %s\n", path ? path : "TF_CUDA_DRIVER_LIBRARY unset");
    printf("%d passed, %d failed\n", tf_test_passed, tf_test_failed + 1);
    exit(1);
  }
  *(void**)(&emu.launches) = dlsym(lib, "tf_emu_launches");
  *(void**)(&emu.synchronizations) = dlsym(lib, "tf_emu_synchronizations");
  *(void**)(&emu.live_allocations) = dlsym(lib, "tf_emu_live_allocations");
  *(void**)(&emu.plain_allocations) = dlsym(lib, "tf_emu_plain_allocations");
  *(void**)(&emu.module_loads) = dlsym(lib, "tf_emu_module_loads");
  *(void**)(&emu.last_stream) = dlsym(lib, "tf_emu_last_stream");
  *(void**)(&emu.set_capturing) = dlsym(lib, "tf_emu_set_capturing");
  CHECK(emu.launches && emu.synchronizations && emu.live_allocations && emu.plain_allocations && emu.module_loads &&
        emu.last_stream && emu.set_capturing);
}

static tf_kernel compile_for(tf_module m, const char* fn, int32_t backend, tf_status* status) {
  tf_compile_options o;
  tf_kernel k = NULL;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.backend = backend;
  *status = tf_kernel_compile(m, fn, &o, &k);
  return k;
}

static DLTensor on_cuda(DLTensor t, int device) {
  t.device.device_type = kDLCUDA;
  t.device.device_id = device;
  return t;
}

static tf_run_options options(void* stream, void* workspace, uint64_t bytes) {
  tf_run_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.stream = stream;
  o.workspace = workspace;
  o.workspace_bytes = bytes;
  return o;
}

static float x_[ROWS * COLS], w_[COLS];
static int64_t x_shape[2] = {ROWS, COLS}, w_shape[1] = {COLS};

static double max_rms_err(const float* y) {
  double m = 0;
  int r, c;
  for (r = 0; r < ROWS; ++r) {
    double ss = 0;
    for (c = 0; c < COLS; ++c) ss += (double)x_[r * COLS + c] * x_[r * COLS + c];
    for (c = 0; c < COLS; ++c) {
      double want = (double)x_[r * COLS + c] / sqrt(ss / COLS + 1e-6) * w_[c];
      double e = fabs(y[r * COLS + c] - want) / (1.0 + fabs(want));
      if (!(e <= m)) m = e;
    }
  }
  return m;
}

static void absent(void) {
  tf_module m = tf_test_parse(kSrc);
  tf_status s;
  tf_kernel k;
  float y[ROWS * COLS];
  DLTensor in[2], out[1];
  const DLDataType f32 = tf_test_dtype(kDLFloat, 32);
  CHECK_STATUS(tf_backend_available(TF_BACKEND_CUDA), TF_ERR_UNSUPPORTED, "the CUDA driver could not be loaded");
  CHECK_OK(tf_backend_available(TF_BACKEND_NATIVE));
  CHECK_STATUS(tf_backend_available(42), TF_ERR_INVALID_ARGUMENT, "unknown backend 42");
  k = compile_for(m, "rmsnorm", TF_BACKEND_CUDA, &s);
  CHECK_STATUS(s, TF_ERR_UNSUPPORTED, "the CUDA backend is unavailable: the CUDA driver could not be loaded");
  CHECK(k == NULL);
  /* The CPU backend is unaffected, and refuses device tensors. */
  k = tf_test_compile(m, "rmsnorm");
  in[0] = tf_test_tensor(x_, f32, 2, x_shape);
  in[1] = tf_test_tensor(w_, f32, 1, w_shape);
  out[0] = tf_test_tensor(y, f32, 2, x_shape);
  CHECK_OK(tf_kernel_run(k, in, 2, out, 1));
  CHECK(max_rms_err(y) < 1e-5);
  in[0] = on_cuda(in[0], 0);
  CHECK_STATUS(tf_kernel_run(k, in, 2, out, 1), TF_ERR_UNSUPPORTED, "compile it with TF_BACKEND_CUDA");
  tf_kernel_release(k);
  tf_module_release(m);
}

static void emulated(void) {
  tf_module m = tf_test_parse(kSrc);
  tf_status s;
  tf_kernel k, div, two;
  int32_t backend = -1;
  float y[ROWS * COLS];
  static double workspace[1024]; /* device memory is host memory here */
  uint64_t need = 0;
  int64_t launches, syncs, live, plain;
  DLTensor in[2], out[1];
  DLManagedTensor* called[2] = {NULL, NULL};
  void* const stream = (void*)(uintptr_t)0x5eed;
  tf_run_options o;
  const DLDataType f32 = tf_test_dtype(kDLFloat, 32), i32 = tf_test_dtype(kDLInt, 32);

  CHECK_OK(tf_backend_available(TF_BACKEND_CUDA));
  bind_emulator();
  k = compile_for(m, "rmsnorm", TF_BACKEND_CUDA, &s);
  CHECK_OK(s);
  CHECK_OK(tf_kernel_backend(k, &backend));
  CHECK(backend == TF_BACKEND_CUDA);
  in[0] = on_cuda(tf_test_tensor(x_, f32, 2, x_shape), 0);
  in[1] = on_cuda(tf_test_tensor(w_, f32, 1, w_shape), 0);
  out[0] = on_cuda(tf_test_tensor(y, f32, 2, x_shape), 0);

  /* The caller's stream and workspace: queued there, nothing allocated,
   * no synchronization. */
  CHECK_OK(tf_kernel_workspace_size(k, in, 2, &need));
  CHECK(need > 0 && need <= sizeof workspace);
  launches = emu.launches();
  syncs = emu.synchronizations();
  live = emu.live_allocations();
  plain = emu.plain_allocations();
  o = options(stream, workspace, sizeof workspace);
  tf_test_fill_sentinel(y, sizeof y);
  CHECK_OK(tf_kernel_run_with_options(k, in, 2, out, 1, &o));
  CHECK(max_rms_err(y) < 1e-5);
  CHECK(emu.launches() > launches);
  CHECK(emu.last_stream() == stream);
  CHECK(emu.synchronizations() == syncs);
  CHECK(emu.live_allocations() == live && emu.plain_allocations() == plain);
  /* Captured into a graph: the same call works as well. */
  emu.set_capturing(stream, 1);
  tf_test_fill_sentinel(y, sizeof y);
  CHECK_OK(tf_kernel_run_with_options(k, in, 2, out, 1, &o));
  CHECK(max_rms_err(y) < 1e-5);
  emu.set_capturing(stream, 0);

  /* Without a workspace: allocated on the stream, and freed. */
  tf_test_fill_sentinel(y, sizeof y);
  CHECK_OK(tf_kernel_run(k, in, 2, out, 1));
  CHECK(max_rms_err(y) < 1e-5);
  CHECK(emu.last_stream() == NULL);
  CHECK(emu.live_allocations() == live);

  /* Too small a workspace, or mistakes of the options: nothing written. */
  tf_test_fill_sentinel(y, sizeof y);
  o = options(stream, workspace, need - 1);
  CHECK_STATUS(tf_kernel_run_with_options(k, in, 2, out, 1, &o), TF_ERR_INVALID_ARGUMENT, "workspace holds");
  o = options(stream, NULL, 64);
  CHECK_STATUS(tf_kernel_run_with_options(k, in, 2, out, 1, &o), TF_ERR_INVALID_ARGUMENT,
               "workspace_bytes is 64 but workspace is NULL");
  o = options(stream, NULL, 0);
  o.flags = 1;
  CHECK_STATUS(tf_kernel_run_with_options(k, in, 2, out, 1, &o), TF_ERR_INVALID_ARGUMENT, "flags must be 0");
  o = options(stream, NULL, 0);
  o.struct_size = 2;
  CHECK_STATUS(tf_kernel_run_with_options(k, in, 2, out, 1, &o), TF_ERR_INVALID_ARGUMENT, "struct_size 2");
  CHECK(tf_test_untouched(y, sizeof y));

  /* Devices: one per call, the kernel's kind, one that exists. */
  in[1] = tf_test_tensor(w_, f32, 1, w_shape);
  CHECK_STATUS(tf_kernel_run(k, in, 2, out, 1), TF_ERR_INVALID_ARGUMENT,
               "input #1 (w): a cpu tensor, but 'rmsnorm' runs on cuda:0");
  in[1] = on_cuda(in[1], 1);
  CHECK_STATUS(tf_kernel_run(k, in, 2, out, 1), TF_ERR_INVALID_ARGUMENT,
               "input #1 (w): on cuda:1, but 'rmsnorm' runs on cuda:0, where the call's first tensor is");
  in[0] = on_cuda(in[0], 7);
  in[1] = on_cuda(in[1], 7);
  out[0] = on_cuda(out[0], 7);
  CHECK_STATUS(tf_kernel_run(k, in, 2, out, 1), TF_ERR_INVALID_ARGUMENT, "CUDA device 7 does not exist");
  CHECK(tf_test_untouched(y, sizeof y));
  /* The second device: its code is loaded at its first call. */
  in[0] = on_cuda(in[0], 1);
  in[1] = on_cuda(in[1], 1);
  out[0] = on_cuda(out[0], 1);
  CHECK_OK(tf_kernel_run(k, in, 2, out, 1));
  CHECK(max_rms_err(y) < 1e-5);
  in[0] = on_cuda(in[0], 0);
  in[1] = on_cuda(in[1], 0);
  out[0] = on_cuda(out[0], 0);
  /* A stream for a CPU kernel is a mistake. */
  {
    tf_kernel cpu = tf_test_compile(m, "rmsnorm");
    DLTensor cin[2], cout[1];
    cin[0] = tf_test_tensor(x_, f32, 2, x_shape);
    cin[1] = tf_test_tensor(w_, f32, 1, w_shape);
    cout[0] = tf_test_tensor(y, f32, 2, x_shape);
    o = options(stream, NULL, 0);
    CHECK_STATUS(tf_kernel_run_with_options(cpu, cin, 2, cout, 1, &o), TF_ERR_INVALID_ARGUMENT,
                 "a stream or a workspace is for a kernel compiled with TF_BACKEND_CUDA");
    CHECK_OK(tf_kernel_workspace_size(cpu, cin, 2, &need));
    CHECK(need == 0);
    tf_kernel_release(cpu);
  }
  /* A strided output. */
  {
    int64_t strides[2] = {1, ROWS};
    out[0].strides = strides;
    CHECK_STATUS(tf_kernel_run(k, in, 2, out, 1), TF_ERR_UNSUPPORTED, "output #0: a CUDA kernel's output must be C-contiguous");
    out[0].strides = NULL;
  }

  /* tf_kernel_call: device outputs, freed by their deleters. */
  live = emu.live_allocations();
  CHECK_OK(tf_kernel_call(k, in, 2, called, 1));
  CHECK(called[0] != NULL && called[0]->dl_tensor.device.device_type == kDLCUDA &&
        called[0]->dl_tensor.device.device_id == 0 && called[0]->dl_tensor.ndim == 2 &&
        called[0]->dl_tensor.shape[0] == ROWS && called[0]->dl_tensor.shape[1] == COLS);
  CHECK(emu.live_allocations() == live + 1);
  if (called[0] != NULL) {
    CHECK(max_rms_err((const float*)called[0]->dl_tensor.data) < 1e-5);
    called[0]->deleter(called[0]);
  }
  CHECK(emu.live_allocations() == live);
  o = options(stream, NULL, 0);
  CHECK_OK(tf_kernel_call_with_options(k, in, 2, called, 1, &o));
  CHECK(emu.last_stream() == stream);
  if (called[0] != NULL) called[0]->deleter(called[0]);

  /* A run-time error: the evaluator's message, the output untouched, and
   * the stream synchronized to learn it; refused under graph capture. */
  div = compile_for(m, "idiv", TF_BACKEND_CUDA, &s);
  CHECK_OK(s);
  {
    int32_t a[4] = {7, -7, 9, 1}, b[4] = {2, 2, 0, 1}, q[4];
    int64_t n4[1] = {4};
    DLTensor din[2], dout[1];
    din[0] = on_cuda(tf_test_tensor(a, i32, 1, n4), 0);
    din[1] = on_cuda(tf_test_tensor(b, i32, 1, n4), 0);
    dout[0] = on_cuda(tf_test_tensor(q, i32, 1, n4), 0);
    syncs = emu.synchronizations();
    tf_test_fill_sentinel(q, sizeof q);
    CHECK_STATUS(tf_kernel_run(div, din, 2, dout, 1), TF_ERR_RUNTIME, "division by zero");
    CHECK(tf_test_untouched(q, sizeof q));
    CHECK(emu.synchronizations() > syncs);
    b[2] = 3;
    CHECK_OK(tf_kernel_run(div, din, 2, dout, 1));
    CHECK(q[0] == 3 && q[1] == -4 && q[2] == 3 && q[3] == 1); /* floor division, as torch */
    emu.set_capturing(stream, 1);
    o = options(stream, NULL, 0);
    CHECK_STATUS(tf_kernel_run_with_options(div, din, 2, dout, 1, &o), TF_ERR_UNSUPPORTED,
                 "which a CUDA graph cannot capture");
    emu.set_capturing(stream, 0);
  }
  CHECK(emu.live_allocations() == live);

  /* Two outputs from two stages. */
  two = compile_for(m, "two", TF_BACKEND_CUDA, &s);
  CHECK_OK(s);
  live = emu.live_allocations();
  CHECK_OK(tf_kernel_call(two, in, 1, called, 2));
  if (called[0] != NULL && called[1] != NULL) {
    const float* sm = (const float*)called[0]->dl_tensor.data;
    const float* rs = (const float*)called[1]->dl_tensor.data;
    int r, c;
    double err = 0;
    for (r = 0; r < ROWS; ++r) {
      double mx = -1e30, z = 0, sum = 0;
      for (c = 0; c < COLS; ++c) mx = x_[r * COLS + c] > mx ? x_[r * COLS + c] : mx;
      for (c = 0; c < COLS; ++c) z += exp(x_[r * COLS + c] - mx);
      for (c = 0; c < COLS; ++c) {
        err = fmax(err, fabs(sm[r * COLS + c] - exp(x_[r * COLS + c] - mx) / z));
        sum += x_[r * COLS + c];
      }
      err = fmax(err, fabs(rs[r] - sum));
    }
    CHECK(err < 1e-5);
    called[0]->deleter(called[0]);
    called[1]->deleter(called[1]);
  }
  CHECK(emu.live_allocations() == live);

  /* Shape dispatch: each variant is loaded once, at compile; a call picks
   * one by the extent, and no extent loads (or compiles) anything again. */
  {
    tf_kernel sc;
    int64_t loads = emu.module_loads(), shape[2] = {1, COLS};
    float z[ROWS * COLS];
    int rows, j, ok = 1;
    DLTensor sin[1], sout[1];
    sc = compile_for(m, "scale", TF_BACKEND_CUDA, &s);
    CHECK_OK(s);
    CHECK(emu.module_loads() == loads + 2);
    for (rows = 1; rows <= ROWS; ++rows) {
      shape[0] = rows;
      sin[0] = on_cuda(tf_test_tensor(x_, f32, 2, shape), 0);
      sout[0] = on_cuda(tf_test_tensor(z, f32, 2, shape), 0);
      CHECK_OK(tf_kernel_run(sc, sin, 1, sout, 1));
      for (j = 0; j < rows * COLS; ++j) ok = ok && z[j] == x_[j] * (rows < 4 ? 2.0f : 3.0f);
    }
    CHECK(ok);
    CHECK(emu.module_loads() == loads + 2);
    tf_kernel_release(sc);
  }

  /* Not compiled for CUDA: a clear error at compile. */
  {
    const char* mm_src =
        "from tilefoundry.dsl import *\n"
        "@func\n"
        "def mm(a: Tensor[(4, 8), f32], b: Tensor[(8, 2), f32]) -> Tensor[(4, 2), f32]:\n"
        "    return matmul(a, b)\n";
    tf_module mm = tf_test_parse(mm_src);
    CHECK(compile_for(mm, "mm", TF_BACKEND_CUDA, &s) == NULL);
    CHECK_STATUS(s, TF_ERR_UNSUPPORTED, "not compiled for CUDA yet");
    tf_module_release(mm);
  }
  tf_kernel_release(two);
  tf_kernel_release(div);
  tf_kernel_release(k);
  tf_module_release(m);
}

int main(int argc, char** argv) {
  int i;
  for (i = 0; i < ROWS * COLS; ++i) x_[i] = (float)((i * 7) % 11) * 0.25f - 1.0f;
  for (i = 0; i < COLS; ++i) w_[i] = 0.5f + 0.25f * (float)i;
  if (argc == 2 && strcmp(argv[1], "absent") == 0) {
    absent();
  } else if (argc == 2 && strcmp(argv[1], "emulated") == 0) {
    emulated();
  } else {
    fprintf(stderr, "usage: %s absent|emulated\n", argv[0]);
    return 2;
  }
  TF_TEST_SUMMARY();
}
