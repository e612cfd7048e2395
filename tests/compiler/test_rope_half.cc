// Compiled vs evaluator for the multi-output RoPE stage (both outputs from
// one loop nest, a projection feeding a fused elementwise stage, an unused
// projection, i32 / i64 positions, strided inputs, out-of-range positions)
// and for f16 / bf16 inside the row ops (RMSNorm, SoftMax, LayerNorm) and
// reductions, which compute in float and round where the evaluator rounds.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>

#include "compiler_helpers.h"
#include "core/compiler/codegen.h"
#include "core/frontend/parser.h"
#include "core/ir/error.h"

namespace tf::comptest {
namespace {

const char* kSource = R"(from tilefoundry.dsl import *

B = DimVar("B", 1, 64)
S = DimVar("S", 1, 4096)
H = DimVar("H", 1, 64)
G = DimVar("G", 1, 64)
D = DimVar("D", 2, 512)
P = DimVar("P", 1, 8192)
N = DimVar("N", 1, 1 << 20)
E = DimVar("E", 1, 1 << 16)

@func
def rope32(q: Tensor[(B, S, H, D), f32], k: Tensor[(B, S, G, D), f32], c: Tensor[(P, D), f32], s: Tensor[(P, D), f32], p: Tensor[(B, S), i64]) -> tuple[Tensor[(B, S, H, D), f32], Tensor[(B, S, G, D), f32]]:
    return rope(q, k, c, s, p)

@func
def rope_swap(q: Tensor[(B, S, H, D), f64], k: Tensor[(B, S, H, D), f64], c: Tensor[(P, D), f64], s: Tensor[(P, D), f64], p: Tensor[(B, S), i32]) -> tuple[Tensor[(B, S, H, D), f64], Tensor[(B, S, H, D), f64]]:
    t = rope(q, k, c, s, p)
    return t[1], t[0]

@func
def rope_scaled(q: Tensor[(B, S, H, D), f32], k: Tensor[(B, S, H, D), f32], c: Tensor[(P, D), f32], s: Tensor[(P, D), f32], p: Tensor[(B, S), i64]) -> Tensor[(B, S, H, D), f32]:
    qr, kr = rope(q * 0.5, k, c, s, p)
    return qr * 2.0 + 1.0

@func
def rope16(q: Tensor[(B, S, H, D), f16], k: Tensor[(B, S, H, D), f16], c: Tensor[(P, D), f16], s: Tensor[(P, D), f16], p: Tensor[(B, S), i64]) -> tuple[Tensor[(B, S, H, D), f16], Tensor[(B, S, H, D), f16]]:
    return rope(q, k, c, s, p)

@func
def ropeb16(q: Tensor[(B, S, H, D), bf16], k: Tensor[(B, S, H, D), bf16], c: Tensor[(P, D), bf16], s: Tensor[(P, D), bf16], p: Tensor[(B, S), i32]) -> tuple[Tensor[(B, S, H, D), bf16], Tensor[(B, S, H, D), bf16]]:
    return rope(q, k, c, s, p)

@func
def rms16(x: Tensor[(N, E), f16], r: Tensor[(N, E), f16], w: Tensor[(E,), f16]) -> Tensor[(N, E), f16]:
    return rms_norm(x + r, w, eps=1e-6)

@func
def rmsb16(x: Tensor[(N, E), bf16], w: Tensor[(E,), bf16]) -> Tensor[(N, E), bf16]:
    return rms_norm(x, w, eps=1e-5)

@func
def smax16(x: Tensor[(N, E), f16]) -> Tensor[(N, E), f16]:
    return softmax(x * 3.0)

@func
def smaxb16(x: Tensor[(N, E), bf16]) -> Tensor[(N, E), bf16]:
    return softmax(x)

@func
def ln16(x: Tensor[(N, E), bf16], w: Tensor[(E,), bf16], b: Tensor[(E,), bf16]) -> Tensor[(N, E), bf16]:
    return layer_norm(x, w, b, eps=1e-5)

@func
def lnf16(x: Tensor[(N, E), f16], w: Tensor[(E,), f16], b: Tensor[(E,), f16]) -> Tensor[(N, E), f16]:
    return layer_norm(x, w, b, eps=1e-5)

@func
def red16(x: Tensor[(N, E), f16]) -> tuple[Tensor[(N,), f16], Tensor[(N, 1), f16], Tensor[(N,), f16], Tensor[(N,), f16]]:
    return sum(x, axes=-1, keepdim=False), mean(x, axes=-1), amax(x, axes=-1, keepdim=False), abs_max(x, axes=-1, keepdim=False)

@func
def redb16(x: Tensor[(N, E), bf16]) -> tuple[Tensor[(N,), bf16], Tensor[(N, 1), bf16]]:
    return sum(x, axes=-1, keepdim=False), mean(x * 2.0, axes=-1)

@func
def smax32(x: Tensor[(N, E), f32]) -> Tensor[(N, E), f32]:
    return softmax(x)

@func
def gelu32(x: Tensor[(N, E), f32], y: Tensor[(N, E), f32]) -> tuple[Tensor[(N, E), f32], Tensor[(N, E), f32]]:
    return gelu(x, approximate="tanh"), gelu(gelu(x * y, approximate="tanh"), approximate="tanh") * y + gelu(y, approximate="tanh")

@func
def gelu16(x: Tensor[(N, E), f16], y: Tensor[(N, E), f16]) -> tuple[Tensor[(N, E), f16], Tensor[(N, E), f16]]:
    return gelu(x, approximate="tanh"), gelu(x, approximate="tanh") * y

@func
def gelub16(x: Tensor[(N, E), bf16]) -> Tensor[(N, E), bf16]:
    return gelu(x, approximate="tanh")

@func
def gelu_sum(x: Tensor[(N, E), f32], y: Tensor[(N, E), f32]) -> Tensor[(N, E), f32]:
    return gelu(x + y, approximate="tanh")

@func
def gelu_cached(x: Tensor[(N, E), f32]) -> Tensor[(N, E), f32]:
    e = exp(x - amax(x, axes=-1))
    return gelu(gelu(e, approximate="tanh"), approximate="tanh") * sum(e, axes=-1)

@func
def gelu_cached_h(x: Tensor[(N, E), f32]) -> Tensor[(N, E), f32]:
    e = exp(x - amax(x, axes=-1))
    return cast(cast(gelu(e, approximate="tanh"), f16), f32) * sum(e, axes=-1)

@func
def narrow16(x: Tensor[(N,), f32]) -> tuple[Tensor[(N,), f16], Tensor[(N,), bf16]]:
    return cast(x, f16), cast(x, bf16)

@func
def widen16(h: Tensor[(N,), f16], b: Tensor[(N,), bf16]) -> tuple[Tensor[(N,), f32], Tensor[(N,), f32]]:
    return cast(h, f32), cast(b, f32)

@func
def trip16(x: Tensor[(N,), f32]) -> tuple[Tensor[(N,), f32], Tensor[(N,), f32], Tensor[(N,), f32]]:
    return cast(cast(x, f16), f32), cast(cast(x, bf16), f32), cast(cast(x, f16), f32) * 0.5

@func
def chain16(x: Tensor[(N,), f32], y: Tensor[(N,), f32]) -> tuple[Tensor[(N,), f16], Tensor[(N,), bf16]]:
    a = cast(x, f16)
    b = cast(y, f16)
    c = cast(x, bf16)
    d = cast(y, bf16)
    return (a * 3.0 + b) * b, (c * 3.0 + d) * d
)";

class RopeHalf : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { module_ = frontend::parse_module(kSource, "rope_half.tf"); }
  static ir::ModulePtr module_;

