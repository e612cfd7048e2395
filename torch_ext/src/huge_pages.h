// Fresh large outputs backed by transparent huge pages.
//
// Why: glibc serves every allocation of 32 MiB and more (and, below its
// dynamic threshold, many smaller ones) with a fresh mmap, so each call's
// large output is page-faulted in again, 4 KiB at a time; at 4096x4096 f32
// that is ~21 ms of a ~6 ms kernel on this machine. The same 64 MiB in
// 2 MiB pages faults in ~2.5 ms (measured with a touch loop; THP in
// "madvise" mode, as Debian ships it). PyTorch 2.x offers the same policy
// for its own CPU allocator behind THP_MEM_ALLOC_ENABLE.
#pragma once

#include <ATen/ATen.h>

namespace tf::torch_ext {

// An uninitialized C-contiguous CPU tensor. At least kHugeMinBytes large:
// its own 2 MiB-aligned anonymous mapping, advised MADV_HUGEPAGE, unmapped
// when the storage dies; the storage stays resizable (a resize moves it to
// torch's CPU allocator). Smaller, or with TF_HUGE_PAGES=0 in the
// environment, or when the mapping fails: at::detail::empty_cpu.
at::Tensor empty_output(c10::IntArrayRef shape, at::ScalarType dtype);

// Outputs below this many bytes come from torch's allocator (a huge page
// would mostly hold nothing, and small blocks are reused by malloc).
constexpr size_t kHugeMinBytes = size_t{4} << 20;

}  // namespace tf::torch_ext
