// tf_kernel_*: compiling, describing and running kernels.
//
// Every run follows one order so that a failure leaves the caller's buffers
// untouched: (1) check every pointer and every tensor, (2) bind the inputs
// and check every output tensor against the expected descriptions,
// (3) compute into fresh arrays, and only then (4) copy into the caller's
// outputs, a step that cannot fail after (2). A CUDA kernel computes on
// the device into the caller's outputs (cuda_function.h: one that can fail
// at run time stages its results in device scratch first).
#include <string>
#include <vector>

#include "capi/checks.h"
#include "capi/error.h"
#include "capi/handles.h"
#include "capi/kernel.h"
#include "capi/managed_tensor.h"
#include "capi/options.h"
#include "capi/tensor_args.h"
#include "core/compiler/cuda/cuda_function.h"
#include "core/ir/error.h"

namespace tf::capi {
namespace {

// Labels render only on failure (TensorLabel): the success path of a call
// formats no strings.
TensorLabel input_label(const char* fn, const Kernel& k, size_t i) {
  return TensorLabel(fn, "input", i, &k.input_name(i));
}

TensorLabel output_label(const char* fn, size_t i) { return TensorLabel(fn, "output", i); }

void check_count(const char* fn, const char* what, size_t expected, size_t got, const Kernel& k) {
  if (expected == got) return;
  fail(TF_ERR_INVALID_ARGUMENT, std::string(fn) + ": '" + k.name() + "' takes " +
                                    std::to_string(expected) + " " + what + ", but got " +
                                    std::to_string(got));
}

// NULL is accepted for an array of zero tensors.
template <typename T>
void check_array(const T* p, size_t n, const char* fn, const char* param) {
  if (n != 0) require_non_null(p, fn, param);
}

void describe_inputs(const char* fn, const Kernel& k, const DLTensor* in, size_t n_in, bool need_data,
                     std::vector<sema::ArgDesc>* descs) {
  check_array(in, n_in, fn, "in");
  check_count(fn, "inputs", k.num_inputs(), n_in, k);
  descs->resize(n_in);
  for (size_t i = 0; i < n_in; ++i) describe_tensor(in[i], input_label(fn, k, i), need_data, &(*descs)[i]);
}

std::vector<sema::ArgDesc> describe_inputs(const char* fn, const Kernel& k, const DLTensor* in,
                                           size_t n_in, bool need_data) {
  std::vector<sema::ArgDesc> descs;
  describe_inputs(fn, k, in, n_in, need_data, &descs);
  return descs;
}

void view_inputs(const char* fn, const Kernel& k, const DLTensor* in, size_t n_in,
                 std::vector<runtime::NDArray>* views) {
  views->resize(n_in);
  for (size_t i = 0; i < n_in; ++i) view_tensor(in[i], input_label(fn, k, i), &(*views)[i]);
}

std::vector<runtime::NDArray> view_inputs(const char* fn, const Kernel& k, const DLTensor* in,
                                          size_t n_in) {
  std::vector<runtime::NDArray> views;
  view_inputs(fn, k, in, n_in, &views);
  return views;
}

// Step (2) for tf_kernel_run: views of the caller's outputs, each checked
// to match its expected description exactly. `got` is scratch.
void checked_outputs(const Kernel& k, DLTensor* out, size_t n_out, const std::vector<sema::ArgDesc>& expected,
                     sema::ArgDesc* got, std::vector<runtime::NDArray>* views) {
  const char* fn = "tf_kernel_run";
  check_array(out, n_out, fn, "out");
  check_count(fn, "outputs", k.num_outputs(), n_out, k);
  views->resize(n_out);
  for (size_t i = 0; i < n_out; ++i) {
    TensorLabel what = output_label(fn, i);
    describe_tensor(out[i], what, true, got);
    require_same_desc(expected[i], *got, what);
    require_no_self_overlap(out[i], *got, what);
    view_tensor(out[i], what, &(*views)[i]);
  }
}

// An in-place output (Kernel::output_alias) must be its input itself: the
// same elements in the same order (it receives the result the kernel computes
// from that input). It must share no memory with any other argument, which
// the kernel reads, or writes, while it writes this one.
void check_in_place(const char* fn, const Kernel& k, const std::vector<runtime::NDArray>& inputs,
                    const std::vector<runtime::NDArray>& outputs) {
  for (size_t j = 0; j < outputs.size(); ++j) {
    const int64_t a = k.output_alias(j);
    if (a < 0) continue;
    const size_t i = static_cast<size_t>(a);
    const runtime::NDArray &o = outputs[j], &in = inputs[i];
    const std::string param = "input #" + std::to_string(i) + " (" + k.input_name(i) + ")";
    if (o.data() != in.data() || (num_elements(o.shape()) > 1 && o.strides() != in.strides()))
      invalid(output_label(fn, j), "is written in place of " + param +
                                       ", so it must be that tensor itself (the same data, byte_offset and strides)");
    for (size_t m = 0; m < inputs.size(); ++m)
      if (m != i && tensors_overlap(o, inputs[m]))
        invalid(output_label(fn, j), "is written in place of " + param + " and shares memory with input #" +
                                         std::to_string(m) + " (" + k.input_name(m) +
                                         "); an in-place tensor must not overlap another argument");
    for (size_t m = 0; m < outputs.size(); ++m)
      if (m != j && tensors_overlap(o, outputs[m]))
        invalid(output_label(fn, j), "is written in place of " + param + " and shares memory with output #" +
                                         std::to_string(m) + "; an in-place tensor must not overlap another argument");
  }
}

// Steps (3) and (4): straight into `outputs` when the kernel can, else into
// fresh arrays copied over them (an in-place output's copy overwrites its
// input only after every result is computed).
void run_to(const Kernel& k, const std::vector<sema::ArgDesc>& in_descs, const std::vector<runtime::NDArray>& inputs,
            const std::vector<runtime::NDArray>& outputs, const std::vector<sema::ArgDesc>& expected) {
  if (k.run_into(in_descs, inputs, outputs)) return;  // native writes in place: no temporaries, no copy
  auto results = k.run(inputs);
  for (size_t i = 0; i < results.size(); ++i)
    if (num_elements(expected[i].shape) != 0) results[i].copy_to(outputs[i]);
}

// tf_kernel_call's results for a kernel with in-place outputs: each such
// output is its input, written (checked as tf_kernel_run checks it); the
// others are fresh.
std::vector<runtime::NDArray> call_in_place(const char* fn, const Kernel& k, const DLTensor* in,
                                            const std::vector<sema::ArgDesc>& in_descs,
                                            const std::vector<runtime::NDArray>& inputs,
                                            const std::vector<sema::ArgDesc>& expected) {
  std::vector<runtime::NDArray> results;
  for (size_t j = 0; j < expected.size(); ++j) {
    const int64_t a = k.output_alias(j);
    if (a < 0) {
      results.push_back(runtime::NDArray::pooled(expected[j].dtype, expected[j].shape));
      continue;
    }
    const size_t i = static_cast<size_t>(a);
    require_no_self_overlap(in[i], in_descs[i], input_label(fn, k, i));
    results.push_back(inputs[i]);
  }
  check_in_place(fn, k, inputs, results);
  run_to(k, in_descs, inputs, results, expected);
  return results;
}

// Rationale: the evaluator promises fresh arrays; this makes sure that what
// tf_kernel_call hands over never aliases a borrowed input, whatever it returns.
runtime::NDArray owned(runtime::NDArray r, const std::vector<runtime::NDArray>& inputs) {
  bool copy = !r.is_contiguous();
  for (const auto& in : inputs) copy = copy || tensors_overlap(r, in);
  if (!copy) return r;
  runtime::NDArray fresh = runtime::NDArray::pooled(r.dtype(), r.shape());
  r.copy_to(fresh);
  return fresh;
}

// The device a call runs on, where every tensor of it must be: the cpu
// for a kernel of another backend; for a CUDA kernel, the device of the
// call's first tensor.
DLDevice call_device(const Kernel& k, const DLTensor* first) {
  if (k.backend() != TF_BACKEND_CUDA) return DLDevice{kDLCPU, 0};
  if (first != nullptr && first->device.device_type == kDLCUDA && first->device.device_id >= 0) return first->device;
  return DLDevice{kDLCUDA, 0};
}

void check_devices(const char* fn, const Kernel& k, const DLTensor* in, size_t n_in, const DLTensor* out,
                   size_t n_out, const DLDevice& device) {
  for (size_t i = 0; i < n_in; ++i)
    if (!on_device(in[i], device)) require_device(in[i], device, k.name(), input_label(fn, k, i));
  for (size_t i = 0; i < n_out; ++i)
    if (!on_device(out[i], device)) require_device(out[i], device, k.name(), output_label(fn, i));
}

// A CUDA kernel writes its outputs where they are: each must be
// C-contiguous and share no memory with another argument (but for an
// in-place output, which is its input: check_in_place).
void check_cuda_outputs(const char* fn, const Kernel& k, const std::vector<runtime::NDArray>& inputs,
                        const std::vector<runtime::NDArray>& outputs) {
  for (size_t j = 0; j < outputs.size(); ++j) {
    const runtime::NDArray& o = outputs[j];
    if (!o.is_contiguous())
      fail(TF_ERR_UNSUPPORTED, output_label(fn, j).str() + ": a CUDA kernel's output must be C-contiguous");
    for (size_t i = 0; i < inputs.size(); ++i)
      if (static_cast<int64_t>(i) != k.output_alias(j) && tensors_overlap(o, inputs[i]))
        invalid(output_label(fn, j), "shares memory with input #" + std::to_string(i) + " (" + k.input_name(i) + ")");
    for (size_t m = j + 1; m < outputs.size(); ++m)
      if (tensors_overlap(o, outputs[m]))
        invalid(output_label(fn, j), "shares memory with output #" + std::to_string(m));
  }
}

// tf_kernel_run[_with_options]: steps (1) to (4) of this file's order.
void run_kernel(const char* fn, const Kernel& k, const DLTensor* in, size_t n_in, DLTensor* out, size_t n_out,
                const RunOptions& opts) {
  // Per thread, reused: a warm call allocates nothing (no kernel calls back
  // into tf_kernel_run, so one set per thread suffices).
  thread_local struct {
    std::vector<sema::ArgDesc> in_descs, expected;
    sema::ArgDesc got;
    std::vector<runtime::NDArray> inputs, outputs;
  } s;
  describe_inputs(fn, k, in, n_in, true, &s.in_descs);
  s.expected = k.output_descs(s.in_descs);
  checked_outputs(k, out, n_out, s.expected, &s.got, &s.outputs);
  const DLDevice device = call_device(k, n_in ? in : out);
  check_devices(fn, k, in, n_in, out, n_out, device);
  view_inputs(fn, k, in, n_in, &s.inputs);
  if (k.has_aliases()) check_in_place(fn, k, s.inputs, s.outputs);
  if (k.backend() != TF_BACKEND_CUDA) return run_to(k, s.in_descs, s.inputs, s.outputs, s.expected);
  check_cuda_outputs(fn, k, s.inputs, s.outputs);
  k.run_cuda(s.in_descs, s.inputs, s.outputs, device.device_id, opts.stream, opts.workspace, opts.workspace_bytes);
}

// tf_kernel_call[_with_options] on a CUDA kernel: fresh device outputs (an
// in-place output is its input), computed on the options' stream.
std::vector<ManagedTensorPtr> call_cuda(const char* fn, const Kernel& k, const DLTensor* in, size_t n_in,
                                        const std::vector<sema::ArgDesc>& in_descs,
                                        const std::vector<sema::ArgDesc>& expected, const RunOptions& opts) {
  const DLDevice device = call_device(k, n_in ? in : nullptr);
  check_devices(fn, k, in, n_in, nullptr, 0, device);
  const std::vector<runtime::NDArray> inputs = view_inputs(fn, k, in, n_in);
  std::vector<ManagedTensorPtr> managed;
  std::vector<runtime::NDArray> outputs(expected.size());
  for (size_t j = 0; j < expected.size(); ++j) {
    const int64_t a = k.output_alias(j);
    if (a < 0) {
      managed.push_back(new_device_tensor(expected[j].dtype, expected[j].shape, device.device_id, &outputs[j]));
      continue;
    }
    const size_t i = static_cast<size_t>(a);
    require_no_self_overlap(in[i], in_descs[i], input_label(fn, k, i));
    outputs[j] = inputs[i];
    managed.push_back(device_view(inputs[i], device.device_id));
  }
  if (k.has_aliases()) check_in_place(fn, k, inputs, outputs);
  check_cuda_outputs(fn, k, inputs, outputs);
  k.run_cuda(in_descs, inputs, outputs, device.device_id, opts.stream, opts.workspace, opts.workspace_bytes);
  return managed;
}

// tf_kernel_call[_with_options].
void call_kernel(const char* fn, const Kernel& k, const DLTensor* in, size_t n_in, DLManagedTensor** out,
                 size_t n_out, const RunOptions& opts) {
  const std::vector<sema::ArgDesc> in_descs = describe_inputs(fn, k, in, n_in, true);
  const std::vector<sema::ArgDesc> expected = k.output_descs(in_descs);
  check_array(out, n_out, fn, "out");
  check_count(fn, "outputs", k.num_outputs(), n_out, k);
  std::vector<ManagedTensorPtr> managed;
  if (k.backend() == TF_BACKEND_CUDA) {
    managed = call_cuda(fn, k, in, n_in, in_descs, expected, opts);
  } else {
    check_devices(fn, k, in, n_in, nullptr, 0, DLDevice{kDLCPU, 0});
    auto inputs = view_inputs(fn, k, in, n_in);
    std::vector<runtime::NDArray> results =
        k.has_aliases() ? call_in_place(fn, k, in, in_descs, inputs, expected) : k.run(inputs);
    for (size_t j = 0; j < results.size(); ++j)
      managed.push_back(to_managed(k.output_alias(j) >= 0 ? results[j] : owned(std::move(results[j]), inputs)));
  }
  for (size_t i = 0; i < managed.size(); ++i) out[i] = managed[i].release();
}

void check_input_index(const char* fn, const Kernel& k, size_t i) {
  if (i < k.num_inputs()) return;
  fail(TF_ERR_INVALID_ARGUMENT, std::string(fn) + ": input index " + std::to_string(i) +
                                    " out of range ('" + k.name() + "' has " +
                                    std::to_string(k.num_inputs()) + " inputs)");
}

}  // namespace
}  // namespace tf::capi