  const ir::Function& fn(const std::string& name) {
    ir::FunctionPtr f = module_->lookup(name);
    EXPECT_TRUE(f) << name;
    return *f;
  }
  static DType dtype_of(const ir::Function& f, size_t i) {
    return std::static_pointer_cast<const ir::TensorType>(f.params()[i]->type())->dtype();
  }
  // Positions uniform in [0, P).
  static NDArray positions(DType d, int64_t b, int64_t s, int64_t p, std::mt19937& rng) {
    NDArray a = NDArray::empty(d, {b, s});
    for (int64_t i = 0; i < a.numel(); ++i) {
      int64_t v = static_cast<int64_t>(rng() % static_cast<uint32_t>(p));
      if (d == DType::kI32) static_cast<int32_t*>(a.data())[i] = static_cast<int32_t>(v);
      else static_cast<int64_t*>(a.data())[i] = v;
    }
    return a;
  }
  std::vector<NDArray> rope_inputs(const ir::Function& f, int64_t b, int64_t s, int64_t h, int64_t g, int64_t d,
                                   int64_t p, std::mt19937& rng) {
    const DType t = dtype_of(f, 0);
    return {random_array(t, {b, s, h, d}, rng), random_array(t, {b, s, g, d}, rng), random_array(t, {p, d}, rng),
            random_array(t, {p, d}, rng), positions(dtype_of(f, 4), b, s, p, rng)};
  }
  void check_rope(const std::string& name, bool distinct_heads = false) {
    const ir::Function& f = fn(name);
    auto k = compiler::compile(f);
    const int64_t before = compiler::compiler_invocations();
    std::mt19937 rng(17);
    expect_agree(*k, *module_, f, rope_inputs(f, 1, 1, 1, 1, 2, 1, rng), name + " tiny");
    expect_agree(*k, *module_, f, rope_inputs(f, 2, 3, 4, distinct_heads ? 2 : 4, 8, 5, rng), name + " small");
    expect_agree(*k, *module_, f, rope_inputs(f, 2, 64, 8, distinct_heads ? 3 : 8, 128, 100, rng), name + " large");
    EXPECT_EQ(compiler::compiler_invocations(), before) << name << " recompiled for new extents";
  }
  void check(const std::string& name, const std::vector<std::vector<int64_t>>& shapes) {
    const ir::Function& f = fn(name);
    auto k = compiler::compile(f);
    std::mt19937 rng(23);
    std::vector<NDArray> in;
    for (size_t i = 0; i < shapes.size(); ++i) in.push_back(random_array(dtype_of(f, i), shapes[i], rng));
    expect_agree(*k, *module_, f, in, name);
  }
};
ir::ModulePtr RopeHalf::module_;

