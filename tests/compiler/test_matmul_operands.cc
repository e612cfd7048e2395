// A MatMul operand that is a Transpose (a linear layer's `x @ w.T`, a
// batched `q @ k.transpose(-1, -2)`) is read in place from the Transpose's
// own operand, with the axes permuted: no transposed copy is stored. The
// compiled kernels agree with the evaluator for every float dtype, batch
// axes moved by the Transpose, a transposed computed value (stored once,
// untransposed) and a Transpose read by something else too.
#include "compiler_helpers.h"
#include "core/compiler/codegen.h"
#include "core/frontend/parser.h"

namespace tf::comptest {
namespace {

const char* kSource = R"(from tilefoundry.dsl import *

M = DimVar("M", 1, 4096)
K = DimVar("K", 1, 4096)
P = DimVar("P", 1, 4096)
B = DimVar("B", 1, 16)

@func
def linear32(x: Tensor[(M, K), f32], w: Tensor[(P, K), f32]) -> Tensor[(M, P), f32]:
    return x @ transpose(w, (1, 0))

@func
def linear64(x: Tensor[(M, K), f64], w: Tensor[(P, K), f64]) -> Tensor[(M, P), f64]:
    return x @ transpose(w, (1, 0))

@func
def linear16(x: Tensor[(M, K), f16], w: Tensor[(P, K), f16]) -> Tensor[(M, P), f16]:
    return x @ transpose(w, (1, 0))

@func
def linear_bf16(x: Tensor[(M, K), bf16], w: Tensor[(P, K), bf16]) -> Tensor[(M, P), bf16]:
    return x @ transpose(w, (1, 0))

@func
def both_transposed(a: Tensor[(K, M), f32], b: Tensor[(P, K), f32]) -> Tensor[(M, P), f32]:
    return transpose(a, (1, 0)) @ transpose(b, (1, 0))

@func
def scores(q: Tensor[(B, M, K), f32], k: Tensor[(B, P, K), f32]) -> Tensor[(B, M, P), f32]:
    return q @ transpose(k, (0, 2, 1))

@func
def heads_first(x: Tensor[(M, B, K), f32], w: Tensor[(K, P), f32]) -> Tensor[(B, M, P), f32]:
    return transpose(x, (1, 0, 2)) @ w

@func
def rotated(x: Tensor[(K, B, M), bf16], w: Tensor[(K, P), bf16]) -> Tensor[(B, M, P), bf16]:
    return transpose(x, (1, 2, 0)) @ w

@func
def computed(x: Tensor[(M, K), f32], w: Tensor[(P, K), f32]) -> Tensor[(M, P), f32]:
    return x @ transpose(w * 2.0 + 1.0, (1, 0))

@func
def shared(x: Tensor[(K, K), f32], w: Tensor[(K, K), f32]) -> tuple[Tensor[(K, K), f32], Tensor[(K, K), f32]]:
    t = transpose(w, (1, 0))
    return x @ t, t + x
)";

class MatMulOperands : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { module_ = frontend::parse_module(kSource, "matmul_operands.tf"); }
  static const ir::Function& fn(const std::string& name) { return *module_->lookup(name); }
  static std::string tir(const std::string& name) { return compiler::generate(fn(name)).tir; }
  void check(const std::string& name, const std::vector<NDArray>& in) {
    expect_agree(*compiler::compile(fn(name)), *module_, fn(name), in, name);
  }
  static ir::ModulePtr module_;
  std::mt19937 rng_{17};
};
ir::ModulePtr MatMulOperands::module_;

TEST_F(MatMulOperands, TransposedOperandsAreNotCopied) {
  for (const char* name : {"linear32", "linear64", "linear16", "linear_bf16", "both_transposed", "scores",
                           "heads_first", "rotated"}) {
    const std::string t = tir(name);
    EXPECT_EQ(count(t, "// stage:"), 1) << name << "\n" << t;
    EXPECT_EQ(count(t, "// stage: matmul"), 1) << name << "\n" << t;
  }
  // A computed operand is stored once, untransposed, and read in place.
  const std::string c = tir("computed");
  EXPECT_EQ(count(c, "// stage:"), 2) << c;
  EXPECT_EQ(count(c, "Transpose"), 0) << c;
}

TEST_F(MatMulOperands, TransposedOperandsAgreeWithTheEvaluator) {
  for (int64_t m : {1, 5, 64}) {
    for (DType d : {DType::kF32, DType::kF64, DType::kF16, DType::kBF16}) {
      const std::string name = d == DType::kF32   ? "linear32"
                               : d == DType::kF64 ? "linear64"
                               : d == DType::kF16 ? "linear16"
                                                  : "linear_bf16";
      check(name, {random_array(d, {m, 72}, rng_), random_array(d, {130, 72}, rng_)});
      // Large enough for oneDNN's bf16 MatMul and the f32 library GEMM.
      check(name, {random_array(d, {m, 512}, rng_), random_array(d, {600, 512}, rng_)});
    }
    check("both_transposed", {random_array(DType::kF32, {40, m}, rng_), random_array(DType::kF32, {33, 40}, rng_)});
    check("scores", {random_array(DType::kF32, {3, m, 24}, rng_), random_array(DType::kF32, {3, 17, 24}, rng_)});
    check("heads_first", {random_array(DType::kF32, {m, 4, 24}, rng_), random_array(DType::kF32, {24, 9}, rng_)});
    check("rotated", {random_array(DType::kBF16, {24, 2, m}, rng_), random_array(DType::kBF16, {24, 9}, rng_)});
    check("computed", {random_array(DType::kF32, {m, 24}, rng_), random_array(DType::kF32, {9, 24}, rng_)});
    check("shared", {random_array(DType::kF32, {m + 3, m + 3}, rng_), random_array(DType::kF32, {m + 3, m + 3}, rng_)});
  }
}

}  // namespace
}  // namespace tf::comptest
