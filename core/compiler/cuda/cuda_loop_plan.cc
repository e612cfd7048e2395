#include "core/compiler/cuda/cuda_loop_plan.h"

#include <algorithm>
#include <map>
#include <utility>

#include "core/compiler/cuda/cuda_codegen.h"
#include "core/compiler/cuda/cuda_function.h"
#include "core/compiler/cuda/workspace.h"
#include "core/compiler/loop_tree.h"
#include "core/runtime/strided.h"

namespace tf::compiler::cuda {

struct CudaLoopPlan {
  loops::Tree tree;
  std::vector<std::shared_ptr<const CudaFunction>> segments;  // by segment id
};

namespace {

using runtime::NDArray;

// A place of the tree (loop_tree.h's Exec): a scope's roots (part 0), a
// loop's buffers (1, 2), a loop's induction variable (3).
using Place = std::pair<const void*, int>;
constexpr int kInductionPart = 3;

std::vector<int64_t> extents(const ir::TensorType& t, const ir::DimBindings& b) {
  std::vector<int64_t> out;
  for (const ir::ShapeDim& d : t.shape()) out.push_back(d.evaluate(b));
  return out;
}

uint64_t bytes_of(ir::DType d, const std::vector<int64_t>& shape) {
  return static_cast<uint64_t>(runtime::shape_numel(shape)) * static_cast<uint64_t>(ir::dtype_bytes(d));
}

// Where each place lies in the workspace, measured by a walk that
// launches nothing: a place's largest size over the walk, then the
// segments' shared scratch.
class Measure {
 public:
  explicit Measure(const CudaLoopPlan& plan) : plan_(plan) {}

  std::vector<NDArray> fresh(const void* site, int part, const std::vector<ir::TensorTypePtr>& types,
                             const ir::DimBindings& b) {
    std::vector<NDArray> out;
    uint64_t total = 0;
    for (const auto& t : types) {
      std::vector<int64_t> shape = extents(*t, b);
      total += workspace_aligned(bytes_of(t->dtype(), shape));
      out.push_back(NDArray::borrow(t->dtype(), nullptr, shape, runtime::contiguous_strides(shape)));
    }
    need(Place{site, part}, total);
    return out;
  }
  NDArray induction(const loops::Loop& l, int64_t) {
    need(Place{&l, kInductionPart}, sizeof(int64_t));
    return NDArray::borrow(ir::DType::kI64, nullptr, {}, {});
  }
  void run(const loops::Segment& s, const std::vector<NDArray>&, const std::vector<NDArray>&,
           const ir::DimBindings& b) {
    scratch_ = std::max(scratch_, plan_.segments.at(s.id)->workspace_bytes(b));
  }
  void carried_in_place() {}

  // Byte offsets of the places in the workspace, and the scratch's.
  std::map<Place, uint64_t> offsets() const {
    std::map<Place, uint64_t> at;
    uint64_t next = 0;
    for (const auto& [p, n] : need_) {
      at[p] = next;
      next += workspace_aligned(n);
    }
    return at;
  }
  uint64_t scratch_offset() const {
    uint64_t n = 0;
    for (const auto& [p, bytes] : need_) n += workspace_aligned(bytes);
    return n;
  }
  uint64_t total() const { return scratch_offset() + scratch_; }

 private:
  void need(const Place& p, uint64_t bytes) {
    uint64_t& n = need_[p];
    n = std::max(n, bytes);
  }
  const CudaLoopPlan& plan_;
  std::map<Place, uint64_t> need_;
  uint64_t scratch_ = 0;
};

// The walk that runs: each place's arrays at its offset, each segment on
// the stream with the shared scratch.
class Walk {
 public:
  Walk(const CudaLoopPlan& plan, const Measure& m, const Workspace& ws, int device, CUstream stream)
      : plan_(plan), at_(m.offsets()), ws_(ws), scratch_(m.scratch_offset()),
        scratch_bytes_(m.total() - m.scratch_offset()), device_(device), stream_(stream) {}

