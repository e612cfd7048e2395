// Compiled vs evaluator on the fused patterns the native backend exists for
// (rmsnorm, residual + rmsnorm, SwiGLU, gelu-tanh, softmax, matmul), on
// several DimVar bindings, plus the compile-once and source-dump contracts.
#include <cstdlib>
#include <fstream>

#include "compiler_helpers.h"
#include "core/compiler/codegen.h"
#include "core/compiler/lane_partials.h"
#include "core/frontend/parser.h"
#include "core/ir/error.h"

namespace tf::comptest {
namespace {

const char* kSource = R"(from tilefoundry.dsl import *

N = DimVar("N", 1, 1 << 20)
D = DimVar("D", 1, 1 << 16)
K = DimVar("K", 1, 1 << 16)

@func
def rmsnorm(x: Tensor[(N, D), f32], w: Tensor[(D,), f32]) -> Tensor[(N, D), f32]:
    return rms_norm(x, w, eps=1e-6)

@func
def resnorm(x: Tensor[(N, D), f32], r: Tensor[(N, D), f32], w: Tensor[(D,), f32]) -> tuple[Tensor[(N, D), f32], Tensor[(N, D), f32]]:
    h = x + r
    return h, rms_norm(h, w, eps=1e-5)

@func
def swiglu(a: Tensor[(N, D), f32], b: Tensor[(N, D), f32]) -> Tensor[(N, D), f32]:
    return silu(a) * b

@func
def gelu_t(x: Tensor[(N, D), f32]) -> Tensor[(N, D), f32]:
    return gelu(x)

@func
def smax(x: Tensor[(N, D), f32]) -> Tensor[(N, D), f32]:
    return softmax(x)

@func
def mm(a: Tensor[(N, K), f32], b: Tensor[(K, D), f32]) -> Tensor[(N, D), f32]:
    return matmul(a, b)

@func
def rmsnorm64(x: Tensor[(N, D), f64], w: Tensor[(D,), f64]) -> Tensor[(N, D), f64]:
    return rms_norm(x * 2.0, w, eps=1e-6)

@func
def shared(x: Tensor[(N, D), f32], c: Tensor[(N, 1), f32]) -> Tensor[(N, D), f32]:
    e = exp(x - c)
    return e * e + softmax(e)

@func
def passthrough(x: Tensor[(N, D), f32]) -> tuple[Tensor[(N, D), f32], Tensor[(N, D), f32]]:
    y = relu(x)
    return x, y

@func
def resnorm16(x: Tensor[(N, D), bf16], r: Tensor[(N, D), bf16], w: Tensor[(D,), bf16]) -> tuple[Tensor[(N, D), bf16], Tensor[(N, D), bf16]]:
    h = x + r
    return h, rms_norm(h, w, eps=1e-5)

@func
def reslnorm(x: Tensor[(N, D), f32], r: Tensor[(N, D), f32], w: Tensor[(D,), f32], b: Tensor[(D,), f32]) -> tuple[Tensor[(N, D), f32], Tensor[(N, D), f32]]:
    h = x * 0.5 + r
    return layer_norm(h, w, b, eps=1e-5), h

@func
def reslnorm64(x: Tensor[(N, D), f64], r: Tensor[(N, D), f64], w: Tensor[(D,), f64], b: Tensor[(D,), f64]) -> tuple[Tensor[(N, D), f64], Tensor[(N, D), f64]]:
    h = x - r
    return h, layer_norm(h, w, b, eps=1e-6)

@func
def weight_reads_input(x: Tensor[(N, D), f32], r: Tensor[(N, D), f32]) -> tuple[Tensor[(N, D), f32], Tensor[(N, D), f32]]:
    h = x + r
    return h, rms_norm(h, sum(h, axes=0, keepdim=False), eps=1e-5)

@func
def acts(x: Tensor[(N, D), f32]) -> Tensor[(N, D), f32]:
    return tanh(sigmoid(x) * 2.0 - 1.0) + relu(x)

@func
def weighted(x: Tensor[(N, D), f32], w: Tensor[(D,), f32]) -> Tensor[(N, D), f32]:
    return silu(x) * w

@func
def scaled_softmax(x: Tensor[(N, D), f32], c: Tensor[(N, 1), f32]) -> Tensor[(N, D), f32]:
    s = (x - c) * 3.0
    return softmax(s) + s

@func
def masked(x: Tensor[(N, D), f32], m: Tensor[(N, D), bool], k: Tensor[(N, 1), bool]) -> tuple[Tensor[(N, D), f32], Tensor[(N, D), f32], Tensor[(N, D), f32]]:
    return where(m, x, -1e30), softmax(where(k, x * 2.0, x)), x * cast((m & (x > 0.0)) | k, f32)
)";

class FusedKernels : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { module_ = frontend::parse_module(kSource, "fused.tf"); }
  static ir::ModulePtr module_;

