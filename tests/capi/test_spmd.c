/* Sharded kernels at the C ABI: the mesh and every tensor's sharding as
 * data, a tensor-parallel MLP run on two ranks (threads here, with a small
 * communicator over shared memory) against the unsharded kernel, and every
 * way a caller can get the communicator or a share wrong, each an error
 * that leaves the outputs as they were. */
#define _POSIX_C_SOURCE 200809L /* pthread barriers under -std=c99 */
#include <math.h>
#include <pthread.h>

#include "tf_test.h"

static const char* kSrc =
    "from tilefoundry.dsl import *\n"
    "TARGET = Target(\"cpu\", topology=((\"device\", 2), (\"cta\", 1)))\n"
    "dev = Mesh(topology=\"device\", shape=(2,), axes=(\"tp\",))\n"
    "\n"
    "@func\n"
    "def mlp(x: Tensor[(4, 8), f32, ShardLayout(dev, (Broadcast(),))],\n"
    "        w1: Tensor[(8, 16), f32, ShardLayout(dev, (Split(axis=1),))],\n"
    "        w2: Tensor[(16, 8), f32, ShardLayout(dev, (Split(axis=0),))],\n"
    "        g: Tensor[(8,), f32, ShardLayout(dev, (Broadcast(),))]\n"
    "        ) -> Tensor[(4, 8), f32, ShardLayout(dev, (Broadcast(),))]:\n"
    "    y = silu(x @ w1) @ w2\n"
    "    y = reshard(y, layout=ShardLayout(dev, (Broadcast(),)))\n"
    "    return rms_norm(y + x, g, eps=1e-6)\n"
    "\n"
    "@func\n"
    "def plain(x: Tensor[(4, 8), f32], w1: Tensor[(8, 16), f32], w2: Tensor[(16, 8), f32],\n"
    "          g: Tensor[(8,), f32]) -> Tensor[(4, 8), f32]:\n"
    "    return rms_norm(silu(x @ w1) @ w2 + x, g, eps=1e-6)\n"
    "\n"
    "@func\n"
    "def gathered(x: Tensor[(4, 8), f32, ShardLayout(dev, (Split(axis=0),))]\n"
    "             ) -> Tensor[(4, 8), f32, ShardLayout(dev, (Broadcast(),))]:\n"
    "    return reshard(x * 2.0, layout=ShardLayout(dev, (Broadcast(),)))\n";

/* ---- a two-rank communicator over shared memory (f32 only) ---- */
typedef struct {
  pthread_barrier_t barrier;
  const void* posted[2];
} shared_mesh;

typedef struct {
  shared_mesh* mesh;
  int64_t size, coord;
  int gathers; /* all_gather calls this rank made */
} rank_ctx;

static int64_t numel(const DLTensor* t) {
  int64_t n = 1;
  int32_t k;
  for (k = 0; k < t->ndim; ++k) n *= t->shape[k];
  return n;
}

static int32_t refuse(char* err, size_t errlen, const char* why) {
  snprintf(err, errlen, "%s", why);
  return 1;
}

static size_t elem_bytes(const DLTensor* t) { return (size_t)t->dtype.bits / 8; }

/* Posts `in`, waits for the other rank, returns the two posts. */
static void exchange(rank_ctx* c, const void* in) {
  c->mesh->posted[c->coord] = in;
  pthread_barrier_wait(&c->mesh->barrier);
}

static int32_t shm_all_reduce(void* ctx, int32_t axis, DLTensor* buf, int32_t reduction, char* err, size_t errlen) {
  rank_ctx* c = (rank_ctx*)ctx;
  int64_t i, n = numel(buf);
  float* tmp;
  if (axis != 0 || buf->dtype.code != kDLFloat || buf->dtype.bits != 32) return refuse(err, errlen, "f32 on axis 0 only");
  tmp = (float*)malloc((size_t)n * sizeof(float));
  exchange(c, (const float*)buf->data);
  for (i = 0; i < n; ++i) {
    float a = ((const float*)c->mesh->posted[0])[i], b = ((const float*)c->mesh->posted[1])[i];
    tmp[i] = reduction == TF_REDUCTION_SUM ? a + b : reduction == TF_REDUCTION_MAX ? (a > b ? a : b) : (a < b ? a : b);
  }
  pthread_barrier_wait(&c->mesh->barrier); /* both have read both buffers */
  memcpy(buf->data, tmp, (size_t)n * sizeof(float));
  free(tmp);
  return 0;
}