  std::vector<NDArray> fresh(const void* site, int part, const std::vector<ir::TensorTypePtr>& types,
                             const ir::DimBindings& b) const {
    std::vector<NDArray> out;
    uint64_t offset = at_.at(Place{site, part});
    for (const auto& t : types) {
      std::vector<int64_t> shape = extents(*t, b);
      const uint64_t n = bytes_of(t->dtype(), shape);
      out.push_back(NDArray::borrow(t->dtype(), ws_.ptr(offset), shape, runtime::contiguous_strides(shape)));
      offset += workspace_aligned(n);
    }
    return out;
  }
  // The value as two 32-bit words, low first (the device is little-endian).
  NDArray induction(const loops::Loop& l, int64_t value) const {
    const uint64_t at = at_.at(Place{&l, kInductionPart});
    const uint64_t v = static_cast<uint64_t>(value);
    const DriverApi& d = driver();
    check(d.memset_d32_async(ws_.at(at), static_cast<unsigned>(v & 0xffffffffu), 1, stream_), "cuMemsetD32Async");
    check(d.memset_d32_async(ws_.at(at + 4), static_cast<unsigned>(v >> 32), 1, stream_), "cuMemsetD32Async");
    return NDArray::borrow(ir::DType::kI64, ws_.ptr(at), {}, {});
  }
  void run(const loops::Segment& s, const std::vector<NDArray>& in, const std::vector<NDArray>& out,
           const ir::DimBindings& b) const {
    plan_.segments.at(s.id)->run(in, out, b, device_, stream_, ws_.ptr(scratch_), scratch_bytes_);
  }
  void carried_in_place() const {}

 private:
  const CudaLoopPlan& plan_;
  std::map<Place, uint64_t> at_;
  const Workspace& ws_;
  uint64_t scratch_, scratch_bytes_;
  int device_;
  CUstream stream_;
};

// The walk that measures, on arrays without memory.
Measure measure(const CudaLoopPlan& plan, const ir::DimBindings& bindings) {
  std::vector<NDArray> none(plan.tree.params.size());
  Measure m(plan);
  // The top scope writes the caller's outputs; measuring reads none.
  std::vector<NDArray> outputs;
  if (plan.tree.top->final) outputs.resize(plan.tree.top->final->types.size());
  loops::run_tree(plan.tree, none, outputs, bindings, m);
  return m;
}

loops::Tree cuda_tree(const ir::Function& fn) {
  return loops::build_tree(fn, loops::TreeOptions{/*body_ends_in_segment=*/true});
}

std::vector<CudaProgram> segment_programs(const loops::Tree& t) {
  std::vector<CudaProgram> out;
  loops::for_each_segment(t, [&](const loops::Segment& s) { out.push_back(generate_cuda_segment(s.inputs, s.roots)); });
  return out;
}

}  // namespace

std::vector<CudaProgram> generate_cuda_loop_segments(const ir::Function& fn) { return segment_programs(cuda_tree(fn)); }

std::shared_ptr<const CudaLoopPlan> build_cuda_loop_plan(const ir::Function& fn) {
  auto plan = std::make_shared<CudaLoopPlan>();
  plan->tree = cuda_tree(fn);
  std::vector<CudaProgram> programs = segment_programs(plan->tree);
  for (size_t i = 0; i < programs.size(); ++i)
    plan->segments.push_back(
        std::make_shared<const CudaFunction>(std::move(programs[i]), fn.name() + ".seg" + std::to_string(i)));
  return plan;
}

uint64_t loop_plan_workspace_bytes(const CudaLoopPlan& plan, const ir::DimBindings& bindings) {
  return measure(plan, bindings).total();
}

void run_cuda_loop_plan(const CudaLoopPlan& plan, const std::vector<NDArray>& inputs,
                        const std::vector<NDArray>& outputs, const ir::DimBindings& bindings, int device,
                        CUstream stream, void* workspace, uint64_t workspace_bytes) {
  // Bounds that do not resolve fail here, before anything is launched.
  const Measure m = measure(plan, bindings);
  const Workspace ws(workspace, workspace_bytes, m.total(), stream);
  Walk x(plan, m, ws, device, stream);
  loops::run_tree(plan.tree, inputs, outputs, bindings, x);
}

void prepare_loop_plan(const CudaLoopPlan& plan, int device) {
  for (const auto& s : plan.segments) s->prepare(device);
}

std::string loop_plan_key(const CudaLoopPlan& plan) {
  std::string key;
  for (const auto& s : plan.segments) key += (key.empty() ? "" : "-") + s->key();
  return key;
}

bool loop_plan_reports_errors(const CudaLoopPlan& plan) {
  return std::any_of(plan.segments.begin(), plan.segments.end(), [](const auto& s) { return s->reports_errors(); });
}

bool loop_plan_has_gemm(const CudaLoopPlan& plan) {
  return std::any_of(plan.segments.begin(), plan.segments.end(), [](const auto& s) { return s->has_gemm(); });
}

}  // namespace tf::compiler::cuda
