// Binary and Unary kernels, torch CPU semantics without dtype promotion.
// Floats compute in compute_t<T> (float for f16/bf16) and round once.
// Signed integer add/sub/mul/neg/abs/square wrap modulo 2^bits; min / max
// propagate NaN. Those scalar forms are the shared ones of
// core/runtime/scalar_numerics.h, which generated kernels compile too.
#include <cmath>

#include "core/eval/kernel.h"
#include "core/eval/kernels/dispatch.h"
#include "core/ops/math/math.h"
#include "core/runtime/kernel_errors.h"

namespace tf::eval {
namespace {

using ops::BinaryKind;
using ops::UnaryKind;

// Integer `div` is floor division (tf_floordiv, shared with generated code);
// a zero divisor raises Error(kRuntime) rather than trapping.
template <typename T>
T floor_div(T a, T b) {
  int err = 0;
  const T q = ::tf_floordiv<T>(a, b, &err);
  if (err) ir::fail(ir::ErrorKind::kRuntime, runtime::div_by_zero_message());
  return q;
}

template <typename T>
T arithmetic(BinaryKind k, T x, T y) {
  if constexpr (std::is_same_v<T, bool>) {
    TF_CHECK(false, "arithmetic Binary on bool passed typeinfer");
  } else if constexpr (is_int_v<T>) {
    switch (k) {
      case BinaryKind::kAdd: return ::tf_wadd(x, y);
      case BinaryKind::kSub: return ::tf_wsub(x, y);
      case BinaryKind::kMul: return ::tf_wmul(x, y);
      case BinaryKind::kDiv: return floor_div(x, y);
      case BinaryKind::kMinimum: return ::tf_min(x, y);
      case BinaryKind::kMaximum: return ::tf_max(x, y);
      default: break;
    }
  } else {
    using C = compute_t<T>;
    C a = widen(x), b = widen(y);
    switch (k) {
      case BinaryKind::kAdd: return narrow<T>(a + b);
      case BinaryKind::kSub: return narrow<T>(a - b);
      case BinaryKind::kMul: return narrow<T>(a * b);
      case BinaryKind::kDiv: return narrow<T>(a / b);
      case BinaryKind::kMinimum: return narrow<T>(::tf_min(a, b));
      case BinaryKind::kMaximum: return narrow<T>(::tf_max(a, b));
      case BinaryKind::kPow: return narrow<T>(std::pow(a, b));
      default: break;
    }
  }
  TF_CHECK(false, "unhandled arithmetic Binary kind");
}

template <typename T>
bool predicate(BinaryKind k, T x, T y) {
  auto a = widen(x), b = widen(y);
  switch (k) {
    case BinaryKind::kEq: return a == b;
    case BinaryKind::kNe: return a != b;
    case BinaryKind::kLt: return a < b;
    case BinaryKind::kLe: return a <= b;
    case BinaryKind::kGt: return a > b;
    case BinaryKind::kGe: return a >= b;
    // Logical kinds read any dtype as truth values (non-zero, NaN included).
    case BinaryKind::kLogicalAnd: return a != 0 && b != 0;
    case BinaryKind::kLogicalOr: return a != 0 || b != 0;
    case BinaryKind::kLogicalXor: return (a != 0) != (b != 0);
    default: break;
  }
  TF_CHECK(false, "unhandled predicate Binary kind");
}

NDArray binary_kernel(const KernelArgs& args) {
  const BinaryKind kind = args.op<ops::Binary>().kind;
  const NDArray& a = args.inputs[0];
  const NDArray& b = args.inputs[1];
  NDArray out = NDArray::empty(args.out_dtype(), args.out_shape());
  dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if (ops::binary_kind_class(kind) == 'a' || ops::binary_kind_class(kind) == 'f')
      map_binary<T, T>(a, b, out, [kind](T x, T y) { return arithmetic<T>(kind, x, y); });
    else
      map_binary<T, bool>(a, b, out, [kind](T x, T y) { return predicate<T>(kind, x, y); });
  });
  return out;
}

// Unary on integers: ceil / floor / round are the identity (the value is
// already integral), relu is max(x, 0).
template <typename T>
T unary_int(UnaryKind k, T x) {
  switch (k) {
    case UnaryKind::kNeg: return ::tf_neg(x);
    case UnaryKind::kAbs: return ::tf_abs(x);
    case UnaryKind::kCeil:
    case UnaryKind::kFloor:
    case UnaryKind::kRound: return x;
    case UnaryKind::kSquare: return ::tf_square(x);
    case UnaryKind::kRelu: return ::tf_relu(x);
    default: break;
  }
  TF_CHECK(false, "float-only Unary kind on an integer passed typeinfer");
}

