// The compiler tests' CUDA driver and cuBLAS: the emulated device's
// (tests/cuda_emulation) unless TF_CUDA_DRIVER_LIBRARY / TF_CUBLAS_LIBRARY
// name others (`make test-cuda` on a GPU machine names libcuda.so.1, and
// cuBLAS is then found by its sonames). Set before any test runs, since
// each library is loaded once per process.
#include <gtest/gtest.h>

#include <cstdlib>

namespace {

class DriverEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    const char* driver = std::getenv("TF_CUDA_DRIVER_LIBRARY");
    if (driver && *driver) return;  // a real device: its own cuBLAS
    setenv("TF_CUDA_DRIVER_LIBRARY", TF_EMULATED_CUDA_DRIVER, 1);
    setenv("TF_CUBLAS_LIBRARY", TF_EMULATED_CUBLAS, 0);
  }
};

::testing::Environment* const kDriver = ::testing::AddGlobalTestEnvironment(new DriverEnvironment);

}  // namespace
