// A CUDA call's device scratch: the caller's workspace, or, without one,
// the driver's stream-ordered allocation, freed on the same stream when
// the call ends (so nothing waits for the device).
#pragma once

#include <cstdint>
#include <string>

#include "core/compiler/cuda/driver.h"
#include "core/ir/error.h"

namespace tf::compiler::cuda {

// Every scratch buffer starts on this boundary (a device's widest access).
constexpr uint64_t kWorkspaceAlign = 256;

inline uint64_t workspace_aligned(uint64_t n) { return (n + kWorkspaceAlign - 1) / kWorkspaceAlign * kWorkspaceAlign; }

class Workspace {
 public:
  // Throws Error(kInvalidArgument) when `given` holds fewer than `needed` bytes.
  Workspace(void* given, uint64_t given_bytes, uint64_t needed, CUstream stream) : stream_(stream) {
    if (given) {
      if (given_bytes < needed)
        ir::fail(ir::ErrorKind::kInvalidArgument, "the CUDA workspace holds " + std::to_string(given_bytes) +
                                                      " bytes; this call needs " + std::to_string(needed));
      base_ = reinterpret_cast<CUdeviceptr>(given);
      return;
    }
    check(driver().mem_alloc_async(&base_, needed, stream), "cuMemAllocAsync (CUDA workspace)");
    owned_ = true;
  }
  ~Workspace() {
    if (owned_) driver().mem_free_async(base_, stream_);
  }
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;
  CUdeviceptr at(uint64_t offset) const { return base_ + offset; }
  void* ptr(uint64_t offset) const { return reinterpret_cast<void*>(base_ + offset); }

 private:
  CUstream stream_;
  CUdeviceptr base_ = 0;
  bool owned_ = false;
};

}  // namespace tf::compiler::cuda
