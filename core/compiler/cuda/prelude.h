// The fixed CUDA C++ text every CUDA kernel source starts with (prelude.cc):
// the few standard names the shared scalar numerics use (NVRTC has no
// standard headers), core/runtime/scalar_numerics.h itself as device
// functions, and the device forms of the CPU prelude's helpers.
#pragma once

namespace tf::compiler::cuda {

const char* cuda_prelude_source();

// Threads per block of every generated kernel (its __launch_bounds__ and the
// launch's block size): a multiple of the warp, so block reductions can
// shuffle whole warps.
inline constexpr int kBlockThreads = 256;

}  // namespace tf::compiler::cuda
