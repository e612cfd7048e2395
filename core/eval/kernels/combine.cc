// Concat, Stack, ShapeOf, Rank, ShapeExtract, ShapeCompose.
#include "core/eval/kernel.h"
#include "core/eval/kernels/dispatch.h"
#include "core/ops/shape/shape.h"
#include "core/ops/tensor/tensor.h"
#include "core/runtime/kernel_errors.h"

namespace tf::eval {
namespace {

size_t norm_axis(int64_t axis, size_t rank) {
  return static_cast<size_t>(axis < 0 ? axis + static_cast<int64_t>(rank) : axis);
}

NDArray concat_kernel(const KernelArgs& args) {
  NDArray out = NDArray::empty(args.out_dtype(), args.out_shape());
  const size_t axis = norm_axis(args.op<ops::Concat>().axis, out.ndim());
  int64_t at = 0;
  for (const NDArray& in : args.inputs) {
    in.copy_to(NDArray::view(out, in.shape(), out.strides(), at * out.strides()[axis]));
    at += in.shape()[axis];
  }
  return out;
}

NDArray stack_kernel(const KernelArgs& args) {
  NDArray out = NDArray::empty(args.out_dtype(), args.out_shape());
  const size_t axis = norm_axis(args.op<ops::Stack>().axis, out.ndim());
  std::vector<int64_t> strides = out.strides();
  strides.erase(strides.begin() + static_cast<int64_t>(axis));
  for (size_t j = 0; j < args.inputs.size(); ++j)
    args.inputs[j].copy_to(
        NDArray::view(out, args.inputs[j].shape(), strides, static_cast<int64_t>(j) * out.strides()[axis]));
  return out;
}

NDArray shape_of_kernel(const KernelArgs& args) {
  const NDArray& x = args.inputs[0];
  NDArray out = NDArray::empty(ir::DType::kI64, {static_cast<int64_t>(x.ndim())});
  for (size_t d = 0; d < x.ndim(); ++d) mutable_data_of<int64_t>(out)[d] = x.shape()[d];
  return out;
}

NDArray rank_kernel(const KernelArgs& args) {
  NDArray out = NDArray::empty(ir::DType::kI64, {});
  *mutable_data_of<int64_t>(out) = static_cast<int64_t>(args.inputs[0].ndim());
  return out;
}

NDArray shape_extract_kernel(const KernelArgs& args) {
  const NDArray& s = args.inputs[0];
  const int64_t n = s.shape()[0];
  int64_t i = args.op<ops::ShapeExtract>().index;
  if (i < 0) i += n;
  if (i < 0 || i >= n)
    ir::fail(ir::ErrorKind::kRuntime, runtime::shape_index_message(args.op<ops::ShapeExtract>().index, n));
  NDArray out = NDArray::empty(ir::DType::kI64, {});
  *mutable_data_of<int64_t>(out) = data_of<int64_t>(s)[i * s.strides()[0]];
  return out;
}

NDArray shape_compose_kernel(const KernelArgs& args) {
  NDArray out = NDArray::empty(ir::DType::kI64, {static_cast<int64_t>(args.inputs.size())});
  for (size_t j = 0; j < args.inputs.size(); ++j) mutable_data_of<int64_t>(out)[j] = *data_of<int64_t>(args.inputs[j]);
  return out;
}

}  // namespace

void register_indexing_kernels(KernelTable& t);  // indexing.cc

void register_combine_kernels(KernelTable& t) {
  t.add("Concat", concat_kernel);
  t.add("Stack", stack_kernel);
  t.add("ShapeOf", shape_of_kernel);
  t.add("Rank", rank_kernel);
  register_indexing_kernels(t);
}

void register_shape_kernels(KernelTable& t) {
  t.add("ShapeExtract", shape_extract_kernel);
  t.add("ShapeCompose", shape_compose_kernel);
}

}  // namespace tf::eval