  void check(const std::string& name, const std::vector<std::vector<int64_t>>& shapes_small,
             const std::vector<std::vector<int64_t>>& shapes_large) {
    ir::FunctionPtr fn = module_->lookup(name);
    ASSERT_TRUE(fn);
    auto k = compiler::compile(*fn);
    const int64_t before = compiler::compiler_invocations();
    std::mt19937 rng(7);
    for (const auto* shapes : {&shapes_small, &shapes_large}) {
      std::vector<NDArray> in;
      for (size_t i = 0; i < shapes->size(); ++i)
        in.push_back(random_array(fn->params()[i]->type() ? std::static_pointer_cast<const ir::TensorType>(
                                                                 fn->params()[i]->type())->dtype()
                                                           : DType::kF32,
                                  (*shapes)[i], rng));
      expect_agree(*k, *module_, *fn, in, name);
    }
    // A new binding of N / D reuses the same code: no compiler run.
    EXPECT_EQ(compiler::compiler_invocations(), before) << name;
    EXPECT_EQ(compiler::compile(*fn)->key(), k->key());
    EXPECT_EQ(compiler::compiler_invocations(), before) << name << " recompiled";
  }
};
ir::ModulePtr FusedKernels::module_;

TEST_F(FusedKernels, RmsNorm) { check("rmsnorm", {{3, 5}, {5}}, {{37, 1000}, {1000}}); }
TEST_F(FusedKernels, ResidualRmsNorm) { check("resnorm", {{1, 7}, {1, 7}, {7}}, {{64, 4096}, {64, 4096}, {4096}}); }
TEST_F(FusedKernels, SwiGlu) { check("swiglu", {{2, 3}, {2, 3}}, {{9, 40000}, {9, 40000}}); }
TEST_F(FusedKernels, GeluTanh) { check("gelu_t", {{1, 1}}, {{100, 333}}); }
TEST_F(FusedKernels, SoftMax) { check("smax", {{4, 9}}, {{70, 2048}}); }
TEST_F(FusedKernels, MatMul) { check("mm", {{3, 4}, {4, 5}}, {{65, 33}, {33, 17}}); }
// Small f32 MatMuls run runtime/gemm.h's register-blocked loop (8 x 32
// tiles): every row remainder 1..8 and column remainder, k from 1, then a
// B too large for it and transposed operands (oneDNN).
TEST_F(FusedKernels, SmallMatMulTilesAndTheirRemainders) {
  for (int64_t m : {1, 7, 8, 9, 15, 23, 64})
    for (int64_t n : {1, 31, 32, 33, 100})
      for (int64_t k : {1, 5, 64, 257}) {
        std::mt19937 rng(static_cast<unsigned>(m * 1000003 + n * 1009 + k));
        ir::FunctionPtr fn = module_->lookup("mm");
        auto kern = compiler::compile(*fn);
        expect_agree(*kern, *module_, *fn, {random_array(DType::kF32, {m, k}, rng), random_array(DType::kF32, {k, n}, rng)},
                     "mm " + std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n));
      }
  check("mm", {{9, 700}, {700, 200}}, {{3, 300}, {300, 500}});  // k * n above the small-GEMM bound
  std::mt19937 rng(3);
  NDArray at = random_array(DType::kF32, {40, 33}, rng), b = random_array(DType::kF32, {40, 17}, rng);
  ir::FunctionPtr fn = module_->lookup("mm");
  expect_agree(*compiler::compile(*fn), *module_, *fn, {NDArray::view(at, {33, 40}, {1, 33}), b}, "mm of a transposed a");
}

