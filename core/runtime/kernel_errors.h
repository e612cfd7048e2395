// The messages of the run-time errors a kernel raises on its data (a zero
// integer divisor, an index or window out of range, ...), one function per
// error. The evaluator raises them where it checks; the native backend turns
// a generated entry's error code and its details (codegen.h) into the same
// text. Both backends sit above core/runtime, so this is where the one copy
// lives; the words are part of the interface (tests and users match them).
#pragma once

#include <cstdint>
#include <string>

namespace tf::runtime {

// Binary div on integers.
std::string div_by_zero_message();
// Reduce mean over no elements.
std::string empty_mean_message();
// RoPE: a pos_ids value outside [0, caches).
std::string rope_position_message(int64_t pos, int64_t caches);
// InsertSlice: the window [begin, end) on `axis` is outside dst's extent.
std::string insert_window_message(int64_t begin, int64_t end, int64_t axis, int64_t extent);
// CacheUpdate's three checks, in the order both backends make them.
std::string cache_pos_message(int64_t cur_pos);
std::string cache_count_message(int64_t new_len, int64_t s);
std::string cache_end_message(int64_t cur_pos, int64_t s, int64_t cache_len);
// CacheScatter: batch row b's window [pos, pos + n) is outside [0, cache_len).
std::string cache_scatter_message(int64_t b, int64_t pos, int64_t n, int64_t cache_len);
// Gather: an index outside [0, extent) on `axis`.
std::string gather_index_message(int64_t index, int64_t axis, int64_t extent);
// TopK: k outside [0, len] on `axis`.
std::string topk_count_message(int64_t k, int64_t len, int64_t axis);
// ShapeExtract: `index` as written (negative counts from the end) outside a
// shape value of `length` entries.
std::string shape_index_message(int64_t index, int64_t length);

}  // namespace tf::runtime
