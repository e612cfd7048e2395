#include "boxed_kernel.h"

#include <atomic>
#include <type_traits>
#include <utility>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/util/SmallVector.h>
#include <c10/util/Exception.h>
#include <c10/core/impl/VirtualGuardImpl.h>
#include <torch/csrc/autograd/variable.h>

#include "dtype_map.h"
#include "output_memory.h"

namespace tf::torch_ext {

namespace {

// Rationale: the hot path of a small op is its fixed per-call cost, so no
// step below allocates beyond the output tensors themselves; a kernel takes
// at most kInline tensors of each kind without touching the heap.
constexpr size_t kInline = 8;

// A zero-copy DLPack view of t, valid while t lives: the fields at::toDLPack
// would fill (data = data_ptr(), byte_offset 0, strides in elements), built
// on the caller's stack instead of in a heap DLManagedTensor; the dtype as
// dl_from_scalar_type spells it (bool as kDLBool, which toDLPack of 1.13
// cannot say).
DLTensor dl_view(const at::Tensor& t, DLDataType declared) {
  DLTensor v{};
  v.data = t.data_ptr();
  v.device = t.is_cuda() ? DLDevice{kDLCUDA, static_cast<int32_t>(t.device().index())} : DLDevice{kDLCPU, 0};
  v.ndim = static_cast<int32_t>(t.dim());
  v.dtype = dl_for(t.scalar_type(), declared);
  v.shape = const_cast<int64_t*>(t.sizes().data());
  v.strides = const_cast<int64_t*>(t.strides().data());
  v.byte_offset = 0;
  return v;
}

// The library's message says what the caller got wrong (an argument's
// dtype or extent, a kernel's runtime check); the C function behind it is
// only worth naming when the library itself failed.
[[noreturn]] void fail_status(const std::string& op, const char* what, tf_status s) {
  if (s == TF_ERR_INTERNAL)
    TORCH_CHECK(false, op, ": internal error in ", what, " (please report): ", tf_last_error());
  TORCH_CHECK(false, op, ": ", tf_last_error());
  __builtin_unreachable();
}

bool on_device(const at::Tensor& t, BoxedKernel::Device d) {
  return d == BoxedKernel::Device::kCuda ? t.is_cuda() : t.device().is_cpu();
}

void check_input(const std::string& op, size_t i, const at::Tensor& t, BoxedKernel::Device d) {
  TORCH_CHECK(t.defined(), op, ": input ", i, " is an undefined tensor");
  TORCH_CHECK(on_device(t, d), op, ": input ", i, " is on ", t.device(), "; this kernel runs on ",
              d == BoxedKernel::Device::kCuda ? "CUDA" : "CPU", " tensors, all on one device");
  TORCH_CHECK(is_supported_input(t.scalar_type()), op, ": input ", i, " has dtype ",
              t.scalar_type(), ", which TileFoundry does not support");
}

// An out= argument must be exactly what the op computes: the dtype and shape
// of output i, on the kernel's device (any strides on the CPU; the library
// checks the rest). Checked before anything is written.
void check_out(const std::string& op, const std::string& name, const at::Tensor& t, at::ScalarType dtype,
               c10::IntArrayRef shape, BoxedKernel::Device d) {
  TORCH_CHECK(t.defined(), op, ": ", name, " is an undefined tensor");
  TORCH_CHECK(on_device(t, d), op, ": ", name, " is on ", t.device(), "; this kernel writes ",
              d == BoxedKernel::Device::kCuda ? "CUDA" : "CPU", " tensors");
  TORCH_CHECK(t.scalar_type() == dtype, op, ": ", name, " has dtype ", t.scalar_type(), ", but the op computes ",
              dtype, " there");
  TORCH_CHECK(t.sizes() == shape, op, ": ", name, " has shape ", t.sizes(), ", but the op computes ", shape,
              " there (out= tensors are not resized)");
}

// torch's intra-op thread count becomes the kernels' (process-wide, like
// torch's own setting); a no-op while the two agree.
void follow_torch_threads() {
  const int32_t want = at::get_num_threads();
  int32_t have = 0;
  if (tf_get_num_threads(&have) == TF_OK && have != want) tf_set_num_threads(want);
}

// What tf_kernel_output_desc said for output i.
struct OutputDesc {
  at::ScalarType dtype;
  c10::SmallVector<int64_t, TF_MAX_NDIM> shape;
};

OutputDesc describe_output(const std::string& op, tf_kernel k, const DLTensors& in, size_t i) {
  DLDataType dtype{};
  int32_t ndim = 0;
  int64_t shape[TF_MAX_NDIM] = {};
  tf_status s = tf_kernel_output_desc(k, in.data(), in.size(), i, &dtype, &ndim, shape);
  if (s != TF_OK) fail_status(op, "tf_kernel_output_desc", s);
  auto st = scalar_type_from_dl(dtype);
  TORCH_CHECK(st.has_value(), op, ": output ", i, " has DLPack dtype (code ",
              static_cast<int>(dtype.code), ", bits ", static_cast<int>(dtype.bits),
              "), which torch cannot hold");
  return OutputDesc{*st, c10::SmallVector<int64_t, TF_MAX_NDIM>(shape, shape + ndim)};
}

// The output descriptions of the last call this thread made on one kernel,
// keyed by its inputs' dtypes and shapes, which are all they depend on. A hit
// skips tf_kernel_output_desc; nothing is trusted on that account, since
// tf_kernel_run still checks every input and every output exactly.
struct OutputMemo {
  uint64_t owner = 0;  // BoxedKernel::id_; 0: empty
  c10::SmallVector<DLDataType, kInline> in_dtypes;
  c10::SmallVector<int64_t, kInline * TF_MAX_NDIM> in_shapes;  // concatenated
  c10::SmallVector<int32_t, kInline> in_ndims;
  c10::SmallVector<OutputDesc, kInline> outputs;

