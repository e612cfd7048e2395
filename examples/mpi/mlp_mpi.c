/* A tensor-parallel MLP block on two MPI ranks through the C ABI alone.
 *
 *   mpirun -np 2 build/bin/tf_example_mpi examples/mpi/mlp.tf
 *
 * Every rank builds the same logical tensors (one formula), keeps its
 * shares (the columns of w1 and the rows of w2 its coordinate owns), runs
 * the sharded kernel with a tf_communicator over MPI, and compares its
 * result with the unsharded kernel run on the logical tensors. The
 * communicator is the whole engine binding: one MPI communicator per mesh
 * axis (MPI_Comm_split by the other coordinates) and one MPI call per
 * collective. Exit status 0 when every rank agrees with the reference. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tilefoundry/tilefoundry.h>

#define MAX_AXES 4

typedef struct {
  int32_t num_axes;
  int64_t size[MAX_AXES], coord[MAX_AXES];
  MPI_Comm axis_comm[MAX_AXES]; /* the ranks that differ only on that axis */
} mpi_mesh;

static int64_t numel(const DLTensor* t) {
  int64_t n = 1;
  int32_t k;
  for (k = 0; k < t->ndim; ++k) n *= t->shape[k];
  return n;
}

/* The MPI datatype of a DLPack dtype, or MPI_DATATYPE_NULL. */
static MPI_Datatype mpi_type(DLDataType t) {
  if (t.lanes != 1) return MPI_DATATYPE_NULL;
  if (t.code == kDLFloat && t.bits == 32) return MPI_FLOAT;
  if (t.code == kDLFloat && t.bits == 64) return MPI_DOUBLE;
  if (t.code == kDLInt && t.bits == 32) return MPI_INT32_T;
  if (t.code == kDLInt && t.bits == 64) return MPI_INT64_T;
  if (t.code == kDLInt && t.bits == 8) return MPI_INT8_T;
  if (t.code == kDLUInt && t.bits == 8) return MPI_UINT8_T;
  return MPI_DATATYPE_NULL;
}

static MPI_Op mpi_op(int32_t reduction) {
  return reduction == TF_REDUCTION_MAX ? MPI_MAX : reduction == TF_REDUCTION_MIN ? MPI_MIN : MPI_SUM;
}

static void* data_of(const DLTensor* t) { return (char*)t->data + t->byte_offset; }

/* 0, or 1 after writing why into err. */
static int32_t done(int rc, const char* what, char* err, size_t errlen) {
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (rc == MPI_SUCCESS) return 0;
  MPI_Error_string(rc, msg, &len);
  snprintf(err, errlen, "%s: %s", what, msg);
  return 1;
}

static int32_t unsupported(DLDataType t, char* err, size_t errlen) {
  snprintf(err, errlen, "no MPI datatype for DLPack dtype (code %d, bits %d)", t.code, t.bits);
  return 1;
}

static int32_t mpi_all_reduce(void* ctx, int32_t axis, DLTensor* buf, int32_t reduction, char* err,
                              size_t errlen) {
  mpi_mesh* m = (mpi_mesh*)ctx;
  MPI_Datatype t = mpi_type(buf->dtype);
  if (t == MPI_DATATYPE_NULL) return unsupported(buf->dtype, err, errlen);
  return done(MPI_Allreduce(MPI_IN_PLACE, data_of(buf), (int)numel(buf), t, mpi_op(reduction), m->axis_comm[axis]),
              "MPI_Allreduce", err, errlen);
}

static int32_t mpi_all_gather(void* ctx, int32_t axis, const DLTensor* in, DLTensor* out, char* err, size_t errlen) {
  mpi_mesh* m = (mpi_mesh*)ctx;
  MPI_Datatype t = mpi_type(in->dtype);
  int n = (int)numel(in);
  if (t == MPI_DATATYPE_NULL) return unsupported(in->dtype, err, errlen);
  return done(MPI_Allgather(data_of(in), n, t, data_of(out), n, t, m->axis_comm[axis]), "MPI_Allgather", err,
              errlen);
}