TEST_F(FusedKernels, RmsNormF64WithInlinedScale) { check("rmsnorm64", {{2, 3}, {3}}, {{16, 513}, {513}}); }
TEST_F(FusedKernels, SharedValueWithTwoUsesAgrees) { check("shared", {{2, 3}, {2, 1}}, {{33, 700}, {33, 1}}); }
TEST_F(FusedKernels, ParameterReturnedAsOutputIsCopied) { check("passthrough", {{2, 3}}, {{5, 9}}); }

TEST_F(FusedKernels, StridedInputsAgree) {
  ir::FunctionPtr fn = module_->lookup("resnorm");
  auto k = compiler::compile(*fn);
  std::mt19937 rng(3);
  NDArray big = random_array(DType::kF32, {8, 64}, rng);
  // Every other column: inner stride 2, so the unit-stride fast path is off.
  NDArray x = NDArray::view(big, {8, 32}, {64, 2});
  NDArray r = random_array(DType::kF32, {8, 32}, rng);
  NDArray w = NDArray::view(random_array(DType::kF32, {32, 3}, rng), {32}, {3});
  expect_agree(*k, *module_, *fn, {x, r, w}, "strided resnorm");
}

// A row op whose input is an elementwise value that must also be stored (an
// output, or read again later) computes and stores it in its own first pass.
TEST_F(FusedKernels, RowOpProducesItsStoredInput) {
  check("resnorm16", {{1, 7}, {1, 7}, {7}}, {{33, 2048}, {33, 2048}, {2048}});
  check("reslnorm", {{2, 5}, {2, 5}, {5}, {5}}, {{40, 3000}, {40, 3000}, {3000}, {3000}});
  check("reslnorm64", {{2, 5}, {2, 5}, {5}, {5}}, {{17, 999}, {17, 999}, {999}, {999}});
  check("scaled_softmax", {{3, 4}, {3, 1}}, {{50, 1025}, {50, 1}});  // s is read again after the row stage
  check("weight_reads_input", {{3, 4}, {3, 4}}, {{20, 300}, {20, 300}});  // not fused: w's stage reads h first
}

// A large produced row (of a stage that moves 24 MiB or more, as these
// tests pin the cache) is computed into a scratch row in the first pass and
// streamed out of it; the store pass reads the scratch row.
TEST_F(FusedKernels, ALargeProducedRowStreamsOutOfAScratchRow) {
  const std::string tir = compiler::generate(*module_->lookup("resnorm")).tir;
  EXPECT_NE(tir.find("allocate hb: f32[8192] local {"), std::string::npos) << tir;
  EXPECT_NE(tir.find("hb[j] = (x0[j] + x1[j])"), std::string::npos) << tir;
  EXPECT_NE(tir.find("@tf_stream(&hrow[c0], &hb[c0], (c1 - c0))"), std::string::npos) << tir;
  EXPECT_NE(tir.find("(hb[j] * inv0)"), std::string::npos) << tir;
  check("resnorm", {{2, 7}, {2, 7}, {7}}, {{1024, 4096}, {1024, 4096}, {4096}});
  check("reslnorm", {{2, 5}, {2, 5}, {5}, {5}}, {{1024, 4096}, {1024, 4096}, {4096}, {4096}});
  check("reslnorm64", {{2, 5}, {2, 5}, {5}, {5}}, {{512, 4096}, {512, 4096}, {4096}, {4096}});
}

