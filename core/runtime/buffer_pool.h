// BufferPool: the memory kernel outputs are handed out in, reused instead of
// re-faulted.
//
// Why: a fresh large buffer is a fresh mmap whose every page the kernel then
// faults in and the OS zeroes; at 32 MiB that costs more than a memory-bound
// kernel itself. A model calls the same kernels on the same shapes step after
// step, so a freed output is kept, keyed by its size class, and the next call
// of that class gets warm pages. This is the policy of PyTorch's CUDA caching
// allocator and of jemalloc's extent reuse, bounded as a CPU process must be:
//
//   * Only blocks of at least kMinPooledBytes are pooled; smaller ones come
//     from malloc, whose bins already reuse them at no fault cost.
//   * A request is rounded up to a size class, four classes per doubling
//     (jemalloc's spacing: at most 25% slack), so that shapes which differ a
//     little still share blocks. A request only reuses a block of its class.
//   * Free blocks are kept up to a byte limit (cache_limit(); default 1/8 of
//     physical memory, at most 4 GiB; TF_MEMORY_CACHE_LIMIT overrides, with
//     an optional K / M / G suffix; 0 turns caching off). Past the limit the
//     least recently freed blocks are returned to the OS first.
//   * Large blocks are their own anonymous mappings, so returning one really
//     gives the memory back. Blocks of kHugeMinBytes and more are 2 MiB
//     aligned and advised for transparent huge pages (TF_HUGE_PAGES=0 turns
//     that off): a miss then faults 2 MiB at a time.
//
// Thread-safe: one mutex guards the pool; a hit is a hash lookup and a list
// splice. The handle is a Buffer*, which the owner of the memory (a torch
// storage, a DLManagedTensor) keeps as its deleter context.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tf::runtime {

struct Buffer;  // opaque; owns `data` until released

constexpr size_t kMinPooledBytes = size_t{128} << 10;  // glibc's initial mmap threshold
constexpr size_t kHugeMinBytes = size_t{4} << 20;

struct PoolStats {
  uint64_t bytes_in_use = 0;    // handed out and not yet released (pooled sizes)
  uint64_t bytes_cached = 0;    // free, kept for reuse
  uint64_t blocks_cached = 0;
  uint64_t cache_limit = 0;     // bound on bytes_cached
  uint64_t hits = 0;            // pooled requests served from the cache
  uint64_t misses = 0;          // pooled requests that mapped fresh memory
  uint64_t bytes_released = 0;  // given back to the OS (evicted or emptied)
};

// At least `bytes` (0 is allowed) of uninitialized memory aligned to 64
// bytes; *data receives its address. Throws Error(kOutOfMemory) when the
// memory cannot be had even after emptying the cache.
Buffer* buffer_allocate(size_t bytes, void** data);
// Returns b to the pool (or to the OS). Null, or a pointer that is not a
// live Buffer (released twice, never allocated), is ignored.
void buffer_release(Buffer* b);
// Whether b is a Buffer handed out and not yet released (misuse checks at
// the C ABI).
bool buffer_is_live(const Buffer* b);

PoolStats pool_stats();
void set_cache_limit(uint64_t bytes);  // evicts down to the new limit at once
uint64_t cache_limit();
void empty_cache();                    // returns every free block to the OS

}  // namespace tf::runtime
