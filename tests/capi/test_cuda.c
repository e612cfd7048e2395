/* TF_BACKEND_CUDA through the C ABI, in one of three modes (argv[1]):
 *
 *  absent    no CUDA driver can be loaded (TF_CUDA_DRIVER_LIBRARY names
 *            none): the backend says it is unavailable and why, compiling
 *            for it fails the same way, CPU kernels are unaffected and
 *            refuse cuda tensors.
 *  emulated  the emulated device (TF_CUDA_DRIVER_LIBRARY is
 *            libtf_emulated_cuda.so), whose counters also show that the
 *            caller's stream and workspace are used as given, that a kernel
 *            that cannot fail neither allocates nor synchronizes (so a CUDA
 *            graph can capture it), and that what a call allocates is freed.
 *  device    a GPU (libcuda.so.1): everything but the counters.
 *
 * In the last two the test's tensors live in device memory it allocates
 * through the driver API, like any CUDA user's: results against a
 * double-precision reference, run-time errors with nothing written, and
 * every device mistake a clear error. The mode is stated by the test's
 * registration, so a machine where it does not hold fails instead of
 * passing a different test. */
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
    "    return x * 3.0\n"
    "\n"
    "@func\n"
    "def halves(x: Tensor[(N, D), f32]) -> Tensor[(N, D), f32]:\n"
    "    y = x\n"
    "    for i in range(3):\n"
    "        y = y * 0.5 + x\n"
    "    return y\n";

/* The driver calls the test makes itself, as a CUDA user would (a
   CUdeviceptr is an unsigned long long in cuda.h). */
typedef unsigned long long cu_deviceptr;
static struct {
  int (*device_get)(int*, int);
  int (*primary_ctx_retain)(void**, int);
  int (*ctx_set_current)(void*);
  int (*mem_alloc)(cu_deviceptr*, size_t);
  int (*mem_free)(cu_deviceptr);
  int (*htod)(cu_deviceptr, const void*, size_t);
  int (*dtoh)(void*, cu_deviceptr, size_t);
  int (*stream_create)(void**, unsigned);
  int (*stream_destroy)(void*);
  int (*stream_synchronize)(void*);
} drv;

/* What the emulated driver lets a test observe (NULL on a GPU). */
static struct {
  int64_t (*launches)(void);
  int64_t (*synchronizations)(void);
  int64_t (*live_allocations)(void);
  int64_t (*plain_allocations)(void);
  int64_t (*module_loads)(void);
  const void* (*last_stream)(void);
  void (*set_capturing)(const void*, int);
} emu;

static void give_up(const char* why) {
  fprintf(stderr, "%s\n", why);
  printf("%d passed, %d failed\n", tf_test_passed, tf_test_failed + 1);
  exit(1);
}

/* Binds the driver the library loaded (the same file) and makes device 0's
 * primary context current. */
static void bind_driver(int emulated) {
  const char* path = getenv("TF_CUDA_DRIVER_LIBRARY");
  void* lib = dlopen(path && *path ? path : "libcuda.so.1", RTLD_NOW);
  void* ctx = NULL;
  int dev = 0;
  if (lib == NULL) give_up("the CUDA driver cannot be opened");
  *(void**)(&drv.device_get) = dlsym(lib, "cuDeviceGet");
  *(void**)(&drv.primary_ctx_retain) = dlsym(lib, "cuDevicePrimaryCtxRetain");
  *(void**)(&drv.ctx_set_current) = dlsym(lib, "cuCtxSetCurrent");
  *(void**)(&drv.mem_alloc) = dlsym(lib, "cuMemAlloc_v2");
  *(void**)(&drv.mem_free) = dlsym(lib, "cuMemFree_v2");
  *(void**)(&drv.htod) = dlsym(lib, "cuMemcpyHtoD_v2");
  *(void**)(&drv.dtoh) = dlsym(lib, "cuMemcpyDtoH_v2");
  *(void**)(&drv.stream_create) = dlsym(lib, "cuStreamCreate");
  *(void**)(&drv.stream_destroy) = dlsym(lib, "cuStreamDestroy_v2");
  *(void**)(&drv.stream_synchronize) = dlsym(lib, "cuStreamSynchronize");
  if (!drv.device_get || !drv.primary_ctx_retain || !drv.ctx_set_current || !drv.mem_alloc || !drv.mem_free ||
      !drv.htod || !drv.dtoh || !drv.stream_create || !drv.stream_destroy || !drv.stream_synchronize)
    give_up("the CUDA driver lacks a function the test calls");
  if (drv.device_get(&dev, 0) != 0 || drv.primary_ctx_retain(&ctx, dev) != 0 || drv.ctx_set_current(ctx) != 0)
    give_up("cannot make device 0's primary context current");
  *(void**)(&emu.launches) = dlsym(lib, "tf_emu_launches");
  *(void**)(&emu.synchronizations) = dlsym(lib, "tf_emu_synchronizations");
  *(void**)(&emu.live_allocations) = dlsym(lib, "tf_emu_live_allocations");
  *(void**)(&emu.plain_allocations) = dlsym(lib, "tf_emu_plain_allocations");
  *(void**)(&emu.module_loads) = dlsym(lib, "tf_emu_module_loads");
  *(void**)(&emu.last_stream) = dlsym(lib, "tf_emu_last_stream");
  *(void**)(&emu.set_capturing) = dlsym(lib, "tf_emu_set_capturing");
  CHECK(emulated == (emu.launches && emu.synchronizations && emu.live_allocations && emu.plain_allocations &&
                     emu.module_loads && emu.last_stream && emu.set_capturing));
}

