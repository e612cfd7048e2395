// Binary and Unary kernels, torch CPU semantics without dtype promotion.
// Floats compute in compute_t<T> (float for f16/bf16) and round once.
// Signed integer add/sub/mul/neg/abs/square wrap modulo 2^bits (two's
// complement, as torch's int kernels do in practice) instead of being UB.
#include <cmath>
#include <limits>

#include "core/eval/kernel.h"
#include "core/eval/kernels/dispatch.h"
#include "core/ops/math/math.h"

namespace tf::eval {
namespace {

using ops::BinaryKind;
using ops::UnaryKind;

template <typename T>
T wrap_add(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
}
template <typename T>
T wrap_sub(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
}
template <typename T>
T wrap_mul(T a, T b) {
  using U = std::make_unsigned_t<T>;
  // uint8/uint16 promote to (signed) int, so multiply in at least unsigned int.
  using W = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
  return static_cast<T>(static_cast<U>(static_cast<W>(static_cast<U>(a)) * static_cast<W>(static_cast<U>(b))));
}

// Integer `div` is floor division, i.e. torch.div(a, b, rounding_mode="floor").
// Rationale: Binary keeps the dtype (no promotion), so torch's true division
// is not expressible for ints; floor division is the integer division that
// agrees with Python's `//`. A zero divisor raises Error(kRuntime) rather than
// trapping; INT_MIN // -1 wraps to INT_MIN.
template <typename T>
T floor_div(T a, T b) {
  if (b == 0) ir::fail(ir::ErrorKind::kRuntime, "'div': integer division by zero");
  if (b == -1) return wrap_sub<T>(0, a);
  T q = static_cast<T>(a / b);
  T r = static_cast<T>(a % b);
  if (r != 0 && ((r < 0) != (b < 0))) --q;
  return q;
}

// torch.minimum / torch.maximum propagate NaN.
template <typename C>
C nan_min(C a, C b) {
  if constexpr (std::is_floating_point_v<C>)
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<C>::quiet_NaN();
  return b < a ? b : a;
}
template <typename C>
C nan_max(C a, C b) {
  if constexpr (std::is_floating_point_v<C>)
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<C>::quiet_NaN();
  return a < b ? b : a;
}

template <typename T>
T arithmetic(BinaryKind k, T x, T y) {
  if constexpr (std::is_same_v<T, bool>) {
    TF_CHECK(false, "arithmetic Binary on bool passed typeinfer");
  } else if constexpr (is_int_v<T>) {
    switch (k) {
      case BinaryKind::kAdd: return wrap_add(x, y);
      case BinaryKind::kSub: return wrap_sub(x, y);
      case BinaryKind::kMul: return wrap_mul(x, y);
      case BinaryKind::kDiv: return floor_div(x, y);
      case BinaryKind::kMinimum: return nan_min(x, y);
      case BinaryKind::kMaximum: return nan_max(x, y);
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
      case BinaryKind::kMinimum: return narrow<T>(nan_min(a, b));
      case BinaryKind::kMaximum: return narrow<T>(nan_max(a, b));
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
    if (ops::binary_kind_class(kind) == 'a')
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
    case UnaryKind::kNeg: return wrap_sub<T>(0, x);
    case UnaryKind::kAbs: return x < 0 ? wrap_sub<T>(0, x) : x;
    case UnaryKind::kCeil:
    case UnaryKind::kFloor:
    case UnaryKind::kRound: return x;
    case UnaryKind::kSquare: return wrap_mul(x, x);
    case UnaryKind::kRelu: return x < 0 ? T(0) : x;
    default: break;
  }
  TF_CHECK(false, "float-only Unary kind on an integer passed typeinfer");
}

// round is half-to-even (std::nearbyint in the default rounding mode, as
// torch.round); rsqrt is 1 / sqrt(x) in the compute type, as torch's CPU kernel.
template <typename C>
C unary_float(UnaryKind k, C x) {
  switch (k) {
    case UnaryKind::kNeg: return -x;
    case UnaryKind::kAbs: return std::abs(x);
    case UnaryKind::kRsqrt: return C(1) / std::sqrt(x);
    case UnaryKind::kSqrt: return std::sqrt(x);
    case UnaryKind::kExp: return std::exp(x);
    case UnaryKind::kLog: return std::log(x);
    case UnaryKind::kExp2: return std::exp2(x);
    case UnaryKind::kLog2: return std::log2(x);
    case UnaryKind::kCeil: return std::ceil(x);
    case UnaryKind::kFloor: return std::floor(x);
    case UnaryKind::kRound: return std::nearbyint(x);
    case UnaryKind::kSquare: return x * x;
    case UnaryKind::kRelu: return std::isnan(x) ? x : (x < 0 ? C(0) : x);
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

}  // namespace

void register_math_kernels(KernelTable& t) {
  t.add("Binary", binary_kernel);
  t.add("Unary", unary_kernel);
}

}  // namespace tf::eval
