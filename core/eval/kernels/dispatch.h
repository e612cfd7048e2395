// Element types of the evaluator and the helpers every kernel family shares:
// dtype -> C++ storage type dispatch, the compute type torch uses on CPU
// (f16/bf16 compute in float and round once), and strided / broadcast loops.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "core/ir/error.h"
#include "core/runtime/float8.h"
#include "core/runtime/half.h"
#include "core/runtime/ndarray.h"
#include "core/runtime/strided.h"

namespace tf::eval {

using runtime::BFloat16;
using runtime::Float8E4M3;
using runtime::Float8E8M0;
using runtime::Half;
using runtime::NDArray;

// "Half" here means any float stored narrower than float and computed in
// float: f16, bf16 and the 8-bit floats (each rounds once from float).
template <typename T>
inline constexpr bool is_f8_v = std::is_same_v<T, Float8E4M3> || std::is_same_v<T, Float8E8M0>;
template <typename T>
inline constexpr bool is_half_v = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16> || is_f8_v<T>;
template <typename T>
inline constexpr bool is_float_v = is_half_v<T> || std::is_floating_point_v<T>;
template <typename T>
inline constexpr bool is_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// The type arithmetic happens in: float for the narrow floats, else T itself.
template <typename T>
using compute_t = std::conditional_t<is_half_v<T>, float, T>;

template <typename T>
inline compute_t<T> widen(T v) {
  if constexpr (is_half_v<T>) return v.to_float();
  else return v;
}

// Rounds a compute value once to the storage type.
template <typename T>
inline T narrow(compute_t<T> v) {
  if constexpr (is_half_v<T>) return T::from_float(v);
  else return v;
}

[[noreturn]] inline void unsupported_dtype(ir::DType d) {
  ir::fail(ir::ErrorKind::kUnsupported,
           "unsupported dtype " + std::string(ir::dtype_name(d)) + " in the evaluator");
}

// Calls f(T{}) with T the storage type of d.
template <typename F>
decltype(auto) dispatch_dtype(ir::DType d, F&& f) {
  switch (d) {
    case ir::DType::kBool: return f(bool{});
    case ir::DType::kI8: return f(int8_t{});
    case ir::DType::kU8: return f(uint8_t{});
    case ir::DType::kI32: return f(int32_t{});
    case ir::DType::kI64: return f(int64_t{});
    case ir::DType::kF16: return f(Half{});
    case ir::DType::kBF16: return f(BFloat16{});
    case ir::DType::kF32: return f(float{});
    case ir::DType::kF64: return f(double{});
    case ir::DType::kFP8E4M3: return f(Float8E4M3{});
    case ir::DType::kF8E8M0: return f(Float8E8M0{});
    default: unsupported_dtype(d);  // f4e2m1
  }
}

// Strides of a, aligned to out_shape under numpy broadcasting (0 on an axis a
// lacks or has extent 1 on).
inline std::vector<int64_t> broadcast_strides(const NDArray& a, const std::vector<int64_t>& out_shape) {
  std::vector<int64_t> s(out_shape.size(), 0);
  size_t lead = out_shape.size() - a.ndim();
  for (size_t d = 0; d < a.ndim(); ++d)
    s[lead + d] = a.shape()[d] == 1 ? 0 : a.strides()[d];
  return s;
}

template <typename T>
inline const T* data_of(const NDArray& a) { return static_cast<const T*>(a.data()); }
template <typename T>
inline T* mutable_data_of(const NDArray& a) { return static_cast<T*>(a.data()); }

// out[i] = f(x[i]) over out's (contiguous) shape; x broadcasts.
template <typename In, typename Out, typename F>
void map_unary(const NDArray& x, const NDArray& out, F f) {
  const In* px = data_of<In>(x);
  Out* po = mutable_data_of<Out>(out);
  runtime::StridedCursor c(out.shape(), {broadcast_strides(x, out.shape())});
  for (int64_t i = 0, n = out.numel(); i < n; ++i, c.next()) po[i] = f(px[c.offset(0)]);
}

// out[i] = f(a[i], b[i]) over out's (contiguous) shape; a and b broadcast.
template <typename In, typename Out, typename F>
void map_binary(const NDArray& a, const NDArray& b, const NDArray& out, F f) {
  const In* pa = data_of<In>(a);
  const In* pb = data_of<In>(b);
  Out* po = mutable_data_of<Out>(out);
  runtime::StridedCursor c(out.shape(),
                           {broadcast_strides(a, out.shape()), broadcast_strides(b, out.shape())});
  for (int64_t i = 0, n = out.numel(); i < n; ++i, c.next()) po[i] = f(pa[c.offset(0)], pb[c.offset(1)]);
}

// A fresh contiguous copy of a.
inline NDArray contiguous_copy(const NDArray& a) {
  NDArray out = NDArray::empty(a.dtype(), a.shape());
  a.copy_to(out);
  return out;
}

}  // namespace tf::eval
