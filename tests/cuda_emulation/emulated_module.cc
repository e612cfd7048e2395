#include "emulated_module.h"

#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <iterator>
#include <mutex>
#include <regex>
#include <stdexcept>
#include <thread>

namespace tf::cudaemu {
namespace {

// CUDA's built-ins for the host. A thread's indices and its block's barrier
// are thread_local, set by tf_emu_enter before the kernel runs.
const char* const kEmulation = R"TFEMU(
#define TF_CUDA_EMULATION 1
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __shared__ static
#define __launch_bounds__(n)
#define __grid_constant__
struct tf_emu_dim3 { unsigned x = 0, y = 0, z = 0; };
static thread_local tf_emu_dim3 threadIdx, blockIdx, blockDim, gridDim;
static thread_local void (*tf_emu_barrier)(void*) = nullptr;
static thread_local void* tf_emu_block = nullptr;
static thread_local int64_t* tf_emu_lanes = nullptr;
static inline void __syncthreads() { tf_emu_barrier(tf_emu_block); }
// The whole block exchanges (the generated code shuffles only there).
template <typename T>
static inline T __shfl_xor_sync(unsigned, T v, int lane_mask) {
  static_assert(sizeof(T) <= sizeof(int64_t), "a shuffled value fits a lane");
  std::memcpy(&tf_emu_lanes[threadIdx.x], &v, sizeof v);
  __syncthreads();
  T r;
  std::memcpy(&r, &tf_emu_lanes[threadIdx.x ^ static_cast<unsigned>(lane_mask)], sizeof r);
  __syncthreads();
  return r;
}
static inline int atomicExch(int* p, int v) { return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST); }
static inline int atomicCAS(int* p, int expected, int desired) {
  __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return expected;
}
static inline float __int_as_float(int i) { float f; std::memcpy(&f, &i, sizeof f); return f; }
static inline double __longlong_as_double(long long i) { double d; std::memcpy(&d, &i, sizeof d); return d; }
static inline float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }
)TFEMU";

// The source's kernels, as cuda_codegen.cc declares them.
std::vector<std::string> kernel_names(const std::string& source) {
  static const std::regex decl(R"(extern "C" __global__ void (?:__launch_bounds__\(\d+\) )?(\w+)\()");
  std::vector<std::string> out;
  for (std::sregex_iterator it(source.begin(), source.end(), decl), end; it != end; ++it) out.push_back((*it)[1]);
  return out;
}

// What the runner calls in the compiled program: a thread's identity, and
// each kernel with its parameter by address.
std::string entry_points(const std::vector<std::string>& kernels) {
  std::string s =
      "\nextern \"C\" void tf_emu_enter(unsigned tx, unsigned bx, unsigned bd, unsigned gd, void (*barrier)(void*),\n"
      "                             void* block, int64_t* lanes) {\n"
      "  threadIdx.x = tx; blockIdx.x = bx; blockDim.x = bd; gridDim.x = gd;\n"
      "  tf_emu_barrier = barrier; tf_emu_block = block; tf_emu_lanes = lanes;\n}\n";
  for (const std::string& k : kernels)
    s += "extern \"C\" void tf_emu_" + k + "(const void* a) { " + k + "(*static_cast<const tf_args*>(a)); }\n";
  return s;
}