TEST_F(RopeHalf, RopeF32BothOutputsDistinctHeadCounts) { check_rope("rope32", true); }
TEST_F(RopeHalf, RopeF64SwappedProjectionsI32Positions) { check_rope("rope_swap"); }
TEST_F(RopeHalf, RopeProjectionFeedsAFusedStage) { check_rope("rope_scaled"); }
TEST_F(RopeHalf, RopeF16) { check_rope("rope16"); }
TEST_F(RopeHalf, RopeBF16) { check_rope("ropeb16"); }

TEST_F(RopeHalf, RopeIsOneStageForBothOutputs) {
  std::string dir = ::testing::TempDir() + "/tf_rope_dump_" + std::to_string(::getpid());
  setenv("TF_DUMP_DIR", dir.c_str(), 1);
  auto k = compiler::compile(fn("rope32"));
  unsetenv("TF_DUMP_DIR");
  std::ifstream src(dir + "/rope32." + k->key() + ".cc");
  std::string text((std::istreambuf_iterator<char>(src)), std::istreambuf_iterator<char>());
  size_t stages = 0;
  for (size_t at = text.find("// stage:"); at != std::string::npos; at = text.find("// stage:", at + 1)) ++stages;
  EXPECT_EQ(stages, 1u) << "RoPE should be one loop nest writing both outputs";
  EXPECT_NE(text.find("stage: rope -> slots 5, 6"), std::string::npos);
}