// round is half-to-even (std::nearbyint in the default rounding mode, as
// torch.round); rsqrt is 1 / sqrt(x) in the compute type, as torch's CPU kernel.
template <typename C>
C unary_float(UnaryKind k, C x) {
  switch (k) {
    case UnaryKind::kNeg: return ::tf_neg(x);
    case UnaryKind::kAbs: return ::tf_abs(x);
    case UnaryKind::kRsqrt: return C(1) / std::sqrt(x);
    case UnaryKind::kSqrt: return std::sqrt(x);
    case UnaryKind::kExp: return std::exp(x);
    case UnaryKind::kLog: return std::log(x);
    case UnaryKind::kExp2: return std::exp2(x);
    case UnaryKind::kLog2: return std::log2(x);
    case UnaryKind::kCeil: return std::ceil(x);
    case UnaryKind::kFloor: return std::floor(x);
    case UnaryKind::kRound: return std::nearbyint(x);
    case UnaryKind::kSquare: return ::tf_square(x);
    case UnaryKind::kRelu: return ::tf_relu(x);
    case UnaryKind::kSin: return std::sin(x);
    case UnaryKind::kCos: return std::cos(x);
    default: break;
  }
  TF_CHECK(false, "unhandled float Unary kind");
}

NDArray unary_kernel(const KernelArgs& args) {
  const UnaryKind kind = args.op<ops::Unary>().kind;
  const NDArray& x = args.inputs[0];
  NDArray out = NDArray::empty(args.out_dtype(), args.out_shape());
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if (kind == UnaryKind::kLogicalNot) {
      map_unary<T, bool>(x, out, [](T v) { return widen(v) == 0; });
    } else if constexpr (std::is_same_v<T, bool>) {
      TF_CHECK(false, "numeric Unary on bool passed typeinfer");
    } else if constexpr (is_int_v<T>) {
      map_unary<T, T>(x, out, [kind](T v) { return unary_int<T>(kind, v); });
    } else {
      map_unary<T, T>(x, out, [kind](T v) { return narrow<T>(unary_float(kind, widen(v))); });
    }
  });
  return out;
}

// out[i] = cond[i] ? a[i] : b[i]; all three broadcast.
NDArray where_kernel(const KernelArgs& args) {
  const NDArray &c = args.inputs[0], &a = args.inputs[1], &b = args.inputs[2];
  NDArray out = NDArray::empty(args.out_dtype(), args.out_shape());
  const std::vector<int64_t> shape = args.out_shape();
  runtime::StridedCursor cur(shape, {broadcast_strides(c, shape), broadcast_strides(a, shape), broadcast_strides(b, shape)});
  const bool* pc = data_of<bool>(c);
  dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T *pa = data_of<T>(a), *pb = data_of<T>(b);
    T* po = mutable_data_of<T>(out);
    for (int64_t i = 0, n = out.numel(); i < n; ++i, cur.next())
      po[i] = pc[cur.offset(0)] ? pa[cur.offset(1)] : pb[cur.offset(2)];
  });
  return out;
}

// A bound in T's terms, as torch converts a scalar bound: rounded to a
// float dtype (an infinite one stays infinite), saturated to an integer
// dtype's range.
template <typename T>
compute_t<T> clamp_bound(double v, ir::DType d) {
  if constexpr (is_int_v<T>) return static_cast<T>(ops::clamp_int_bound(v, d));
  else return widen(narrow<T>(static_cast<compute_t<T>>(v)));
}

NDArray clamp_kernel(const KernelArgs& args) {
  const auto& op = args.op<ops::Clamp>();
  const NDArray& x = args.inputs[0];
  NDArray out = NDArray::empty(args.out_dtype(), args.out_shape());
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      TF_CHECK(false, "clamp of bool passed typeinfer");
    } else {
      const compute_t<T> lo = clamp_bound<T>(op.min, x.dtype()), hi = clamp_bound<T>(op.max, x.dtype());
      map_unary<T, T>(x, out, [lo, hi](T v) { return narrow<T>(::tf_min(::tf_max(widen(v), lo), hi)); });
    }
  });
  return out;
}

}  // namespace

void register_math_kernels(KernelTable& t) {
  t.add("Binary", binary_kernel);
  t.add("Unary", unary_kernel);
  t.add("Where", where_kernel);
  t.add("Clamp", clamp_kernel);
}

}  // namespace tf::eval
