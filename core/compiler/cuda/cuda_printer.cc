#include "core/compiler/cuda/cuda_printer.h"

#include <set>

#include "core/compiler/cuda/kernel_split.h"
#include "core/compiler/cuda/vector_lanes.h"
#include "core/compiler/emit_util.h"
#include "core/ir/error.h"
#include "core/tir/functor.h"
#include "core/tir/op.h"

namespace tf::compiler::cuda {

using namespace tir;

const char* launch_name(Launch l) {
  switch (l) {
    case Launch::kBlocks: return "blocks";
    case Launch::kThreads: return "threads";
    case Launch::kOneBlock: return "one block";
  }
  return "?";
}

namespace {

[[noreturn]] void not_yet(const std::string& what) {
  ir::fail(ir::ErrorKind::kUnsupported, "CUDA backend: " + what + " is not compiled for CUDA yet");
}
// A kernel cannot allocate: what needs scratch gets it from the workspace
// as a slot of the entry (Conv2D's columns: lower_conv.cc).
const char* const kKernelAllocation = "memory allocated inside a kernel";

// A global allocation the device form of its one user does without: TopK's
// order row (the device's tf_topk_row ranks instead of sorting).
bool scratch_not_needed(const Allocate& a) {
  const Evaluate* e = as<Evaluate>(a.body());
  const Call* c = e ? as<Call>(e->value()) : nullptr;
  return c && c->name() == "tf_topk_row" && !c->args().empty() && c->args().back().get() == a.var().get();
}

// The prelude's helpers over many elements (prelude.cc): a tf_team first.
const std::set<std::string>& team_helpers() {
  static const std::set<std::string> s{"tf_stream",      "tf_exp_n",   "tf_exp_sum_n", "tf_div_n", "tf_div_by_sum_n",
                                       "tf_gelu_tanh_n", "tf_rf16_n",  "tf_widen_n",   "tf_narrow_n",
                                       "tf_copy_nd",     "tf_arange",  "tf_topk_row"};
  return s;
}
// Those a whole grid may call as a kernel's only work: no result, no
// reduction, every element independent.
bool grid_helper(const std::string& name) { return name == "tf_copy_nd" || name == "tf_arange"; }

const Call* helper_call(const StmtPtr& s) {
  const Evaluate* e = as<Evaluate>(s);
  const Call* c = e ? as<Call>(e->value()) : nullptr;
  return c && team_helpers().count(c->name()) ? c : nullptr;
}

// Whether a block's threads share the work of s: it holds a vectorized or
// parallel loop or a helper call (which a lone thread would run alone).
class Cooperative : public Visitor {
 public:
  bool found = false;

