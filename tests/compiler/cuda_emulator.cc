#include "cuda_emulator.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <mutex>
#include <thread>

#include "core/compiler/codegen.h"
#include "core/compiler/compiler.h"
#include "core/compiler/scalars.h"
#include "core/compiler/toolchain.h"
#include "core/ir/error.h"

namespace tf::comptest {
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

// What the runner calls in the compiled program: a thread's identity, and
// each kernel with its arguments by address.
std::string entry_points(const compiler::cuda::CudaProgram& p) {
  std::string s =
      "\nextern \"C\" void tf_emu_enter(unsigned tx, unsigned bx, unsigned bd, unsigned gd, void (*barrier)(void*),\n"
      "                             void* block, int64_t* lanes) {\n"
      "  threadIdx.x = tx; blockIdx.x = bx; blockDim.x = bd; gridDim.x = gd;\n"
      "  tf_emu_barrier = barrier; tf_emu_block = block; tf_emu_lanes = lanes;\n}\n";
  for (const auto& k : p.kernels)
    s += "extern \"C\" void tf_emu_" + k.name + "(const void* a) { " + k.name + "(*static_cast<const tf_args*>(a)); }\n";
  return s;
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
  if (!s) ir::fail(ir::ErrorKind::kInternal, "emulated CUDA program lacks " + name);
  return s;
}

// tf_args (cuda_codegen.h) as 8-byte words: pointers and int64 alike.
std::vector<int64_t> pack_args(const std::vector<void*>& ptrs, const std::vector<int64_t>& shapes,
                               const std::vector<int64_t>& strides, const std::vector<int64_t>& scalars, int* err,
                               int* pre, int64_t* info) {
  std::vector<int64_t> a;
  auto words = [&](auto begin, auto end) {
    const size_t n = static_cast<size_t>(end - begin);
    for (auto it = begin; it != end; ++it) {
      int64_t w = 0;
      std::memcpy(&w, &*it, sizeof *it);
      a.push_back(w);
    }
    if (n == 0) a.push_back(0);  // the struct's arrays have at least one element
  };
  words(ptrs.begin(), ptrs.end());
  words(shapes.begin(), shapes.end());
  words(strides.begin(), strides.end());
  words(scalars.begin(), scalars.end());
  for (const void* p : {static_cast<const void*>(err), static_cast<const void*>(pre), static_cast<const void*>(info)}) {
    int64_t w = 0;
    std::memcpy(&w, &p, sizeof p);
    a.push_back(w);
  }
  return a;
}

// The host compiler on the emulation source, cached in the kernel cache
// directory. Run here rather than through the toolchain's compile, so the
// suites' count of kernel compiles (compiler_invocations) stays theirs.
std::string compiled(const std::string& source) {
  const std::string path = compiler::cache_dir() + "/" + compiler::cache_key(source) + ".cuda-emu.so";
  if (access(path.c_str(), R_OK) == 0) return path;
  const std::string stem = path + ".tmp" + std::to_string(getpid()) + "-" +
                           std::to_string(std::hash<std::thread::id>()(std::this_thread::get_id()));
  {
    std::ofstream out(stem + ".cc");
    out << source;
  }
  const compiler::Toolchain t = compiler::toolchain();
  const std::string cmd = t.cc + " " + t.flags + " -shared -o " + stem + ".so " + stem + ".cc 2> " + stem + ".log";
  const int rc = std::system(cmd.c_str());
  std::ifstream log(stem + ".log");
  const std::string diagnostics((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  std::remove((stem + ".cc").c_str());
  std::remove((stem + ".log").c_str());
  if (rc != 0) ir::fail(ir::ErrorKind::kInternal, "emulated CUDA program does not compile:\n" + diagnostics.substr(0, 4000));
  if (std::rename((stem + ".so").c_str(), path.c_str()) != 0)
    ir::fail(ir::ErrorKind::kInternal, "cannot move the emulated CUDA program into " + path);
  return path;
}

}  // namespace

EmulatedCudaProgram::EmulatedCudaProgram(compiler::cuda::CudaProgram p) : p_(std::move(p)) {
  const std::string path = compiled(std::string(kEmulation) + p_.source + entry_points(p_));
  lib_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib_) ir::fail(ir::ErrorKind::kInternal, std::string("dlopen of an emulated CUDA program: ") + dlerror());
}

EmulatedCudaProgram::~EmulatedCudaProgram() {
  if (lib_) dlclose(lib_);
}

void EmulatedCudaProgram::run(const std::vector<runtime::NDArray>& inputs, const std::vector<runtime::NDArray>& outputs,
                              const ir::DimBindings& bindings, int block_threads, int grid_blocks) const {
  std::vector<void*> ptrs;
  std::vector<int64_t> shapes, strides;
  for (const auto* group : {&inputs, &outputs})
    for (const runtime::NDArray& a : *group) {
      ptrs.push_back(a.data());
      shapes.insert(shapes.end(), a.shape().begin(), a.shape().end());
      strides.insert(strides.end(), a.strides().begin(), a.strides().end());
    }
  std::vector<runtime::NDArray> temps;  // device memory is host memory here
  for (const compiler::Slot& s : p_.slots) {
    if (s.kind != compiler::Slot::kTemp) continue;
    std::vector<int64_t> shape;
    for (const ir::ShapeDim& d : s.type->shape()) shape.push_back(d.evaluate(bindings));
    temps.push_back(runtime::NDArray::empty(s.type->dtype(), shape));
    ptrs.push_back(temps.back().data());
    shapes.insert(shapes.end(), shape.begin(), shape.end());
    strides.insert(strides.end(), temps.back().strides().begin(), temps.back().strides().end());
  }
  std::vector<int64_t> scalars;
  for (const compiler::RuntimeScalar& sc : p_.scalars) scalars.push_back(compiler::resolve_scalar(sc, bindings));
  int err = 0, pre = 0;
  int64_t info[compiler::kInfoSize] = {0, 0, 0, 0};
  const std::vector<int64_t> args = pack_args(ptrs, shapes, strides, scalars, &err, &pre, info);

  const auto enter = reinterpret_cast<Enter>(symbol(lib_, "tf_emu_enter"));
  for (const compiler::cuda::CudaKernel& k : p_.kernels) {
    const auto kernel = reinterpret_cast<Kernel>(symbol(lib_, "tf_emu_" + k.name));
    const int grid = k.launch == compiler::cuda::Launch::kOneBlock ? 1 : grid_blocks;
    for (int b = 0; b < grid; ++b) {
      BlockScheduler block(block_threads);
      std::vector<int64_t> lanes(static_cast<size_t>(block_threads));
      std::vector<std::thread> threads;
      for (int t = 0; t < block_threads; ++t)
        threads.emplace_back([&, t] {
          BlockScheduler::tid = t;
          enter(static_cast<unsigned>(t), static_cast<unsigned>(b), static_cast<unsigned>(block_threads),
                static_cast<unsigned>(grid), &BlockScheduler::barrier_fn, &block, lanes.data());
          block.start();
          kernel(args.data());
          block.leave();
        });
      for (std::thread& t : threads) t.join();
      if (block.broken())
        ir::fail(ir::ErrorKind::kInternal, "emulated CUDA kernel " + k.name + ": a barrier was not reached by every "
                                           "thread of block " + std::to_string(b));
    }
  }
  if (pre != 0) compiler::raise_kernel_error(pre, info);
  if (err != 0) compiler::raise_kernel_error(err, info);
}

}  // namespace tf::comptest
