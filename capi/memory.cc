// The C ABI of the output pool (core/runtime/buffer_pool.h) and of the
// kernels' thread count (core/runtime/threads.h).
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>

#include "capi/checks.h"
#include "capi/error.h"
#include "core/runtime/buffer_pool.h"
#include "core/runtime/threads.h"
#include "tilefoundry/tilefoundry.h"

struct tf_buffer_s {};  // a tf_buffer is a tf::runtime::Buffer*; never dereferenced as this

namespace {

tf::runtime::Buffer* unwrap(tf_buffer b) { return reinterpret_cast<tf::runtime::Buffer*>(b); }

constexpr size_t kMinStatsSize = offsetof(tf_memory_stats, bytes_in_use);

}  // namespace

extern "C" {

tf_status tf_buffer_alloc(size_t bytes, tf_buffer* out, void** data) {
  TF_C_API_BEGIN
  tf::capi::require_non_null(out, "tf_buffer_alloc", "out");
  tf::capi::require_non_null(data, "tf_buffer_alloc", "data");
  void* p = nullptr;
  tf::runtime::Buffer* b = tf::runtime::buffer_allocate(bytes, &p);
  *out = reinterpret_cast<tf_buffer>(b);
  *data = p;
  TF_C_API_END
}

void tf_buffer_free(tf_buffer b) { tf::runtime::buffer_release(unwrap(b)); }

tf_status tf_memory_get_stats(tf_memory_stats* out) {
  TF_C_API_BEGIN
  tf::capi::require_non_null(out, "tf_memory_get_stats", "out");
  if (out->struct_size < kMinStatsSize)
    tf::capi::fail(TF_ERR_INVALID_ARGUMENT, "tf_memory_get_stats: out->struct_size " +
                                                std::to_string(out->struct_size) +
                                                " is too small; set it to sizeof(tf_memory_stats)");
  const tf::runtime::PoolStats s = tf::runtime::pool_stats();
  tf_memory_stats full{};
  full.struct_size = static_cast<uint32_t>(std::min<size_t>(out->struct_size, sizeof full));
  full.bytes_in_use = s.bytes_in_use;
  full.bytes_cached = s.bytes_cached;
  full.blocks_cached = s.blocks_cached;
  full.cache_limit = s.cache_limit;
  full.hits = s.hits;
  full.misses = s.misses;
  full.bytes_released = s.bytes_released;
  // An older caller's struct is filled as far as it goes; a newer one's tail
  // is left alone, and struct_size says how far this library filled it.
  std::memcpy(out, &full, full.struct_size);
  TF_C_API_END
}

tf_status tf_memory_set_cache_limit(uint64_t bytes) {
  TF_C_API_BEGIN
  tf::runtime::set_cache_limit(bytes);
  TF_C_API_END
}

tf_status tf_memory_empty_cache(void) {
  TF_C_API_BEGIN
  tf::runtime::empty_cache();
  TF_C_API_END
}

tf_status tf_set_num_threads(int32_t n) {
  TF_C_API_BEGIN
  if (n < 0)
    tf::capi::fail(TF_ERR_INVALID_ARGUMENT,
                   "tf_set_num_threads: n must be >= 0 (0: OpenMP's default), but got " + std::to_string(n));
  tf::runtime::set_num_threads(n);
  TF_C_API_END
}

tf_status tf_get_num_threads(int32_t* out) {
  TF_C_API_BEGIN
  tf::capi::require_non_null(out, "tf_get_num_threads", "out");
  *out = tf::runtime::num_threads();
  TF_C_API_END
}

}  // extern "C"
