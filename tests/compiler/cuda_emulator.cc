#include "cuda_emulator.h"

#include <stdexcept>

#include "core/compiler/codegen.h"
#include "core/compiler/compiler.h"
#include "core/compiler/cuda/cuda_function.h"
#include "core/compiler/scalars.h"
#include "core/compiler/toolchain.h"
#include "core/ir/error.h"

namespace tf::comptest {

EmulatedCudaProgram::EmulatedCudaProgram(compiler::cuda::CudaProgram p) : p_(std::move(p)) {
  // The compile stays outside the toolchain's, so the suites' count of
  // kernel compiles (compiler_invocations) stays theirs.
  const compiler::Toolchain t = compiler::toolchain();
  try {
    module_ = std::make_unique<cudaemu::EmulatedModule>(p_.source, t.cc, t.flags, compiler::cache_dir());
  } catch (const std::runtime_error& e) {
    ir::fail(ir::ErrorKind::kInternal, e.what());
  }
}

EmulatedCudaProgram::~EmulatedCudaProgram() = default;

void EmulatedCudaProgram::run(const std::vector<runtime::NDArray>& inputs, const std::vector<runtime::NDArray>& outputs,
                              const ir::DimBindings& bindings, int block_threads, int grid_blocks) const {
  std::vector<runtime::NDArray> arrays(inputs.begin(), inputs.end());
  arrays.insert(arrays.end(), outputs.begin(), outputs.end());
  for (const compiler::Slot& s : p_.slots) {  // device memory is host memory here
    if (s.kind != compiler::Slot::kTemp) continue;
    std::vector<int64_t> shape;
    for (const ir::ShapeDim& d : s.type->shape()) shape.push_back(d.evaluate(bindings));
    arrays.push_back(runtime::NDArray::empty(s.type->dtype(), shape));
  }
  std::vector<int64_t> scalars;
  for (const compiler::RuntimeScalar& sc : p_.scalars) scalars.push_back(compiler::resolve_scalar(sc, bindings));
  int err = 0, pre = 0;
  int64_t info[compiler::kInfoSize] = {0, 0, 0, 0};
  const std::vector<int64_t> args = compiler::cuda::pack_kernel_args(arrays, scalars, &err, &pre, info);
  for (const compiler::cuda::CudaKernel& k : p_.kernels) {
    const int grid = k.launch == compiler::cuda::Launch::kOneBlock ? 1 : grid_blocks;
    try {
      module_->launch(k.name, static_cast<unsigned>(grid), static_cast<unsigned>(block_threads), args.data());
    } catch (const std::runtime_error& e) {
      ir::fail(ir::ErrorKind::kInternal, e.what());
    }
  }
  if (pre != 0) compiler::raise_kernel_error(pre, info);
  if (err != 0) compiler::raise_kernel_error(err, info);
}

}  // namespace tf::comptest
