#include "core/compiler/loop_plan.h"

#include <atomic>

namespace tf::compiler {
namespace {

using runtime::NDArray;

std::atomic<int64_t> g_in_place_runs{0};

std::vector<int64_t> extents(const ir::TensorType& t, const ir::DimBindings& b) {
  std::vector<int64_t> out;
  for (const ir::ShapeDim& d : t.shape()) out.push_back(d.evaluate(b));
  return out;
}

}  // namespace

struct LoopPlan {
  loops::Tree tree;
  std::vector<std::shared_ptr<const CompiledFunction>> segments;  // by segment id
};

namespace {

// A walk on host memory: every stored value is a fresh array (freed when
// its last reader drops it), a segment runs its native code.
struct HostExec {
  const LoopPlan& plan;
  std::vector<NDArray> fresh(const void*, int, const std::vector<ir::TensorTypePtr>& types,
                             const ir::DimBindings& b) const {
    std::vector<NDArray> out;
    for (const auto& t : types) out.push_back(NDArray::empty(t->dtype(), extents(*t, b)));
    return out;
  }
  // Fresh per iteration: a carry may be the induction variable itself.
  NDArray induction(const loops::Loop&, int64_t value) const {
    NDArray iv = NDArray::empty(ir::DType::kI64, {});
    *static_cast<int64_t*>(iv.data()) = value;
    return iv;
  }
  void run(const loops::Segment& s, const std::vector<NDArray>& in, const std::vector<NDArray>& out,
           const ir::DimBindings& b) const {
    plan.segments.at(s.id)->run(in, out, b);
  }
  void carried_in_place() const { g_in_place_runs.fetch_add(1, std::memory_order_relaxed); }
};

}  // namespace

std::shared_ptr<const LoopPlan> build_loop_plan(const ir::Function& fn, const SegmentCompiler& compile_segment) {
  auto plan = std::make_shared<LoopPlan>();
  plan->tree = loops::build_tree(fn);
  loops::for_each_segment(plan->tree, [&](const loops::Segment& s) {
    Program p = generate_segment(s.inputs, s.roots);
    // A segment runs after others (an earlier iteration, the loop before
    // it) wrote the outputs: a precheck of its own fails after writing.
    p.may_fail = p.may_fail || p.prechecks;
    plan->segments.push_back(compile_segment(p, fn.name() + ".seg" + std::to_string(s.id)));
  });
  return plan;
}

void run_loop_plan(const LoopPlan& plan, const std::vector<NDArray>& inputs, const std::vector<NDArray>& outputs,
                   const ir::DimBindings& bindings) {
  HostExec x{plan};
  loops::run_tree(plan.tree, inputs, outputs, bindings, x);
}

int64_t loop_carry_in_place_runs() { return g_in_place_runs.load(std::memory_order_relaxed); }

std::string loop_plan_key(const LoopPlan& plan) {
  std::string key;
  for (const auto& s : plan.segments) key += (key.empty() ? "" : "-") + s->key();
  return key;
}

bool loop_plan_may_fail(const LoopPlan& plan) {
  for (const auto& s : plan.segments)
    if (s->may_fail()) return true;
  return false;
}

}  // namespace tf::compiler
