/*
 * tilefoundry.h — the stable C ABI of TileFoundry.
 *
 * Contract for every function declared here:
 *   - returns a tf_status; TF_OK (0) means success, anything else leaves every
 *     out-parameter and every caller-owned buffer untouched;
 *   - never throws, never aborts: the message of the last failure on the
 *     calling thread is tf_last_error() (thread-local, valid until the next
 *     tf_* call on that thread);
 *   - handles are opaque; a NULL handle is TF_ERR_INVALID_ARGUMENT, a foreign
 *     or released one is TF_ERR_INVALID_HANDLE; releasing NULL is a no-op.
 * Thread-safety: tf_module and tf_kernel are immutable once created, so any
 * number of threads may use one concurrently (run, describe, print).
 * Strides in DLTensor are in elements (DLPack convention).
 */
#ifndef TILEFOUNDRY_H_
#define TILEFOUNDRY_H_

#include <stddef.h>
#include <stdint.h>
#include <dlpack/dlpack.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TF_VERSION_MAJOR 0
#define TF_VERSION_MINOR 9
#define TF_VERSION_PATCH 0
/* (major << 16) | minor; tf_abi_version() returns the value the library was built with. */
#define TF_ABI_VERSION ((TF_VERSION_MAJOR << 16) | TF_VERSION_MINOR)

/* DLPack >= 1.0's versioned managed tensor. With an older dlpack.h (Debian
 * ships 0.6) it is declared here with exactly upstream's layout
 * (dmlc/dlpack include/dlpack/dlpack.h, v1.x: version, manager_ctx, deleter,
 * flags, dl_tensor; 80 bytes on LP64), so that callers compiled against
 * either header exchange the same bytes. Guarded by DLPACK_MAJOR_VERSION,
 * which only DLPack >= 1.0 defines. */
#if !defined(DLPACK_MAJOR_VERSION)
typedef struct {
  uint32_t major;
  uint32_t minor;
} DLPackVersion;
typedef struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
} DLManagedTensorVersioned;
#define DLPACK_FLAG_BITMASK_READ_ONLY (1UL << 0UL)
#define DLPACK_FLAG_BITMASK_IS_COPIED (1UL << 1UL)
#endif
/* The DLManagedTensorVersioned major version this library reads and writes. */
#define TF_DLPACK_MAJOR_VERSION 1
#define TF_DLPACK_MINOR_VERSION 0

/* Upper bound on the rank of any tensor crossing this ABI. */
#define TF_MAX_NDIM 8

#if defined(_WIN32)
#define TF_API
#else
#define TF_API __attribute__((visibility("default")))
#endif

typedef enum tf_status {
  TF_OK = 0,
  TF_ERR_PARSE = 1,            /* malformed DSL source */
  TF_ERR_TYPE = 2,             /* a typing rule failed */
  TF_ERR_VERIFY = 3,           /* a structural (verifier) rule failed */
  TF_ERR_NOT_FOUND = 4,        /* no function of that name */
  TF_ERR_INVALID_ARGUMENT = 5, /* NULL pointer, bad tensor, bad option */
  TF_ERR_UNSUPPORTED = 6,      /* valid but not implemented (dtype, device) */
  TF_ERR_RUNTIME = 7,          /* a check on runtime data failed */
  TF_ERR_OUT_OF_MEMORY = 8,
  TF_ERR_INTERNAL = 9,         /* a bug in TileFoundry */
  TF_ERR_INVALID_HANDLE = 10   /* foreign or released handle (misuse) */
} tf_status;

typedef enum tf_backend {
  TF_BACKEND_NATIVE = 0,    /* compiled native code (falls back to the evaluator when unavailable) */
  TF_BACKEND_EVALUATOR = 1, /* the reference evaluator */
  TF_BACKEND_VIRTUAL_MESH = 2, /* every rank of the mesh as a thread of this process (docs/sharding.md) */
  TF_BACKEND_CUDA = 3          /* CUDA C++ compiled at run time for an NVIDIA GPU: kDLCUDA tensors
                                  (docs/cuda.md). Since 0.9. */
} tf_backend;

