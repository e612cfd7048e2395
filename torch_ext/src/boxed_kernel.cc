#include "boxed_kernel.h"

#include <memory>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/DLConvertor.h>
#include <c10/util/Exception.h>

#include "dtype_map.h"

namespace tf::torch_ext {

namespace {

struct DLManagedDeleter {
  void operator()(DLManagedTensor* m) const {
    if (m && m->deleter) m->deleter(m);
  }
};
// Owns the view toDLPack made; the DLTensor inside borrows the tensor's
// storage (data == tensor.data_ptr() - byte_offset, strides in elements).
using ManagedPtr = std::unique_ptr<DLManagedTensor, DLManagedDeleter>;

// toDLPack without a copy. torch 1.13 refuses to export Bool ("not supported
// by dlpack"); a bool tensor is exported through a uint8 view of the same
// memory, which is DLPack 0.6's spelling of bool ({kDLUInt, 8}).
ManagedPtr dlpack_view(const at::Tensor& t) {
  return ManagedPtr(at::toDLPack(t.scalar_type() == at::kBool ? t.view(at::kByte) : t));
}

[[noreturn]] void fail_status(const std::string& op, const char* what, tf_status s) {
  TORCH_CHECK(false, op, ": ", what, " failed: ", tf_status_name(s), ": ", tf_last_error());
  __builtin_unreachable();
}

void check_input(const std::string& op, size_t i, const at::Tensor& t) {
  TORCH_CHECK(t.defined(), op, ": input ", i, " is an undefined tensor");
  TORCH_CHECK(t.device().is_cpu(), op, ": input ", i, " is on ", t.device(),
              "; tilefoundry kernels run on CPU tensors only");
  TORCH_CHECK(is_supported_input(t.scalar_type()), op, ": input ", i, " has dtype ",
              t.scalar_type(), ", which TileFoundry does not support");
}

at::Tensor allocate_output(const std::string& op, tf_kernel k, const std::vector<DLTensor>& in,
                           size_t i) {
  DLDataType dtype{};
  int32_t ndim = 0;
  int64_t shape[TF_MAX_NDIM] = {};
  tf_status s = tf_kernel_output_desc(k, in.data(), in.size(), i, &dtype, &ndim, shape);
  if (s != TF_OK) fail_status(op, "tf_kernel_output_desc", s);
  auto st = scalar_type_from_dl(dtype);
  TORCH_CHECK(st.has_value(), op, ": output ", i, " has DLPack dtype (code ",
              static_cast<int>(dtype.code), ", bits ", static_cast<int>(dtype.bits),
              "), which torch cannot hold");
  return at::empty(at::IntArrayRef(shape, static_cast<size_t>(ndim)),
                   at::TensorOptions().dtype(*st).device(at::kCPU));
}

}  // namespace

BoxedKernel::BoxedKernel(tf_kernel k, std::string op_name)
    : kernel_(k), op_name_(std::move(op_name)) {
  tf_status s = tf_kernel_retain(k);
  if (s != TF_OK) fail_status(op_name_, "tf_kernel_retain", s);
  if ((s = tf_kernel_num_inputs(k, &n_in_)) != TF_OK ||
      (s = tf_kernel_num_outputs(k, &n_out_)) != TF_OK) {
    tf_kernel_release(k);
    fail_status(op_name_, "describing the kernel", s);
  }
}

BoxedKernel::~BoxedKernel() { tf_kernel_release(kernel_); }

void BoxedKernel::operator()(const c10::OperatorHandle&, c10::DispatchKeySet,
                             torch::jit::Stack* stack) {
  std::vector<c10::IValue> args = torch::jit::pop(*stack, n_in_);
  std::vector<at::Tensor> inputs;
  std::vector<ManagedPtr> keep;  // DLPack views, released when we return or throw
  std::vector<DLTensor> in;
  for (size_t i = 0; i < n_in_; ++i) {
    inputs.push_back(args[i].toTensor());
    check_input(op_name_, i, inputs.back());
    keep.push_back(dlpack_view(inputs.back()));
    in.push_back(keep.back()->dl_tensor);
  }
  std::vector<at::Tensor> outputs;
  std::vector<DLTensor> out;
  for (size_t i = 0; i < n_out_; ++i) {
    outputs.push_back(allocate_output(op_name_, kernel_, in, i));
    keep.push_back(dlpack_view(outputs.back()));
    out.push_back(keep.back()->dl_tensor);
  }
  tf_status s = tf_kernel_run(kernel_, in.data(), in.size(), out.data(), out.size());
  if (s != TF_OK) fail_status(op_name_, "tf_kernel_run", s);
  for (auto& t : outputs) torch::jit::push(*stack, std::move(t));
}

}  // namespace tf::torch_ext
