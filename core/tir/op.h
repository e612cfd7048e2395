// Building TIR expressions: one function per operation, folding what is
// known at build time (constant arithmetic, x + 0, x * 1, x * 0 for
// integers, a Select on a constant condition), so a lowering can write
// general index arithmetic and a specialization (a stride known to be 1)
// folds away without a separate simplifier. Float arithmetic is folded only
// where it is exact to do so (never reassociated).
#pragma once

#include <string>
#include <vector>

#include "core/tir/expr.h"

namespace tf::tir {

ExprPtr i64(int64_t v);
ExprPtr i32(int64_t v);
ExprPtr boolean(bool v);
// An immediate of dtype d (a compute dtype): integers and bool as IntImm.
ExprPtr imm(DType d, double v);

// Any binary op, with the identities and folding of the named builders.
ExprPtr binary(BinaryOp op, ExprPtr a, ExprPtr b);
ExprPtr add(ExprPtr a, ExprPtr b);
ExprPtr sub(ExprPtr a, ExprPtr b);
ExprPtr mul(ExprPtr a, ExprPtr b);
ExprPtr div(ExprPtr a, ExprPtr b);
ExprPtr mod(ExprPtr a, ExprPtr b);
ExprPtr min(ExprPtr a, ExprPtr b);
ExprPtr max(ExprPtr a, ExprPtr b);
ExprPtr eq(ExprPtr a, ExprPtr b);
ExprPtr ne(ExprPtr a, ExprPtr b);
ExprPtr lt(ExprPtr a, ExprPtr b);
ExprPtr le(ExprPtr a, ExprPtr b);
ExprPtr gt(ExprPtr a, ExprPtr b);
ExprPtr ge(ExprPtr a, ExprPtr b);
ExprPtr land(ExprPtr a, ExprPtr b);
ExprPtr lor(ExprPtr a, ExprPtr b);
ExprPtr neg(ExprPtr a);
ExprPtr lnot(ExprPtr a);
ExprPtr select(ExprPtr c, ExprPtr t, ExprPtr f);
// No node when value already has dtype `to`.
ExprPtr cast(DType to, ExprPtr value);
ExprPtr load(const VarPtr& base, ExprPtr index);
ExprPtr address(const VarPtr& base, ExprPtr index);
ExprPtr call(Type ret, std::string name, std::vector<ExprPtr> args, std::vector<Type> type_args = {});
ExprPtr extern_call(std::string name, std::vector<ExprPtr> args, std::vector<Type> type_args = {});

// The value of e when it is an integer immediate.
bool const_int(const ExprPtr& e, int64_t* out);
bool is_const_int(const ExprPtr& e, int64_t v);

}  // namespace tf::tir