  bool matches(uint64_t id, const DLTensors& in) const {
    if (owner != id || in.size() != in_ndims.size()) return false;
    size_t at = 0;
    for (size_t i = 0; i < in.size(); ++i) {
      const DLTensor& t = in[i];
      const DLDataType& d = in_dtypes[i];
      if (t.ndim != in_ndims[i] || t.dtype.code != d.code || t.dtype.bits != d.bits ||
          t.dtype.lanes != d.lanes)
        return false;
      for (int32_t a = 0; a < t.ndim; ++a)
        if (t.shape[a] != in_shapes[at++]) return false;
    }
    return true;
  }

  void remember(uint64_t id, const DLTensors& in, c10::SmallVector<OutputDesc, kInline> outs) {
    owner = 0;  // empty until every field is assigned
    in_dtypes.clear();
    in_shapes.clear();
    in_ndims.clear();
    for (const DLTensor& t : in) {
      in_dtypes.push_back(t.dtype);
      in_ndims.push_back(t.ndim);
      in_shapes.append(t.shape, t.shape + t.ndim);
    }
    outputs = std::move(outs);
    owner = id;
  }
};

const c10::SmallVector<OutputDesc, kInline>& output_descs(const std::string& op, tf_kernel k,
                                                          uint64_t id, size_t n_out,
                                                          const DLTensors& in) {
  thread_local OutputMemo memo;
  if (memo.matches(id, in)) return memo.outputs;
  c10::SmallVector<OutputDesc, kInline> outs;
  for (size_t i = 0; i < n_out; ++i) outs.push_back(describe_output(op, k, in, i));
  memo.remember(id, in, std::move(outs));
  return memo.outputs;
}

uint64_t next_id() {
  static std::atomic<uint64_t> counter{0};
  return ++counter;
}

// A new KernelRef holding its own reference on k.
const KernelRef* make_ref(tf_kernel k, const std::string& op_name) {
  tf_status s = tf_kernel_retain(k);
  if (s != TF_OK) fail_status(op_name, "tf_kernel_retain", s);
  size_t n_in = 0, n_out = 0;
  if ((s = tf_kernel_num_inputs(k, &n_in)) != TF_OK || (s = tf_kernel_num_outputs(k, &n_out)) != TF_OK) {
    tf_kernel_release(k);
    fail_status(op_name, "describing the kernel", s);
  }
  std::vector<DLDataType> in(n_in), out(n_out);
  std::vector<int64_t> alias(n_out, -1);
  int32_t ndim = 0;
  for (size_t i = 0; i < n_in && s == TF_OK; ++i) s = tf_kernel_input_desc(k, i, &in[i], &ndim);
  for (size_t i = 0; i < n_out && s == TF_OK; ++i) s = tf_kernel_output_type(k, i, &out[i], &ndim);
  for (size_t i = 0; i < n_out && s == TF_OK; ++i) s = tf_kernel_output_alias(k, i, &alias[i]);
  if (s != TF_OK) {
    tf_kernel_release(k);
    fail_status(op_name, "describing the kernel", s);
  }
  return new KernelRef{k, n_in, n_out, next_id(), std::move(in), std::move(out), std::move(alias)};
}

}  // namespace

BoxedKernel::BoxedKernel(tf_kernel k, std::string op_name, Mode mode, std::vector<std::string> out_names,
                         Device device)
    : ref_(nullptr), op_name_(std::move(op_name)), mode_(mode), out_names_(std::move(out_names)), device_(device) {
  const KernelRef* r = make_ref(k, op_name_);
  if (mode_ == Mode::kOut && out_names_.size() != r->n_out) {
    tf_kernel_release(r->kernel);
    const size_t n_out = r->n_out;
    delete r;
    TORCH_CHECK(false, op_name_, ": ", out_names_.size(), " out= names for ", n_out, " outputs");
  }
  ref_.store(r, std::memory_order_release);
}

// Only the current kernel is released: replaced ones are kept (see KernelRef).
BoxedKernel::~BoxedKernel() {
  const KernelRef* r = ref_.load(std::memory_order_acquire);
  tf_kernel_release(r->kernel);
  delete r;
}

void BoxedKernel::replace(tf_kernel k) {
  const KernelRef* r = make_ref(k, op_name_);
  const KernelRef* old = ref_.load(std::memory_order_acquire);
  if (r->n_in != old->n_in || r->n_out != old->n_out) {
    tf_kernel_release(r->kernel);
    delete r;
    TORCH_CHECK(false, op_name_, ": the replacing kernel takes a different number of inputs or outputs");
  }
  ref_.store(r, std::memory_order_release);
}

void BoxedKernel::operator()(const c10::OperatorHandle&, c10::DispatchKeySet,
                             torch::jit::Stack* stack) {
  if (device_ == Device::kCpu) follow_torch_threads();
  const KernelRef& r = *ref_.load(std::memory_order_acquire);
  if (mode_ == Mode::kOut) return run_out(r, stack);
  run_functional(r, stack);
}

namespace {

// The inputs, left on the stack (borrowed, no refcount traffic), as DLTensors.
DLTensors view_inputs(const std::string& op, c10::ArrayRef<c10::IValue> args, const KernelRef& r,
                      BoxedKernel::Device d) {
  DLTensors in;
  for (size_t i = 0; i < r.n_in; ++i) {
    const at::Tensor& t = args[i].toTensor();
    check_input(op, i, t, d);
    in.push_back(dl_view(t, r.in_dtypes[i]));
  }
  return in;
}

// The CUDA device of a call: its first tensor's (the library checks that
// every tensor is there).
c10::Device call_device(c10::ArrayRef<c10::IValue> args, size_t n_in) {
  for (size_t i = 0; i < n_in; ++i)
    if (args[i].toTensor().is_cuda()) return args[i].toTensor().device();
  return c10::Device(c10::DeviceType::CUDA, 0);
}

// torch's current stream on a CUDA device as the driver's handle. torch
// >= 2.4 says it through c10::Stream::native_handle; an older torch has no
// device-independent way without CUDA headers, and its CUDA ops refuse.
template <typename S, typename = void>
struct HasNativeHandle : std::false_type {};
template <typename S>
struct HasNativeHandle<S, std::void_t<decltype(std::declval<const S&>().native_handle())>> : std::true_type {};

template <typename S = c10::Stream>
void* current_stream(const std::string& op, c10::Device device) {
  if constexpr (HasNativeHandle<S>::value) {
    const c10::impl::VirtualGuardImpl guard(c10::DeviceType::CUDA);
    const S stream = guard.getStream(device);
    return stream.native_handle();
  } else {
    TORCH_CHECK(false, op, ": CUDA tensors need torch >= 2.4 (its streams' native handles)");
    return nullptr;
  }
}

}  // namespace

void BoxedKernel::run(const KernelRef& r, const DLTensors& in, DLTensors& out) {
  if (device_ == Device::kCpu) {
    tf_status s = tf_kernel_run(r.kernel, in.data(), in.size(), out.data(), out.size());
    if (s != TF_OK) fail_status(op_name_, "tf_kernel_run", s);
    return;
  }
  const c10::Device device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(
                                                      in.empty() ? out[0].device.device_id : in[0].device.device_id));
  uint64_t bytes = 0;
  tf_status s = tf_kernel_workspace_size(r.kernel, in.data(), in.size(), &bytes);
  if (s != TF_OK) fail_status(op_name_, "tf_kernel_workspace_size", s);
  // The workspace is a tensor of torch's allocator: reused from its cache,
  // and, under graph capture, from the graph's pool.
  at::Tensor workspace;
  if (bytes > 0)
    workspace = at::empty({static_cast<int64_t>(bytes)}, at::TensorOptions().dtype(at::kByte).device(device));
  tf_run_options o{};
  o.struct_size = sizeof o;
  o.stream = current_stream(op_name_, device);
  o.workspace = bytes > 0 ? workspace.data_ptr() : nullptr;
  o.workspace_bytes = bytes;
  s = tf_kernel_run_with_options(r.kernel, in.data(), in.size(), out.data(), out.size(), &o);
  if (s != TF_OK) fail_status(op_name_, "tf_kernel_run_with_options", s);
}