TEST_F(RopeHalf, LargeRopeOutputsStreamPastTheCache) {
  // An f32 / f64 output of a rope that moves three quarters of the
  // last-level cache or more (q and k read, both outputs written: 24 MiB as
  // these tests pin it) streams each head's row a 64-byte line at a time as
  // it computes it, each task fencing once; f16 / bf16 outputs are stored
  // as they are.
  const std::string tir = compiler::generate(fn("rope32")).tir;
  EXPECT_NE(tir.find("let nt_q: bool = ((((Bn * Sn) * ((sh0[2] + sh1[2]) * D)) * 8) >= @tf_stream_min_bytes())"),
            std::string::npos) << tir;
  EXPECT_NE(tir.find("let nt_k: bool = ((((Bn * Sn) * ((sh0[2] + sh1[2]) * D)) * 8) >= @tf_stream_min_bytes())"),
            std::string::npos) << tir;
  // Both halves of each streamed head's row, and one fence per task's loop
  // over heads, in every copy of the loop (unswitched per flag, and a
  // one-thread twin); no chunk streamed as a burst.
  const int q_rows = count(tir, "@tf_line_head(&yr[0], half)"), k_rows = count(tir, "@tf_line_head(&yr_1[0], half)");
  EXPECT_GT(q_rows, 0) << tir;
  EXPECT_GT(k_rows, 0) << tir;
  EXPECT_EQ(count(tir, "@tf_line_head(&yr[half], (D - half))"), q_rows) << tir;
  EXPECT_EQ(count(tir, "@tf_line_head(&yr_1[half], (D - half))"), k_rows) << tir;
  EXPECT_EQ(count(tir, "@tf_stream_line(&yr["), 2 * q_rows) << tir;
  EXPECT_EQ(count(tir, "@tf_stream_line(&yr_1["), 2 * k_rows) << tir;
  EXPECT_EQ(count(tir, "@tf_stream("), 0) << tir;
  // (Each loop over heads has two forms of the row: unit strides or not.)
  EXPECT_EQ(q_rows + k_rows, 2 * count(tir, "@tf_stream_fence()")) << tir;
  EXPECT_EQ(count(compiler::generate(fn("rope16")).tir, "tf_stream"), 0);
  // Where an input's rows are also consecutive, each streamed
  // head's row first prefetches the lines 64 KiB past its input row into
  // L2, as an elementwise stage does; only in the streamed copies.
  EXPECT_NE(tir.find("let pf_q: bool = (((((Bn * Sn) * ((sh0[2] + sh1[2]) * D)) * 8) >= @tf_prefetch_min_bytes()) && "
                     "(((st0[3] == 1) && (st0[2] == D)) && (st0[1] == (sh0[2] * D))))"),
            std::string::npos) << tir;
  EXPECT_NE(tir.find("let pf_k: bool = (((((Bn * Sn) * ((sh0[2] + sh1[2]) * D)) * 8) >= @tf_prefetch_min_bytes()) && "
                     "(((st1[3] == 1) && (st1[2] == D)) && (st1[1] == (sh1[2] * D))))"),
            std::string::npos) << tir;
  const int q_prefetches = count(tir, "@__builtin_prefetch(&xr[(16384 + (p_1 * 16))], i32(0), i32(2))");
  const int k_prefetches = count(tir, "@__builtin_prefetch(&xr_1[(16384 + (p_2 * 16))], i32(0), i32(2))");
  EXPECT_GT(q_prefetches, 0) << tir;
  EXPECT_GT(k_prefetches, 0) << tir;
  // At most one per streamed row (none in a copy where the flag was
  // unswitched to false).
  EXPECT_LE(q_prefetches, q_rows) << tir;
  EXPECT_LE(k_prefetches, k_rows) << tir;
  EXPECT_EQ(count(tir, "@__builtin_prefetch("), q_prefetches + k_prefetches) << tir;
  EXPECT_EQ(count(compiler::generate(fn("rope16")).tir, "__builtin_prefetch"), 0);
  // Streamed (1024 rows of 32 heads x 128: 64 MiB moved) and, with rows
  // of 384, too; both agree with the evaluator.
  const ir::Function& f = fn("rope32");
  auto k = compiler::compile(f);
  std::mt19937 rng(37);
  expect_agree(*k, *module_, f, rope_inputs(f, 1, 1024, 32, 32, 128, 2048, rng), "streamed rope");
  expect_agree(*k, *module_, f, rope_inputs(f, 1, 512, 32, 1, 384, 600, rng), "rope of long rows");
  // Streamed in rows of 100 (each head's row starts off a line boundary:
  // plain stores at both ends of each half).
  expect_agree(*k, *module_, f, rope_inputs(f, 1, 1024, 42, 8, 100, 2048, rng), "streamed rows off line boundaries");
}