TEST_F(FusedKernels, NnActivationsAgree) { check("acts", {{2, 3}}, {{40, 1000}}); }

TEST_F(FusedKernels, FusedPatternsAreOneStage) {
  std::string dir = ::testing::TempDir() + "/tf_resnorm_dump_" + std::to_string(::getpid());
  for (const char* name : {"resnorm", "reslnorm", "scaled_softmax", "acts"}) {
    setenv("TF_DUMP_DIR", dir.c_str(), 1);
    auto k = compiler::compile(*module_->lookup(name));
    unsetenv("TF_DUMP_DIR");
    std::ifstream f(dir + "/" + name + "." + k->key() + ".cc");
    std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    size_t stages = 0;
    for (size_t at = text.find("// stage:"); at != std::string::npos; at = text.find("// stage:", at + 1)) ++stages;
    // scaled_softmax: s is cheap, so the row stage recomputes it for its
    // max, its sum and softmax(s) + s.
    EXPECT_EQ(stages, 1u) << name << "\n" << text.substr(text.find("TF_ENTRY("));
  }
}

TEST_F(FusedKernels, ElementwiseStagesMovingMostOfTheCachePrefetchTheirInputsAhead) {
  auto tir = [&](const char* name) { return compiler::generate(*module_->lookup(name)).tir; };
  // silu(a) * b moves 12 bytes per element: the flag holds from three
  // quarters of the last-level cache, on a core that wants its ascending
  // runs prefetched.
  const std::string sw = tir("swiglu");
  EXPECT_NE(sw.find("let pf: bool = ((((outer * inner) * 12) >= @tf_prefetch_min_bytes()) && @tf_prefetch_streams())"),
            std::string::npos)
      << sw;
  // Both inputs, one prefetch per 64-byte line, 64 KiB past the chunk, into
  // L2; only in the streamed copies of the loop (unit strides or not, one
  // or several threads), and in the general-stride ones only where the
  // leaf's own stride is 1.
  EXPECT_EQ(count(sw, "@__builtin_prefetch(&x0[(16384 + (c0 + (p * 16)))], i32(0), i32(2))"), 4) << sw;
  EXPECT_EQ(count(sw, "@__builtin_prefetch(&x1[(16384 + (c0 + (p_1 * 16)))], i32(0), i32(2))"), 4) << sw;
  EXPECT_EQ(count(sw, "if ((pf && (is0 == 1))) {"), 2) << sw;
  EXPECT_EQ(count(sw, "@__builtin_prefetch("), 8) << sw;
  // A weight row of lower rank is read from cache each row: not fetched,
  // and not counted in the bytes moved.
  const std::string wt = tir("weighted");
  EXPECT_NE(wt.find("let pf: bool = ((((outer * inner) * 8) >= @tf_prefetch_min_bytes()) && @tf_prefetch_streams())"),
            std::string::npos)
      << wt;
  EXPECT_EQ(count(wt, "@__builtin_prefetch(&x0["), 4) << wt;
  EXPECT_EQ(count(wt, "@__builtin_prefetch("), 4) << wt;
  // Row stages prefetch their next row instead (its own flagless form).
  const std::string rms = tir("rmsnorm");
  EXPECT_EQ(rms.find("let pf:"), std::string::npos) << rms;
  // With the cache pinned at 32 MiB, 6M elements move 48 MiB: streamed,
  // and prefetched where the core wants its ascending runs prefetched.
  check("weighted", {{3, 5}, {5}}, {{1536, 4096}, {4096}});
}

