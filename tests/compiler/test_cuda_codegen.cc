// The CUDA target without a GPU: the kernels it generates are compiled by
// NVRTC for sm_80 and sm_90 and assembled by ptxas (inside NVRTC), and what
// ptxas reports must fit a launch of kBlockThreads threads per block.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "cuda_check.h"
#include "core/compiler/cuda/cuda_codegen.h"
#include "core/compiler/cuda/nvrtc.h"
#include "core/frontend/parser.h"
#include "core/ir/error.h"

namespace tf::comptest {
namespace {

using compiler::cuda::CudaProgram;
using compiler::cuda::Launch;

const char* kSource = R"(from tilefoundry.dsl import *

N = DimVar("N", 1, 1 << 20)
D = DimVar("D", 1, 1 << 16)

@func
def rmsnorm(x: Tensor[(N, D), f32], w: Tensor[(D,), f32]) -> Tensor[(N, D), f32]:
    return rms_norm(x, w, eps=1e-6)

@func
def resnorm16(x: Tensor[(N, D), bf16], r: Tensor[(N, D), bf16], w: Tensor[(D,), bf16]) -> tuple[Tensor[(N, D), bf16], Tensor[(N, D), bf16]]:
    h = x + r
    return h, rms_norm(h, w, eps=1e-5)

@func
def swiglu(a: Tensor[(N, D), f32], b: Tensor[(N, D), f32]) -> Tensor[(N, D), f32]:
    return silu(a) * b

@func
def smax(x: Tensor[(N, D), f32]) -> Tensor[(N, D), f32]:
    return softmax(x)

@func
def lnorm(x: Tensor[(N, D), f16], w: Tensor[(D,), f16], b: Tensor[(D,), f16]) -> Tensor[(N, D), f16]:
    return layer_norm(x, w, b, eps=1e-5)

@func
def gelu_t(x: Tensor[(N, D), f32]) -> Tensor[(N, D), f32]:
    return gelu(x)

@func
def col_sum(x: Tensor[(N, D), f32]) -> Tensor[(1, D), f32]:
    return sum(x, axes=0)

@func
def int_ops(a: Tensor[(N, D), i32], b: Tensor[(N, D), i32]) -> Tensor[(N, D), i32]:
    return div(a, b) + a * b

@func
def transposed(x: Tensor[(N, D), f32]) -> Tensor[(D, N), f32]:
    return transpose(x, (1, 0)) * 2.0
)";

class CudaCodegen : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { module_ = frontend::parse_module(kSource, "cuda.tf"); }
  static ir::ModulePtr module_;
  CudaProgram generated(const char* name) { return compiler::cuda::generate_cuda(*module_->lookup(name)); }
};
ir::ModulePtr CudaCodegen::module_;

TEST_F(CudaCodegen, EveryKernelCompilesForAmpereAndHopper) {
  for (const char* name : {"rmsnorm", "resnorm16", "swiglu", "smax", "lnorm", "gelu_t", "col_sum", "int_ops",
                           "transposed"}) {
    SCOPED_TRACE(name);
    expect_cuda_compiles(*module_->lookup(name), name);
  }
}

}  // namespace
}  // namespace tf::comptest
