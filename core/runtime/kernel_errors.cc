#include "core/runtime/kernel_errors.h"

namespace tf::runtime {
namespace {

std::string str(int64_t v) { return std::to_string(v); }

}  // namespace

std::string div_by_zero_message() { return "'div': integer division by zero"; }

std::string empty_mean_message() { return "'reduce' kind \"mean\": mean over an empty axis has no value"; }

std::string rope_position_message(int64_t pos, int64_t caches) {
  return "'rope': pos_ids value " + str(pos) + " is out of range for caches of length " + str(caches);
}

std::string insert_window_message(int64_t begin, int64_t end, int64_t axis, int64_t extent) {
  return "'insert_slice': window [" + str(begin) + ", " + str(end) + ") on axis " + str(axis) +
         " is out of bounds for dst extent " + str(extent);
}

std::string cache_pos_message(int64_t cur_pos) { return "'cache_update': cur_pos must be >= 0, but is " + str(cur_pos); }

std::string cache_count_message(int64_t new_len, int64_t s) {
  return "'cache_update': s must be in [1, new.len = " + str(new_len) + "], but is " + str(s);
}

std::string cache_end_message(int64_t cur_pos, int64_t s, int64_t cache_len) {
  return "'cache_update': cur_pos + s (" + str(cur_pos) + " + " + str(s) + ") must not exceed cache.len (" +
         str(cache_len) + ")";
}

std::string cache_scatter_message(int64_t b, int64_t pos, int64_t n, int64_t cache_len) {
  return "'cache_scatter': pos[" + str(b) + "] = " + str(pos) + " puts the window [" + str(pos) + ", " + str(pos + n) +
         ") outside the cache's len (" + str(cache_len) + ")";
}

std::string gather_index_message(int64_t index, int64_t axis, int64_t extent) {
  return "'gather': index " + str(index) + " is out of range for axis " + str(axis) + " of extent " + str(extent);
}

std::string topk_count_message(int64_t k, int64_t len, int64_t axis) {
  return "'topk': k = " + str(k) + " is outside [0, " + str(len) + "] for axis " + str(axis);
}

std::string shape_index_message(int64_t index, int64_t length) {
  return "'shape_extract': index " + str(index) + " is out of range for a shape of length " + str(length);
}

}  // namespace tf::runtime
