// The thread count of compiled kernels: the host's, not OpenMP's default.
//
// Compiled kernels parallelize with OpenMP. A host that runs its own thread
// pool (torch.set_num_threads, a server pinning one thread per request) must
// be able to bound them, and an OpenMP runtime other than the kernels' (pip
// torch ships its own libgomp) does not pass its setting on. So the count is
// TileFoundry's own setting, which each kernel call applies to the OpenMP
// runtime its code links (compiler/library.h).
#pragma once

namespace tf::runtime {

// n >= 1: kernels use at most n threads; 0: OpenMP's default (OMP_NUM_THREADS
// or the number of cores). Process-wide; takes effect at the next call.
void set_num_threads(int n);
int num_threads();  // the setting; 0 when unset

// For one call into code parallelized by an OpenMP runtime, given by its
// team-size controls (null: the code links none, nothing to do): sets the
// calling thread's team size to num_threads() when set and different, and
// restores the caller's on destruction, so the caller's own OpenMP regions
// are unaffected.
class OmpTeamScope {
 public:
  OmpTeamScope(int (*get_max_threads)(), void (*set_num_threads)(int));
  ~OmpTeamScope();
  OmpTeamScope(const OmpTeamScope&) = delete;
  OmpTeamScope& operator=(const OmpTeamScope&) = delete;

 private:
  void (*set_)(int) = nullptr;
  int restore_ = 0;  // 0: nothing to restore
};

}  // namespace tf::runtime