TEST_F(FusedKernels, RowReductionsKeepTheirPartialsInLanesAcrossChunks) {
  auto tir = [&](const char* name) { return compiler::generate(*module_->lookup(name)).tir; };
  const std::string n = std::to_string(compiler::reduce_lanes());
  // A sum of squares in doubles: partials kept across the row's chunks,
  // folded once where the row holds a whole block of them.
  const std::string rms = tir("rmsnorm");
  EXPECT_NE(rms.find("allocate acc0_lanes: f64[" + n + "] local {"), std::string::npos) << rms;
  EXPECT_NE(rms.find("if ((inner >= " + n + ")) {\n"), std::string::npos) << rms;
  EXPECT_NE(rms.find("acc0 = (acc0 + tf_lanes_add(&acc0_lanes[0], " + n + "))"), std::string::npos) << rms;
  // A maximum in floats beside its count of NaN elements.
  const std::string sm = tir("smax");
  EXPECT_NE(sm.find("acc0 = max(acc0, tf_lanes_max(&acc0_lanes[0], " + n + "))"), std::string::npos) << sm;
  EXPECT_NE(sm.find("allocate nans0_lanes: i32[" + n + "] local {"), std::string::npos) << sm;
  // LayerNorm's two sums, in one pass.
  const std::string ln = tir("reslnorm");
  EXPECT_NE(ln.find("tf_lanes_add(&acc0_lanes[0], " + n + ")"), std::string::npos) << ln;
  EXPECT_NE(ln.find("tf_lanes_add(&acc1_lanes[0], " + n + ")"), std::string::npos) << ln;
  // Rows short of a block, a block and one more, a chunk and one more,
  // and several chunks with a remainder, on each kind of partial.
  for (const auto& [a, b] : std::vector<std::pair<int64_t, int64_t>>{{1, 31}, {32, 33}, {256, 257}, {1000, 4103}}) {
    check("rmsnorm", {{3, a}, {a}}, {{5, b}, {b}});
    check("smax", {{3, a}}, {{5, b}});
    check("reslnorm", {{3, a}, {3, a}, {a}, {a}}, {{5, b}, {5, b}, {b}, {b}});
    check("resnorm16", {{3, a}, {3, a}, {a}}, {{5, b}, {5, b}, {b}});
  }
}

TEST_F(FusedKernels, StreamedStoresLeaveALineAtATime) {
  auto tir = [&](const char* name) { return compiler::generate(*module_->lookup(name)).tir; };
  // A streamed stage computes each 64-byte line of its output into a line
  // buffer and streams it at once, rather than a whole chunk and then one
  // burst of stores; the elements before the row's first line boundary
  // and after its last are stored plainly. In each of the four streamed
  // copies of the loop (unit strides or not, one or several threads).
  const std::string sw = tir("swiglu");
  EXPECT_EQ(count(sw, "let lh: i64 = @tf_line_head(&y[c0], (c1 - c0))"), 4) << sw;
  EXPECT_EQ(count(sw, "for (l, 0, nl) serial {"), 4) << sw;
  EXPECT_EQ(count(sw, "allocate line: f32[16] local {"), 4) << sw;
  EXPECT_EQ(count(sw, "@tf_stream_line(&y[b0], line)"), 4) << sw;
  EXPECT_EQ(count(sw, "@tf_stream("), 0) << sw;
  // A row stage's store pass alike (f64: lines of 8).
  const std::string rms = tir("rmsnorm64");
  EXPECT_GT(count(rms, "allocate line: f64[8] local {"), 0) << rms;
  EXPECT_EQ(count(rms, "allocate line: f64[8] local {"), count(rms, "@tf_stream_line(&y[b0], line)")) << rms;
  // gelu's chunk routine reads the input row where it lies (no copy into
  // an L1 buffer first) and streams its own lines as it computes them.
  const std::string ge = tir("gelu_t");
  EXPECT_EQ(count(ge, "@tf_gelu_tanh_stream_n(&y[c0], &x0[c0], 1, (c1 - c0))"), 2) << ge;
  EXPECT_EQ(count(ge, "@tf_gelu_tanh_stream_n(&y[c0], &x0[(c0 * is0)], is0, (c1 - c0))"), 2) << ge;
  EXPECT_EQ(count(ge, "allocate tb0"), 0) << ge;
  EXPECT_EQ(count(ge, "@tf_stream_line("), 0) << ge;
  // Streamed shapes (the cache pinned at 32 MiB: stages that move 24 MiB
  // or more), rows of whole lines and rows of 2049 floats, whose chunks start
  // off a line boundary.
  check("swiglu", {{2048, 2048}, {2048, 2048}}, {{2049, 2049}, {2049, 2049}});
  check("gelu_t", {{2048, 2048}}, {{2049, 2049}});
  check("rmsnorm64", {{1024, 2048}, {2048}}, {{1025, 2049}, {2049}});
}

