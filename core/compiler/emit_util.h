// Shared vocabulary of the compiler (the fusion plan, the lowerings and the
// CPU printer): the dtypes it compiles and their C++ storage spellings, and
// the kUnsupported error the compiler turns into an evaluator fallback.
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
// data movement compile for them: fusion_plan.cc).
bool is_fp8(ir::DType d);
// e's tensor type; unsupported() for any other value.
const ir::TensorType& tensor_type(const ir::Expr& e);
bool is_static_one(const ir::ShapeDim& d);

inline std::string S(size_t s) { return std::to_string(s); }

}  // namespace tf::compiler