TEST_F(RopeHalf, RopeStridedInputs) {
  const ir::Function& f = fn("rope32");
  auto k = compiler::compile(f);
  std::mt19937 rng(29);
  std::vector<NDArray> in = rope_inputs(f, 2, 3, 2, 2, 6, 4, rng);
  NDArray wide = random_array(DType::kF32, {2, 3, 2, 12}, rng);
  in[0] = NDArray::view(wide, {2, 3, 2, 6}, {72, 24, 12, 2});  // every other element of D
  NDArray ct = random_array(DType::kF32, {6, 4}, rng);
  in[2] = NDArray::view(ct, {4, 6}, {1, 4});  // a transposed cache
  expect_agree(*k, *module_, f, in, "strided rope");
}

TEST_F(RopeHalf, RopePositionOutOfRangeIsARuntimeError) {
  const ir::Function& f = fn("rope32");
  auto k = compiler::compile(f);
  // The positions are a parameter: they are checked before anything is
  // written, so callers may compute straight into their outputs.
  EXPECT_FALSE(k->may_fail());
  std::mt19937 rng(31);
  std::vector<NDArray> in = rope_inputs(f, 2, 3, 1, 1, 4, 5, rng);
  static_cast<int64_t*>(in[4].data())[4] = 5;   // == P
  static_cast<int64_t*>(in[4].data())[5] = -1;  // later in (b, s) order: not the one reported
  for (auto run : {std::function<void()>([&] { run_native(*k, f, in); }),
                   std::function<void()>([&] { eval::evaluate(*module_, f, in); })}) {
    try {
      run();
      ADD_FAILURE() << "no error";
    } catch (const ir::Error& e) {
      EXPECT_EQ(e.kind(), ir::ErrorKind::kRuntime) << e.what();
      EXPECT_NE(std::string(e.what()).find("pos_ids value 5 is out of range for caches of length 5"),
                std::string::npos)
          << e.what();
    }
  }
  // A failing run leaves preallocated outputs exactly as they were.
  std::vector<sema::ArgDesc> descs;
  for (const NDArray& a : in) descs.push_back({a.dtype(), a.shape()});
  ir::DimBindings b = sema::bind_arguments(f, descs);
  std::vector<NDArray> outs, before;
  for (const sema::ArgDesc& d : sema::output_descs(f, b)) {
    outs.push_back(random_array(d.dtype, d.shape, rng));
    before.push_back(random_array(d.dtype, d.shape, rng));
    std::memcpy(before.back().data(), outs.back().data(), static_cast<size_t>(outs.back().numel()) * sizeof(float));
  }
  EXPECT_THROW(k->run(in, outs, b), ir::Error);
  for (size_t i = 0; i < outs.size(); ++i)
    EXPECT_EQ(std::memcmp(before[i].data(), outs[i].data(), static_cast<size_t>(outs[i].numel()) * sizeof(float)), 0)
        << "output #" << i << " was written by a failing run";
}