static void* dev_alloc(size_t bytes) {
  cu_deviceptr p = 0;
  if (drv.mem_alloc(&p, bytes) != 0) give_up("cuMemAlloc failed");
  return (void*)(uintptr_t)p;
}
static void dev_free(void* p) { drv.mem_free((cu_deviceptr)(uintptr_t)p); }
static void upload(void* dst, const void* src, size_t bytes) {
  if (drv.htod((cu_deviceptr)(uintptr_t)dst, src, bytes) != 0) give_up("cuMemcpyHtoD failed");
}
static void download(void* dst, const void* src, size_t bytes) {
  if (drv.dtoh(dst, (cu_deviceptr)(uintptr_t)src, bytes) != 0) give_up("cuMemcpyDtoH failed");
}
/* A copy of host memory on the device. */
static void* dev_copy(const void* src, size_t bytes) {
  void* d = dev_alloc(bytes);
  upload(d, src, bytes);
  return d;
}
/* Whether the device bytes at d still hold the sentinel. */
static int dev_untouched(const void* d, size_t bytes) {
  unsigned char h[512];
  if (bytes > sizeof h) give_up("dev_untouched: too large");
  download(h, d, bytes);
  return tf_test_untouched(h, bytes);
}
static void dev_fill_sentinel(void* d, size_t bytes) {
  unsigned char h[512];
  if (bytes > sizeof h) give_up("dev_fill_sentinel: too large");
  tf_test_fill_sentinel(h, bytes);
  upload(d, h, bytes);
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

/* The rmsnorm error of a device result. */
static double dev_rms_err(const void* d) {
  float y[ROWS * COLS];
  download(y, d, sizeof y);
  return max_rms_err(y);
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

static void on_a_device(int emulated) {
  tf_module m = tf_test_parse(kSrc);
  tf_status s;
  tf_kernel k, div, two;
  int32_t backend = -1;
  uint64_t need = 0;
  int64_t launches = 0, syncs = 0, live = 0, plain = 0;
  DLTensor in[2], out[1];
  DLManagedTensor* called[2] = {NULL, NULL};
  void *stream = NULL, *workspace, *x, *w, *y;
  const size_t ws_bytes = (size_t)8 << 20; /* cuBLAS takes 4 MiB of a call with a MatMul */
  tf_run_options o;
  const DLDataType f32 = tf_test_dtype(kDLFloat, 32), i32 = tf_test_dtype(kDLInt, 32);

  CHECK_OK(tf_backend_available(TF_BACKEND_CUDA));
  bind_driver(emulated);
  if (drv.stream_create(&stream, 0) != 0) give_up("cuStreamCreate failed");
  workspace = dev_alloc(ws_bytes);
  x = dev_copy(x_, sizeof x_);
  w = dev_copy(w_, sizeof w_);
  y = dev_alloc(sizeof x_);
  k = compile_for(m, "rmsnorm", TF_BACKEND_CUDA, &s);
  CHECK_OK(s);
  CHECK_OK(tf_kernel_backend(k, &backend));
  CHECK(backend == TF_BACKEND_CUDA);
  in[0] = on_cuda(tf_test_tensor(x, f32, 2, x_shape), 0);
  in[1] = on_cuda(tf_test_tensor(w, f32, 1, w_shape), 0);
  out[0] = on_cuda(tf_test_tensor(y, f32, 2, x_shape), 0);

  /* The caller's stream and workspace: queued there, nothing allocated,
   * no synchronization. */
  CHECK_OK(tf_kernel_workspace_size(k, in, 2, &need));
  CHECK(need > 0 && need <= ws_bytes);
  if (emulated) {
    launches = emu.launches();
    syncs = emu.synchronizations();
    live = emu.live_allocations();
    plain = emu.plain_allocations();
  }
  o = options(stream, workspace, ws_bytes);
  dev_fill_sentinel(y, sizeof x_);
  CHECK_OK(tf_kernel_run_with_options(k, in, 2, out, 1, &o));
  if (emulated) {
    CHECK(emu.launches() > launches);
    CHECK(emu.last_stream() == stream);
    CHECK(emu.synchronizations() == syncs);
    CHECK(emu.live_allocations() == live && emu.plain_allocations() == plain);
  }
  drv.stream_synchronize(stream);
  CHECK(dev_rms_err(y) < 1e-5);
  if (emulated) {
    /* Captured into a graph: the same call works as well. */
    emu.set_capturing(stream, 1);
    dev_fill_sentinel(y, sizeof x_);
    CHECK_OK(tf_kernel_run_with_options(k, in, 2, out, 1, &o));
    emu.set_capturing(stream, 0);
    CHECK(dev_rms_err(y) < 1e-5);
  }

  /* Without a workspace: allocated on the stream, and freed. */
  dev_fill_sentinel(y, sizeof x_);
  CHECK_OK(tf_kernel_run(k, in, 2, out, 1));
  CHECK(dev_rms_err(y) < 1e-5);
  if (emulated) CHECK(emu.last_stream() == NULL && emu.live_allocations() == live);

  /* Too small a workspace, or mistakes of the options: nothing written. */
  dev_fill_sentinel(y, sizeof x_);
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

  /* Devices: one per call, the kernel's kind, one that exists. */
  in[1] = tf_test_tensor(w_, f32, 1, w_shape);
  CHECK_STATUS(tf_kernel_run(k, in, 2, out, 1), TF_ERR_INVALID_ARGUMENT,
               "input #1 (w): a cpu tensor, but 'rmsnorm' runs on cuda:0");
  in[1] = on_cuda(tf_test_tensor(w, f32, 1, w_shape), 1);
  CHECK_STATUS(tf_kernel_run(k, in, 2, out, 1), TF_ERR_INVALID_ARGUMENT,
               "input #1 (w): on cuda:1, but 'rmsnorm' runs on cuda:0, where the call's first tensor is");
  in[0] = on_cuda(in[0], 77);
  in[1] = on_cuda(in[1], 77);
  out[0] = on_cuda(out[0], 77);
  CHECK_STATUS(tf_kernel_run(k, in, 2, out, 1), TF_ERR_INVALID_ARGUMENT, "CUDA device 77 does not exist");
  CHECK(dev_untouched(y, sizeof x_));
  in[0] = on_cuda(in[0], 0);
  in[1] = on_cuda(in[1], 0);
  out[0] = on_cuda(out[0], 0);
  /* A stream for a CPU kernel is a mistake. */
  {
    tf_kernel cpu = tf_test_compile(m, "rmsnorm");
    float hy[ROWS * COLS];
    DLTensor cin[2], cout[1];
    cin[0] = tf_test_tensor(x_, f32, 2, x_shape);
    cin[1] = tf_test_tensor(w_, f32, 1, w_shape);
    cout[0] = tf_test_tensor(hy, f32, 2, x_shape);
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
    CHECK_STATUS(tf_kernel_run(k, in, 2, out, 1), TF_ERR_UNSUPPORTED,
                 "output #0: a CUDA kernel's output must be C-contiguous");
    out[0].strides = NULL;
  }

  /* tf_kernel_call: device outputs, freed by their deleters. */
  if (emulated) live = emu.live_allocations();
  CHECK_OK(tf_kernel_call(k, in, 2, called, 1));
  CHECK(called[0] != NULL && called[0]->dl_tensor.device.device_type == kDLCUDA &&
        called[0]->dl_tensor.device.device_id == 0 && called[0]->dl_tensor.ndim == 2 &&
        called[0]->dl_tensor.shape[0] == ROWS && called[0]->dl_tensor.shape[1] == COLS);
  if (emulated) CHECK(emu.live_allocations() == live + 1);
  if (called[0] != NULL) {
    CHECK(dev_rms_err(called[0]->dl_tensor.data) < 1e-5);
    called[0]->deleter(called[0]);
  }
  if (emulated) CHECK(emu.live_allocations() == live);
  o = options(stream, NULL, 0);
  CHECK_OK(tf_kernel_call_with_options(k, in, 2, called, 1, &o));
  if (emulated) CHECK(emu.last_stream() == stream);
  if (called[0] != NULL) {
    drv.stream_synchronize(stream);
    CHECK(dev_rms_err(called[0]->dl_tensor.data) < 1e-5);
    called[0]->deleter(called[0]);
  }

  /* A run-time error: the evaluator's message, the output untouched, and
   * the stream synchronized to learn it; refused under graph capture. */
  div = compile_for(m, "idiv", TF_BACKEND_CUDA, &s);
  CHECK_OK(s);
  {
    int32_t a[4] = {7, -7, 9, 1}, b[4] = {2, 2, 0, 1}, q[4];
    int64_t n4[1] = {4};
    void *da = dev_copy(a, sizeof a), *db = dev_copy(b, sizeof b), *dq = dev_alloc(sizeof q);
    DLTensor din[2], dout[1];
    din[0] = on_cuda(tf_test_tensor(da, i32, 1, n4), 0);
    din[1] = on_cuda(tf_test_tensor(db, i32, 1, n4), 0);
    dout[0] = on_cuda(tf_test_tensor(dq, i32, 1, n4), 0);
    if (emulated) syncs = emu.synchronizations();
    dev_fill_sentinel(dq, sizeof q);
    CHECK_STATUS(tf_kernel_run(div, din, 2, dout, 1), TF_ERR_RUNTIME, "division by zero");
    CHECK(dev_untouched(dq, sizeof q));
    if (emulated) CHECK(emu.synchronizations() > syncs);
    b[2] = 3;
    upload(db, b, sizeof b);
    CHECK_OK(tf_kernel_run(div, din, 2, dout, 1));
    download(q, dq, sizeof q);
    CHECK(q[0] == 3 && q[1] == -4 && q[2] == 3 && q[3] == 1); /* floor division, as torch */
    if (emulated) {
      emu.set_capturing(stream, 1);
      o = options(stream, NULL, 0);
      CHECK_STATUS(tf_kernel_run_with_options(div, din, 2, dout, 1, &o), TF_ERR_UNSUPPORTED,
                   "which a CUDA graph cannot capture");
      emu.set_capturing(stream, 0);
    }
    dev_free(da);
    dev_free(db);
    dev_free(dq);
  }

  /* Two outputs from two stages. */
  two = compile_for(m, "two", TF_BACKEND_CUDA, &s);
  CHECK_OK(s);
  if (emulated) live = emu.live_allocations();
  CHECK_OK(tf_kernel_call(two, in, 1, called, 2));
  if (called[0] != NULL && called[1] != NULL) {
    float sm[ROWS * COLS], rs[ROWS];
    int r, c;
    double err = 0;
    download(sm, called[0]->dl_tensor.data, sizeof sm);
    download(rs, called[1]->dl_tensor.data, sizeof rs);
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
  if (emulated) CHECK(emu.live_allocations() == live);

  /* Shape dispatch: each variant is loaded once, at compile; a call picks
   * one by the extent, and no extent loads (or compiles) anything again. */
  {
    tf_kernel sc;
    int64_t loads = emulated ? emu.module_loads() : 0, shape[2] = {1, COLS};
    float z[ROWS * COLS];
    int rows, j, ok = 1;
    DLTensor sin[1], sout[1];
    sc = compile_for(m, "scale", TF_BACKEND_CUDA, &s);
    CHECK_OK(s);
    if (emulated) CHECK(emu.module_loads() == loads + 2);
    for (rows = 1; rows <= ROWS; ++rows) {
      shape[0] = rows;
      sin[0] = on_cuda(tf_test_tensor(x, f32, 2, shape), 0);
      sout[0] = on_cuda(tf_test_tensor(y, f32, 2, shape), 0);
      CHECK_OK(tf_kernel_run(sc, sin, 1, sout, 1));
      download(z, y, (size_t)rows * COLS * sizeof(float));
      for (j = 0; j < rows * COLS; ++j) ok = ok && z[j] == x_[j] * (rows < 4 ? 2.0f : 3.0f);
    }
    CHECK(ok);
    if (emulated) CHECK(emu.module_loads() == loads + 2);
    tf_kernel_release(sc);
  }

  /* A loop: its segments run from the host on the caller's stream, in the
   * caller's workspace; none can fail, so the call neither allocates nor
   * synchronizes, and a graph captures it. */
  {
    tf_kernel lp = compile_for(m, "halves", TF_BACKEND_CUDA, &s);
    float z[ROWS * COLS];
    double err = 0;
    int j;
    DLTensor lin[1], lout[1];
    CHECK_OK(s);
    lin[0] = on_cuda(tf_test_tensor(x, f32, 2, x_shape), 0);
    lout[0] = on_cuda(tf_test_tensor(y, f32, 2, x_shape), 0);
    CHECK_OK(tf_kernel_workspace_size(lp, lin, 1, &need));
    CHECK(need > 0 && need <= ws_bytes);
    o = options(stream, workspace, need);
    CHECK_OK(tf_kernel_run_with_options(lp, lin, 1, lout, 1, &o)); /* loads the segments */
    if (emulated) {
      launches = emu.launches();
      syncs = emu.synchronizations();
      live = emu.live_allocations();
      plain = emu.plain_allocations();
      emu.set_capturing(stream, 1);
    }
    dev_fill_sentinel(y, sizeof x_);
    CHECK_OK(tf_kernel_run_with_options(lp, lin, 1, lout, 1, &o));
    if (emulated) {
      emu.set_capturing(stream, 0);
      CHECK(emu.launches() >= launches + 3 && emu.last_stream() == stream);
      CHECK(emu.synchronizations() == syncs);
      CHECK(emu.live_allocations() == live && emu.plain_allocations() == plain);
    }
    drv.stream_synchronize(stream);
    download(z, y, sizeof z);
    for (j = 0; j < ROWS * COLS; ++j) err = fmax(err, fabs(z[j] - 1.875 * x_[j]));
    CHECK(err < 1e-5);
    o = options(stream, workspace, need - 1);
    CHECK_STATUS(tf_kernel_run_with_options(lp, lin, 1, lout, 1, &o), TF_ERR_INVALID_ARGUMENT, "workspace holds");
    tf_kernel_release(lp);
  }

  /* A MatMul: cuBLAS on the same stream. */
  {
    const char* mm_src =
        "from tilefoundry.dsl import *\n"
        "@func\n"
        "def mm(a: Tensor[(5, 4), f32], b: Tensor[(4, 3), f32]) -> Tensor[(5, 3), f32]:\n"
        "    return matmul(a, b)\n"
        "\n"
        "@func\n"
        "def conv(x: Tensor[(1, 1, 4, 4), f32], w: Tensor[(1, 1, 3, 3), f32]) -> Tensor[(1, 1, 2, 2), f32]:\n"
        "    return conv2d(x, w, None)\n"
        "\n"
        "@func\n"
        "def mm8(a: Tensor[(2, 2), fp8e4m3], b: Tensor[(2, 2), fp8e4m3]) -> Tensor[(2, 2), fp8e4m3]:\n"
        "    return matmul(a, b)\n";
    tf_module mm = tf_test_parse(mm_src);
    tf_kernel km = compile_for(mm, "mm", TF_BACKEND_CUDA, &s);
    float bh[12], ch[15];
    int64_t b_shape[2] = {4, 3}, c_shape[2] = {5, 3};
    void *db, *dc;
    DLTensor min[2], mout[1];
    int r, c, l;
    double err = 0;
    CHECK_OK(s);
    for (r = 0; r < 12; ++r) bh[r] = 0.5f * (float)(r % 5) - 1.0f;
    db = dev_copy(bh, sizeof bh);
    dc = dev_alloc(sizeof ch);
    min[0] = on_cuda(tf_test_tensor(x, f32, 2, x_shape), 0); /* x is 5 x 4 */
    min[1] = on_cuda(tf_test_tensor(db, f32, 2, b_shape), 0);
    mout[0] = on_cuda(tf_test_tensor(dc, f32, 2, c_shape), 0);
    o = options(stream, workspace, ws_bytes);
    CHECK_OK(tf_kernel_workspace_size(km, min, 2, &need));
    CHECK(need <= ws_bytes);
    CHECK_OK(tf_kernel_run_with_options(km, min, 2, mout, 1, &o));
    drv.stream_synchronize(stream);
    download(ch, dc, sizeof ch);
    for (r = 0; r < 5; ++r)
      for (c = 0; c < 3; ++c) {
        double want = 0;
        for (l = 0; l < 4; ++l) want += (double)x_[r * 4 + l] * bh[l * 3 + c];
        err = fmax(err, fabs(ch[r * 3 + c] - want));
      }
    CHECK(err < 1e-5);
    tf_kernel_release(km);
    /* A Conv2D: columns and the cuBLAS GEMM in the workspace. The image is
     * x's first 16 values, the kernel b's first 9. */
    {
      tf_kernel kc = compile_for(mm, "conv", TF_BACKEND_CUDA, &s);
      int64_t img[4] = {1, 1, 4, 4}, ker[4] = {1, 1, 3, 3}, res[4] = {1, 1, 2, 2};
      int i, j;
      CHECK_OK(s);
      min[0] = on_cuda(tf_test_tensor(x, f32, 4, img), 0);
      min[1] = on_cuda(tf_test_tensor(db, f32, 4, ker), 0);
      mout[0] = on_cuda(tf_test_tensor(dc, f32, 4, res), 0);
      CHECK_OK(tf_kernel_workspace_size(kc, min, 2, &need));
      CHECK(need <= ws_bytes);
      CHECK_OK(tf_kernel_run_with_options(kc, min, 2, mout, 1, &o));
      drv.stream_synchronize(stream);
      download(ch, dc, 4 * sizeof(float));
      err = 0;
      for (r = 0; r < 2; ++r)
        for (c = 0; c < 2; ++c) {
          double want = 0;
          for (i = 0; i < 3; ++i)
            for (j = 0; j < 3; ++j) want += (double)x_[(r + i) * 4 + c + j] * bh[i * 3 + j];
          err = fmax(err, fabs(ch[r * 2 + c] - want));
        }
      CHECK(err < 1e-5);
      tf_kernel_release(kc);
    }
    dev_free(db);
    dev_free(dc);
    /* Not compiled natively (neither for the CPU nor for CUDA): a clear
     * error at compile, where a CPU kernel would run the evaluator. */
    CHECK(compile_for(mm, "mm8", TF_BACKEND_CUDA, &s) == NULL);
    CHECK_STATUS(s, TF_ERR_UNSUPPORTED, "fp8 MatMul is not compiled");
    tf_module_release(mm);
  }
  tf_kernel_release(two);
  tf_kernel_release(div);
  tf_kernel_release(k);
  tf_module_release(m);
  dev_free(x);
  dev_free(w);
  dev_free(y);
  dev_free(workspace);
  drv.stream_destroy(stream);
}

int main(int argc, char** argv) {
  int i;
  for (i = 0; i < ROWS * COLS; ++i) x_[i] = (float)((i * 7) % 11) * 0.25f - 1.0f;
  for (i = 0; i < COLS; ++i) w_[i] = 0.5f + 0.25f * (float)i;
  if (argc == 2 && strcmp(argv[1], "absent") == 0) {
    absent();
  } else if (argc == 2 && strcmp(argv[1], "emulated") == 0) {
    on_a_device(1);
  } else if (argc == 2 && strcmp(argv[1], "device") == 0) {
    on_a_device(0);
  } else {
    fprintf(stderr, "usage: %s absent|emulated|device\n", argv[0]);
    return 2;
  }
  TF_TEST_SUMMARY();
}