/* Options of tf_kernel_compile. Zero-initialize, then set struct_size =
 * sizeof(tf_compile_options); fields are only ever appended. */
typedef struct tf_compile_options {
  uint32_t struct_size;
  int32_t backend;       /* a tf_backend */
  uint32_t flags;        /* reserved, must be 0 */
  uint32_t reserved[5];  /* must be 0 */
} tf_compile_options;

typedef struct tf_module_s* tf_module; /* a parsed, sealed (verified + typed) module */
typedef struct tf_kernel_s* tf_kernel; /* one function of a module, ready to run */

TF_API uint32_t tf_abi_version(void);
/* Never NULL; "" when no failure has happened on this thread. */
TF_API const char* tf_last_error(void);
/* Static name of a status code ("TF_ERR_PARSE"); never NULL. */
TF_API const char* tf_status_name(tf_status s);

/* --- modules ------------------------------------------------------------ */
/* Parses DSL source of len bytes; filename (may be NULL) is used in messages. */
TF_API tf_status tf_module_parse(const char* src, size_t len, const char* filename, tf_module* out);
/* Canonical DSL source; free with tf_string_free. */
TF_API tf_status tf_module_print(tf_module m, char** out_text);
TF_API tf_status tf_module_num_functions(tf_module m, size_t* out);
/* *out stays owned by m and lives as long as m. */
TF_API tf_status tf_module_function_name(tf_module m, size_t i, const char** out);
/* The typed signature of fn in DSL syntax; free with tf_string_free. */
TF_API tf_status tf_module_signature(tf_module m, const char* fn, char** out_text);
TF_API void tf_module_release(tf_module m);
/* AOT: compiles every function of m that the native code generator handles
 * into one shared library written at path, with m's text embedded; the rest
 * will run on the evaluator. Needs a C++ compiler (TF_CC):
 * TF_ERR_UNSUPPORTED without one. Since 0.2. */
TF_API tf_status tf_module_export_library(tf_module m, const char* path);
/* Loads a library written by tf_module_export_library, in any process, with
 * no compiler needed. Kernels compiled from *out with TF_BACKEND_NATIVE run
 * the library's code (tf_kernel_backend: TF_BACKEND_NATIVE). TF_ERR_NOT_FOUND
 * when path cannot be loaded, TF_ERR_INVALID_ARGUMENT when it is not a
 * TileFoundry kernel library. Release *out with tf_module_release. Since 0.2. */
TF_API tf_status tf_module_load_library(const char* path, tf_module* out);

/* --- the DSL's names ---------------------------------------------------- */
/* Every name a kernel file may call inside a @func body besides the
 * compile-time builtins DimVar, dim_min and dim_max: the surface functions
 * (add, sum, rms_norm, ...; docs/dsl.md section 7) and the calls the parser
 * spells itself (reshard, local, tile, load_tile). A language binding that
 * makes kernel files valid source in its language (the Python package's
 * `tilefoundry.dsl`) defines these names from this list rather than keeping
 * its own. The list does not change while the library is loaded. Since 0.5. */
TF_API tf_status tf_surface_function_count(size_t* out);
/* Name i, i < the count; *out is static (valid as long as the library is
 * loaded). Since 0.5. */
TF_API tf_status tf_surface_function_name(size_t i, const char** out);

/* --- kernels ------------------------------------------------------------ */
/* opts may be NULL for the defaults. The kernel keeps its module alive. */
TF_API tf_status tf_kernel_compile(tf_module m, const char* fn, const tf_compile_options* opts,
                                   tf_kernel* out);