static int32_t shm_all_gather(void* ctx, int32_t axis, const DLTensor* in, DLTensor* out, char* err, size_t errlen) {
  rank_ctx* c = (rank_ctx*)ctx;
  size_t bytes = (size_t)numel(in) * elem_bytes(in);
  if (axis != 0 || numel(out) != 2 * numel(in)) return refuse(err, errlen, "bad all_gather");
  ++c->gathers;
  exchange(c, in->data);
  memcpy(out->data, c->mesh->posted[0], bytes);
  memcpy((char*)out->data + bytes, c->mesh->posted[1], bytes);
  pthread_barrier_wait(&c->mesh->barrier);
  return 0;
}

/* A rank alone, as if its peer sent the same bytes (the tests that stop at
 * a later collective, on one thread). */
static int32_t lone_all_gather(void* ctx, int32_t axis, const DLTensor* in, DLTensor* out, char* err, size_t errlen) {
  size_t bytes = (size_t)numel(in) * elem_bytes(in);
  (void)ctx, (void)axis, (void)err, (void)errlen;
  memcpy(out->data, in->data, bytes);
  memcpy((char*)out->data + bytes, in->data, bytes);
  return 0;
}

static int32_t shm_unused(void* ctx, int32_t axis, const DLTensor* in, DLTensor* out, char* err, size_t errlen) {
  (void)ctx, (void)axis, (void)in, (void)out;
  return refuse(err, errlen, "not used by these kernels");
}

static int32_t shm_unused_rs(void* ctx, int32_t axis, const DLTensor* in, DLTensor* out, int32_t r, char* err,
                             size_t errlen) {
  (void)r;
  return shm_unused(ctx, axis, in, out, err, errlen);
}

static int32_t link_down(void* ctx, int32_t axis, DLTensor* buf, int32_t reduction, char* err, size_t errlen) {
  (void)ctx, (void)axis, (void)buf, (void)reduction;
  return refuse(err, errlen, "link down");
}

static tf_communicator communicator_of(rank_ctx* c) {
  tf_communicator comm;
  memset(&comm, 0, sizeof comm);
  comm.struct_size = sizeof comm;
  comm.num_axes = 1;
  comm.axis_size = &c->size;
  comm.axis_coord = &c->coord;
  comm.ctx = c;
  comm.all_reduce = shm_all_reduce;
  comm.all_gather = shm_all_gather;
  comm.reduce_scatter = shm_unused_rs;
  comm.all_to_all = shm_unused;
  return comm;
}

/* ---- the MLP's logical tensors and each rank's shares ---- */
static float x_[4 * 8], w1_[8 * 16], w2_[16 * 8], g_[8];
static int64_t x_shape[2] = {4, 8}, w1_shape[2] = {8, 16}, w2_shape[2] = {16, 8}, g_shape[1] = {8};

static DLTensor tensor(void* data, int32_t ndim, int64_t* shape) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.device.device_type = kDLCPU;
  t.ndim = ndim;
  t.dtype.code = kDLFloat;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  t.shape = shape;
  return t;
}

typedef struct {
  tf_kernel k;
  rank_ctx ctx;
  uint32_t flags; /* the communicator's */
  float w1[8 * 8], w2[8 * 8];
  tf_status status;
  float y[4 * 8];
} rank_job;

static void* run_rank(void* arg) {
  rank_job* j = (rank_job*)arg;
  static int64_t w1s_shape[2] = {8, 8}, w2s_shape[2] = {8, 8};
  int r, c, h = (int)j->ctx.coord;
  DLTensor in[4];
  DLManagedTensor* out[1] = {NULL};
  tf_communicator comm = communicator_of(&j->ctx);
  comm.flags = j->flags;
  for (r = 0; r < 8; ++r)
    for (c = 0; c < 8; ++c) {
      j->w1[r * 8 + c] = w1_[r * 16 + h * 8 + c]; /* columns [8h, 8h + 8) */
      j->w2[r * 8 + c] = w2_[(h * 8 + r) * 8 + c]; /* rows [8h, 8h + 8) */
    }
  in[0] = tensor(x_, 2, x_shape);
  in[1] = tensor(j->w1, 2, w1s_shape);
  in[2] = tensor(j->w2, 2, w2s_shape);
  in[3] = tensor(g_, 1, g_shape);
  j->status = tf_kernel_call_rank(j->k, in, 4, out, 1, &comm);
  if (j->status == TF_OK) {
    memcpy(j->y, out[0]->dl_tensor.data, sizeof j->y);
    out[0]->deleter(out[0]);
  }
  return NULL;
}

