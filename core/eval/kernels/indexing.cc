// Gather, InsertSlice, CacheUpdate and TopK. Copies are dtype-agnostic
// (element bytes), so every storable dtype works, the 8-bit floats included.
// Runtime-data checks (indices, offsets, cur_pos, s) raise Error(kRuntime)
// before anything is written.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "core/eval/kernel.h"
#include "core/eval/kernels/dispatch.h"
#include "core/ops/tensor/tensor.h"
#include "core/runtime/kernel_errors.h"

namespace tf::eval {
namespace {

// The value of a rank-0 (or all-size-1) integer tensor.
int64_t read_int(const NDArray& a) {
  if (a.dtype() == ir::DType::kI32) return *data_of<int32_t>(a);
  if (a.dtype() == ir::DType::kI64) return *data_of<int64_t>(a);
  if (a.dtype() == ir::DType::kI8) return *data_of<int8_t>(a);
  TF_CHECK(false, "an integer scalar operand passed typeinfer");
}

// Element i (row-major over a's shape, any strides) as an integer.
int64_t int_at(const NDArray& a, const std::vector<int64_t>& index) {
  int64_t off = 0;
  for (size_t d = 0; d < index.size(); ++d) off += index[d] * a.strides()[d];
  if (a.dtype() == ir::DType::kI32) return data_of<int32_t>(a)[off];
  return data_of<int64_t>(a)[off];
}

// Advances a row-major multi-index over shape; false after the last one.
bool next_index(std::vector<int64_t>& idx, const std::vector<int64_t>& shape) {
  for (size_t d = shape.size(); d-- > 0;) {
    if (++idx[d] < shape[d]) return true;
    idx[d] = 0;
  }
  return false;
}

NDArray gather_kernel(const KernelArgs& args) {
  const auto& op = args.op<ops::Gather>();
  const NDArray& x = args.inputs[0];
  const NDArray& ind = args.inputs[1];
  const int64_t axis = op.axis < 0 ? op.axis + static_cast<int64_t>(x.ndim()) : op.axis;
  const size_t b = static_cast<size_t>(op.batch_dims), ax = static_cast<size_t>(axis);
  const size_t ni = ind.ndim() - b;  // index's non-batch dims
  NDArray out = NDArray::empty(args.out_dtype(), args.out_shape());
  if (out.numel() == 0) return out;
  const int64_t n = x.shape()[ax];
  const size_t elem = static_cast<size_t>(ir::dtype_bytes(x.dtype()));
  std::vector<int64_t> o(out.ndim(), 0), ipos(ind.ndim());
  char* po = static_cast<char*>(out.data());
  const char* px = static_cast<const char*>(x.data());
  int64_t i = 0;
  do {
    for (size_t d = 0; d < b; ++d) ipos[d] = o[d];
    for (size_t d = 0; d < ni; ++d) ipos[b + d] = o[ax + d];
    const int64_t j = int_at(ind, ipos);
    if (j < 0 || j >= n)
      ir::fail(ir::ErrorKind::kRuntime, runtime::gather_index_message(j, axis, n));
    int64_t off = 0;
    for (size_t d = 0; d < ax; ++d) off += o[d] * x.strides()[d];
    off += j * x.strides()[ax];
    for (size_t d = ax + 1; d < x.ndim(); ++d) off += o[d - 1 + ni] * x.strides()[d];
    std::memcpy(po + static_cast<size_t>(i++) * elem, px + static_cast<size_t>(off) * elem, elem);
  } while (next_index(o, out.shape()));
  return out;
}

// Copies src into the window of dst starting at `start` (one entry per axis).
void write_window(const NDArray& dst, const NDArray& src, const std::vector<int64_t>& start) {
  int64_t off = 0;
  for (size_t d = 0; d < start.size(); ++d) off += start[d] * dst.strides()[d];
  src.copy_to(NDArray::view(dst, src.shape(), dst.strides(), off));
}

NDArray insert_slice_kernel(const KernelArgs& args) {
  const NDArray& dst = args.inputs[0];
  const NDArray& up = args.inputs[1];
  std::vector<int64_t> start;
  for (size_t a = 0; a < dst.ndim(); ++a) {
    const int64_t off = read_int(args.inputs[2 + a]);
    if (off < 0 || off + up.shape()[a] > dst.shape()[a])
      ir::fail(ir::ErrorKind::kRuntime, runtime::insert_window_message(off, off + up.shape()[a],
                                                                       static_cast<int64_t>(a), dst.shape()[a]));
    start.push_back(off);
  }
  NDArray out = contiguous_copy(dst);
  write_window(out, up, start);
  return out;
}

NDArray cache_update_kernel(const KernelArgs& args) {
  const NDArray& cache = args.inputs[0];
  const NDArray& new_ = args.inputs[3];
  const int64_t pos = read_int(args.inputs[1]), s = read_int(args.inputs[2]);
  const int64_t len = cache.shape()[1], new_len = new_.shape()[1];
  if (pos < 0) ir::fail(ir::ErrorKind::kRuntime, runtime::cache_pos_message(pos));
  if (s < 1 || s > new_len) ir::fail(ir::ErrorKind::kRuntime, runtime::cache_count_message(new_len, s));
  if (pos + s > len) ir::fail(ir::ErrorKind::kRuntime, runtime::cache_end_message(pos, s, len));
  NDArray out = contiguous_copy(cache);
  std::vector<int64_t> shape = new_.shape();
  shape[1] = s;
  write_window(out, NDArray::view(new_, shape, new_.strides()), {0, pos, 0, 0});
  return out;
}

// Every row's window is checked before anything is written, the first bad
// row reported (the native stage's order).
NDArray cache_scatter_kernel(const KernelArgs& args) {
  const NDArray& cache = args.inputs[0];
  const NDArray& new_ = args.inputs[1];
  const NDArray& pos = args.inputs[2];
  const int64_t rows = cache.shape()[0], len = cache.shape()[1], n = new_.shape()[1];
  std::vector<int64_t> start(cache.ndim(), 0);
  std::vector<int64_t> at(static_cast<size_t>(rows));
  for (int64_t b = 0; b < rows; ++b) {
    const int64_t p = int_at(pos, {b});
    if (p < 0 || p + n > len) ir::fail(ir::ErrorKind::kRuntime, runtime::cache_scatter_message(b, p, n, len));
    at[static_cast<size_t>(b)] = p;
  }
  NDArray out = contiguous_copy(cache);
  std::vector<int64_t> row_shape = new_.shape();
  row_shape[0] = 1;
  for (int64_t b = 0; b < rows; ++b) {
    start[0] = b;
    start[1] = at[static_cast<size_t>(b)];
    write_window(out, NDArray::view(new_, row_shape, new_.strides(), b * new_.strides()[0]), start);
  }
  return out;
}

// torch.topk order (tf_topk_greater, shared with generated code): NaN is
// greater than every number; among equal values the lower index comes first
// (a stable sort).
template <typename T>
std::vector<NDArray> topk_typed(const KernelArgs& args, size_t axis) {
  const auto& op = args.op<ops::TopK>();
  const NDArray& x = args.inputs[0];
  NDArray vals = NDArray::empty(args.out_dtype(0), args.out_shape(0));
  NDArray idxs = NDArray::empty(ir::DType::kI64, args.out_shape(1));
  const int64_t k = vals.shape()[axis], len = x.shape()[axis];
  std::vector<int64_t> outer = x.shape();
  outer[axis] = 1;
  runtime::StridedCursor c(outer, {x.strides(), vals.strides(), idxs.strides()});
  const T* px = data_of<T>(x);
  std::vector<int64_t> order(static_cast<size_t>(len));
  for (int64_t r = 0, rows = runtime::shape_numel(outer); r < rows; ++r, c.next()) {
    const T* line = px + c.offset(0);
    auto v = [&](int64_t i) { return widen(line[i * x.strides()[axis]]); };
    auto greater = [&](int64_t a, int64_t b) { return ::tf_topk_greater(v(a), v(b)); };
    std::iota(order.begin(), order.end(), 0);
    if (op.largest) std::stable_sort(order.begin(), order.end(), greater);
    else std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return greater(b, a); });
    T* pv = mutable_data_of<T>(vals) + c.offset(1);
    int64_t* pi = mutable_data_of<int64_t>(idxs) + c.offset(2);
    for (int64_t j = 0; j < k; ++j) {
      pv[j * vals.strides()[axis]] = line[order[static_cast<size_t>(j)] * x.strides()[axis]];
      pi[j * idxs.strides()[axis]] = order[static_cast<size_t>(j)];
    }
  }
  return {vals, idxs};
}

std::vector<NDArray> topk_kernel(const KernelArgs& args) {
  const NDArray& x = args.inputs[0];
  int64_t axis = args.op<ops::TopK>().axis;
  if (axis < 0) axis += static_cast<int64_t>(x.ndim());
  const int64_t k = args.out_shape(0)[static_cast<size_t>(axis)];
  if (k < 0 || k > x.shape()[static_cast<size_t>(axis)])
    ir::fail(ir::ErrorKind::kRuntime, runtime::topk_count_message(k, x.shape()[static_cast<size_t>(axis)], axis));
  return dispatch_dtype(x.dtype(), [&](auto tag) -> std::vector<NDArray> {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) TF_CHECK(false, "TopK on bool passed typeinfer");
    else return topk_typed<T>(args, static_cast<size_t>(axis));
  });
}

}  // namespace

void register_indexing_kernels(KernelTable& t) {
  t.add("Gather", gather_kernel);
  t.add("InsertSlice", insert_slice_kernel);
  t.add("CacheUpdate", cache_update_kernel);
  t.add("CacheScatter", cache_scatter_kernel);
  t.add_tuple("TopK", topk_kernel);
}

}  // namespace tf::eval