std::string fnv_hex(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

// The host compiler on the emulation source, cached in `cache_dir`; two
// processes compiling the same module both end with a whole file (each
// writes its own, then renames it into place).
std::string compiled(const std::string& source, const std::string& cc, const std::string& flags,
                     const std::string& cache_dir) {
  const std::string path = cache_dir + "/" + fnv_hex(source + "\n" + cc + "\n" + flags) + ".cuda-emu.so";
  if (access(path.c_str(), R_OK) == 0) return path;
  const std::string stem = path + ".tmp" + std::to_string(getpid()) + "-" +
                           std::to_string(std::hash<std::thread::id>()(std::this_thread::get_id()));
  {
    std::ofstream out(stem + ".cc");
    out << source;
  }
  const std::string cmd = cc + " " + flags + " -shared -o " + stem + ".so " + stem + ".cc 2> " + stem + ".log";
  const int rc = std::system(cmd.c_str());
  std::ifstream log(stem + ".log");
  const std::string diagnostics((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  std::remove((stem + ".cc").c_str());
  std::remove((stem + ".log").c_str());
  if (rc != 0) throw std::runtime_error("emulated CUDA module does not compile:\n" + diagnostics.substr(0, 4000));
  if (std::rename((stem + ".so").c_str(), path.c_str()) != 0)
    throw std::runtime_error("cannot move the emulated CUDA module into " + path);
  return path;
}

// A block's threads, run one at a time: each runs until its next barrier
// (or its end), then hands over to the next, from the highest thread index
// down; when all have arrived the barrier opens and the next round starts.
// Deterministic, and adversarial: without a barrier between a store and a
// load of another thread, a lower thread's store comes after a higher
// thread's load. A thread that finishes leaves (an exited thread no longer
// holds a device barrier back); a thread that waits too long for its turn
// breaks the block instead of hanging the test.
class BlockScheduler {
 public:
  explicit BlockScheduler(int n)
      : active_(static_cast<size_t>(n), true), arrived_(static_cast<size_t>(n), false), cv_(static_cast<size_t>(n)) {
    turn_ = n - 1;
  }
  static void barrier_fn(void* self) { static_cast<BlockScheduler*>(self)->barrier(); }
  static thread_local int tid;  // the emulated thread running on this OS thread

  void start() {
    std::unique_lock<std::mutex> lk(mu_);
    await(lk, [&] { return turn_ == tid; });
  }
  void barrier() {
    std::unique_lock<std::mutex> lk(mu_);
    if (broken_) return;
    arrived_[static_cast<size_t>(tid)] = true;
    const uint64_t round = round_;
    hand_over();
    await(lk, [&] { return round_ != round && turn_ == tid; });
  }
  void leave() {
    std::lock_guard<std::mutex> lk(mu_);
    active_[static_cast<size_t>(tid)] = false;
    hand_over();
  }
  bool broken() const { return broken_; }

 private:
  // The next thread of this round, or a new round.
  void hand_over() {
    int next = -1;
    for (int t = static_cast<int>(active_.size()) - 1; t >= 0 && next < 0; --t)
      if (active_[static_cast<size_t>(t)] && !arrived_[static_cast<size_t>(t)]) next = t;
    if (next < 0) {
      ++round_;
      for (size_t t = 0; t < arrived_.size(); ++t) arrived_[t] = false;
      for (int t = static_cast<int>(active_.size()) - 1; t >= 0 && next < 0; --t)
        if (active_[static_cast<size_t>(t)]) next = t;
    }
    turn_ = next;
    if (next >= 0) cv_[static_cast<size_t>(next)].notify_one();  // only the thread whose turn it is
  }
  template <typename Ready>
  void await(std::unique_lock<std::mutex>& lk, Ready ready) {
    if (!cv_[static_cast<size_t>(tid)].wait_for(lk, std::chrono::seconds(20), [&] { return ready() || broken_; })) {
      broken_ = true;
      for (std::condition_variable& c : cv_) c.notify_all();
    }
  }
  std::mutex mu_;
  std::vector<bool> active_, arrived_;
  std::vector<std::condition_variable> cv_;  // one per thread
  int turn_;
  uint64_t round_ = 0;
  bool broken_ = false;
};
thread_local int BlockScheduler::tid = 0;

using Enter = void (*)(unsigned, unsigned, unsigned, unsigned, void (*)(void*), void*, int64_t*);
using Kernel = void (*)(const void*);

void* symbol(void* lib, const std::string& name) {
  void* s = dlsym(lib, name.c_str());
  if (!s) throw std::runtime_error("emulated CUDA module lacks " + name);
  return s;
}

}  // namespace

EmulatedModule::EmulatedModule(const std::string& source, const std::string& cc, const std::string& flags,
                               const std::string& cache_dir)
    : kernels_(kernel_names(source)) {
  const std::string path = compiled(std::string(kEmulation) + source + entry_points(kernels_), cc, flags, cache_dir);
  lib_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib_) throw std::runtime_error(std::string("dlopen of an emulated CUDA module: ") + dlerror());
}

EmulatedModule::~EmulatedModule() {
  if (lib_) dlclose(lib_);
}

bool EmulatedModule::has(const std::string& kernel) const {
  for (const std::string& k : kernels_)
    if (k == kernel) return true;
  return false;
}

void EmulatedModule::launch(const std::string& kernel_name, unsigned grid, unsigned block_threads,
                            const void* args) const {
  const auto enter = reinterpret_cast<Enter>(symbol(lib_, "tf_emu_enter"));
  const auto kernel = reinterpret_cast<Kernel>(symbol(lib_, "tf_emu_" + kernel_name));
  const int threads_per_block = static_cast<int>(block_threads);
  // One OS thread per thread of a block, reused by every block in turn: a
  // block starts when the previous one has finished (its __shared__ arrays
  // are the running block's).
  std::vector<std::unique_ptr<BlockScheduler>> blocks;
  for (unsigned b = 0; b < grid; ++b) blocks.push_back(std::make_unique<BlockScheduler>(threads_per_block));
  std::vector<int64_t> lanes(block_threads);
  std::mutex mu;
  std::condition_variable cv;
  unsigned finished_block = 0;  // blocks every thread has left
  int left = 0;                 // threads that left the running block
  std::vector<std::thread> threads;
  for (int t = 0; t < threads_per_block; ++t)
    threads.emplace_back([&, t] {
      BlockScheduler::tid = t;
      for (unsigned b = 0; b < grid; ++b) {
        {
          std::unique_lock<std::mutex> lk(mu);
          cv.wait(lk, [&] { return finished_block == b; });
        }
        BlockScheduler& block = *blocks[b];
        enter(static_cast<unsigned>(t), b, block_threads, grid, &BlockScheduler::barrier_fn, &block, lanes.data());
        block.start();
        kernel(args);
        block.leave();
        std::lock_guard<std::mutex> lk(mu);
        if (++left == threads_per_block) {
          left = 0;
          ++finished_block;
          cv.notify_all();
        }
      }
    });
  for (std::thread& t : threads) t.join();
  for (unsigned b = 0; b < grid; ++b)
    if (blocks[b]->broken())
      throw std::runtime_error("emulated CUDA kernel " + kernel_name + ": a barrier was not reached by every " +
                               "thread of block " + std::to_string(b));
}

}  // namespace tf::cudaemu