/* The backend that actually runs this kernel (a native request may report the evaluator). */
TF_API tf_status tf_kernel_backend(tf_kernel k, int32_t* out);
/* *out lives as long as k. */
TF_API tf_status tf_kernel_name(tf_kernel k, const char** out);
TF_API tf_status tf_kernel_num_inputs(tf_kernel k, size_t* out);
TF_API tf_status tf_kernel_num_outputs(tf_kernel k, size_t* out);
/* Name of input parameter i; *out lives as long as k. */
TF_API tf_status tf_kernel_input_name(tf_kernel k, size_t i, const char** out);
/* dtype and rank of input i as declared by the signature. */
TF_API tf_status tf_kernel_input_desc(tf_kernel k, size_t i, DLDataType* dtype, int32_t* ndim);
/* dtype, rank and shape of output i for these inputs; shape has TF_MAX_NDIM slots. */
TF_API tf_status tf_kernel_output_desc(tf_kernel k, const DLTensor* in, size_t n_in, size_t i,
                                       DLDataType* dtype, int32_t* ndim, int64_t* shape);
/* In-place outputs: *input receives the input whose buffer output i is
 * written into (the function declared it with @func(inplace=...)), or -1 for
 * an output of its own. Such an output is passed to tf_kernel_run as that
 * input's very tensor (same data, byte_offset and strides), and it must share
 * no memory with any other input or output; either mistake is
 * TF_ERR_INVALID_ARGUMENT and nothing is written. Since 0.7. */
TF_API tf_status tf_kernel_output_alias(tf_kernel k, size_t i, int64_t* input);
/* Runs k on borrowed inputs, writing caller-allocated outputs of the shapes
 * tf_kernel_output_desc gives. On failure no output byte is written (an
 * in-place output's input included). */
TF_API tf_status tf_kernel_run(tf_kernel k, const DLTensor* in, size_t n_in, DLTensor* out,
                               size_t n_out);
/* Like tf_kernel_run but allocates the outputs; the caller owns each *out[i]
 * and calls its deleter. On failure every out[i] is left as it was. An
 * in-place output is written into its input's memory, and *out[i] is a view
 * of that memory (its deleter frees the view only), valid while the input's
 * memory is. */
TF_API tf_status tf_kernel_call(tf_kernel k, const DLTensor* in, size_t n_in,
                                DLManagedTensor** out, size_t n_out);
/* tf_kernel_run over DLPack >= 1.0 tensors, all borrowed: their deleters are
 * never called and ownership stays with the caller. A tensor whose
 * version.major is not TF_DLPACK_MAJOR_VERSION is TF_ERR_UNSUPPORTED (no
 * other field of it is read); an output with DLPACK_FLAG_BITMASK_READ_ONLY is
 * TF_ERR_INVALID_ARGUMENT, and nothing is written. Since 0.2. */
TF_API tf_status tf_kernel_run_versioned(tf_kernel k, const DLManagedTensorVersioned* const* in,
                                         size_t n_in, DLManagedTensorVersioned* const* out,
                                         size_t n_out);
/* Like tf_kernel_call but hands out DLPack >= 1.0 tensors: version
 * {TF_DLPACK_MAJOR_VERSION, TF_DLPACK_MINOR_VERSION}, flags 0 (writable,
 * owned by the caller, who calls each deleter once). Since 0.2. */
TF_API tf_status tf_kernel_call_versioned(tf_kernel k, const DLTensor* in, size_t n_in,
                                          DLManagedTensorVersioned** out, size_t n_out);
/* Adds a reference; each retain is matched by one tf_kernel_release. */
TF_API tf_status tf_kernel_retain(tf_kernel k);
TF_API void tf_kernel_release(tf_kernel k);

TF_API void tf_string_free(char* s);

/* --- running on a GPU ---------------------------------------------------- */
/* TF_OK when `backend` (a tf_backend) can compile and run kernels in this
 * process; otherwise TF_ERR_UNSUPPORTED, and tf_last_error() says why (for
 * TF_BACKEND_CUDA: no NVIDIA driver, no device, no NVRTC). Since 0.9. */
