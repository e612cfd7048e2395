// Compiled f32 Conv2D and bf16 MatMul run through oneDNN's primitives
// (runtime/dnnl_primitives.h), as the evaluator does, and agree with it bit
// for bit; f64 convolutions keep the kernel's own loops.
#include "compiler_helpers.h"
#include "core/compiler/codegen.h"
#include "core/frontend/parser.h"
#include "core/runtime/dnnl_primitives.h"

namespace tf::comptest {
namespace {

const char* kSource = R"(from tilefoundry.dsl import *

N = DimVar("N", 1, 64)
C = DimVar("C", 1, 64)
O = DimVar("O", 1, 64)
H = DimVar("H", 1, 256)
M = DimVar("M", 1, 4096)
K = DimVar("K", 1, 4096)
P = DimVar("P", 1, 4096)
B = DimVar("B", 1, 16)

@func
def conv_bias(x: Tensor[(N, C * 2, H, H), f32], w: Tensor[(O, C, 3, 3), f32], b: Tensor[(O,), f32]) -> Tensor[(N, O, (H - 1) // 2 + 1, (H - 1) // 2 + 1), f32]:
    return conv2d(x, w, b, stride=(2, 2), padding=(1, 1), groups=2)

@func
def conv_dilated(x: Tensor[(N, C, H, H), f32], w: Tensor[(O, C, 3, 3), f32]) -> Tensor[(N, O, H, H), f32]:
    return conv2d(x, w, None, padding=(2, 2), dilation=(2, 2))

@func
def conv64(x: Tensor[(N, C, H, H), f64], w: Tensor[(O, C, 3, 3), f64]) -> Tensor[(N, O, H, H), f64]:
    return conv2d(x, w, None, padding=(1, 1))

@func
def mm(a: Tensor[(M, K), bf16], b: Tensor[(K, P), bf16]) -> Tensor[(M, P), bf16]:
    return a @ b

@func
def mm_bt(a: Tensor[(M, K), bf16], b: Tensor[(P, K), bf16]) -> Tensor[(M, P), bf16]:
    return a @ transpose(b, (1, 0))

@func
def bmm_strided(a: Tensor[(K, M, B), bf16], b: Tensor[(K, P), bf16]) -> Tensor[(B, M, P), bf16]:
    return transpose(a, (2, 1, 0)) @ b
)";

class OnednnStages : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { module_ = frontend::parse_module(kSource, "onednn_stages.tf"); }
  static const ir::Function& fn(const std::string& name) { return *module_->lookup(name); }
  // Compiled against the evaluator, bit for bit, each having called oneDNN
  // as often as the other; returns how often that was.
  uint64_t expect_same_bits(const std::string& name, const std::vector<NDArray>& in) {
    const auto k = compiler::compile(fn(name));
    const uint64_t start = runtime::dnnl_primitive_runs();
    const std::vector<NDArray> want = eval::evaluate(*module_, fn(name), in);
    const uint64_t evaluated = runtime::dnnl_primitive_runs();
    const std::vector<NDArray> got = run_native(*k, fn(name), in);
    const uint64_t compiled = runtime::dnnl_primitive_runs() - evaluated;
    EXPECT_EQ(compiled, evaluated - start) << name << ": the evaluator and the kernel took different paths";
    EXPECT_EQ(first_bit_difference(got.at(0), want.at(0)), "") << name;
    return compiled;
  }
  static ir::ModulePtr module_;
  std::mt19937 rng_{5};
};
ir::ModulePtr OnednnStages::module_;

// Whether oneDNN serves a bf16 MatMul on this CPU (it must where the CPU
// has bf16 dot products: DnnlPrimitives.*), probed at the smallest size it takes.
bool onednn_serves_bf16() {
  const int64_t k = runtime::kDnnlMatmulMinMacs / 64 / 64;
  std::vector<uint16_t> a(64 * k, 0x3F80), b(k * 64, 0x3F80), c(64 * 64);  // ones
  return runtime::matmul_bf16(64, 64, k, a.data(), k, 1, b.data(), 64, 1, c.data());
}

TEST_F(OnednnStages, F32ConvolutionsCallOnednnFirst) {
  EXPECT_EQ(count(compiler::generate(fn("conv_bias")).tir, "@tf_conv2d_onednn"), 1);
  EXPECT_EQ(count(compiler::generate(fn("conv_dilated")).tir, "@tf_conv2d_onednn"), 1);
  // oneDNN has no f64 convolution: that kernel keeps only its own loops.
  EXPECT_EQ(count(compiler::generate(fn("conv64")).tir, "@tf_conv2d_onednn"), 0);
}

// 1 where oneDNN serves a convolution of this geometry (not too small).
uint64_t served(const runtime::Conv2DGeometry& g) { return runtime::conv2d_macs(g) >= runtime::kDnnlConvMinMacs; }

TEST_F(OnednnStages, F32ConvolutionsAgreeWithTheEvaluatorBitForBit) {
  // Sizes on both sides of kDnnlConvMinMacs: the kernel's loops below it.
  for (int64_t h : {5, 16, 31}) {
    const std::string at = " H=" + std::to_string(h);
    const int64_t half = (h - 1) / 2 + 1;
    EXPECT_EQ(expect_same_bits("conv_bias", {random_array(DType::kF32, {2, 8, h, h}, rng_),
                                             random_array(DType::kF32, {12, 4, 3, 3}, rng_),
                                             random_array(DType::kF32, {12}, rng_)}),
              served({2, 8, h, h, 12, 3, 3, half, half, 2, {2, 2}, {1, 1}, {1, 1}}))
        << at;
    EXPECT_EQ(expect_same_bits("conv_dilated", {random_array(DType::kF32, {3, 5, h, h}, rng_),
                                                random_array(DType::kF32, {7, 5, 3, 3}, rng_)}),
              served({3, 5, h, h, 7, 3, 3, h, h, 1, {1, 1}, {2, 2}, {2, 2}}))
        << at;
  }
  EXPECT_EQ(expect_same_bits("conv64", {random_array(DType::kF64, {2, 3, 19, 19}, rng_),
                                        random_array(DType::kF64, {40, 3, 3, 3}, rng_)}),
            0u);
}

TEST_F(OnednnStages, Bf16MatMulsAgreeWithTheEvaluatorBitForBit) {
  // Where oneDNN has bf16 kernels it serves every product of at least
  // kDnnlMatmulMinMacs (one call per batch); smaller ones, and every one
  // elsewhere, are widened to float for sgemm by both backends.
  const uint64_t dot = onednn_serves_bf16() ? 1 : 0;
  auto served = [&](int64_t m, int64_t n, int64_t k) { return m * n * k >= runtime::kDnnlMatmulMinMacs ? dot : 0; };
  for (int64_t m : {1, 7, 64}) {
    const std::string at = " M=" + std::to_string(m);
    EXPECT_EQ(expect_same_bits("mm", {random_array(DType::kBF16, {m, 512}, rng_),
                                      random_array(DType::kBF16, {512, 520}, rng_)}),
              served(m, 520, 512))
        << at;
    EXPECT_EQ(expect_same_bits("mm_bt", {random_array(DType::kBF16, {m, 96}, rng_),
                                         random_array(DType::kBF16, {130, 96}, rng_)}),
              served(m, 130, 96))
        << at;
    // Each [M, K] matrix of this transpose is neither row- nor column-major
    // (the evaluator copies the transpose, the kernel reads it in place and
    // the runtime packs it): oneDNN serves it as any other.
    EXPECT_EQ(expect_same_bits("bmm_strided", {random_array(DType::kBF16, {256, m, 3}, rng_),
                                               random_array(DType::kBF16, {256, 1024}, rng_)}),
              3 * served(m, 1024, 256))
        << at;
  }
}

}  // namespace
}  // namespace tf::comptest
