// Structural tensor kernels: Cast, Reduce, Reshape, Transpose, Slice, Zeros.
#include <cmath>
#include <limits>

#include "core/eval/kernel.h"
#include "core/eval/kernels/dispatch.h"
#include "core/ops/tensor/tensor.h"
#include "core/runtime/kernel_errors.h"

namespace tf::eval {
namespace {

using ops::ReduceKind;

// ---- Cast -----------------------------------------------------------------

// torch semantics: to bool is x != 0 (NaN is true); from bool is 0 / 1;
// to f16/bf16 goes through float (so f64 -> f16 rounds twice, like c10::Half).
template <typename S, typename D>
D cast_value(S v) {
  auto c = widen(v);
  if constexpr (std::is_same_v<D, bool>) {
    return c != 0;
  } else if constexpr (is_half_v<D>) {
    return D::from_float(static_cast<float>(c));
  } else if constexpr (is_int_v<D> && is_float_v<S>) {
    return ::tf_f2i<D>(c);  // truncation; INT_MIN where C++ leaves it undefined
  } else {
    return static_cast<D>(c);
  }
}

NDArray cast_kernel(const KernelArgs& args) {
  const NDArray& x = args.inputs[0];
  NDArray out = NDArray::empty(args.out_dtype(), args.out_shape());
  dispatch_dtype(x.dtype(), [&](auto src) {
    using S = decltype(src);
    dispatch_dtype(out.dtype(), [&](auto dst) {
      using D = decltype(dst);
      map_unary<S, D>(x, out, [](S v) { return cast_value<S, D>(v); });
    });
  });
  return out;
}

// ---- Reduce ---------------------------------------------------------------

// The reduced and kept axes of x as two (shape, strides) groups.
struct ReduceSplit {
  std::vector<int64_t> kept_shape, kept_strides, red_shape, red_strides;
  int64_t red_count = 1;
};

ReduceSplit split_axes(const NDArray& x, const std::vector<int64_t>& axes) {
  std::vector<bool> reduced(x.ndim(), false);
  for (int64_t a : axes) reduced[static_cast<size_t>(a < 0 ? a + static_cast<int64_t>(x.ndim()) : a)] = true;
  ReduceSplit s;
  for (size_t d = 0; d < x.ndim(); ++d) {
    if (reduced[d]) {
      s.red_shape.push_back(x.shape()[d]);
      s.red_strides.push_back(x.strides()[d]);
      s.red_count *= x.shape()[d];
    } else {
      s.kept_shape.push_back(x.shape()[d]);
      s.kept_strides.push_back(x.strides()[d]);
    }
  }
  return s;
}

// The least value T holds — max's identity on an empty axis: -inf for the
// floats with infinities, the minimum for ints, false for bool.
// fp8e4m3 is finite-only: its least value is -448; f8e8m0 has no sign and
// no zero: its least value is code 0, 2^-127.
template <typename T>
compute_t<T> lowest() {
  using C = compute_t<T>;
  if constexpr (std::is_same_v<T, Float8E4M3>) return -448.0f;
  else if constexpr (std::is_same_v<T, Float8E8M0>) return Float8E8M0{0}.to_float();
  else if constexpr (std::is_floating_point_v<C>) return -std::numeric_limits<C>::infinity();
  else return std::numeric_limits<C>::lowest();
}

// Reduces one group of elements of x starting at `base`.
// sum: f32/f64 accumulate in double (so an f32 sum is correctly rounded, which
// is within torch's cascade-summation error of torch's result); f16/bf16
// accumulate in float, as torch does; ints accumulate with wrap-around.
// mean: like torch's CPU mean, sum rounded to T, then divided by the count in
// the compute type and rounded again. max / abs_max propagate NaN.
template <typename T>
T reduce_group(ReduceKind kind, const T* base, const ReduceSplit& s) {
  using C = compute_t<T>;
  runtime::StridedCursor c(s.red_shape, {s.red_strides});
  if (kind == ReduceKind::kSum || kind == ReduceKind::kMean) {
    if constexpr (std::is_same_v<T, bool>) {
      TF_CHECK(false, "sum of bool passed typeinfer");
    } else if constexpr (is_int_v<T>) {
      uint64_t acc = 0;
      for (int64_t i = 0; i < s.red_count; ++i, c.next()) acc += static_cast<uint64_t>(base[c.offset(0)]);
      return static_cast<T>(acc);
    } else {
      using Acc = std::conditional_t<is_half_v<T>, float, double>;
      Acc acc = 0;
      for (int64_t i = 0; i < s.red_count; ++i, c.next()) acc += static_cast<Acc>(widen(base[c.offset(0)]));
      T sum = narrow<T>(static_cast<C>(acc));
      if (kind == ReduceKind::kSum) return sum;
      return narrow<T>(widen(sum) / static_cast<C>(s.red_count));
    }
  }
  const bool absolute = kind == ReduceKind::kAbsMax;
  C m = absolute ? C(0) : lowest<T>();
  for (int64_t i = 0; i < s.red_count; ++i, c.next()) {
    C v = widen(base[c.offset(0)]);
    if constexpr (std::is_floating_point_v<C>) {
      if (std::isnan(v)) return narrow<T>(v);
      if (absolute) v = ::tf_abs(v);
    } else if constexpr (is_int_v<C>) {
      if (absolute) v = ::tf_abs(v);
    }
    if (m < v) m = v;
  }
  return narrow<T>(m);
}

NDArray reduce_kernel(const KernelArgs& args) {
  const auto& op = args.op<ops::Reduce>();
  const NDArray& x = args.inputs[0];
  ReduceSplit s = split_axes(x, op.axes);
  // Rationale (Reduce): mean has no identity, so it must not invent one.
  if (op.kind == ReduceKind::kMean && s.red_count == 0)
    ir::fail(ir::ErrorKind::kRuntime, runtime::empty_mean_message());
  NDArray out = NDArray::empty(args.out_dtype(), args.out_shape());
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* px = data_of<T>(x);
    T* po = mutable_data_of<T>(out);
    runtime::StridedCursor c(s.kept_shape, {s.kept_strides});
    for (int64_t i = 0, n = out.numel(); i < n; ++i, c.next())
      po[i] = reduce_group<T>(op.kind, px + c.offset(0), s);
  });
  return out;
}