static void test_introspection(tf_kernel mlp, tf_kernel plain) {
  int32_t axes = -1;
  int64_t extent = 0;
  const char* name = NULL;
  tf_shard_attr a;
  int32_t backend = -1;
  CHECK_OK(tf_kernel_backend(mlp, &backend));
  CHECK(backend == TF_BACKEND_NATIVE); /* its ranks run compiled segments between collectives */
  CHECK_OK(tf_kernel_mesh_rank(mlp, &axes));
  CHECK(axes == 1);
  CHECK_OK(tf_kernel_mesh_axis(mlp, 0, &extent, &name));
  CHECK(extent == 2 && name != NULL && strcmp(name, "tp") == 0);
  CHECK_STATUS(tf_kernel_mesh_axis(mlp, 1, &extent, &name), TF_ERR_INVALID_ARGUMENT, "mesh axis 1 out of range");
  CHECK_OK(tf_kernel_input_shard(mlp, 0, 0, &a));
  CHECK(a.kind == TF_SHARD_BROADCAST && a.tensor_axis == -1 && a.reduction == -1);
  CHECK_OK(tf_kernel_input_shard(mlp, 1, 0, &a));
  CHECK(a.kind == TF_SHARD_SPLIT && a.tensor_axis == 1);
  CHECK_OK(tf_kernel_input_shard(mlp, 2, 0, &a));
  CHECK(a.kind == TF_SHARD_SPLIT && a.tensor_axis == 0);
  CHECK_OK(tf_kernel_output_shard(mlp, 0, 0, &a));
  CHECK(a.kind == TF_SHARD_BROADCAST);
  CHECK_STATUS(tf_kernel_input_shard(mlp, 4, 0, &a), TF_ERR_INVALID_ARGUMENT, "input index 4");
  CHECK_OK(tf_kernel_mesh_rank(plain, &axes));
  CHECK(axes == 0);
}

/* The MLP on two ranks against the unsharded kernel; `flags` the
 * communicator's, `gathers` the all_gathers each rank must make (the
 * agreement check's, unless the calls are trusted). */
static void test_two_ranks(tf_kernel mlp, tf_kernel plain, uint32_t flags, int gathers) {
  shared_mesh mesh;
  rank_job jobs[2];
  pthread_t threads[2];
  DLTensor in[4];
  DLManagedTensor* want[1] = {NULL};
  int r, i;
  double worst = 0;
  pthread_barrier_init(&mesh.barrier, NULL, 2);
  for (r = 0; r < 2; ++r) {
    memset(&jobs[r], 0, sizeof jobs[r]);
    jobs[r].k = mlp;
    jobs[r].flags = flags;
    jobs[r].ctx.mesh = &mesh;
    jobs[r].ctx.size = 2;
    jobs[r].ctx.coord = r;
    pthread_create(&threads[r], NULL, run_rank, &jobs[r]);
  }
  for (r = 0; r < 2; ++r) pthread_join(threads[r], NULL);
  pthread_barrier_destroy(&mesh.barrier);
  CHECK(jobs[0].status == TF_OK && jobs[1].status == TF_OK);
  CHECK(jobs[0].ctx.gathers == gathers && jobs[1].ctx.gathers == gathers);
  in[0] = tensor(x_, 2, x_shape);
  in[1] = tensor(w1_, 2, w1_shape);
  in[2] = tensor(w2_, 2, w2_shape);
  in[3] = tensor(g_, 1, g_shape);
  CHECK_OK(tf_kernel_call(plain, in, 4, want, 1));
  if (want[0] == NULL) return;
  for (r = 0; r < 2; ++r)
    for (i = 0; i < 32; ++i) {
      double d = fabs((double)jobs[r].y[i] - ((const float*)want[0]->dl_tensor.data)[i]);
      if (d > worst) worst = d;
    }
  CHECK(worst < 1e-4);
  CHECK(memcmp(jobs[0].y, jobs[1].y, sizeof jobs[0].y) == 0); /* every rank holds the same bits */
  want[0]->deleter(want[0]);
}

