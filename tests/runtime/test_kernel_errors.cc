// The run-time error messages both backends raise (core/runtime/kernel_errors.h),
// word for word: users, the C ABI tests and pytest match on them.
#include <gtest/gtest.h>

#include "core/runtime/kernel_errors.h"

namespace {

using namespace tf::runtime;

TEST(KernelErrors, MessagesAreExact) {
  EXPECT_EQ(div_by_zero_message(), "'div': integer division by zero");
  EXPECT_EQ(empty_mean_message(), "'reduce' kind \"mean\": mean over an empty axis has no value");
  EXPECT_EQ(rope_position_message(5, 5), "'rope': pos_ids value 5 is out of range for caches of length 5");
  EXPECT_EQ(insert_window_message(-1, 3, 1, 8), "'insert_slice': window [-1, 3) on axis 1 is out of bounds for dst extent 8");
  EXPECT_EQ(cache_pos_message(-2), "'cache_update': cur_pos must be >= 0, but is -2");
  EXPECT_EQ(cache_count_message(4, 0), "'cache_update': s must be in [1, new.len = 4], but is 0");
  EXPECT_EQ(cache_end_message(6, 3, 8), "'cache_update': cur_pos + s (6 + 3) must not exceed cache.len (8)");
  EXPECT_EQ(gather_index_message(9, 0, 4), "'gather': index 9 is out of range for axis 0 of extent 4");
  EXPECT_EQ(topk_count_message(5, 4, 1), "'topk': k = 5 is outside [0, 4] for axis 1");
  EXPECT_EQ(shape_index_message(-4, 3), "'shape_extract': index -4 is out of range for a shape of length 3");
}

}  // namespace