TEST_F(RopeHalf, HalfRmsNorm) {
  check("rms16", {{3, 5}, {3, 5}, {5}});
  check("rms16", {{33, 4096}, {33, 4096}, {4096}});
  check("rmsb16", {{7, 1000}, {1000}});
}
TEST_F(RopeHalf, HalfSoftMax) {
  check("smax16", {{4, 9}});
  check("smax16", {{20, 2048}});
  check("smaxb16", {{20, 3000}});
}
TEST_F(RopeHalf, HalfLayerNorm) {
  check("ln16", {{5, 129}, {129}, {129}});
  check("lnf16", {{9, 1024}, {1024}, {1024}});
}
// Rows past the float row SoftMax keeps in a stack buffer (kRowScratch,
// 8192) take the other path; odd lengths leave chunk tails.
TEST_F(RopeHalf, SoftMaxLongRows) {
  check("smax32", {{3, 8193}});
  check("smax32", {{2, 20000}});
  check("smax32", {{5, 4099}});
  check("smax16", {{2, 9000}});
  check("smaxb16", {{3, 8192}});
}
// Gelu (tanh) in elementwise stages is computed a chunk at a time
// (tf_gelu_tanh_n): lengths around the chunk and the vector width, nested
// and repeated calls, computed arguments, strided inputs.
TEST_F(RopeHalf, GeluChunks) {
  for (int64_t e : {1, 15, 17, 255, 256, 257, 1000}) check("gelu32", {{3, e}, {3, e}});
  for (int64_t e : {1, 17, 256, 257, 1000}) check("gelu_sum", {{3, e}, {3, e}});
  // A row stage: the inner gelu runs in place on the row of cached exps,
  // and the outer gelu (or an f16 rounding) reads its result there.
  for (int64_t e : {1, 17, 256, 257, 1000}) {
    check("gelu_cached", {{3, e}});
    check("gelu_cached_h", {{3, e}});
  }
  check("gelu16", {{4, 300}, {4, 300}});
  check("gelub16", {{4, 513}});
  std::mt19937 rng(37);
  for (const char* name : {"gelu32", "gelu_sum"}) {
    const ir::Function& f = fn(name);
    auto k = compiler::compile(f);
    NDArray wide = random_array(DType::kF32, {3, 600}, rng, 8.0);
    std::vector<NDArray> in = {NDArray::view(wide, {3, 300}, {600, 2}), random_array(DType::kF32, {3, 300}, rng, 8.0)};
    expect_agree(*k, *module_, f, in, std::string("strided ") + name);
  }
}

// The routine reads an argument that is an input's row, or an earlier
// routine's buffer, where it lies, and writes a result that is the stored
// value into the output row itself: no copy through an L1 buffer on
// either side.
TEST_F(RopeHalf, GeluChunksReadAndWriteInPlace) {
  const std::string g = compiler::generate(fn("gelu32")).tir;
  EXPECT_GT(count(g, "@tf_gelu_tanh_from_n(&y[c0], &x0[c0], 1, "), 0) << g;       // gelu(x), stored as is
  EXPECT_GT(count(g, "@tf_gelu_tanh_from_n(&y[c0], &x0[(c0 * is0)], is0, "), 0) << g;  // a strided x
  EXPECT_GT(count(g, "@tf_gelu_tanh_from_n(tb1, tb0, 1, "), 0) << g;              // gelu of gelu(x * y)
  EXPECT_GT(count(g, "@tf_gelu_tanh_from_n(tb2, &x1[c0], 1, "), 0) << g;          // gelu(y), then added
  EXPECT_EQ(count(g, "tb1[(j - c0)] = tb0[(j - c0)]"), 0) << g;
  EXPECT_EQ(count(g, "tb2[(j - c0)] = x1[j]"), 0) << g;
  EXPECT_EQ(count(g, "[(j - c0)] = x0["), 0) << g;
  const std::string s = compiler::generate(fn("gelu_sum")).tir;
  EXPECT_GT(count(s, "tb0[(j - c0)] = (x0[j] + x1[j])"), 0) << s;  // a computed argument is staged
  EXPECT_GT(count(s, "@tf_gelu_tanh_from_n(&y[c0], tb0, 1, "), 0) << s;
  EXPECT_EQ(count(s, "y[j] = tb0[(j - c0)]"), 0) << s;
  // A call that ran in place in a row stage's cached row (gelu of the
  // exps): the next call reads its result from that row.
  const std::string c = compiler::generate(fn("gelu_cached")).tir;
  EXPECT_GT(count(c, "@tf_gelu_tanh_n(&y[c0], "), 0) << c;
  EXPECT_GT(count(c, "@tf_gelu_tanh_from_n(tb1, &y[c0], 1, "), 0) << c;
  const std::string h = compiler::generate(fn("gelu_cached_h")).tir;
  EXPECT_GT(count(h, "tb1[(j - c0)] = y[j]"), 0) << h;
}

