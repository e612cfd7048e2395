#include "capi/kernel.h"

#include "capi/tensor_args.h"

#include <atomic>

#include "capi/aot.h"
#include "capi/error.h"
#include "core/compiler/in_place.h"
#include "core/eval/evaluator.h"
#include "core/spmd/executor.h"
#include "core/spmd/segments.h"
#include "core/spmd/virtual_mesh.h"
#include "core/frontend/suggest.h"
#include "core/ir/error.h"

namespace tf::capi {
namespace {

using ir::ErrorKind;

void check_rank(const ir::TensorType& t, const std::string& what) {
  if (t.rank() > TF_MAX_NDIM) {
    ir::fail(ErrorKind::kUnsupported, what + " has rank " + std::to_string(t.rank()) +
                                          ", above TF_MAX_NDIM (" + std::to_string(TF_MAX_NDIM) +
                                          ")");
  }
}

std::vector<ir::TensorTypePtr> param_types(const ir::Function& fn) {
  std::vector<ir::TensorTypePtr> out;
  for (size_t i = 0; i < fn.params().size(); ++i) {
    const ir::VarPtr& p = fn.params()[i];
    auto t = std::dynamic_pointer_cast<const ir::TensorType>(p->type());
    std::string what =
        "parameter #" + std::to_string(i) + " (" + p->name() + ") of '" + fn.name() + "'";
    if (!t) ir::fail(ErrorKind::kUnsupported, what + " is not a tensor; kernels take tensors only");
    check_rank(*t, what);
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<ir::TensorTypePtr> result_types(const ir::Function& fn) {
  std::vector<ir::TensorTypePtr> out = ir::flatten_tensor_types(fn.return_type());
  for (size_t i = 0; i < out.size(); ++i) {
    check_rank(*out[i], "output #" + std::to_string(i) + " of '" + fn.name() + "'");
  }
  return out;
}

bool same_descs(const std::vector<sema::ArgDesc>& a, const std::vector<sema::ArgDesc>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].dtype != b[i].dtype || a[i].shape != b[i].shape) return false;
  return true;
}

std::vector<sema::ArgDesc> descs_of(const std::vector<runtime::NDArray>& arrays) {
  std::vector<sema::ArgDesc> descs;
  descs.reserve(arrays.size());
  for (const runtime::NDArray& a : arrays) descs.push_back({a.dtype(), a.shape()});
  return descs;
}

}  // namespace

const char* side_name(Side side) { return side == Side::kInput ? "input" : "output"; }

const ir::TensorType& checked_tensor(const char* fn, const Kernel& k, Side side, size_t i) {
  size_t count = side == Side::kInput ? k.num_inputs() : k.num_outputs();
  if (i >= count)
    fail(TF_ERR_INVALID_ARGUMENT, std::string(fn) + ": " + side_name(side) + " index " +
                                      std::to_string(i) + " out of range ('" + k.name() + "' has " +
                                      std::to_string(count) + " " + side_name(side) + "s)");
  return side == Side::kInput ? k.input_type(i) : k.output_type(i);
}

ir::FunctionPtr find_function(const ir::Module& m, const std::string& fn) {
  if (ir::FunctionPtr f = m.lookup(fn)) return f;
  std::vector<std::string> names;
  for (const ir::FunctionPtr& f : m.functions()) names.push_back(f->name());
  ir::fail(ErrorKind::kNotFound, "no function named '" + fn + "' in the module" + frontend::did_you_mean(fn, names));
}

std::shared_ptr<const Kernel> Kernel::compile(ir::ModulePtr m, const std::string& fn,
                                              tf_backend requested) {
  ir::FunctionPtr f = find_function(*m, fn);
  if (requested == TF_BACKEND_CUDA) return compile_cuda(std::move(m), std::move(f));
  std::shared_ptr<const compiler::CompiledFunction> native;
  std::shared_ptr<const spmd::SegmentPlan> segments;
  std::string reason;
  const ir::MeshPtr mesh = spmd::function_mesh(*f);
  if (requested == TF_BACKEND_NATIVE && mesh && mesh->level == "device") {
    // Its ranks run through the SPMD executor (tf_kernel_call_rank): native
    // segments between the collectives.
    segments = spmd::plan_segments(*f);
    if (!segments->fallback_reason().empty())
      reason = "'" + fn + "': some of its ranks' code runs on the evaluator: " + segments->fallback_reason();
  } else if (requested == TF_BACKEND_NATIVE) {
    // A module loaded from an AOT library runs the library's code: no compiler.
    if (auto lib = aot_library_of(*m)) native = compiler::bind_library_function(lib, *f);
    try {
      if (!native) native = compiler::compile(*f);
    } catch (const ir::Error& e) {
      if (e.kind() != ErrorKind::kUnsupported) throw;
      reason = e.what();
    }
  }
  const bool native_ranks = segments && reason.empty();
  tf_backend runs = native || native_ranks ? TF_BACKEND_NATIVE
                    : requested == TF_BACKEND_VIRTUAL_MESH ? TF_BACKEND_VIRTUAL_MESH : TF_BACKEND_EVALUATOR;
  auto k = std::make_shared<Kernel>(std::move(m), f, runs,
                                    param_types(*f), result_types(*f));
  k->mesh_ = mesh;
  k->native_ = std::move(native);
  k->native_in_place_ = k->native_ && compiler::writes_all_in_place(*f);
  k->segments_ = std::move(segments);
  k->fallback_reason_ = std::move(reason);
  return k;
}

std::shared_ptr<const Kernel> Kernel::compile_cuda(ir::ModulePtr m, ir::FunctionPtr f) {
  if (const ir::MeshPtr mesh = spmd::function_mesh(*f); mesh && mesh->level == "device")
    ir::fail(ErrorKind::kUnsupported, "'" + f->name() + "' is sharded over a device mesh; sharded functions do not "
                                      "run on CUDA yet");
  compiler::cuda::require_available();  // first: its reason is the clearest
  auto k = std::make_shared<Kernel>(std::move(m), f, TF_BACKEND_CUDA, param_types(*f), result_types(*f));
  k->cuda_ = compiler::cuda::CudaFunction::compile(*f);
  // The code for the first device now, so that its first call does not
  // compile (another device's is loaded at its first call).
  k->cuda_->prepare(0);
  return k;
}

void Kernel::run_cuda(const std::vector<sema::ArgDesc>& input_descs, const std::vector<runtime::NDArray>& inputs,
                      const std::vector<runtime::NDArray>& outputs, int device, void* stream, void* workspace,
                      uint64_t workspace_bytes) const {
  TF_CHECK(cuda_ != nullptr, "run_cuda on a kernel compiled for CUDA");
  const ir::DimBindings bindings = bind(input_descs).bindings;
  cuda_->run(inputs, outputs, bindings, device, static_cast<compiler::cuda::CUstream>(stream), workspace,
             workspace_bytes);
}

uint64_t Kernel::workspace_bytes(const std::vector<sema::ArgDesc>& input_descs) const {
  return cuda_ ? cuda_->workspace_bytes(bind(input_descs).bindings) : 0;
}

std::shared_ptr<const Kernel> Kernel::with_native(ir::ModulePtr m, const std::string& fn,
                                                  std::shared_ptr<const compiler::CompiledFunction> native) {
  auto k = std::const_pointer_cast<Kernel>(compile(std::move(m), fn, TF_BACKEND_EVALUATOR));
  if (native) {
    k->native_ = std::move(native);
    k->native_in_place_ = compiler::writes_all_in_place(k->function());
    k->backend_ = TF_BACKEND_NATIVE;
  } else {
    k->fallback_reason_ = "the library has no compiled code for '" + fn + "'";
  }
  return k;
}

uint64_t Kernel::next_id() {
  static std::atomic<uint64_t> counter{0};
  return ++counter;
}

const Kernel::Bound& Kernel::bind(const std::vector<sema::ArgDesc>& inputs) const {
  thread_local Bound memo;
  if (memo.kernel_id == id_ && same_descs(memo.inputs, inputs)) return memo;
  ir::DimBindings b = sema::bind_arguments(*fn_, inputs);  // may throw: memo stays as it was
  std::vector<sema::ArgDesc> out = sema::output_descs(*fn_, b);
  TF_CHECK(out.size() == outputs_.size(), "output_descs disagrees with the return type");
  memo.kernel_id = 0;  // invalid until every field is assigned
  memo.inputs = inputs;
  memo.bindings = std::move(b);
  memo.outputs = std::move(out);
  memo.kernel_id = id_;
  return memo;
}

const std::vector<sema::ArgDesc>& Kernel::output_descs(const std::vector<sema::ArgDesc>& inputs) const {
  return bind(inputs).outputs;
}

std::vector<runtime::NDArray> Kernel::run(const std::vector<runtime::NDArray>& inputs) const {
  TF_CHECK(cuda_ == nullptr, "a CUDA kernel runs through run_cuda");
  if (native_) {
    const Bound& b = bind(descs_of(inputs));
    ir::DimBindings bindings = b.bindings;  // b may be rebound by another kernel this thread runs
    std::vector<runtime::NDArray> out;
    // Native code writes every element: warm, uninitialized pool memory.
    for (const sema::ArgDesc& d : b.outputs) out.push_back(runtime::NDArray::pooled(d.dtype, d.shape));
    native_->run(inputs, out, bindings);
    return out;
  }
  std::vector<runtime::NDArray> out = backend_ == TF_BACKEND_VIRTUAL_MESH
                                          ? spmd::evaluate_virtual_mesh(*module_, *fn_, inputs)
                                          : eval::evaluate(*module_, *fn_, inputs);
  TF_CHECK(out.size() == outputs_.size(), "evaluator returned the wrong number of outputs");
  return out;
}

bool Kernel::run_into(const std::vector<sema::ArgDesc>& input_descs,
                      const std::vector<runtime::NDArray>& inputs,
                      const std::vector<runtime::NDArray>& outputs) const {
  // A kernel that can fail at run time computes into fresh arrays, so that a
  // failure leaves the caller's outputs untouched (tf_kernel_run's contract).
  if (!native_ || native_->may_fail() || (has_aliases() && !native_in_place_)) return false;
  for (size_t j = 0; j < outputs.size(); ++j) {
    const runtime::NDArray& o = outputs[j];
    if (!o.is_contiguous()) return false;
    for (size_t i = 0; i < inputs.size(); ++i)
      if (static_cast<int64_t>(i) != output_alias(j) && tensors_overlap(o, inputs[i])) return false;
  }
  for (size_t a = 0; a < outputs.size(); ++a)
    for (size_t b = a + 1; b < outputs.size(); ++b)
      if (tensors_overlap(outputs[a], outputs[b])) return false;
  native_->run(inputs, outputs, bind(input_descs).bindings);
  return true;
}

}  // namespace tf::capi
