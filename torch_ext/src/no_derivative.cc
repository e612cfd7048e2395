#include "no_derivative.h"

#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <ATen/core/grad_mode.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <c10/util/Exception.h>
#include <c10/util/intrusive_ptr.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/basic_ops.h>
#include <torch/csrc/autograd/functions/utils.h>
#include <torch/csrc/autograd/variable.h>

namespace tf::torch_ext {
namespace {

// The op below autograd: nothing in it records a graph.
void below_autograd(const c10::OperatorHandle& op, c10::DispatchKeySet keys, torch::jit::Stack* stack) {
  at::AutoDispatchBelowADInplaceOrView guard;
  op.redispatchBoxed(keys & c10::after_ADInplaceOrView_keyset, stack);
}

// A NotImplemented node as this torch holds autograd nodes: by shared_ptr
// (torch 1.x, freed through deleteNode, which unlinks a long graph without
// recursing) or by intrusive_ptr (newer torch).
template <typename N>
auto make_node(const std::string& op_name) {
  if constexpr (std::is_base_of_v<c10::intrusive_ptr_target, N>) {
    return c10::make_intrusive<N>(op_name);
  } else {
    return std::shared_ptr<N>(new N(op_name), [](N* n) { deleteNode(n); });  // found by ADL
  }
}

}  // namespace

void no_derivative(const c10::OperatorHandle& op, c10::DispatchKeySet keys, torch::jit::Stack* stack) {
  const c10::FunctionSchema& schema = op.schema();
  const size_t n_args = schema.arguments().size();
  const size_t start = stack->size() - n_args;
  const bool grad_mode = at::GradMode::is_enabled();
  bool any_requires_grad = false;
  for (size_t i = start; i < stack->size(); ++i) {
    if (!(*stack)[i].isTensor()) continue;
    const at::Tensor& t = (*stack)[i].toTensor();
    // A tensor without autograd metadata (the common, plain one) has neither
    // a gradient requirement nor a forward gradient: no calls to ask.
    if (!t.defined() || t.unsafeGetTensorImpl()->autograd_meta() == nullptr) continue;
    TORCH_CHECK_NOT_IMPLEMENTED(!t._fw_grad(/*level=*/0).defined(),
                                "Trying to use forward AD with ", schema.name(), " that does not support it.");
    any_requires_grad = any_requires_grad || (grad_mode && t.requires_grad());
  }
  if (!any_requires_grad) return below_autograd(op, keys, stack);

  // The outputs' grad_fn: a node whose backward raises, naming the op, with
  // edges to the inputs that require grad (collected before the stack is
  // replaced by the outputs).
  std::vector<const at::Tensor*> needs_grad;
  for (size_t i = start; i < stack->size(); ++i)
    if ((*stack)[i].isTensor() && (*stack)[i].toTensor().requires_grad()) needs_grad.push_back(&(*stack)[i].toTensor());
  auto grad_fn = make_node<torch::autograd::NotImplemented>(schema.name());
  grad_fn->set_next_edges(torch::autograd::collect_next_edges(needs_grad));
  below_autograd(op, keys, stack);
  const size_t n_ret = schema.returns().size();
  for (size_t i = stack->size() - n_ret; i < stack->size(); ++i) {
    if (!(*stack)[i].isTensor()) continue;
    at::Tensor& t = (*stack)[i].toTensor();
    if (torch::autograd::isDifferentiableType(t.scalar_type())) torch::autograd::set_history(t, grad_fn);
  }
}

}  // namespace tf::torch_ext
