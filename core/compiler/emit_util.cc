#include "core/compiler/emit_util.h"

#include "core/ir/error.h"

namespace tf::compiler {

using ir::DType;

void unsupported(const std::string& what) {
  ir::fail(ir::ErrorKind::kUnsupported, "native codegen: " + what + " is not compiled yet");
}

std::string ctype(DType d) {
  switch (d) {
    case DType::kBool: return "bool";
    case DType::kI8: return "int8_t";
    case DType::kU8: return "uint8_t";
    case DType::kI32: return "int32_t";
    case DType::kI64: return "int64_t";
    case DType::kF32: return "float";
    case DType::kF64: return "double";
    case DType::kF16: return "tf_f16";
    case DType::kBF16: return "tf_bf16";
    case DType::kFP8E4M3: return "tf_fp8e4m3";
    case DType::kF8E8M0: return "tf_f8e8m0";
    default: unsupported("dtype " + std::string(ir::dtype_name(d)));
  }
}

bool is_half(DType d) { return d == DType::kF16 || d == DType::kBF16; }
bool is_fp8(DType d) { return d == DType::kFP8E4M3 || d == DType::kF8E8M0; }

const ir::TensorType& tensor_type(const ir::Expr& e) {
  auto* t = dynamic_cast<const ir::TensorType*>(e.type().get());
  if (!t) unsupported("a non-tensor value");
  return *t;
}

bool is_static_one(const ir::ShapeDim& d) { return d.is_static() && d.value() == 1; }

}  // namespace tf::compiler
