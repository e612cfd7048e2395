// Bitcast and Arange kernels: a byte copy under another dtype, and the
// evenly spaced values computed as torch's CPU arange does (in double for
// f32 / f64, in float for the narrow floats, in int64 for integers; each
// element from its index, so no error accumulates along the row).
#include <cstring>

#include "core/eval/kernel.h"
#include "core/eval/kernels/dispatch.h"
#include "core/ops/tensor/tensor.h"
#include "core/runtime/scalar_numerics.h"

namespace tf::eval {
namespace {

NDArray bitcast_kernel(const KernelArgs& args) {
  const NDArray x = contiguous_copy(args.inputs[0]);
  NDArray out = NDArray::empty(args.out_dtype(), args.out_shape());
  std::memcpy(out.data(), x.data(), static_cast<size_t>(x.numel()) * ir::dtype_bytes(x.dtype()));
  return out;
}

NDArray arange_kernel(const KernelArgs& args) {
  const auto& op = args.op<ops::Arange>();
  NDArray out = NDArray::empty(args.out_dtype(), args.out_shape());
  dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* p = mutable_data_of<T>(out);
    const int64_t n = out.numel();
    if constexpr (std::is_same_v<T, bool>) {
      TF_CHECK(false, "arange of bool passed typeinfer");
    } else if constexpr (is_int_v<T>) {
      const auto start = static_cast<int64_t>(op.start), step = static_cast<int64_t>(op.step);
      for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(::tf_arange_int(start, step, i));
    } else {
      using A = std::conditional_t<is_half_v<T>, float, double>;
      const A start = static_cast<A>(op.start), step = static_cast<A>(op.step);
      for (int64_t i = 0; i < n; ++i) p[i] = narrow<T>(static_cast<compute_t<T>>(::tf_arange_float<A>(start, step, i)));
    }
  });
  return out;
}

}  // namespace

void register_bits_kernels(KernelTable& t) {
  t.add("Bitcast", bitcast_kernel);
  t.add("Arange", arange_kernel);
}

}  // namespace tf::eval