static int32_t mpi_reduce_scatter(void* ctx, int32_t axis, const DLTensor* in, DLTensor* out, int32_t reduction,
                                  char* err, size_t errlen) {
  mpi_mesh* m = (mpi_mesh*)ctx;
  MPI_Datatype t = mpi_type(in->dtype);
  if (t == MPI_DATATYPE_NULL) return unsupported(in->dtype, err, errlen);
  return done(MPI_Reduce_scatter_block(data_of(in), data_of(out), (int)numel(out), t, mpi_op(reduction),
                                       m->axis_comm[axis]),
              "MPI_Reduce_scatter_block", err, errlen);
}

static int32_t mpi_all_to_all(void* ctx, int32_t axis, const DLTensor* in, DLTensor* out, char* err, size_t errlen) {
  mpi_mesh* m = (mpi_mesh*)ctx;
  MPI_Datatype t = mpi_type(in->dtype);
  int block = (int)(numel(in) / m->size[axis]);
  if (t == MPI_DATATYPE_NULL) return unsupported(in->dtype, err, errlen);
  return done(MPI_Alltoall(data_of(in), block, t, data_of(out), block, t, m->axis_comm[axis]), "MPI_Alltoall", err,
              errlen);
}

/* The mesh of kernel k over MPI_COMM_WORLD: ranks row-major over the axes. */
static int mesh_of(tf_kernel k, mpi_mesh* m) {
  int world = 0, rank = 0, a, other;
  int64_t total = 1, r;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (tf_kernel_mesh_rank(k, &m->num_axes) != TF_OK || m->num_axes > MAX_AXES) return 0;
  for (a = 0; a < m->num_axes; ++a) {
    const char* name = NULL;
    if (tf_kernel_mesh_axis(k, a, &m->size[a], &name) != TF_OK) return 0;
    total *= m->size[a];
  }
  if (total != world) {
    if (rank == 0) fprintf(stderr, "the kernel's mesh has %lld ranks; run with mpirun -np %lld\n",
                           (long long)total, (long long)total);
    return 0;
  }
  for (r = rank, a = m->num_axes - 1; a >= 0; --a) {
    m->coord[a] = r % m->size[a];
    r /= m->size[a];
  }
  for (a = 0; a < m->num_axes; ++a) {
    /* Color: the coordinates on every other axis; key: the coordinate on a. */
    int color = 0;
    for (other = 0; other < m->num_axes; ++other)
      if (other != a) color = color * (int)m->size[other] + (int)m->coord[other];
    MPI_Comm_split(MPI_COMM_WORLD, color, (int)m->coord[a], &m->axis_comm[a]);
  }
  return 1;
}

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
  return t;
}

static char* read_file(const char* path, size_t* len) {
  FILE* f = fopen(path, "rb");
  char* buf;
  long n;
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  n = ftell(f);
  fseek(f, 0, SEEK_SET);
  buf = (char*)malloc((size_t)n + 1);
  *len = fread(buf, 1, (size_t)n, f);
  buf[*len] = '\0';
  fclose(f);
  return buf;
}

#define B 4
#define D 8
#define F 16