// A mask's where is a blend: the mask is read as bytes (GCC vectorizes no
// loop that loads a bool) and both values are computed (tf_where), so no
// element branches around a load; logical and / or compute both operands
// too (tf_land, tf_lor), and a mask converts to float from its byte.
// Agreement on a streamed shape too, whose line loops are where the
// branches were (a random mask: 9x the time of the blend through
// torch.ops).
TEST_F(FusedKernels, AMaskIsReadAsBytesAndBothValuesComputed) {
  const std::string body = compiler::generate(*module_->lookup("masked")).body;
  EXPECT_GT(count(body, "tf_where<float>(reinterpret_cast<const uint8_t*>("), 0) << body;
  EXPECT_GT(count(body, "tf_lor((tf_land("), 0) << body;
  EXPECT_GT(count(body, "((float)(tf_lor("), 0) << body;
  EXPECT_EQ(count(body, "[j] ?"), 0) << body;
  check("masked", {{3, 5}, {3, 5}, {3, 1}}, {{2049, 2049}, {2049, 2049}, {2049, 1}});
}

TEST_F(FusedKernels, StagesOfExpLikeWorkForkFromFewerElements) {
  auto tir = [&](const char* name) { return compiler::generate(*module_->lookup(name)).tir; };
  // Every parallel loop is taken only when the call has more than one
  // thread; below the threshold, or with one thread, its serial twin runs.
  const std::string fork = " && (@tf_threads() > 1))) {\n";
  // An elementwise stage calling an exp-like function forks from 8192
  // elements, a plain one from 65536.
  for (const char* name : {"swiglu", "gelu_t"})
    EXPECT_NE(tir(name).find("if ((((outer * inner) >= 8192)" + fork), std::string::npos) << tir(name);
  const std::string relu = tir("passthrough");
  EXPECT_NE(relu.find("if ((((outer * inner) >= 65536)" + fork), std::string::npos) << relu;
  EXPECT_EQ(relu.find(">= 8192)"), std::string::npos) << relu;
  // Row stages likewise: softmax from 8192, RMSNorm from 32768.
  EXPECT_NE(tir("smax").find("if ((((outer * inner) >= 8192)" + fork), std::string::npos) << tir("smax");
  const std::string rms = tir("rmsnorm");
  EXPECT_NE(rms.find("if ((((outer * inner) >= 32768)" + fork), std::string::npos) << rms;
  EXPECT_EQ(rms.find(">= 8192)"), std::string::npos) << rms;
}

