/*
 * tilefoundry_torch.h — registers TileFoundry kernels as PyTorch operators.
 * Implemented by libtilefoundry_torch.so, which is a client of tilefoundry.h
 * only. C linkage, so it can be called from ctypes as well as C++.
 */
#ifndef TILEFOUNDRY_TORCH_H_
#define TILEFOUNDRY_TORCH_H_

#include "tilefoundry.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Defines tilefoundry::<op_name> (op_name NULL = the kernel's function name)
 * with a schema derived from k's signature, backed by a CPU kernel that wraps
 * inputs zero-copy and takes outputs of 128 KiB and more from the output pool
 * (tf_buffer_alloc), smaller ones from torch. Also defines its out= overload,
 * tilefoundry::<op_name>.out(<inputs>, *, Tensor(a!) out) -> Tensor(a!)
 * (out0, out1, ... for several outputs), which writes into the caller's
 * tensors after checking their dtype, shape and device. Each call first sets
 * tf_set_num_threads to torch's intra-op thread count. The registration keeps
 * k alive (it takes its own reference) for the life of the process.
 * Registering the same name twice is TF_ERR_INVALID_ARGUMENT. */
TF_API tf_status tf_torch_register(tf_kernel k, const char* op_name);

/* As tf_torch_register, except that a name this library registered before
 * is not an error: when k's schemas are that op's, later calls of the op and
 * its .out overload run k (a notebook cell run again). Calls already running
 * finish on the old kernel, which stays alive for the process. A different
 * schema is TF_ERR_INVALID_ARGUMENT naming both, and the op is unchanged;
 * a name defined elsewhere (not by this library) is refused as by
 * tf_torch_register. */
TF_API tf_status tf_torch_register_replace(tf_kernel k, const char* op_name);

/* Adds k, compiled with TF_BACKEND_CUDA from the same function, as the CUDA
 * implementation of tilefoundry::<op_name> and its .out overload, which
 * tf_torch_register defined with the CPU kernel: the same op then runs on
 * CUDA tensors of one device, on torch's current stream of that device,
 * with its outputs and workspace from torch's CUDA caching allocator
 * (docs/cuda.md; needs torch >= 2.4). Calling it again points the CUDA
 * kernels at k. An op this library did not register, a kernel of another
 * backend or of another schema is TF_ERR_INVALID_ARGUMENT. Since 0.9. */
TF_API tf_status tf_torch_register_cuda(tf_kernel k, const char* op_name);

/* Message of the last failed tf_torch_register on the calling thread
 * (thread-local, valid until the next tf_torch_* call on that thread); never
 * NULL, "" when none failed. tf_last_error() is left to libtilefoundry.so. */
TF_API const char* tf_torch_last_error(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TILEFOUNDRY_TORCH_H_ */