TF_API tf_status tf_backend_available(int32_t backend);

/* Options of one run. Zero-initialize, then set struct_size =
 * sizeof(tf_run_options); fields are only ever appended. Since 0.9. */
typedef struct tf_run_options {
  uint32_t struct_size;
  uint32_t flags;           /* reserved, must be 0 */
  /* TF_BACKEND_CUDA: the CUstream (cudaStream_t) the kernels are launched
   * on, in order after the work already queued there; NULL is the legacy
   * default stream. Must be NULL for the other backends. */
  void* stream;
  /* TF_BACKEND_CUDA: device memory of workspace_bytes on the tensors'
   * device, at least tf_kernel_workspace_size for these inputs, that the
   * call may use until its work on `stream` is done; NULL lets the call
   * allocate it on `stream` (the driver's stream-ordered allocator). */
  void* workspace;
  uint64_t workspace_bytes;
} tf_run_options;

/* tf_kernel_run with options (opts may be NULL: the defaults). On
 * TF_BACKEND_CUDA every tensor is kDLCUDA on one device, the outputs are
 * C-contiguous, and the call returns once the work is queued on the
 * stream; a kernel that can fail at run time (a check, an integer
 * division) waits for it to report, writing its outputs only on success,
 * and so cannot be captured into a CUDA graph. Since 0.9. */
TF_API tf_status tf_kernel_run_with_options(tf_kernel k, const DLTensor* in, size_t n_in, DLTensor* out,
                                            size_t n_out, const tf_run_options* opts);
/* tf_kernel_call with options. On TF_BACKEND_CUDA the outputs are device
 * memory of the inputs' device (their deleters free it, after waiting for
 * the device). Since 0.9. */
TF_API tf_status tf_kernel_call_with_options(tf_kernel k, const DLTensor* in, size_t n_in,
                                             DLManagedTensor** out, size_t n_out, const tf_run_options* opts);
/* Bytes of workspace a run of k on these inputs needs (tf_run_options);
 * 0 for a kernel that needs none (every backend but TF_BACKEND_CUDA). Since 0.9. */
TF_API tf_status tf_kernel_workspace_size(tf_kernel k, const DLTensor* in, size_t n_in, uint64_t* bytes);

/* --- shapes as data ----------------------------------------------------- */
/* The signature's shape rules, for computing output shapes (symbolic ones
 * included) without inputs and without parsing tf_module_signature's text.
 *
 * A dim program is a postfix (RPN) program of int64 words computing one
 * extent from the kernel's input extents: an opcode word, then its operand
 * words. Evaluate it on a stack of int64; the result is the one value left.
 * Every DimVar is read at the input axis that binds it (its first occurrence,
 * in input then axis order), so a program names no DimVar. Since 0.4. */
typedef enum tf_dim_op {
  TF_DIM_OP_PUSH_CONST = 1,        /* operand c: pushes c */
  TF_DIM_OP_PUSH_INPUT_EXTENT = 2, /* operands input, axis: pushes that input's extent on axis */
  TF_DIM_OP_ADD = 3,               /* pops b, then a; pushes a + b */
  TF_DIM_OP_SUB = 4,               /* a - b */
  TF_DIM_OP_MUL = 5,               /* a * b */
  TF_DIM_OP_FLOORDIV = 6,          /* floor(a / b); b == 0 fails the kernel (TF_ERR_RUNTIME) */
  TF_DIM_OP_MOD = 7,               /* a - floor(a / b) * b; b == 0 fails the kernel */
  TF_DIM_OP_MIN = 8,               /* min(a, b) */
  TF_DIM_OP_MAX = 9                /* max(a, b) */
} tf_dim_op;

