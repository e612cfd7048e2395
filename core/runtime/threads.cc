#include "core/runtime/threads.h"

#include <atomic>

namespace tf::runtime {
namespace {
std::atomic<int> g_threads{0};
}  // namespace

void set_num_threads(int n) { g_threads.store(n > 0 ? n : 0, std::memory_order_relaxed); }
int num_threads() { return g_threads.load(std::memory_order_relaxed); }

OmpTeamScope::OmpTeamScope(int (*get_max_threads)(), void (*set_num_threads)(int)) {
  const int want = num_threads();
  if (want == 0 || get_max_threads == nullptr || set_num_threads == nullptr) return;
  const int have = get_max_threads();
  if (have == want) return;
  set_ = set_num_threads;
  set_(want);
  restore_ = have;
}

OmpTeamScope::~OmpTeamScope() {
  if (restore_ != 0) set_(restore_);
}

}  // namespace tf::runtime
