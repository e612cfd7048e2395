#include "core/compiler/cuda/cuda_codegen.h"

#include <algorithm>
#include <sstream>
#include <utility>

#include "core/compiler/codegen.h"
#include "core/compiler/cuda/grid_size.h"
#include "core/compiler/cuda/kernel_split.h"
#include "core/compiler/cuda/prelude.h"
#include "core/compiler/emit_util.h"
#include "core/ir/error.h"

namespace tf::compiler::cuda {
namespace {

// The entry's variables as every kernel spells them, and the kernels' own
// locals, which no stage variable may be named as.
std::vector<std::pair<tir::VarPtr, std::string>> kernel_spellings(const LoweredEntry& e) {
  std::vector<std::pair<tir::VarPtr, std::string>> out{
      {e.err, "err"}, {e.rt, "tf_no_runtime_table"}, {e.info, "A.info"}, {e.scalars, "RS"}};
  for (size_t k = 0; k < e.slot_vars.size(); ++k) {
    const SlotVars& v = e.slot_vars[k];
    out.emplace_back(v.data, "static_cast<" + ctype(e.slots[k].type->dtype()) + "*>(A.B[" + S(k) + "])");
    out.emplace_back(v.shape, "sh" + S(k));
    out.emplace_back(v.strides, "st" + S(k));
  }
  for (const char* n : {"A", "pre", "tf_args"})
    out.emplace_back(tir::Var::make(n, tir::Type::scalar(ir::DType::kI64)), n);
  return out;
}

std::string args_struct(const LoweredEntry& e) {
  const ArgsLayout l = args_layout(e);
  std::ostringstream o;
  o << "struct tf_args {\n"
    << "  void* B[" << l.sh << "];\n"
    << "  int64_t SH[" << l.st - l.sh << "];\n"
    << "  int64_t ST[" << l.rs - l.st << "];\n"
    << "  int64_t RS[" << l.end - l.rs << "];\n"
    << "  int* err;\n  int* pre;\n  int64_t* info;\n};\n";
  return o.str();
}

// The lines every kernel starts with: the early return after a failed
// check, and the names the printed body uses.
std::string kernel_preamble(const LoweredEntry& e) {
  const ArgsLayout l = args_layout(e);
  std::ostringstream o;
  o << "  int* const pre = A.pre;\n  if (*pre != 0) return;\n";
  o << "  int* const err = A.err; (void)err;\n";
  for (size_t k = 0; k < e.slots.size(); ++k)
    o << "  const int64_t* sh" << k << " = A.SH + " << l.dims[k] << "; const int64_t* st" << k << " = A.ST + "
      << l.dims[k] << "; (void)sh" << k << "; (void)st" << k << ";\n";
  o << "  const int64_t* RS = A.RS; (void)RS;\n";
  return o.str();
}

// cuBLAS multiplies the float types a MatMul takes but the 8-bit ones.
void require_gemm_dtype(ir::DType d) {
  if (d == ir::DType::kF16 || d == ir::DType::kBF16 || d == ir::DType::kF32 || d == ir::DType::kF64) return;
  ir::fail(ir::ErrorKind::kUnsupported,
           "MatMul of " + std::string(ir::dtype_name(d)) + " is not compiled for CUDA yet (cuBLAS has no such GEMM)");
}

CudaProgram print_program(const LoweredEntry& e) {
  CudaProgram p;
  p.slots = e.slots;
  p.scalars = e.run_time_scalars;
  p.may_fail = e.may_fail;
  p.tir = to_string(e);
  const auto spellings = kernel_spellings(e);
  const std::string preamble = kernel_preamble(e);
  std::ostringstream o;
  o << cuda_prelude_source() << "\n" << args_struct(e);
  auto add = [&](const tir::StmtPtr& stage, bool precheck) {
    for (const tir::StmtPtr& k : split_kernels(stage)) {
      CudaPrinter printer;  // a printer per kernel: it names the kernel's variables
      for (const auto& [v, name] : spellings) printer.predeclare(v, name);
      const std::string body = printer.kernel(k, 1);
      const CudaKernel kernel{"tf_k" + S(p.kernels.size()), printer.launch(), precheck, std::nullopt,
                              kernel_blocks(k, printer.launch(), e)};
      o << "\n// " << (precheck ? "check" : "stage") << ", launched as " << launch_name(kernel.launch) << "\n"
        << "extern \"C\" __global__ void __launch_bounds__(" << kBlockThreads << ") " << kernel.name
        << "(const __grid_constant__ tf_args A) {\n"
        << preamble << body << "}\n";
      p.kernels.push_back(kernel);
    }
  };
  for (const tir::StmtPtr& s : e.prechecks) add(s, true);
  for (size_t i = 0; i < e.stages.size(); ++i) {
    if (const std::optional<GemmCall>& g = e.stage_gemms.at(i)) {
      require_gemm_dtype(e.slots.at(g->out).type->dtype());
      o << "\n// stage " << i << ": a MatMul, through cuBLAS from the host\n";
      p.kernels.push_back(CudaKernel{"", Launch::kOneBlock, false, g, nullptr});
      continue;
    }
    add(e.stages[i], false);
  }
  p.source = o.str();
  return p;
}

}  // namespace

ArgsLayout args_layout(const LoweredEntry& e) {
  ArgsLayout l;
  size_t dims = 0;
  for (const Slot& s : e.slots) {
    l.dims.push_back(dims);
    dims += s.type->rank();
  }
  const auto at_least_one = [](size_t n) { return std::max<size_t>(n, 1); };
  l.sh = at_least_one(e.slots.size());
  l.st = l.sh + at_least_one(dims);
  l.rs = l.st + at_least_one(dims);
  l.end = l.rs + at_least_one(e.run_time_scalars.size());
  return l;
}

bool has_gemm(const CudaProgram& p) {
  return std::any_of(p.kernels.begin(), p.kernels.end(), [](const CudaKernel& k) { return k.gemm.has_value(); });
}

CudaProgram generate_cuda_segment(const std::vector<ir::ExprPtr>& inputs, const std::vector<ir::ExprPtr>& outputs,
                                  const std::vector<bool>& aliased) {
  CudaProgram p = print_program(lower_entry(inputs, outputs, aliased, Target::kCuda));
  p.aliased = aliased;
  p.aliased.resize(outputs.size(), false);
  return p;
}

CudaProgram generate_cuda(const ir::Function& fn) {
  const FunctionSegment s = function_segment(fn);
  return generate_cuda_segment(s.inputs, s.outputs, s.aliased);
}

}  // namespace tf::compiler::cuda