/* What binding requires of one input axis (every run checks these). Since 0.4. */
typedef enum tf_axis_rule {
  TF_AXIS_STATIC = 1,        /* the extent must equal `value` */
  TF_AXIS_BINDS_DIMVAR = 2,  /* a DimVar's first occurrence: the extent binds it, in [lo, hi) */
  TF_AXIS_EQUALS_DIMVAR = 3, /* a later occurrence: in [lo, hi) and equal to the extent of
                                input dimvar_input, axis dimvar_axis (where it is bound) */
  TF_AXIS_EXPR = 4           /* the extent must equal its program (tf_kernel_input_extent) */
} tf_axis_rule;

/* Zero-initialize, set struct_size = sizeof(tf_input_axis); fields are only
 * ever appended. A smaller (older) struct is filled as far as it goes; on
 * return struct_size is the number of bytes this library filled. Since 0.4. */
typedef struct tf_input_axis {
  uint32_t struct_size;
  int32_t rule;         /* a tf_axis_rule */
  int64_t value;        /* TF_AXIS_STATIC: the extent; else 0 */
  int64_t lo;           /* the DimVar rules: the DimVar's range [lo, hi); else 0 and 0 */
  int64_t hi;
  int64_t dimvar_input; /* the DimVar rules: the input and axis that bind the DimVar */
  int64_t dimvar_axis;  /* (for TF_AXIS_BINDS_DIMVAR this axis itself); else -1 and -1 */
} tf_input_axis;

/* dtype and rank of output i as declared by the signature (no inputs needed). Since 0.4. */
TF_API tf_status tf_kernel_output_type(tf_kernel k, size_t i, DLDataType* dtype, int32_t* ndim);
/* The rule binding applies to input i's axis `axis` (axis < its rank). Since 0.4. */
TF_API tf_status tf_kernel_input_axis(tf_kernel k, size_t i, size_t axis, tf_input_axis* out);
/* Dim programs, with the caller-provided buffer protocol: capacity 0 (program
 * may then be NULL) only sets *length to the program's length in words; a
 * capacity >= that length receives the program and *length; a smaller one is
 * TF_ERR_INVALID_ARGUMENT and nothing is written.
 * tf_kernel_input_extent: the value binding requires of input i's axis (for
 * the axis that binds a DimVar, that axis itself). tf_kernel_output_extent:
 * output i's extent on axis; a value below 0 fails the kernel (TF_ERR_RUNTIME).
 * An extent over a DimVar that no input axis binds is TF_ERR_UNSUPPORTED
 * (such a kernel fails on every input). Since 0.4. */
TF_API tf_status tf_kernel_input_extent(tf_kernel k, size_t i, size_t axis, int64_t* program,
                                        size_t capacity, size_t* length);
TF_API tf_status tf_kernel_output_extent(tf_kernel k, size_t i, size_t axis, int64_t* program,
                                         size_t capacity, size_t* length);

/* --- output memory ------------------------------------------------------ */
/* tf_kernel_call and the torch operators hand out outputs from a caching
 * pool: a freed output of 128 KiB or more is kept, by size class, and the
 * next output of its class reuses its (already faulted-in) pages. Free blocks
 * are kept up to a byte limit (default: 1/8 of physical memory, at most
 * 4 GiB; the environment variable TF_MEMORY_CACHE_LIMIT, in bytes with an
 * optional K / M / G suffix, overrides it; 0 turns caching off), the least
 * recently freed returned to the OS first. Thread-safe. Since 0.3. */
typedef struct tf_buffer_s* tf_buffer;
/* At least `bytes` (0 allowed) of uninitialized, 64-byte aligned memory from
 * the pool; *data receives its address, valid until tf_buffer_free(*out).
 * TF_ERR_OUT_OF_MEMORY when it cannot be had. */
TF_API tf_status tf_buffer_alloc(size_t bytes, tf_buffer* out, void** data);
/* Returns b's memory to the pool. NULL, or a handle already freed, is ignored. */
TF_API void tf_buffer_free(tf_buffer b);