// f16 / bf16 conversions and per-op roundings are the evaluator's bit for bit
// (core/runtime/half.h, c10's): every f16 and bf16 code widened; narrowing
// and op chains over floats chosen at the rounding boundaries, NaNs with
// payloads of both signs, infinities, subnormals of both types, and a
// spread of random bit patterns. The conversions run in chunks of 256
// (F16C / AVX-512 where present) with a scalar tail: the lengths exercise both.
std::vector<float> boundary_floats(std::mt19937& rng) {
  std::vector<float> v;
  auto bits = [](uint32_t u) { float f; std::memcpy(&f, &u, sizeof f); return f; };
  for (uint32_t u : {0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC00000u, 0x7F800001u,
                     0xFF800001u, 0x7FFFFFFFu, 0xFFFFFFFFu, 0x7FC12345u, 0x00000001u, 0x807FFFFFu, 0x00800000u,
                     0x7F7FFFFFu, 0xFF7FFFFFu, 0x7F7F8000u, 0x3F808000u, 0x3F818000u, 0x3F80C000u})
    v.push_back(bits(u));
  for (float f : {65504.0f, 65519.99f, 65520.0f, 65536.0f, -65520.0f, 6.103515625e-05f, 6.1e-05f, 5.9604645e-08f,
                  2.98e-08f, 2.9802322e-08f, -2.9802322e-08f, 8.940697e-08f, 1.0009766f, 1.00048828125f, 3.0f})
    v.push_back(f);
  // Halfway cases of both types: a representable value plus half its ulp.
  for (int e = -30; e <= 20; ++e) {
    const float base = std::ldexp(1.0f + 3.0f / 1024, e);
    v.push_back(base + std::ldexp(1.0f, e - 11));
    v.push_back(-(base + std::ldexp(1.0f, e - 8)));
  }
  for (int i = 0; i < 6000; ++i) v.push_back(bits(static_cast<uint32_t>(rng())));
  return v;
}
NDArray floats(const std::vector<float>& v) {
  NDArray a = NDArray::empty(DType::kF32, {static_cast<int64_t>(v.size())});
  std::memcpy(a.data(), v.data(), v.size() * sizeof(float));
  return a;
}
void expect_same_bits(const std::vector<NDArray>& got, const std::vector<NDArray>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(first_bit_difference(got[i], want[i]), "") << what << ", output #" << i;
}
TEST_F(RopeHalf, HalfConversionsAreBitExact) {
  std::mt19937 rng(41);
  const std::vector<float> v = boundary_floats(rng);
  {
    const ir::Function& f = fn("narrow16");
    auto k = compiler::compile(f);
    for (size_t n : {v.size(), size_t{300}, size_t{17}}) {
      std::vector<NDArray> in = {floats(std::vector<float>(v.begin(), v.begin() + static_cast<int64_t>(n)))};
      expect_same_bits(run_native(*k, f, in), eval::evaluate(*module_, f, in), "narrow16 n=" + std::to_string(n));
    }
  }
  {
    const ir::Function& f = fn("widen16");
    auto k = compiler::compile(f);
    NDArray h = NDArray::empty(DType::kF16, {65536}), b = NDArray::empty(DType::kBF16, {65536});
    for (uint32_t i = 0; i < 65536; ++i) {
      static_cast<runtime::Half*>(h.data())[i].bits = static_cast<uint16_t>(i);
      static_cast<runtime::BFloat16*>(b.data())[i].bits = static_cast<uint16_t>(i);
    }
    expect_same_bits(run_native(*k, f, {h, b}), eval::evaluate(*module_, f, {h, b}), "widen16");
  }
  {
    // A round trip through a half type rounds, also as the last op of an
    // f32 result, whose store does not round to the half type.
    const ir::Function& f = fn("trip16");
    auto k = compiler::compile(f);
    for (size_t n : {v.size(), size_t{300}, size_t{17}}) {
      std::vector<NDArray> in = {floats(std::vector<float>(v.begin(), v.begin() + static_cast<int64_t>(n)))};
      expect_same_bits(run_native(*k, f, in), eval::evaluate(*module_, f, in), "trip16 n=" + std::to_string(n));
    }
  }
  {
    const ir::Function& f = fn("chain16");
    auto k = compiler::compile(f);
    // No NaN operands: which of two NaNs an x86 operation returns depends
    // on operand order, which the compiler may swap. (NaNs that operations
    // make, inf - inf and the like, still pass through the roundings.)
    std::vector<float> x = v;
    for (float& e : x) e = e != e ? 1.5f : e;
    std::vector<float> w = x;
    std::shuffle(w.begin(), w.end(), rng);
    std::vector<NDArray> in = {floats(x), floats(w)};
    expect_same_bits(run_native(*k, f, in), eval::evaluate(*module_, f, in), "chain16");
  }
}

