// Shared vocabulary of the code generator (codegen.cc, the stage lowerings
// and the CPU printer): C++ spellings of dtypes and literals, and the
// kUnsupported error the compiler turns into an evaluator fallback.
//
// The CPU printer writes each stage as one `{ // stage: ... }` block of
// the generated entry (codegen.h's ABI): slot k's buffer is B[k], its shape
// sh<k>[] and strides st<k>[] (in elements); err / rt / RS are in scope.
#pragma once

#include <cstdint>
#include <string>

#include "core/ir/dtype.h"
#include "core/ir/expr.h"

namespace tf::compiler {

// Throws Error(kUnsupported): "native codegen: <what> is not compiled yet".
[[noreturn]] void unsupported(const std::string& what);

// The C++ storage type of d (tf_f16 / tf_bf16 for the half types,
// tf_fp8e4m3 / tf_f8e8m0 for the 8-bit floats).
std::string ctype(ir::DType d);
bool is_half(ir::DType d);
// fp8e4m3 / f8e8m0: stored and converted, computed in float (only Cast and
// data movement compile for them: codegen.cc's check_op).
bool is_fp8(ir::DType d);
// The type values of dtype d are computed in: float for f16 / bf16 / fp8.
std::string ctc(ir::DType d);
// An op's result of dtype d, rounded to d's storage precision.
std::string rnd(ir::DType d, const std::string& v);
std::string float_literal(double v, ir::DType d);
std::string int_literal(int64_t v, ir::DType d);

// e's tensor type; unsupported() for any other value.
const ir::TensorType& tensor_type(const ir::Expr& e);
bool is_static_one(const ir::ShapeDim& d);

inline std::string S(size_t s) { return std::to_string(s); }

}  // namespace tf::compiler
