// The memory a torch operator's outputs live in.
//
// Why: a fresh large output is a fresh mapping that the kernel faults in page
// by page (at 32 MiB f32 that costs more than a memory-bound kernel itself),
// and a model calls the same kernels on the same shapes every step. Outputs
// of kMinPooledBytes and more therefore come from TileFoundry's caching pool
// (tf_buffer_alloc: warm, reused blocks, bounded by a byte limit; see
// tilefoundry.h) and go back to it when the tensor's storage dies. Smaller
// ones come from torch's CPU allocator, whose malloc bins already reuse them.
#pragma once

#include <ATen/ATen.h>

namespace tf::torch_ext {

// An uninitialized C-contiguous CPU tensor of this shape and dtype. Its
// storage stays resizable (a resize moves it to torch's CPU allocator and
// returns the pooled block).
at::Tensor empty_output(c10::IntArrayRef shape, at::ScalarType dtype);

// The pool's own threshold (core's kMinPooledBytes): smaller outputs are not pooled.
constexpr size_t kMinPooledBytes = size_t{128} << 10;

}  // namespace tf::torch_ext