// A row stage's reduction pass reads its f16 rows from chunk buffers F16C
// widened (tf_widen_n before the pass's loop), as the store pass does: no
// f16 load is left in its reductions. The results are the evaluator's for rows around
// the chunk and lane widths, a strided row (the widening's scalar path),
// and rows holding an infinity or a NaN past their first chunk (a max
// counts NaNs it reads from the buffer).
TEST_F(RopeHalf, HalfRowReductionsReadWidenedChunks) {
  for (const char* name : {"rms16", "lnf16", "smax16"}) {
    const std::string t = compiler::generate(fn(name)).tir;
    EXPECT_EQ(count(t, "f32(x0["), 0) << name << "\n" << t;
    // in the first pass (the first chunk loop's bound is c1), unit-stride and strided
    EXPECT_GT(count(t, "@tf_widen_n(xw0, &x0[c0], 1, (c1 - c0))"), 0) << name << "\n" << t;
    EXPECT_GT(count(t, "@tf_widen_n(xw0, &x0[(c0 * is0)], is0, (c1 - c0))"), 0) << name << "\n" << t;
  }
  const std::string r = compiler::generate(fn("rms16")).tir;  // both rows of x + r, in the sum of squares
  EXPECT_GT(count(r, "let e0: f32 = tf_rf16((xw0[(j - c0)] + xw1[(j - c0)]))"), 0) << r;
  std::mt19937 rng(43);
  auto set = [](NDArray& a, int64_t i, uint16_t bits) { static_cast<runtime::Half*>(a.data())[i].bits = bits; };
  const ir::Function& f = fn("smax16");
  auto k = compiler::compile(f);
  for (int64_t e : {1, 31, 32, 33, 255, 256, 257, 700, 4103}) {
    NDArray x = random_array(DType::kF16, {4, e}, rng);
    if (e > 300) {
      set(x, 0 * e + 299, 0x7C00);  // +inf in row 0's second chunk
      set(x, 1 * e + 300, 0x7E00);  // NaN in row 1's
      set(x, 2 * e + e - 1, 0xFC00);  // -inf at row 2's end
    }
    expect_agree(*k, *module_, f, {x}, "smax16 e=" + std::to_string(e));
  }
  NDArray wide = random_array(DType::kF16, {5, 1400}, rng);
  expect_agree(*k, *module_, f, {NDArray::view(wide, {5, 700}, {1400, 2})}, "strided smax16");
  for (int64_t e : {17, 257, 1000}) {
    check("rms16", {{3, e}, {3, e}, {e}});
    check("lnf16", {{3, e}, {e}, {e}});
  }
}

TEST_F(RopeHalf, HalfReductions) {
  check("red16", {{6, 17}});
  check("red16", {{6, 700}});
  check("redb16", {{9, 513}});
}

}  // namespace
}  // namespace tf::comptest
