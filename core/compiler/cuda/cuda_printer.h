// The CUDA target's printer: one kernel's TIR (a stage's context around one
// leaf, kernel_split.h) -> the body of a __global__ function.
//
// TIR's loop kinds say what may run at once; the printer maps them onto a
// grid of blocks of threads, at three levels:
//  - grid: the kernel's context, run by every thread. The leaf decides the
//    launch: a parallel loop whose body holds cooperative work (a
//    vectorized loop, a helper over a row) gives each iteration to a block
//    in turn (Launch::kBlocks); a parallel loop without such work gives
//    each iteration to a thread (kThreads); a helper over a whole tensor is
//    called by the grid (kThreads); any other leaf runs on block 0 alone
//    (kOneBlock).
//  - block: code every thread of a block runs alike (its values are the
//    same in every thread, so branches never diverge). A vectorized loop
//    here is split across the block's threads, its reductions summed per
//    thread and combined across the block, and it ends with a barrier so
//    the next statement sees every thread's stores; a store of a single
//    value is made by thread 0 and followed by a barrier; a local
//    allocation is the block's shared memory; a helper call passes the
//    block as its team (prelude.cc).
//  - thread: a thread's own iterations; every loop is sequential, a local
//    allocation is the thread's own array.
// A block-level loop over a unit-stride row gives each thread V
// consecutive iterations at once, its memory moved 16 bytes at a time
// (vector_lanes.h).
// A Return (a failed check) records its code in the kernel's `pre` flag,
// which every later kernel of the call reads first and then returns.
#pragma once

#include <string>

#include "core/compiler/cpu/cpp_printer.h"

namespace tf::compiler::cuda {

enum class Launch { kBlocks, kThreads, kOneBlock };
struct LanePlan;
const char* launch_name(Launch l);

class CudaPrinter : public cpu::CppPrinter {
 public:
  // The kernel body of `k`, indented by `depth`; launch() then says how its
  // grid covers the work. Throws Error(kUnsupported) for what has no CUDA
  // form yet.
  std::string kernel(const tir::StmtPtr& k, int depth);
  Launch launch() const { return launch_; }

 protected:
  void print(const tir::StmtPtr& s, int depth) override;
  void print_for(const tir::For& f, int depth) override;
  std::string call(const tir::Call& c) override;

 private:
  enum class Level { kGrid, kBlock, kThread };
  void print_leaf(const tir::StmtPtr& s, int depth);
  void print_at(Level level, const tir::StmtPtr& s, int depth);
  void block_loop(const tir::For& f, int depth);
  // block_loop's iterations, V at a time with wide accesses (vector_lanes.h).
  void wide_loop(const tir::For& f, const LanePlan& p, int depth);
  void print_block(const tir::StmtPtr& s, int depth);
  void print_thread(const tir::StmtPtr& s, int depth);
  // A global allocation inside a kernel whose one user needs no scratch on
  // the device (TopK's order row); any other is not compiled yet.
  void no_scratch(const tir::Allocate& a, int depth);

  Level level_ = Level::kGrid;
  bool grid_call_ = false;  // the leaf is a helper called by the whole grid
  Launch launch_ = Launch::kOneBlock;
  int parts_ = 0;  // reduction partials named so far
};

}  // namespace tf::compiler::cuda