/* Zero-initialize, set struct_size = sizeof(tf_memory_stats); fields are only
 * ever appended. A smaller (older) struct is filled as far as it goes; on
 * return struct_size is the number of bytes this library filled. */
typedef struct tf_memory_stats {
  uint32_t struct_size;
  uint32_t reserved;       /* 0 */
  uint64_t bytes_in_use;   /* pooled memory handed out and not yet freed */
  uint64_t bytes_cached;   /* free memory kept for reuse */
  uint64_t blocks_cached;
  uint64_t cache_limit;    /* bound on bytes_cached */
  uint64_t hits;           /* pooled requests served from the cache */
  uint64_t misses;         /* pooled requests that needed fresh memory */
  uint64_t bytes_released; /* returned to the OS: evicted, over the limit or emptied */
} tf_memory_stats;
TF_API tf_status tf_memory_get_stats(tf_memory_stats* out);
/* Sets the byte limit of the cache (0: no caching) and evicts down to it now. */
TF_API tf_status tf_memory_set_cache_limit(uint64_t bytes);
/* Returns every cached block to the OS (memory in use is unaffected). */
TF_API tf_status tf_memory_empty_cache(void);

/* --- threads ------------------------------------------------------------ */
/* Compiled kernels run their parallel loops on at most n threads (n >= 1), or
 * on the OpenMP default when n is 0 (OMP_NUM_THREADS, else one per core).
 * Process-wide, effective from the next call; the calling thread's own
 * OpenMP setting is left as it was. The torch operators set it to torch's
 * intra-op thread count (torch.set_num_threads) at each call. Since 0.3. */
TF_API tf_status tf_set_num_threads(int32_t n);
/* The setting: n as last set, 0 when unset. */
TF_API tf_status tf_get_num_threads(int32_t* out);

/* --- sharded kernels across ranks (SPMD) ------------------------------- */
/* A function whose types carry ShardLayouts over a device mesh runs SPMD:
 * every rank of the mesh (a process, typically) calls tf_kernel_call_rank
 * with its own shares of the arguments and receives its shares of the
 * results; values cross ranks only through the collectives of a
 * tf_communicator the host fills in over its own engine (MPI,
 * torch.distributed, ...). docs/sharding.md says which share of a tensor a
 * rank holds and which collective each Reshard makes. Since 0.8. */

typedef enum tf_reduction {
  TF_REDUCTION_SUM = 0,
  TF_REDUCTION_MAX = 1,
  TF_REDUCTION_MIN = 2
} tf_reduction;

typedef enum tf_shard_kind {
  TF_SHARD_BROADCAST = 0, /* every rank of the axis holds the whole tensor */
  TF_SHARD_SPLIT = 1,     /* the axis's ranks hold consecutive blocks of tensor_axis */
  TF_SHARD_PARTIAL = 2    /* the tensor is the reduction of the axis's ranks' shares */
} tf_shard_kind;

/* The state of a tensor on one mesh axis. */
typedef struct tf_shard_attr {
  int32_t kind;        /* a tf_shard_kind */
  int32_t tensor_axis; /* TF_SHARD_SPLIT: the tensor axis the mesh axis partitions; else -1 */
  int32_t reduction;   /* TF_SHARD_PARTIAL: a tf_reduction; else -1 */
} tf_shard_attr;

/* One rank's collectives. The group of mesh axis `axis` is the ranks whose
 * coordinates equal this rank's on every other axis, ordered by their
 * coordinate on `axis`. Every tensor is contiguous and on the kernel's
 * device, and every rank of a group passes the same dtype and sizes:
 *   all_reduce:     buf <- the reduction of the group's bufs, in place
 *   all_gather:     out (group x n elements) <- the group's in (n each), in order
 *   reduce_scatter: in (group x n): block j, reduced over the group, to the
 *                   out (n) of the rank with coordinate j
 *   all_to_all:     in (group x n): block j to the rank with coordinate j;
 *                   out block i from the rank with coordinate i
 * (NCCL's and torch.distributed's "into tensor" forms). Each returns 0, or
 * nonzero after writing a NUL-terminated message of at most errlen bytes to
 * err; the kernel then fails with TF_ERR_RUNTIME and that message. A host
 * must make a failure on one rank an error on the others (a timeout of its
 * engine), never a hang. Zero-initialize, set struct_size =
 * sizeof(tf_communicator); fields are only ever appended. */