TEST_F(FusedKernels, DumpDirReceivesTheSource) {
  std::string dir = ::testing::TempDir() + "/tf_dump_" + std::to_string(::getpid());
  setenv("TF_DUMP_DIR", dir.c_str(), 1);
  auto k = compiler::compile(*module_->lookup("swiglu"));
  unsetenv("TF_DUMP_DIR");
  std::ifstream f(dir + "/swiglu." + k->key() + ".cc");
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("tf_silu<float>"), std::string::npos) << "dumped source lacks the fused silu";
  EXPECT_NE(text.find("extern \"C\" int TF_ENTRY"), std::string::npos);
  // Next to it, the TIR the stage was printed from.
  std::ifstream t(dir + "/swiglu." + k->key() + ".tir");
  std::string tir((std::istreambuf_iterator<char>(t)), std::istreambuf_iterator<char>());
  EXPECT_NE(tir.find("// stage: Binary -> slot 2"), std::string::npos) << tir;
  EXPECT_NE(tir.find(") parallel {"), std::string::npos) << tir;
  EXPECT_NE(tir.find(") serial {"), std::string::npos) << tir;  // its one-thread twin
  EXPECT_NE(tir.find("tf_silu<f32>("), std::string::npos) << tir;
  // Small extents skip the OpenMP runtime: each parallel stage loop has a
  // serial twin chosen by the size threshold and the team size (libgomp
  // builds a team even when an `if` clause is false, which dominated a
  // 1-element call).
  size_t body = text.find("extern \"C\" int TF_ENTRY");
  std::string entry = text.substr(body);
  const size_t branch = entry.find(">= INT64_C(8192)) && (tf_threads() > INT64_C(1)))) {\n");
  ASSERT_NE(branch, std::string::npos) << entry;
  // Inside it, past the branches on the stage's flags (one copy of the
  // loop per value: unswitched), the parallel loop.
  const std::string pragma = "#pragma omp parallel for schedule(static)\n";
  size_t next = entry.find_first_not_of(' ', entry.find('\n', branch) + 1);
  while (entry.compare(next, 4, "if (") == 0) next = entry.find_first_not_of(' ', entry.find('\n', next) + 1);
  EXPECT_EQ(entry.compare(next, pragma.size(), pragma), 0) << entry;
  EXPECT_NE(entry.find("} else {"), std::string::npos) << entry;
  EXPECT_EQ(entry.find("#pragma omp parallel for schedule(static) if ("), std::string::npos) << entry;
}

TEST(CompilerErrors, UnsupportedOpIsReportedAsUnsupported) {
  // local(x) has no single-device meaning (the evaluator refuses it too), so
  // it stays the op the code generator does not compile.
  ir::ModulePtr m = frontend::parse_module(R"(from tilefoundry.dsl import *
TARGET = Target("cpu", topology=(("device", 1), ("cta", 4)))

@func
def g(a: Tensor[(8, 16), f32]) -> Tensor[(2, 16), f32, Layout((1, 2, 16), strides=(0, 16, 1))]:
    with Mesh(topology="cta", shape=(4,), axes=("x",)) as m:
        s = reshard(a, layout=ShardLayout(m, (Split(axis=0),)))
        y = local(s)
    return y
)", "g.tf");
  try {
    compiler::compile(*m->lookup("g"));
    ADD_FAILURE() << "Local compiled";
  } catch (const ir::Error& e) {
    EXPECT_EQ(e.kind(), ir::ErrorKind::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("Local"), std::string::npos) << e.what();
  }
}

TEST(CompilerCache, KernelIsCachedUnderTfCacheDir) {
  ir::ModulePtr m = frontend::parse_module(R"(from tilefoundry.dsl import *
@func
def f(x: Tensor[(3,), f32]) -> Tensor[(3,), f32]:
    return x * 3.5 + 0.25
)", "f.tf");
  std::string dir = ::testing::TempDir() + "/tf_nocc_" + std::to_string(::getpid());
  setenv("TF_CACHE_DIR", dir.c_str(), 1);
  auto k = compiler::compile(*m->lookup("f"));
  unsetenv("TF_CACHE_DIR");
  std::ifstream so(dir + "/" + k->key() + ".so");
  EXPECT_TRUE(so.good()) << "the kernel was not cached under TF_CACHE_DIR";
}

}  // namespace
}  // namespace tf::comptest
