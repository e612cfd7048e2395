// The compiler tests' CUDA driver: the emulated device
// (tests/cuda_emulation) unless TF_CUDA_DRIVER_LIBRARY names another
// (libcuda.so.1 on a GPU machine: `make test-cuda`). Set before any test
// runs, since the driver is loaded once per process.
#include <gtest/gtest.h>

#include <cstdlib>

namespace {

class DriverEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { setenv("TF_CUDA_DRIVER_LIBRARY", TF_EMULATED_CUDA_DRIVER, /*overwrite=*/0); }
};

::testing::Environment* const kDriver = ::testing::AddGlobalTestEnvironment(new DriverEnvironment);

}  // namespace