typedef struct tf_communicator {
  uint32_t struct_size;
  int32_t num_axes;           /* the kernel's mesh axes (tf_kernel_mesh_rank) */
  const int64_t* axis_size;   /* num_axes entries: the ranks on each axis, as the kernel's mesh */
  const int64_t* axis_coord;  /* num_axes entries: this rank's coordinate on each */
  void* ctx;                  /* passed back to every call */
  int32_t (*all_reduce)(void* ctx, int32_t axis, DLTensor* buf, int32_t reduction, char* err, size_t errlen);
  int32_t (*all_gather)(void* ctx, int32_t axis, const DLTensor* in, DLTensor* out, char* err, size_t errlen);
  int32_t (*reduce_scatter)(void* ctx, int32_t axis, const DLTensor* in, DLTensor* out, int32_t reduction,
                            char* err, size_t errlen);
  int32_t (*all_to_all)(void* ctx, int32_t axis, const DLTensor* in, DLTensor* out, char* err, size_t errlen);
  uint32_t flags;             /* TF_COMM_* bits; 0: the defaults */
} tf_communicator;

/* tf_communicator.flags: the host guarantees that every rank makes the same
 * call (kernel and share shapes), as a lockstep SPMD program does, so
 * tf_kernel_call_rank skips the ranks' agreement check (one all_gather per
 * mesh axis per call). Ranks that then differ meet in collectives of
 * different sizes: what that does is the host engine's behaviour. */
#define TF_COMM_TRUSTED_CALLS 1u

/* The number of axes of k's device mesh; 0 for a kernel without one. */
TF_API tf_status tf_kernel_mesh_rank(tf_kernel k, int32_t* num_axes);
/* Mesh axis `axis`: its number of ranks and its name (*name lives as long as k). */
TF_API tf_status tf_kernel_mesh_axis(tf_kernel k, int32_t axis, int64_t* extent, const char** name);
/* The state of input i / output i on mesh axis `axis` (Broadcast for a
 * tensor without a ShardLayout). */
TF_API tf_status tf_kernel_input_shard(tf_kernel k, size_t i, int32_t axis, tf_shard_attr* out);
TF_API tf_status tf_kernel_output_shard(tf_kernel k, size_t i, int32_t axis, tf_shard_attr* out);
/* Runs k on this rank: in[i] is this rank's share of argument i (its shape
 * is the block the parameter's type gives this rank's coordinates); out[i]
 * receives a newly allocated share of result i, owned by the caller as with
 * tf_kernel_call. Every rank of the mesh must make the same call; the ranks
 * check it first (an all_gather of an 8-byte fingerprint per mesh axis;
 * skipped when comm->flags has TF_COMM_TRUSTED_CALLS) and
 * all fail with TF_ERR_INVALID_ARGUMENT when one differs. A share of
 * the wrong dtype or shape is TF_ERR_INVALID_ARGUMENT before any collective;
 * a communicator that does not describe k's mesh is TF_ERR_INVALID_ARGUMENT.
 * Between collectives a rank runs k's compiled segments (tf_kernel_backend
 * says TF_BACKEND_NATIVE) or, without a compiler, the reference evaluator's
 * kernels. On failure every out[i] is left as it was. */
TF_API tf_status tf_kernel_call_rank(tf_kernel k, const DLTensor* in, size_t n_in, DLManagedTensor** out,
                                     size_t n_out, const tf_communicator* comm);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TILEFOUNDRY_H_ */