 protected:
  void visit_For(const For& f) override {
    if (f.for_kind() == ForKind::kVectorized || f.for_kind() == ForKind::kParallel) found = true;
    Visitor::visit_For(f);
  }
  void visit_Call(const Call& c) override {
    if (team_helpers().count(c.name())) found = true;
    Visitor::visit_Call(c);
  }
};

bool cooperative(const StmtPtr& s) {
  Cooperative v;
  v.visit(s);
  return v.found;
}

std::string identity(BinaryOp op, const std::string& t) {
  return op == BinaryOp::kAdd ? t + "(0)" : "tf_max_identity<" + t + ">()";
}

}  // namespace

std::string CudaPrinter::kernel(const StmtPtr& k, int depth) {
  out_.clear();
  level_ = Level::kGrid;
  launch_ = Launch::kOneBlock;
  print(k, depth);
  return out_;
}

void CudaPrinter::print_at(Level level, const StmtPtr& s, int depth) {
  const Level saved = level_;
  level_ = level;
  print(s, depth);
  level_ = saved;
}

void CudaPrinter::print(const StmtPtr& s, int depth) {
  switch (level_) {
    case Level::kGrid: return is_context(s) ? CppPrinter::print(s, depth) : print_leaf(s, depth);
    case Level::kBlock: return print_block(s, depth);
    case Level::kThread: return print_thread(s, depth);
  }
}

void CudaPrinter::print_leaf(const StmtPtr& s, int depth) {
  const std::string pad(2 * static_cast<size_t>(depth), ' ');
  if (const For* f = as<For>(s); f && f->for_kind() == ForKind::kParallel) {
    const std::string v = name(f->var().get()), lo = expr(f->min());
    const std::string hi = "(" + lo + " + " + expr(f->extent()) + ")";
    if (cooperative(f->body())) {
      launch_ = Launch::kBlocks;
      out_ += pad + "for (int64_t " + v + " = " + lo + " + blockIdx.x; " + v + " < " + hi + "; " + v +
              " += gridDim.x) {\n";
      print_at(Level::kBlock, f->body(), depth + 1);
    } else {
      launch_ = Launch::kThreads;
      out_ += pad + "for (int64_t " + v + " = " + lo + " + int64_t(blockIdx.x) * blockDim.x + threadIdx.x; " + v +
              " < " + hi + "; " + v + " += int64_t(gridDim.x) * blockDim.x) {\n";
      print_at(Level::kThread, f->body(), depth + 1);
    }
    out_ += pad + "}\n";
    return;
  }
  if (const Call* c = helper_call(s); c && grid_helper(c->name())) {
    launch_ = Launch::kThreads;
    grid_call_ = true;
    out_ += pad + expr(as<Evaluate>(s)->value()) + ";\n";
    grid_call_ = false;
    return;
  }
  launch_ = Launch::kOneBlock;
  out_ += pad + "if (blockIdx.x == 0) {\n";
  print_at(Level::kBlock, s, depth + 1);
  out_ += pad + "}\n";
}

void CudaPrinter::print_block(const StmtPtr& s, int depth) {
  const std::string pad(2 * static_cast<size_t>(depth), ' ');
  switch (s->kind()) {
    case StmtKind::kStore: {
      // One value: one thread writes it, and every thread may then read it.
      out_ += pad + "if (threadIdx.x == 0) {\n";
      print_at(Level::kThread, s, depth + 1);
      out_ += pad + "}\n" + pad + "__syncthreads();\n";
      return;
    }
    case StmtKind::kAllocate: {
      auto& a = static_cast<const Allocate&>(*s);
      if (a.scope() != MemoryScope::kLocal) return no_scratch(a, depth);
      out_ += pad + "__shared__ " + ctype(a.var()->dtype()) + " " + name(a.var().get()) + "[" + expr(a.extent()) +
              "];\n";
      return print(a.body(), depth);
    }
    case StmtKind::kBarrier: out_ += pad + "__syncthreads();\n"; return;
    case StmtKind::kReturn:
      out_ += pad + "if (threadIdx.x == 0) atomicCAS(pre, 0, " + expr(static_cast<const Return&>(*s).code()) +
              ");\n" + pad + "return;\n";
      return;
    default: return CppPrinter::print(s, depth);  // lets, ifs, sequences, calls: every thread alike
  }
}

void CudaPrinter::print_thread(const StmtPtr& s, int depth) {
  const std::string pad(2 * static_cast<size_t>(depth), ' ');
  switch (s->kind()) {
    case StmtKind::kAllocate:
      if (static_cast<const Allocate&>(*s).scope() != MemoryScope::kLocal)
        return no_scratch(static_cast<const Allocate&>(*s), depth);
      return CppPrinter::print(s, depth);
    case StmtKind::kBarrier: not_yet("a barrier inside one thread's loop");
    case StmtKind::kReturn:
      out_ += pad + "atomicCAS(pre, 0, " + expr(static_cast<const Return&>(*s).code()) + ");\n" + pad + "return;\n";
      return;
    default: return CppPrinter::print(s, depth);
  }
}

void CudaPrinter::no_scratch(const Allocate& a, int depth) {
  if (!scratch_not_needed(a)) not_yet(kKernelAllocation);
  out_ += std::string(2 * static_cast<size_t>(depth), ' ') + ctype(a.var()->dtype()) + "* " + name(a.var().get()) +
          " = nullptr;  // the device's form needs no scratch\n";
  print(a.body(), depth);
}

void CudaPrinter::print_for(const For& f, int depth) {
  const std::string pad(2 * static_cast<size_t>(depth), ' ');
  const bool split = level_ == Level::kBlock &&
                     (f.for_kind() == ForKind::kVectorized || f.for_kind() == ForKind::kParallel);
  if (split) return block_loop(f, depth);
  const std::string v = name(f.var().get()), lo = expr(f.min());
  if (f.for_kind() == ForKind::kUnrolled) out_ += pad + "#pragma unroll\n";
  out_ += pad + "for (int64_t " + v + " = " + lo + "; " + v + " < (" + lo + " + " + expr(f.extent()) + "); ++" + v +
          ") {\n";
  print(f.body(), depth + 1);
  out_ += pad + "}\n";
}

// A vectorized loop at block level: thread t takes iterations t, t + B,
// ...; each reduction variable gets a per-thread partial starting at the
// operation's identity, combined across the block and into the variable.
void CudaPrinter::block_loop(const For& f, int depth) {
  const std::string pad(2 * static_cast<size_t>(depth), ' ');
  const std::string v = name(f.var().get()), lo = expr(f.min());
  out_ += pad + "{\n";
  std::vector<std::string> accs, partials;
  for (const Reduction& r : f.reductions()) {
    const std::string type = cpu::cpp_type(r.var->type());
    accs.push_back(name(r.var.get()));
    partials.push_back("tf_part" + std::to_string(parts_++));
    out_ += pad + "  " + type + " " + partials.back() + " = " + identity(r.op, type) + ";\n";
  }
  // Inside the loop each reduction variable is spelled as its partial.
  for (size_t i = 0; i < accs.size(); ++i) fixed_[f.reductions()[i].var.get()] = partials[i];
  const LanePlan lanes = plan_lanes(f);
  if (lanes.lanes > 0) {
    wide_loop(f, lanes, depth + 1);
  } else {
    out_ += pad + "  for (int64_t " + v + " = " + lo + " + threadIdx.x; " + v + " < (" + lo + " + " +
            expr(f.extent()) + "); " + v + " += blockDim.x) {\n";
    print_at(Level::kThread, f.body(), depth + 2);
    out_ += pad + "  }\n";
  }
  for (size_t i = 0; i < accs.size(); ++i) {
    const Reduction& r = f.reductions()[i];
    fixed_[r.var.get()] = accs[i];
    if (r.op == BinaryOp::kAdd)
      out_ += pad + "  " + accs[i] + " = " + accs[i] + " + tf_block_sum(" + partials[i] + ");\n";
    else
      out_ += pad + "  " + accs[i] + " = tf_max_op(" + accs[i] + ", tf_block_max(" + partials[i] + "));\n";
  }
  out_ += pad + "}\n";
  // A block reduction's barriers already order the loop's stores before
  // what follows; without one, a barrier does.
  if (accs.empty()) out_ += pad + "__syncthreads();\n";
}

namespace {

// `alignas(W) T name[V];`: a row's lane registers, aligned as the word
// they move as.
std::string lane_array(const VarPtr& base, const std::string& name, int lanes) {
  const ir::DType d = base->type().dtype;
  return "alignas(" + std::to_string(lanes * ir::dtype_bits(d) / 8) + ") " + cpu::cpp_type(Type::scalar(d)) + " " +
         name + "[" + std::to_string(lanes) + "];\n";
}

}  // namespace

// When every planned row is aligned for its width at the loop's start,
// thread t takes groups of V iterations t*V, (t + B)*V, ...: its rows'
// lanes loaded at once, the body once per lane, the stored lanes written
// at once; the tail (fewer than V left) and an unaligned row run the
// scalar loop.
void CudaPrinter::wide_loop(const For& f, const LanePlan& p, int depth) {
  const std::string pad(2 * static_cast<size_t>(depth), ' ');
  const std::string id = std::to_string(parts_++), V = std::to_string(p.lanes);
  const std::string lo = "tf_lo" + id, hi = "tf_hi" + id, g = "tf_g" + id, v = name(f.var().get());
  out_ += pad + "const int64_t " + lo + " = " + expr(f.min()) + ", " + hi + " = " + lo + " + (" + expr(f.extent()) +
          ");\n";
  auto scalar_loop = [&](const std::string& from, const std::string& at) {
    out_ += at + "for (int64_t " + v + " = " + from + " + threadIdx.x; " + v + " < " + hi + "; " + v +
            " += blockDim.x) {\n";
    print_at(Level::kThread, f.body(), depth + 2);
    out_ += at + "}\n";
  };
  std::string aligned;
  for (const auto* rows : {&p.loads, &p.stores})
    for (const LaneRow& r : *rows)
      aligned += (aligned.empty() ? "" : " && ") + std::string("tf_aligned<") + V + ">(" + name(r.base.get()) +
                 " + " + lo + ")";
  out_ += pad + "if (" + aligned + ") {\n";
  const VarPtr j0 = Var::make("g", Type::scalar(ir::DType::kI64));
  fixed_[j0.get()] = g;
  out_ += pad + "  for (int64_t " + g + " = " + lo + " + int64_t(threadIdx.x) * " + V + "; " + g + " + " + V +
          " <= " + hi + "; " + g + " += int64_t(blockDim.x) * " + V + ") {\n";
  const std::string in = pad + "    ";
  size_t row = 0;
  for (const LaneRow& r : p.loads) {
    const std::string regs = "tf_v" + id + "_" + std::to_string(row++);
    out_ += in + lane_array(r.base, regs, p.lanes) + in + "tf_vload(" + regs + ", " + name(r.base.get()) + " + " + g +
            ");\n";
    for (size_t k = 0; k < r.lanes.size(); ++k) fixed_[r.lanes[k].get()] = regs + "[" + std::to_string(k) + "]";
  }
  std::vector<std::string> stored;
  for (const LaneRow& r : p.stores) {
    stored.push_back("tf_v" + id + "_" + std::to_string(row++));
    out_ += in + lane_array(r.base, stored.back(), p.lanes);
    fixed_[r.registers.get()] = stored.back();
  }
  for (int k = 0; k < p.lanes; ++k) {  // a scope each: a lane's lets have the body's names
    out_ += in + "{\n";
    print_at(Level::kThread, lane_body(f, p, k, j0), depth + 3);
    out_ += in + "}\n";
  }
  for (size_t i = 0; i < p.stores.size(); ++i)
    out_ += in + "tf_vstore(" + name(p.stores[i].base.get()) + " + " + g + ", " + stored[i] + ");\n";
  out_ += pad + "  }\n";
  scalar_loop(lo + " + (" + hi + " - " + lo + ") / " + V + " * " + V, pad + "  ");
  out_ += pad + "} else {\n";
  scalar_loop(lo, pad + "  ");
  out_ += pad + "}\n";
}

std::string CudaPrinter::call(const Call& c) {
  const std::string& n = c.name();
  if (n == "tf_gemm" || n == "tf_gemm_widened") not_yet("a GEMM inside a kernel (cuBLAS runs between kernels)");
  if (n == "__builtin_prefetch") return call_spelling("tf_prefetch", c);
  if (n == "__builtin_fma") return call_spelling("fma", c);
  if (team_helpers().count(n)) {
    const std::string team = grid_call_                 ? "tf_grid_team()"
                             : level_ == Level::kThread ? "tf_thread_team()"
                                                        : "tf_block_team()";
    return call_spelling(n, c, team);
  }
  return CppPrinter::call(c);
}

}  // namespace tf::compiler::cuda
