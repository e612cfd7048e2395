// Builders of typed HIR calls for the compiler's own rewrites (the
// decompositions of built-in row ops, the one-pass variance): each call is
// typed by typeinfer as it is made, so a rewrite that builds an ill-typed
// call fails where it builds it.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "core/compiler/emit_util.h"
#include "core/ir/expr.h"
#include "core/ops/math/math.h"
#include "core/ops/tensor/tensor.h"
#include "core/sema/typeinfer.h"

namespace tf::compiler::hir {

template <typename OpT, typename... A>
ir::ExprPtr make(std::vector<ir::ExprPtr> args, A&&... op_args) {
  return sema::make_op_call(std::make_shared<OpT>(std::forward<A>(op_args)...), std::move(args));
}
inline ir::ExprPtr bin(ops::BinaryKind k, ir::ExprPtr a, ir::ExprPtr b) {
  return make<ops::Binary>({std::move(a), std::move(b)}, k);
}
inline ir::ExprPtr add(ir::ExprPtr a, ir::ExprPtr b) { return bin(ops::BinaryKind::kAdd, std::move(a), std::move(b)); }
inline ir::ExprPtr sub(ir::ExprPtr a, ir::ExprPtr b) { return bin(ops::BinaryKind::kSub, std::move(a), std::move(b)); }
inline ir::ExprPtr mul(ir::ExprPtr a, ir::ExprPtr b) { return bin(ops::BinaryKind::kMul, std::move(a), std::move(b)); }
inline ir::ExprPtr div(ir::ExprPtr a, ir::ExprPtr b) { return bin(ops::BinaryKind::kDiv, std::move(a), std::move(b)); }
inline ir::ExprPtr unary(ops::UnaryKind k, ir::ExprPtr x) { return make<ops::Unary>({std::move(x)}, k); }
// x itself when it already has dtype d.
inline ir::ExprPtr cast(ir::ExprPtr x, ir::DType d) {
  return tensor_type(*x).dtype() == d ? x : make<ops::Cast>({std::move(x)}, d);
}
inline ir::ExprPtr constant(double v, ir::DType d) { return ir::Constant::make_float(v, d); }
// A Reduce over one axis, keepdim.
inline ir::ExprPtr reduce_over(ops::ReduceKind k, ir::ExprPtr x, int64_t axis) {
  return make<ops::Reduce>({std::move(x)}, std::vector<int64_t>{axis}, true, k);
}
// A Reduce over the last axis, keepdim: a value per row, read back along it.
inline ir::ExprPtr row_reduce(ops::ReduceKind k, ir::ExprPtr x) { return reduce_over(k, std::move(x), -1); }
// x's first element along its last axis, keepdim (a window of extent one).
inline ir::ExprPtr row_first(const ir::ExprPtr& x) {
  const ir::Shape& shape = tensor_type(*x).shape();
  ir::Shape end = shape;
  end.back() = 1;
  return make<ops::Slice>({x}, ir::Shape(shape.size(), 0), end, std::vector<int64_t>(shape.size(), 1));
}

}  // namespace tf::compiler::hir
