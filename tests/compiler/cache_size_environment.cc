// The compiler tests' last-level cache size: 64 MiB unless TF_LLC_BYTES is
// set, so that which form of a stage runs on a given shape (streamed stores
// from 16 MiB outputs, prefetches from 48 MiB moved) is the same on every
// machine, and the tests that run a "streamed shape" do stream it. Set
// before any test runs, since a kernel library reads it once.
#include <gtest/gtest.h>

#include <cstdlib>

namespace {

class CacheSizeEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { setenv("TF_LLC_BYTES", "67108864", /*overwrite=*/0); }
};

::testing::Environment* const kCacheSize = ::testing::AddGlobalTestEnvironment(new CacheSizeEnvironment);

}  // namespace