using tf::capi::Kernel;
using tf::capi::kernel_of;
using tf::capi::require_non_null;

extern "C" {

tf_status tf_kernel_compile(tf_module m, const char* fn, const tf_compile_options* opts,
                            tf_kernel* out) {
  TF_C_API_BEGIN
  tf::ir::ModulePtr mod = tf::capi::module_of(m);
  require_non_null(fn, "tf_kernel_compile", "fn");
  require_non_null(out, "tf_kernel_compile", "out");
  tf_backend backend = tf::capi::requested_backend(opts);
  *out = tf::capi::new_kernel_handle(Kernel::compile(std::move(mod), fn, backend));
  TF_C_API_END
}

tf_status tf_kernel_backend(tf_kernel k, int32_t* out) {
  TF_C_API_BEGIN
  auto kernel = kernel_of(k);
  require_non_null(out, "tf_kernel_backend", "out");
  *out = kernel->backend();
  TF_C_API_END
}

tf_status tf_kernel_name(tf_kernel k, const char** out) {
  TF_C_API_BEGIN
  auto kernel = kernel_of(k);
  require_non_null(out, "tf_kernel_name", "out");
  *out = kernel->name().c_str();
  TF_C_API_END
}

tf_status tf_kernel_num_inputs(tf_kernel k, size_t* out) {
  TF_C_API_BEGIN
  auto kernel = kernel_of(k);
  require_non_null(out, "tf_kernel_num_inputs", "out");
  *out = kernel->num_inputs();
  TF_C_API_END
}

tf_status tf_kernel_num_outputs(tf_kernel k, size_t* out) {
  TF_C_API_BEGIN
  auto kernel = kernel_of(k);
  require_non_null(out, "tf_kernel_num_outputs", "out");
  *out = kernel->num_outputs();
  TF_C_API_END
}

tf_status tf_kernel_input_name(tf_kernel k, size_t i, const char** out) {
  TF_C_API_BEGIN
  auto kernel = kernel_of(k);
  require_non_null(out, "tf_kernel_input_name", "out");
  tf::capi::check_input_index("tf_kernel_input_name", *kernel, i);
  *out = kernel->input_name(i).c_str();
  TF_C_API_END
}

tf_status tf_kernel_input_desc(tf_kernel k, size_t i, DLDataType* dtype, int32_t* ndim) {
  TF_C_API_BEGIN
  auto kernel = kernel_of(k);
  require_non_null(dtype, "tf_kernel_input_desc", "dtype");
  require_non_null(ndim, "tf_kernel_input_desc", "ndim");
  tf::capi::check_input_index("tf_kernel_input_desc", *kernel, i);
  const tf::ir::TensorType& t = kernel->input_type(i);
  DLDataType dl = tf::runtime::dtype_to_dl(t.dtype());
  *dtype = dl;
  *ndim = static_cast<int32_t>(t.rank());
  TF_C_API_END
}

tf_status tf_kernel_output_desc(tf_kernel k, const DLTensor* in, size_t n_in, size_t i,
                                DLDataType* dtype, int32_t* ndim, int64_t* shape) {
  TF_C_API_BEGIN
  const char* fn = "tf_kernel_output_desc";
  auto kernel = kernel_of(k);
  require_non_null(dtype, fn, "dtype");
  require_non_null(ndim, fn, "ndim");
  require_non_null(shape, fn, "shape");
  if (i >= kernel->num_outputs()) {
    tf::capi::fail(TF_ERR_INVALID_ARGUMENT,
                   std::string(fn) + ": output index " + std::to_string(i) + " out of range ('" +
                       kernel->name() + "' has " + std::to_string(kernel->num_outputs()) +
                       " outputs)");
  }
  const auto& descs = kernel->output_descs(tf::capi::describe_inputs(fn, *kernel, in, n_in, false));
  const tf::sema::ArgDesc& d = descs[i];
  DLDataType dl = tf::runtime::dtype_to_dl(d.dtype);
  *dtype = dl;
  *ndim = static_cast<int32_t>(d.shape.size());
  for (size_t a = 0; a < d.shape.size(); ++a) shape[a] = d.shape[a];
  TF_C_API_END
}

tf_status tf_kernel_output_alias(tf_kernel k, size_t i, int64_t* input) {
  TF_C_API_BEGIN
  const char* fn = "tf_kernel_output_alias";
  auto kernel = kernel_of(k);
  require_non_null(input, fn, "input");
  if (i >= kernel->num_outputs())
    tf::capi::fail(TF_ERR_INVALID_ARGUMENT, std::string(fn) + ": output index " + std::to_string(i) +
                                                " out of range ('" + kernel->name() + "' has " +
                                                std::to_string(kernel->num_outputs()) + " outputs)");
  *input = kernel->output_alias(i);
  TF_C_API_END
}

tf_status tf_kernel_run(tf_kernel k, const DLTensor* in, size_t n_in, DLTensor* out, size_t n_out) {
  TF_C_API_BEGIN
  tf::capi::run_kernel("tf_kernel_run", *kernel_of(k), in, n_in, out, n_out, {});
  TF_C_API_END
}

tf_status tf_kernel_run_with_options(tf_kernel k, const DLTensor* in, size_t n_in, DLTensor* out, size_t n_out,
                                     const tf_run_options* opts) {
  TF_C_API_BEGIN
  const char* fn = "tf_kernel_run_with_options";
  auto kernel = kernel_of(k);
  tf::capi::run_kernel(fn, *kernel, in, n_in, out, n_out, tf::capi::run_options(fn, opts, kernel->backend()));
  TF_C_API_END
}

tf_status tf_kernel_call(tf_kernel k, const DLTensor* in, size_t n_in, DLManagedTensor** out,
                         size_t n_out) {
  TF_C_API_BEGIN
  tf::capi::call_kernel("tf_kernel_call", *kernel_of(k), in, n_in, out, n_out, {});
  TF_C_API_END
}

tf_status tf_kernel_call_with_options(tf_kernel k, const DLTensor* in, size_t n_in, DLManagedTensor** out,
                                      size_t n_out, const tf_run_options* opts) {
  TF_C_API_BEGIN
  const char* fn = "tf_kernel_call_with_options";
  auto kernel = kernel_of(k);
  tf::capi::call_kernel(fn, *kernel, in, n_in, out, n_out, tf::capi::run_options(fn, opts, kernel->backend()));
  TF_C_API_END
}

tf_status tf_kernel_workspace_size(tf_kernel k, const DLTensor* in, size_t n_in, uint64_t* bytes) {
  TF_C_API_BEGIN
  const char* fn = "tf_kernel_workspace_size";
  auto kernel = kernel_of(k);
  require_non_null(bytes, fn, "bytes");
  *bytes = kernel->workspace_bytes(tf::capi::describe_inputs(fn, *kernel, in, n_in, false));
  TF_C_API_END
}

tf_status tf_backend_available(int32_t backend) {
  TF_C_API_BEGIN
  switch (backend) {
    case TF_BACKEND_NATIVE:
    case TF_BACKEND_EVALUATOR:
    case TF_BACKEND_VIRTUAL_MESH: break;
    case TF_BACKEND_CUDA: tf::compiler::cuda::require_available(); break;
    default:
      tf::capi::fail(TF_ERR_INVALID_ARGUMENT, "tf_backend_available: unknown backend " + std::to_string(backend));
  }
  TF_C_API_END
}

tf_status tf_kernel_retain(tf_kernel k) {
  TF_C_API_BEGIN
  tf::capi::retain_kernel_handle(k);
  TF_C_API_END
}

void tf_kernel_release(tf_kernel k) { tf::capi::release_kernel_handle(k); }

}  // extern "C"
