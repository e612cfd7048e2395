#include "core/runtime/threads.h"

#include <atomic>

namespace tf::runtime {
namespace {
std::atomic<int> g_threads{0};
}  // namespace

void set_num_threads(int n) { g_threads.store(n > 0 ? n : 0, std::memory_order_relaxed); }
int num_threads() { return g_threads.load(std::memory_order_relaxed); }

}  // namespace tf::runtime