int main(int argc, char** argv) {
  static float x[B * D], w1[D * F], w2[F * D], g[D], w1s[D * F], w2s[F * D];
  int64_t x_shape[2] = {B, D}, w1_shape[2] = {D, F}, w2_shape[2] = {F, D}, g_shape[1] = {D};
  int64_t w1s_shape[2], w2s_shape[2];
  int rank = 0, i, j, ok = 0, all_ok = 0, cols, c0;
  size_t len = 0;
  char* src = NULL;
  tf_module m = NULL;
  tf_kernel sharded = NULL, plain = NULL;
  mpi_mesh mesh;
  tf_communicator comm;
  DLTensor in[4];
  DLManagedTensor *got = NULL, *want = NULL;
  double worst = 0;

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc < 2 || !(src = read_file(argv[1], &len))) {
    fprintf(stderr, "usage: mpirun -np 2 %s examples/mpi/mlp.tf\n", argv[0]);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (tf_module_parse(src, len, argv[1], &m) != TF_OK || tf_kernel_compile(m, "mlp", NULL, &sharded) != TF_OK ||
      tf_kernel_compile(m, "plain", NULL, &plain) != TF_OK) {
    fprintf(stderr, "rank %d: %s\n", rank, tf_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  free(src);
  if (!mesh_of(sharded, &mesh)) MPI_Abort(MPI_COMM_WORLD, 1);

  /* The logical tensors, the same on every rank. */
  for (i = 0; i < B * D; ++i) x[i] = (float)((i * 5) % 13) * 0.125f - 0.75f;
  for (i = 0; i < D * F; ++i) w1[i] = (float)((i * 7) % 17) * 0.0625f - 0.5f;
  for (i = 0; i < F * D; ++i) w2[i] = (float)((i * 3) % 11) * 0.09f - 0.45f;
  for (i = 0; i < D; ++i) g[i] = 0.5f + 0.125f * (float)i;
  /* This rank's shares: w1 is Split(axis=1), w2 Split(axis=0) over "tp". */
  cols = F / (int)mesh.size[0];
  c0 = (int)mesh.coord[0] * cols;
  for (i = 0; i < D; ++i)
    for (j = 0; j < cols; ++j) w1s[i * cols + j] = w1[i * F + c0 + j];
  memcpy(w2s, w2 + c0 * D, (size_t)cols * D * sizeof(float));
  w1s_shape[0] = D, w1s_shape[1] = cols, w2s_shape[0] = cols, w2s_shape[1] = D;

  memset(&comm, 0, sizeof comm);
  comm.struct_size = sizeof comm;
  comm.num_axes = mesh.num_axes;
  comm.axis_size = mesh.size;
  comm.axis_coord = mesh.coord;
  comm.ctx = &mesh;
  comm.all_reduce = mpi_all_reduce;
  comm.all_gather = mpi_all_gather;
  comm.reduce_scatter = mpi_reduce_scatter;
  comm.all_to_all = mpi_all_to_all;

  in[0] = f32_tensor(x, 2, x_shape);
  in[1] = f32_tensor(w1s, 2, w1s_shape);
  in[2] = f32_tensor(w2s, 2, w2s_shape);
  in[3] = f32_tensor(g, 1, g_shape);
  if (tf_kernel_call_rank(sharded, in, 4, &got, 1, &comm) != TF_OK) {
    fprintf(stderr, "rank %d: %s\n", rank, tf_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  in[1] = f32_tensor(w1, 2, w1_shape);
  in[2] = f32_tensor(w2, 2, w2_shape);
  if (tf_kernel_call(plain, in, 4, &want, 1) != TF_OK) {
    fprintf(stderr, "rank %d: %s\n", rank, tf_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  for (i = 0; i < B * D; ++i) {
    double d = fabs((double)((float*)got->dl_tensor.data)[i] - ((float*)want->dl_tensor.data)[i]);
    if (d > worst) worst = d;
  }
  ok = worst < 1e-4;
  printf("rank %d of %lld (tp coordinate %lld): y[0, :4] = %.5f %.5f %.5f %.5f, max |y - unsharded| = %.2e %s\n",
         rank, (long long)mesh.size[0], (long long)mesh.coord[0], ((float*)got->dl_tensor.data)[0],
         ((float*)got->dl_tensor.data)[1], ((float*)got->dl_tensor.data)[2], ((float*)got->dl_tensor.data)[3], worst,
         ok ? "OK" : "MISMATCH");
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  got->deleter(got);
  want->deleter(want);
  for (i = 0; i < mesh.num_axes; ++i) MPI_Comm_free(&mesh.axis_comm[i]);
  tf_kernel_release(sharded);
  tf_kernel_release(plain);
  tf_module_release(m);
  MPI_Finalize();
  return all_ok ? 0 : 1;
}
