// NVRTC, CUDA's run-time compiler, loaded with dlopen on first use: the
// library builds and runs without the CUDA toolkit, and a machine without
// NVRTC only loses the CUDA backend (nvrtc_status() says why).
//
// Where it is looked for: TF_NVRTC_LIBRARY (a path or a soname); the
// sonames of CUDA 13, 12 and 11.2+ on the loader's path; then lib64/ of
// $CUDA_HOME, $CUDA_PATH and /usr/local/cuda. Of those that load, the first
// whose CUBINs this machine's driver can load (pick_for_driver), so that a
// toolkit newer than the driver does not shadow the NVRTC a pip-installed
// torch brings; without a driver, the first.
//
// A compile gives PTX for the virtual architecture compute_<arch>, and, when
// asked, a CUBIN for sm_<arch>: NVRTC then runs ptxas itself, with -v, so the
// log carries each kernel's registers, stack, spills and shared memory
// (parse_ptxas_info). No GPU or driver is involved.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tf::compiler::cuda {

struct NvrtcStatus {
  bool available = false;
  std::string library;  // the file that was loaded
  int major = 0, minor = 0;
  std::string why;      // when not available: what was tried and what failed
};

// Loads NVRTC once per process (thread-safe) and reports the outcome.
const NvrtcStatus& nvrtc_status();

struct NvrtcOutput {
  bool ok = false;
  std::string log;    // NVRTC's diagnostics (and ptxas's -v report for a CUBIN)
  std::string ptx;
  std::string cubin;  // empty unless requested
};

// Compiles one CUDA C++ translation unit (`name` appears in diagnostics) for
// compute capability `arch` (80 = sm_80), C++17, with `options` appended.
// Throws Error(kUnsupported) when NVRTC is not available; a source that
// does not compile returns ok = false with the log.
NvrtcOutput nvrtc_compile(const std::string& source, const std::string& name, int arch, bool cubin,
                          const std::vector<std::string>& options = {});

// How many times this process ran nvrtc_compile (tests count recompiles).
int64_t nvrtc_compiles();

// What ptxas -v reported for one kernel.
struct KernelResources {
  std::string kernel;  // the mangled or extern "C" name
  std::string arch;    // "sm_80"
  int registers = 0;
  int64_t stack_bytes = 0, spill_store_bytes = 0, spill_load_bytes = 0;
  int64_t shared_bytes = 0;    // static shared memory
  int64_t constant_bytes = 0;  // bank 0: the kernel's parameters
};

// Every kernel's resources in a log of nvrtc_compile(..., cubin = true).
std::vector<KernelResources> parse_ptxas_info(const std::string& log);

}  // namespace tf::compiler::cuda
