// The compiler tests' last-level cache size: 32 MiB unless TF_LLC_BYTES is
// set, so that which form of a stage runs on a given shape (streamed stores
// and prefetches from 24 MiB moved) is the same on every machine, and the
// tests that run a "streamed shape" do stream it. Set before any test runs,
// since a kernel library reads it once.
#include <gtest/gtest.h>

#include <cstdlib>

namespace {

class CacheSizeEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { setenv("TF_LLC_BYTES", "33554432", /*overwrite=*/0); }
};

::testing::Environment* const kCacheSize = ::testing::AddGlobalTestEnvironment(new CacheSizeEnvironment);

}  // namespace