// An in-place output is its input's own tensor (tf_kernel_run checks that
// they match); only the fresh outputs are results.
void BoxedKernel::run_functional(const KernelRef& r, torch::jit::Stack* stack) {
  auto args = torch::jit::last(*stack, r.n_in);
  DLTensors in = view_inputs(op_name_, args, r, device_);
  c10::SmallVector<at::Tensor, kInline> outputs;
  DLTensors out;
  const auto& descs = output_descs(op_name_, r.kernel, r.id, r.n_out, in);
  for (size_t i = 0; i < r.n_out; ++i) {
    const int64_t a = r.alias[i];
    if (a >= 0)
      outputs.push_back(args[static_cast<size_t>(a)].toTensor());
    else if (device_ == Device::kCuda)  // torch's CUDA caching allocator
      outputs.push_back(
          at::empty(descs[i].shape, at::TensorOptions().dtype(descs[i].dtype).device(call_device(args, r.n_in))));
    else
      outputs.push_back(empty_output(descs[i].shape, descs[i].dtype));
    out.push_back(a >= 0 ? in[static_cast<size_t>(a)] : dl_view(outputs.back(), r.out_dtypes[i]));
  }
  run(r, in, out);
  // Rationale: a mutated input's version counter must move (autograd refuses
  // a backward through a value saved before the write, as for torch's own
  // in-place ops). torch bumps the inputs an op returns; these it does not
  // return, and the Autograd fallback skips ADInplaceOrView, so the kernel
  // bumps them (a no-op for an inference tensor inside InferenceMode).
  for (size_t i = 0; i < r.n_out; ++i)
    if (r.alias[i] >= 0) torch::autograd::impl::bump_version(outputs[i]);
  torch::jit::drop(*stack, r.n_in);
  for (size_t i = 0; i < r.n_out; ++i)
    if (r.alias[i] < 0) torch::jit::push(*stack, std::move(outputs[i]));
}

void BoxedKernel::run_out(const KernelRef& r, torch::jit::Stack* stack) {
  auto args = torch::jit::last(*stack, r.n_in + r.n_out);
  DLTensors in = view_inputs(op_name_, args, r, device_);
  const auto& descs = output_descs(op_name_, r.kernel, r.id, r.n_out, in);
  c10::SmallVector<at::Tensor, kInline> outputs;
  DLTensors out;
  for (size_t i = 0; i < r.n_out; ++i) {
    const at::Tensor& t = args[r.n_in + i].toTensor();
    check_out(op_name_, out_names_[i], t, descs[i].dtype, descs[i].shape, device_);
    outputs.push_back(t);
    out.push_back(dl_view(t, r.out_dtypes[i]));
  }
  run(r, in, out);
  torch::jit::drop(*stack, r.n_in + r.n_out);
  for (auto& t : outputs) torch::jit::push(*stack, std::move(t));
}

}  // namespace tf::torch_ext