static void test_bad_calls(tf_kernel mlp, tf_kernel gathered) {
  static int64_t share_shape[2] = {2, 8}, bad_shape[2] = {3, 8};
  float share[3 * 8] = {0};
  rank_ctx ctx = {NULL, 2, 0, 0};
  int64_t wrong_size = 3, wrong_coord = 2;
  tf_communicator comm = communicator_of(&ctx), bad;
  DLManagedTensor* sentinel = (DLManagedTensor*)&ctx;
  DLManagedTensor* out[1];
  DLTensor in[1];
  in[0] = tensor(share, 2, share_shape);
  out[0] = sentinel;
  CHECK_STATUS(tf_kernel_call_rank(gathered, in, 1, out, 1, NULL), TF_ERR_INVALID_ARGUMENT, "comm");
  bad = comm;
  bad.struct_size = 8;
  CHECK_STATUS(tf_kernel_call_rank(gathered, in, 1, out, 1, &bad), TF_ERR_INVALID_ARGUMENT, "struct_size");
  bad = comm;
  bad.num_axes = 2;
  CHECK_STATUS(tf_kernel_call_rank(gathered, in, 1, out, 1, &bad), TF_ERR_INVALID_ARGUMENT, "1 axes");
  bad = comm;
  bad.axis_size = &wrong_size;
  CHECK_STATUS(tf_kernel_call_rank(gathered, in, 1, out, 1, &bad), TF_ERR_INVALID_ARGUMENT, "has 2 ranks");
  bad = comm;
  bad.axis_coord = &wrong_coord;
  CHECK_STATUS(tf_kernel_call_rank(gathered, in, 1, out, 1, &bad), TF_ERR_INVALID_ARGUMENT, "axis_coord[0] is 2");
  bad = comm;
  bad.all_to_all = NULL;
  CHECK_STATUS(tf_kernel_call_rank(gathered, in, 1, out, 1, &bad), TF_ERR_INVALID_ARGUMENT, "all_to_all");
  bad = comm;
  bad.flags = 2u;
  CHECK_STATUS(tf_kernel_call_rank(gathered, in, 1, out, 1, &bad), TF_ERR_INVALID_ARGUMENT, "unknown bits");
  /* A struct_size that stops before flags (fields are only ever appended): read as 0. */
  bad = comm;
  bad.struct_size = (uint32_t)offsetof(tf_communicator, flags);
  bad.flags = 2u; /* past struct_size: never read */
  in[0] = tensor(share, 2, bad_shape);
  CHECK_STATUS(tf_kernel_call_rank(gathered, in, 1, out, 1, &bad), TF_ERR_INVALID_ARGUMENT, "this rank's share of");
  in[0] = tensor(share, 2, share_shape);
  CHECK_STATUS(tf_kernel_call_rank(mlp, in, 1, out, 1, &comm), TF_ERR_INVALID_ARGUMENT, "takes 4 inputs");
  in[0] = tensor(share, 2, bad_shape);
  CHECK_STATUS(tf_kernel_call_rank(gathered, in, 1, out, 1, &comm), TF_ERR_INVALID_ARGUMENT,
               "this rank's share of");
  /* The host's collective fails: the kernel fails with its message. */
  in[0] = tensor(share, 2, share_shape);
  bad = comm;
  bad.all_gather = shm_unused;
  CHECK_STATUS(tf_kernel_call_rank(gathered, in, 1, out, 1, &bad), TF_ERR_RUNTIME, "not used by these kernels");
  CHECK(out[0] == sentinel);
}

static void test_failing_all_reduce(tf_kernel mlp) {
  static int64_t w_shape[2] = {8, 8};
  float w1[64] = {0}, w2[64] = {0};
  rank_ctx ctx = {NULL, 2, 1, 0};
  tf_communicator comm = communicator_of(&ctx);
  DLManagedTensor* out[1] = {NULL};
  DLTensor in[4];
  comm.all_reduce = link_down;
  comm.all_gather = lone_all_gather;
  in[0] = tensor(x_, 2, x_shape);
  in[1] = tensor(w1, 2, w_shape);
  in[2] = tensor(w2, 2, w_shape);
  in[3] = tensor(g_, 1, g_shape);
  CHECK_STATUS(tf_kernel_call_rank(mlp, in, 4, out, 1, &comm), TF_ERR_RUNTIME, "all_reduce failed: link down");
  CHECK(out[0] == NULL);
}

int main(void) {
  tf_module m = tf_test_parse(kSrc);
  tf_kernel mlp = NULL, plain = NULL, gathered = NULL;
  int i;
  for (i = 0; i < 32; ++i) x_[i] = (float)((i * 5) % 13) * 0.125f - 0.75f;
  for (i = 0; i < 128; ++i) w1_[i] = (float)((i * 7) % 17) * 0.0625f - 0.5f;
  for (i = 0; i < 128; ++i) w2_[i] = (float)((i * 3) % 11) * 0.09f - 0.45f;
  for (i = 0; i < 8; ++i) g_[i] = 0.5f + 0.125f * (float)i;
  CHECK_OK(tf_kernel_compile(m, "mlp", NULL, &mlp));
  CHECK_OK(tf_kernel_compile(m, "plain", NULL, &plain));
  CHECK_OK(tf_kernel_compile(m, "gathered", NULL, &gathered));
  if (mlp && plain && gathered) {
    test_introspection(mlp, plain);
    test_two_ranks(mlp, plain, 0, 1);
    test_two_ranks(mlp, plain, TF_COMM_TRUSTED_CALLS, 0);
    test_bad_calls(mlp, gathered);
    test_failing_all_reduce(mlp);
  }
  tf_kernel_release(mlp);
  tf_kernel_release(plain);
  tf_kernel_release(gathered);
  tf_module_release(m);
  TF_TEST_SUMMARY();
}