// ---- Layout ops -------------------------------------------------------------

// Copy to contiguous, then reinterpret: the row-major element order is kept.
NDArray reshape_kernel(const KernelArgs& args) {
  NDArray flat = contiguous_copy(args.inputs[0]);
  std::vector<int64_t> shape = args.out_shape();
  return NDArray::view(flat, shape, runtime::contiguous_strides(shape));
}

NDArray transpose_kernel(const KernelArgs& args) {
  const NDArray& x = args.inputs[0];
  const auto& axes = args.op<ops::Transpose>().axes;
  std::vector<int64_t> shape, strides;
  for (int64_t a : axes) {
    size_t d = static_cast<size_t>(a < 0 ? a + static_cast<int64_t>(x.ndim()) : a);
    shape.push_back(x.shape()[d]);
    strides.push_back(x.strides()[d]);
  }
  return contiguous_copy(NDArray::view(x, shape, strides));
}

// Bounds resolve against the concrete extents: symbolic begin / end are
// evaluated under the bindings first, then normalized (negative counts from
// the end, clamped) exactly as a static slice is.
NDArray slice_kernel(const KernelArgs& args) {
  const NDArray& x = args.inputs[0];
  const auto& op = args.op<ops::Slice>();
  std::vector<int64_t> shape, strides;
  std::vector<int64_t> typed = args.out_shape();
  int64_t offset = 0;
  for (size_t d = 0; d < x.ndim(); ++d) {
    ops::SliceAxis ax = ops::resolve_slice_axis(op.begin[d].evaluate(args.bindings),
                                                op.end[d].evaluate(args.bindings), op.strides[d],
                                                x.shape()[d]);
    int64_t extent = ax.extent.value();
    // Static bounds on a symbolic axis are typed as a window that fits
    // (x[:, 1:3] on an M axis is 2 wide); an argument too short for the
    // window is a runtime error, not a silently shorter result.
    if (extent != typed[d])
      ir::fail(ir::ErrorKind::kRuntime,
               "'slice' axis " + std::to_string(d) + ": the window " + op.begin[d].to_string() + ":" +
                   op.end[d].to_string() + " is typed " + std::to_string(typed[d]) +
                   " wide, but an axis of length " + std::to_string(x.shape()[d]) + " gives " +
                   std::to_string(extent));
    shape.push_back(extent);
    strides.push_back(x.strides()[d] * op.strides[d]);
    if (extent > 0) offset += ax.begin.value() * x.strides()[d];
  }
  return contiguous_copy(NDArray::view(x, shape, strides, offset));
}

NDArray zeros_kernel(const KernelArgs& args) {
  ir::DType d = args.out_dtype();
  // f8e8m0 has no zero (code 0 is 2^-127), so zeros of it cannot exist.
  if (d == ir::DType::kF8E8M0)
    ir::fail(ir::ErrorKind::kUnsupported, "'zeros' of f8e8m0: the dtype has no zero value");
  dispatch_dtype(d, [](auto) {});  // rejects unsupported dtypes (f4e2m1)
  return NDArray::empty(d, args.out_shape());
}

}  // namespace

void register_combine_kernels(KernelTable& t);  // combine.cc
void register_bits_kernels(KernelTable& t);     // bits.cc

void register_tensor_kernels(KernelTable& t) {
  t.add("Cast", cast_kernel);
  t.add("Reduce", reduce_kernel);
  t.add("Reshape", reshape_kernel);
  t.add("Transpose", transpose_kernel);
  t.add("Slice", slice_kernel);
  t.add("Zeros", zeros_kernel);
  register_combine_kernels(t);
  register_bits_kernels(t);
}

}  // namespace tf::eval
