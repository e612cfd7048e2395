// The CUDA target's kernels run on the emulated device (cuda_emulator.h)
// and agree with the evaluator: each launch kind, block reductions across
// warps, kernel fission, helpers over rows and tensors, half types, strided
// and broadcast inputs, a check's early return and a stage's run-time error.
// Every function here also compiles for sm_80 / sm_90 (cuda_check.h).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>

#include "compiler_helpers.h"
#include "cuda_device.h"
#include "cuda_emulator.h"
#include "core/compiler/cuda/cuda_codegen.h"
#include "core/compiler/cuda/grid_size.h"
#include "core/compiler/cuda/nvrtc.h"
#include "core/compiler/cuda/prelude.h"
#include "core/frontend/parser.h"
#include "core/ir/error.h"
#include "core/ops/math/math.h"
#include "core/ops/tensor/tensor.h"
#include "core/sema/typeinfer.h"
#include "core/sema/verify.h"
#include "core/sema/bind.h"

namespace tf::comptest {
namespace {

using compiler::cuda::Launch;

const char* kSource = R"(from tilefoundry.dsl import *

N = DimVar("N", 1, 1 << 20)
D = DimVar("D", 1, 1 << 16)
P = DimVar("P", 1, 1 << 16)

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
def row_stats(x: Tensor[(N, D), f64]) -> tuple[Tensor[(N, 1), f64], Tensor[(N, 1), f64]]:
    return amax(x, axes=-1), mean(x * x, axes=-1)

@func
def int_ops(a: Tensor[(N, D), i32], b: Tensor[(N, D), i32]) -> Tensor[(N, D), i32]:
    return div(a, b) + a * b

@func
def transposed(x: Tensor[(N, D), f32]) -> Tensor[(D, N), f32]:
    return transpose(x, (1, 0)) * 2.0

@func
def two_stages(x: Tensor[(N, D), f32]) -> Tensor[(N, D), f32]:
    s = softmax(x)
    return s * sum(s, axes=0)

@func
def pieces(x: Tensor[(N, D), f32]) -> Tensor[(N, D), f32]:
    h = x[:, 0:1]
    return concat((x[:, 1:D], h), axis=1) - x

@func
def rope_half(q: Tensor[(1, N, 2, D), f32], k: Tensor[(1, N, 1, D), f32], c: Tensor[(P, D), f32], s: Tensor[(P, D), f32], pos: Tensor[(1, N), i64]) -> tuple[Tensor[(1, N, 2, D), f32], Tensor[(1, N, 1, D), f32]]:
    return rope(q, k, c, s, pos)

@func(inplace=("cache", None))
def append(cache: Tensor[(N, 6), f32], new: Tensor[(N, 1), f32], pos: Tensor[(N,), i32]) -> tuple[Tensor[(N, 6), f32], Tensor[(N, 1), f32]]:
    return cache_scatter(cache, new, pos), new * 2.0

S = DimVar("S", 1, 64)

@func
def scaled(x: Tensor[(S, 8), f32]) -> Tensor[(S, 8), f32]:
    pass

@scaled.specialize(S=(1, 4))
def scaled_small(x: Tensor[(S, 8), f32]) -> Tensor[(S, 8), f32]:
    return softmax(x)

@func
def mm(a: Tensor[(N, D), f32], b: Tensor[(D, P), f32]) -> Tensor[(N, P), f32]:
    return matmul(a, b)

@func
def mm64(a: Tensor[(N, D), f64], b: Tensor[(D, P), f64]) -> Tensor[(N, P), f64]:
    return matmul(a, b) + 1.0

@func
def mlp(x: Tensor[(N, D), bf16], w1: Tensor[(D, P), bf16], w2: Tensor[(D, P), bf16]) -> Tensor[(N, P), bf16]:
    return silu(matmul(x, w1)) * matmul(x, w2)

@func
def bmm(a: Tensor[(2, 3, N, D), f32], b: Tensor[(3, D, P), f32]) -> Tensor[(2, 3, N, P), f32]:
    return matmul(a, b)

@func
def top3(x: Tensor[(N, D), f32]) -> tuple[Tensor[(N, 3), f32], Tensor[(N, 3), i64]]:
    return topk(x, k=3)

@func
def bottom2(x: Tensor[(N, D), bf16]) -> tuple[Tensor[(2, D), bf16], Tensor[(2, D), i64]]:
    return topk(x, k=2, axis=0, largest=False)

@scaled.specialize(S=(4, 64))
def scaled_large(x: Tensor[(S, 8), f32]) -> Tensor[(S, 8), f32]:
    return softmax(x * 0.5)

@func
def tiles(x: Tensor[(N, D), f32]) -> Tensor[(N,), f32]:
    acc = zeros((N,), f32)
    for i in tile(D, step=64):
        acc = acc + sum(x[:, i], axes=(1,), keepdim=False)
    return acc

@func
def ramp(x: Tensor[(N, 4), f32]) -> Tensor[(N, 4), f32]:
    y = x
    for i in range(2, N, 3):
        y = y * 0.5 + x[i:i + 1, :]
    return softmax(y)

@func
def nest(x: Tensor[(N, 5), f32]) -> tuple[Tensor[(N, 5), f32], Tensor[(N, 5), f32]]:
    a = x
    b = x
    for i in range(3):
        for j in tile(2):
            a = a + x
        b = b * 2.0 + a
    return a, b

@func
def conv(x: Tensor[(N, 4, P, 7), f32], w: Tensor[(6, 2, 3, 3), f32], b: Tensor[(6,), f32]) -> Tensor[(N, 6, P - 2, 4), f32]:
    return conv2d(x, w, b, stride=(1, 2), padding=(0, 1), dilation=(1, 1), groups=2)

@func
def conv_dilated(x: Tensor[(N, 3, 9, 9), bf16], w: Tensor[(5, 3, 2, 3), bf16]) -> Tensor[(N, 5, 4, 7), bf16]:
    return conv2d(x, w, None, stride=(2, 1), padding=(1, 1), dilation=(3, 2))

@func
def rotate(x: Tensor[(N, 5), f32]) -> Tensor[(N, 5), f32]:
    a = x
    for i in range(2):
        for j in range(3):
            a = concat((a[:, 1:5], a[:, 0:1]), axis=1) * 0.5 + x
    return a

@func
def round16(x: Tensor[(N,), f32]) -> tuple[Tensor[(N,), f16], Tensor[(N,), bf16], Tensor[(N,), f32], Tensor[(N,), f32]]:
    return cast(x, f16), cast(x, bf16), cast(cast(x, f16), f32), cast(cast(x, bf16), f32)

@func
def widen16(h: Tensor[(N,), f16]) -> Tensor[(N,), f32]:
    return cast(h, f32)

@func
def decode(c: Tensor[(1, P, 2, 4), f32], n: Tensor[(1, S, 2, 4), f32], p0: Tensor[(), i32], one: Tensor[(), i32]) -> Tensor[(1, P, 2, 4), f32]:
    y = c
    p = p0
    for t in range(S):
        y = cache_update(y, p, one, n[:, t:t + 1] * 2.0)
        p = p + one
    return y
)";

class CudaEmulated : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { module_ = frontend::parse_module(kSource, "emulated.tf"); }
  static ir::ModulePtr module_;

  // Evaluator vs the emulated device on the same inputs; returns the
  // emulated program (for its launch kinds).
  compiler::cuda::CudaProgram agree(const char* name, const std::vector<NDArray>& in) {
    const ir::Function& fn = *module_->lookup(name);
    compiler::cuda::CudaProgram p = compiler::cuda::generate_cuda(fn);
    expect_emulated_agrees(EmulatedCudaProgram(p), fn, in, eval::evaluate(*module_, fn, in), name);
    return p;
  }
};
ir::ModulePtr CudaEmulated::module_;

bool has_launch(const compiler::cuda::CudaProgram& p, Launch l) {
  for (const auto& k : p.kernels)
    if (k.launch == l) return true;
  return false;
}

TEST_F(CudaEmulated, RowKernelsAgreeWithTheEvaluator) {
  std::mt19937 rng(7);
  // Rows shorter than a block, longer than a block and than a CPU chunk,
  // and more rows than the emulated grid has blocks.
  for (auto [n, d] : {std::pair<int64_t, int64_t>{1, 5}, {5, 64}, {4, 300}, {7, 1000}}) {
    SCOPED_TRACE(std::to_string(n) + " x " + std::to_string(d));
    const NDArray x = random_array(DType::kF32, {n, d}, rng), w = random_array(DType::kF32, {d}, rng);
    EXPECT_TRUE(has_launch(agree("rmsnorm", {x, w}), Launch::kBlocks));
    agree("swiglu", {x, random_array(DType::kF32, {n, d}, rng)});
    agree("smax", {x});
    agree("gelu_t", {x});
    agree("col_sum", {x});
    agree("transposed", {x});
    agree("pieces", {x});
    agree("row_stats", {random_array(DType::kF64, {n, d}, rng)});
    agree("resnorm16", {random_array(DType::kBF16, {n, d}, rng), random_array(DType::kBF16, {n, d}, rng),
                        random_array(DType::kBF16, {d}, rng)});
    agree("lnorm", {random_array(DType::kF16, {n, d}, rng), random_array(DType::kF16, {d}, rng),
                    random_array(DType::kF16, {d}, rng)});
  }
}

TEST_F(CudaEmulated, StagesThatReadEachOtherAreSeparateKernels) {
  std::mt19937 rng(8);
  const auto p = agree("two_stages", {random_array(DType::kF32, {6, 200}, rng)});
  EXPECT_GE(p.kernels.size(), 2u);
}

TEST_F(CudaEmulated, IntegerDivisionByZeroIsTheEvaluatorsError) {
  std::mt19937 rng(9);
  NDArray a = random_array(DType::kI32, {3, 40}, rng), b = random_array(DType::kI32, {3, 40}, rng);
  for (int64_t i = 0; i < b.numel(); ++i)
    if (static_cast<int32_t*>(b.data())[i] == 0) static_cast<int32_t*>(b.data())[i] = 3;
  agree("int_ops", {a, b});
  static_cast<int32_t*>(b.data())[77] = 0;
  const ir::Function& fn = *module_->lookup("int_ops");
  EmulatedCudaProgram emu(compiler::cuda::generate_cuda(fn));
  std::vector<NDArray> out{NDArray::empty(DType::kI32, {3, 40})};
  std::string want, got;
  try {
    eval::evaluate(*module_, fn, {a, b});
  } catch (const ir::Error& e) {
    want = e.what();
  }
  try {
    emu.run({a, b}, out, sema::bind_arguments(fn, {{DType::kI32, {3, 40}}, {DType::kI32, {3, 40}}}));
  } catch (const ir::Error& e) {
    got = e.what();
  }
  EXPECT_FALSE(want.empty());
  EXPECT_EQ(got, want);
}

TEST_F(CudaEmulated, ACheckFailsBeforeAnyStageWrites) {
  std::mt19937 rng(10);
  const NDArray q = random_array(DType::kF32, {1, 4, 2, 16}, rng), k = random_array(DType::kF32, {1, 4, 1, 16}, rng),
                c = random_array(DType::kF32, {8, 16}, rng), s = random_array(DType::kF32, {8, 16}, rng);
  NDArray pos = NDArray::empty(DType::kI64, {1, 4});
  for (int64_t i = 0; i < 4; ++i) static_cast<int64_t*>(pos.data())[i] = 2 * i;
  const auto p = agree("rope_half", {q, k, c, s, pos});
  bool has_check = false;
  for (const auto& kern : p.kernels) has_check = has_check || kern.precheck;
  ASSERT_TRUE(has_check);
  static_cast<int64_t*>(pos.data())[2] = 9;  // outside [0, 8)
  const ir::Function& fn = *module_->lookup("rope_half");
  EmulatedCudaProgram emu(p);
  std::vector<NDArray> outs{NDArray::empty(DType::kF32, {1, 4, 2, 16}), NDArray::empty(DType::kF32, {1, 4, 1, 16})};
  for (NDArray& o : outs) std::memset(o.data(), 0x7f, static_cast<size_t>(o.numel()) * sizeof(float));
  std::string want, got;
  try {
    eval::evaluate(*module_, fn, {q, k, c, s, pos});
  } catch (const ir::Error& e) {
    want = e.what();
  }
  try {
    emu.run({q, k, c, s, pos}, outs,
            sema::bind_arguments(fn, {{DType::kF32, {1, 4, 2, 16}}, {DType::kF32, {1, 4, 1, 16}},
                                      {DType::kF32, {8, 16}}, {DType::kF32, {8, 16}}, {DType::kI64, {1, 4}}}));
  } catch (const ir::Error& e) {
    got = e.what();
  }
  EXPECT_FALSE(want.empty());
  EXPECT_EQ(got, want);
  for (const NDArray& o : outs)  // nothing written
    for (int64_t i = 0; i < o.numel(); ++i) ASSERT_EQ(static_cast<uint32_t*>(o.data())[i], 0x7f7f7f7fu) << i;
}

TEST_F(CudaEmulated, UnitStrideRowsMoveSixteenBytesPerAccess) {
  // The rows of an elementwise stage and of a row stage's passes, read and
  // written at exactly their index, move in 16-byte accesses; the PTX says
  // so (the scalar loops for the tail and unaligned rows stay beside them).
  if (!compiler::cuda::nvrtc_status().available) GTEST_SKIP() << "no NVRTC: " << compiler::cuda::nvrtc_status().why;
  for (const char* name : {"swiglu", "rmsnorm", "resnorm16"}) {
    const compiler::cuda::CudaProgram p = compiler::cuda::generate_cuda(*module_->lookup(name));
    const compiler::cuda::NvrtcOutput out = compiler::cuda::nvrtc_compile(p.source, std::string(name) + ".cu", 90, false);
    ASSERT_TRUE(out.ok) << out.log;
    const bool wide_load = out.ptx.find("ld.global.v4.") != std::string::npos ||
                           out.ptx.find("ld.global.nc.v4.") != std::string::npos;
    const bool wide_store = out.ptx.find("st.global.wb.v4.") != std::string::npos;
    std::string accesses;  // the PTX's global loads and stores, for the message
    for (size_t at = 0; (at = out.ptx.find("global", at)) != std::string::npos; ++at)
      accesses += out.ptx.substr(out.ptx.rfind('\n', at) + 1, out.ptx.find('\n', at) - out.ptx.rfind('\n', at));
    EXPECT_TRUE(wide_load) << name << "\n" << accesses;
    EXPECT_TRUE(wide_store) << name << "\n" << accesses;
  }
}

TEST_F(CudaEmulated, HalfConversionsAreTheDevicesInstructions) {
  // f16 / bf16 round and f16 widens through one conversion instruction
  // each, not the shared numerics' integer forms (which compile to no cvt
  // with a half type); bf16 widens by a shift either way.
  if (!compiler::cuda::nvrtc_status().available) GTEST_SKIP() << "no NVRTC: " << compiler::cuda::nvrtc_status().why;
  const std::vector<std::pair<const char*, std::vector<const char*>>> want{
      {"round16", {"cvt.rn.f16.f32", "cvt.rn.bf16.f32", "cvt.f32.f16"}},
      {"widen16", {"cvt.f32.f16"}},
      {"lnorm", {"cvt.rn.f16.f32", "cvt.f32.f16"}},
      {"resnorm16", {"cvt.rn.bf16.f32"}}};
  for (const auto& [name, instructions] : want)
    for (int arch : kCudaArchs) {
      const compiler::cuda::CudaProgram p = compiler::cuda::generate_cuda(*module_->lookup(name));
      const compiler::cuda::NvrtcOutput out = compiler::cuda::nvrtc_compile(p.source, std::string(name) + ".cu", arch, false);
      ASSERT_TRUE(out.ok) << out.log;
      for (const char* i : instructions) EXPECT_NE(out.ptx.find(i), std::string::npos) << name << " sm_" << arch << ": " << i;
    }
}

TEST_F(CudaEmulated, EveryFunctionHereCompilesForTheDevice) {
  for (const char* name : {"rmsnorm", "resnorm16", "swiglu", "smax", "lnorm", "gelu_t", "col_sum", "row_stats",
                           "int_ops", "transposed", "two_stages", "pieces", "rope_half", "append", "scaled", "mm",
                           "mm64", "mlp", "bmm", "top3", "bottom2", "round16", "widen16"}) {
    SCOPED_TRACE(name);
    expect_cuda_compiles(*module_->lookup(name), name);
  }
}

// The backend's host side (CudaFunction) on device 0 behind the driver
// API: the emulated device here, a GPU under `make test-cuda`.
class CudaDevice : public CudaEmulated {
 protected:
  void SetUp() override {
    if (!compiler::cuda::driver_status().available) FAIL() << compiler::cuda::driver_status().why;
  }
  std::vector<NDArray> on_device(const char* name, const std::vector<NDArray>& in) {
    const ir::Function& fn = *module_->lookup(name);
    return run_on_device(*compiler::cuda::CudaFunction::compile(fn), fn, in);
  }
  void agree_on_device(const char* name, const std::vector<NDArray>& in) {
    const ir::Function& fn = *module_->lookup(name);
    expect_device_agrees(fn, in, eval::evaluate(*module_, fn, in), name);
  }
  // The evaluator's error message for these inputs, and the device's.
  std::pair<std::string, std::string> errors(const char* name, const std::vector<NDArray>& in) {
    std::string want, got;
    try {
      eval::evaluate(*module_, *module_->lookup(name), in);
    } catch (const ir::Error& e) {
      want = e.what();
    }
    try {
      on_device(name, in);
    } catch (const ir::Error& e) {
      got = e.what();
    }
    return {want, got};
  }
};

TEST_F(CudaDevice, FunctionsRunThroughTheDriverAndAgree) {
  std::mt19937 rng(11);
  // A row shorter than a block, and more rows than the grid has blocks
  // (the emulated device's grid is 8 blocks) of more elements than a block
  // has threads.
  for (auto [n, d] : {std::pair<int64_t, int64_t>{1, 5}, {9, 300}}) {
    SCOPED_TRACE(std::to_string(n) + " x " + std::to_string(d));
    const NDArray x = random_array(DType::kF32, {n, d}, rng), w = random_array(DType::kF32, {d}, rng);
    agree_on_device("rmsnorm", {x, w});
    agree_on_device("smax", {x});
    agree_on_device("two_stages", {x});
    agree_on_device("pieces", {x});
    agree_on_device("row_stats", {random_array(DType::kF64, {n, d}, rng)});
    agree_on_device("lnorm", {random_array(DType::kF16, {n, d}, rng), random_array(DType::kF16, {d}, rng),
                              random_array(DType::kF16, {d}, rng)});
    // A strided input: the transpose of a (d, n) array.
    const NDArray t = random_array(DType::kF32, {d, n}, rng);
    agree_on_device("transposed", {NDArray::view(t, {n, d}, {1, n})});
  }
}

TEST_F(CudaDevice, HalfConversionsAreTheEvaluatorsBitForBit) {
  // On a GPU the conversions are the device's instructions
  // (HalfConversionsAreTheDevicesInstructions); they must round as the
  // evaluator does. Floats: a sweep of the whole bit range, and for every
  // f16 and bf16 value the float a step below, at and a step above the
  // midpoint to the next one (the ties and their neighbours), and the
  // value itself. Widening: every f16 pattern.
  std::vector<uint32_t> fbits;
  for (uint64_t u = 0; u < (uint64_t{1} << 32); u += 65521) fbits.push_back(static_cast<uint32_t>(u));
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float v = ::tf_widen(::tf_f16{static_cast<uint16_t>(h)});
    const float next = ::tf_widen(::tf_f16{static_cast<uint16_t>(h + 1)});
    const uint32_t b16 = h << 16;  // bf16 h; h + 1 is the next one up
    for (uint32_t mid : {::tf_fbits((v + next) / 2), b16 + 0x8000u}) fbits.insert(fbits.end(), {mid - 1, mid, mid + 1});
    fbits.push_back(::tf_fbits(v));
    fbits.push_back(b16);
  }
  NDArray x = NDArray::empty(DType::kF32, {static_cast<int64_t>(fbits.size())});
  std::memcpy(x.data(), fbits.data(), fbits.size() * sizeof(uint32_t));
  const ir::Function& round = *module_->lookup("round16");
  const std::vector<NDArray> want = eval::evaluate(*module_, round, {x}), got = on_device("round16", {x});
  ASSERT_EQ(got.size(), want.size());
  for (size_t o = 0; o < want.size(); ++o)
    EXPECT_EQ(first_bit_difference(got[o], want[o], /*any_nan=*/true), "") << "round16 output " << o;

  NDArray h = NDArray::empty(DType::kF16, {0x10000});
  for (uint32_t i = 0; i < 0x10000; ++i) static_cast<uint16_t*>(h.data())[i] = static_cast<uint16_t>(i);
  const ir::Function& widen = *module_->lookup("widen16");
  EXPECT_EQ(first_bit_difference(on_device("widen16", {h})[0], eval::evaluate(*module_, widen, {h})[0], true), "")
      << "widen16";
}

NDArray i32_scalar(int32_t v) {
  NDArray a = NDArray::empty(DType::kI32, {});
  *static_cast<int32_t*>(a.data()) = v;
  return a;
}

// decode's inputs: a cache of n + 3 positions, n new ones written from p0.
std::vector<NDArray> decode_inputs(int64_t cache, int64_t n, int32_t p0, std::mt19937& rng) {
  return {random_array(DType::kF32, {1, cache, 2, 4}, rng), random_array(DType::kF32, {1, n, 2, 4}, rng),
          i32_scalar(p0), i32_scalar(1)};
}

// f(x) = (acc, last): for i in range(1, 7, 2): acc = acc + x * cast(i),
// last = i — the induction variable read as a value, and carried as is
// (the DSL binds it as a dim; HIR also has it as a value).
ir::ModulePtr induction_value_loop() {
  auto n = ir::ShapeDim::var("N", 1, 100);
  auto x = ir::Var::make("x", ir::TensorType::make({n}, DType::kF32));
  auto acc = ir::Var::make("acc", ir::TensorType::make({n}, DType::kF32));
  auto last = ir::Var::make("last", ir::TensorType::make({}, DType::kI64));
  ir::GridRegionExpr::Fields g;
  g.induction_var = ir::Var::make("i", ir::TensorType::make({}, DType::kI64));
  g.carried_args = {acc, last};
  g.init_args = {x, ir::Constant::make_int(0, DType::kI64)};
  auto scaled = sema::make_op_call(std::make_shared<ops::Binary>(ops::BinaryKind::kMul),
                                   {x, sema::make_op_call(std::make_shared<ops::Cast>(DType::kF32), {g.induction_var})});
  g.yield_values = {sema::make_op_call(std::make_shared<ops::Binary>(ops::BinaryKind::kAdd), {acc, scaled}),
                    g.induction_var};
  g.start = 1;
  g.extent = 7;
  g.step = 2;
  return loop_module({x}, g);
}

TEST_F(CudaDevice, LoopsRunFromTheHostWithOneCompile) {
  // Tile windows of the induction variable, a range whose windows move
  // with it, nested loops (one whose outer body yields the inner loop's
  // result: its next run must not write the buffer it reads), an in-place
  // cache carry beside a scalar carry; every extent after one compile; a
  // window past an axis is the evaluator's error.
  std::mt19937 rng(18);
  std::vector<std::shared_ptr<const compiler::cuda::CudaFunction>> fs;
  for (const char* name : {"tiles", "ramp", "nest", "rotate", "decode"})
    fs.push_back(compiler::cuda::CudaFunction::compile(*module_->lookup(name)));
  for (const auto& f : fs) EXPECT_EQ(f->program(), nullptr) << "a function with loops runs as segments";
  // On a GPU each segment is compiled once, by NVRTC (the emulated driver
  // takes the source instead).
  const int64_t compiles = compiler::cuda::nvrtc_compiles();
  for (auto [n, d] : {std::pair<int64_t, int64_t>{1, 64}, {3, 200}, {9, 1}}) {
    SCOPED_TRACE(std::to_string(n) + " x " + std::to_string(d));
    const NDArray x = random_array(DType::kF32, {n, d}, rng);
    if (d % 64 == 0) {
      agree_on_device("tiles", {x});
    } else {  // the last window runs past the axis
      const auto [want, got] = errors("tiles", {x});
      EXPECT_FALSE(want.empty());
      EXPECT_EQ(got, want);
    }
    agree_on_device("ramp", {random_array(DType::kF32, {n, 4}, rng)});
    agree_on_device("nest", {random_array(DType::kF32, {n, 5}, rng)});
    agree_on_device("rotate", {random_array(DType::kF32, {n, 5}, rng)});
    agree_on_device("decode", decode_inputs(n + 3, n, 2, rng));
  }
  EXPECT_EQ(compiler::cuda::nvrtc_compiles(), compiles) << "a new extent compiled again";
  // The fourth new position is past a cache of 5.
  const auto [want, got] = errors("decode", decode_inputs(5, 4, 2, rng));
  EXPECT_FALSE(want.empty());
  EXPECT_EQ(got, want);
}

TEST_F(CudaDevice, TheInductionVariableIsAValueToo) {
  const ir::ModulePtr m = induction_value_loop();
  const ir::Function& f = *m->lookup("f");
  std::mt19937 rng(20);
  for (int64_t n : {1, 17}) {
    const NDArray x = random_array(DType::kF32, {n}, rng);
    expect_device_agrees(f, {x}, eval::evaluate(*m, f, {x}), "induction value");
  }
}

TEST_F(CudaDevice, AGridHasNoMoreBlocksThanWork) {
  // Each launch takes min(full grid, blocks with work), the work worked
  // out on the host from the call's shapes: a row kernel's rows; an
  // elementwise stage's tasks (a row longer than 16384 elements is two).
  // The emulated device's full grid is 8 blocks. (Observed through the
  // emulated driver only.)
  if (!compiler::cuda::driver_status().takes_source) GTEST_SKIP() << "needs the emulated driver's counters";
  void* lib = dlopen(compiler::cuda::driver_status().library.c_str(), RTLD_NOW);
  ASSERT_NE(lib, nullptr);
  auto last_launch = reinterpret_cast<void (*)(int*, int*)>(dlsym(lib, "tf_emu_last_launch"));
  ASSERT_TRUE(last_launch);
  auto grid = [&] {
    int g = 0, b = 0;
    last_launch(&g, &b);
    EXPECT_EQ(b, compiler::cuda::kBlockThreads);
    return g;
  };
  std::mt19937 rng(23);
  for (int64_t n : {1, 3, 9}) {
    SCOPED_TRACE(n);
    const NDArray x = random_array(DType::kF32, {n, 300}, rng), w = random_array(DType::kF32, {300}, rng);
    agree_on_device("rmsnorm", {x, w});
    EXPECT_EQ(grid(), std::min<int64_t>(n, 8));
  }
  const NDArray a = random_array(DType::kF32, {1, 20000}, rng), b = random_array(DType::kF32, {1, 20000}, rng);
  agree_on_device("swiglu", {a, b});
  EXPECT_EQ(grid(), 2);
}

TEST(CudaGrid, BlocksThatCannotBeWorkedOutLeaveTheFullGrid) {
  using namespace tir;
  const VarPtr& A = compiler::cuda::kernel_arg_words();
  auto word = [&](int64_t i) { return load(A, i64(i)); };
  const std::vector<int64_t> words{6, 0, INT64_MAX};
  EXPECT_EQ(compiler::cuda::evaluate_blocks(div(word(0), i64(4)), words), 1);
  EXPECT_EQ(compiler::cuda::evaluate_blocks(div(word(0), word(1)), words), std::nullopt);  // by zero
  EXPECT_EQ(compiler::cuda::evaluate_blocks(word(3), words), std::nullopt);                // past the words
  EXPECT_EQ(compiler::cuda::evaluate_blocks(mul(word(2), word(0)), words), std::nullopt);  // overflow
  // A select evaluates only the arm it takes (a guard against an empty axis).
  EXPECT_EQ(compiler::cuda::evaluate_blocks(select(gt(word(1), i64(0)), div(word(0), word(1)), i64(0)), words), 0);
  // Anything but the words (memory a kernel wrote) is not worked out.
  const VarPtr data = Var::make("d", Type::pointer(DType::kI64));
  EXPECT_EQ(compiler::cuda::evaluate_blocks(load(data, i64(0)), words), std::nullopt);
}

TEST_F(CudaDevice, ALoopGivenItsWorkspaceAllocatesNothing) {
  // The plan's places and its segments' scratch fit workspace_bytes(): a
  // call given that much allocates nothing and leaves nothing allocated.
  // (Observed through the emulated driver only.)
  if (!compiler::cuda::driver_status().takes_source) GTEST_SKIP() << "needs the emulated driver's counters";
  void* lib = dlopen(compiler::cuda::driver_status().library.c_str(), RTLD_NOW);
  ASSERT_NE(lib, nullptr);
  auto allocations = reinterpret_cast<int64_t (*)()>(dlsym(lib, "tf_emu_allocations"));
  auto live = reinterpret_cast<int64_t (*)()>(dlsym(lib, "tf_emu_live_allocations"));
  ASSERT_TRUE(allocations && live);
  std::mt19937 rng(19);
  for (const char* name : {"ramp", "decode"}) {
    SCOPED_TRACE(name);
    const ir::Function& fn = *module_->lookup(name);
    const auto f = compiler::cuda::CudaFunction::compile(fn);
    const std::vector<NDArray> in = std::string(name) == "ramp"
                                        ? std::vector<NDArray>{random_array(DType::kF32, {8, 4}, rng)}
                                        : decode_inputs(6, 4, 1, rng);
    std::vector<sema::ArgDesc> descs;
    for (const NDArray& a : in) descs.push_back({a.dtype(), a.shape()});
    const ir::DimBindings b = sema::bind_arguments(fn, descs);
    const uint64_t bytes = f->workspace_bytes(b);
    DeviceArrays mem(0);
    std::vector<NDArray> din, dout;
    for (const NDArray& a : in) din.push_back(mem.upload(a));
    for (const sema::ArgDesc& d : sema::output_descs(fn, b)) dout.push_back(mem.output(d.dtype, d.shape));
    const NDArray ws = mem.output(DType::kU8, {static_cast<int64_t>(bytes)});
    f->prepare(0);
    const int64_t before = allocations(), alive = live();
    f->run(din, dout, b, 0, nullptr, ws.data(), bytes);
    EXPECT_EQ(allocations(), before);
    EXPECT_EQ(live(), alive);
    const std::vector<NDArray> want = eval::evaluate(*module_, fn, in);
    for (size_t i = 0; i < want.size(); ++i)
      EXPECT_EQ(compare(mem.download(dout[i]), want[i], tolerance(want[i].dtype())), "") << "output #" << i;
    // One byte short is refused before anything runs.
    std::string got;
    try {
      f->run(din, dout, b, 0, nullptr, ws.data(), bytes - 1);
    } catch (const ir::Error& e) {
      got = e.what();
    }
    EXPECT_NE(got.find("this call needs " + std::to_string(bytes)), std::string::npos) << got;
  }
}

TEST_F(CudaDevice, ShapeDispatchPicksTheVariantPerCall) {
  std::mt19937 rng(12);
  for (int64_t s : {1, 3, 4, 40}) agree_on_device("scaled", {random_array(DType::kF32, {s, 8}, rng)});
}

TEST_F(CudaDevice, AnInPlaceResultIsWrittenIntoItsInput) {
  std::mt19937 rng(13);
  const NDArray cache = random_array(DType::kF32, {3, 6}, rng), fresh = random_array(DType::kF32, {3, 1}, rng);
  NDArray pos = NDArray::empty(DType::kI32, {3});
  for (int32_t i = 0; i < 3; ++i) static_cast<int32_t*>(pos.data())[i] = 2 * i;
  agree_on_device("append", {cache, fresh, pos});
  static_cast<int32_t*>(pos.data())[1] = 6;  // outside the cache
  const auto [want, got] = errors("append", {cache, fresh, pos});
  EXPECT_FALSE(want.empty());
  EXPECT_EQ(got, want);
}

TEST_F(CudaDevice, RunTimeErrorsAreTheEvaluatorsAndWriteNothing) {
  std::mt19937 rng(14);
  NDArray a = random_array(DType::kI32, {3, 40}, rng), b = random_array(DType::kI32, {3, 40}, rng);
  for (int64_t i = 0; i < b.numel(); ++i)
    if (static_cast<int32_t*>(b.data())[i] == 0) static_cast<int32_t*>(b.data())[i] = 3;
  agree_on_device("int_ops", {a, b});
  static_cast<int32_t*>(b.data())[77] = 0;
  // The output's device memory keeps its bytes when the call fails.
  const ir::Function& fn = *module_->lookup("int_ops");
  const auto f = compiler::cuda::CudaFunction::compile(fn);
  ASSERT_TRUE(f->reports_errors());
  DeviceArrays mem(0);
  NDArray sentinel = NDArray::empty(DType::kI32, {3, 40});
  std::memset(sentinel.data(), 0x5a, 3 * 40 * sizeof(int32_t));
  const NDArray out = mem.upload(sentinel);
  std::string got;
  try {
    f->run({mem.upload(a), mem.upload(b)}, {out},
           sema::bind_arguments(fn, {{DType::kI32, {3, 40}}, {DType::kI32, {3, 40}}}), 0, nullptr, nullptr, 0);
  } catch (const ir::Error& e) {
    got = e.what();
  }
  EXPECT_EQ(got, errors("int_ops", {a, b}).first);
  const NDArray after = mem.download(out);
  EXPECT_EQ(std::memcmp(after.data(), sentinel.data(), 3 * 40 * sizeof(int32_t)), 0);
  // A failed check (RoPE positions) too.
  const NDArray q = random_array(DType::kF32, {1, 4, 2, 16}, rng), k = random_array(DType::kF32, {1, 4, 1, 16}, rng),
                c = random_array(DType::kF32, {8, 16}, rng), s = random_array(DType::kF32, {8, 16}, rng);
  NDArray pos = NDArray::empty(DType::kI64, {1, 4});
  for (int64_t i = 0; i < 4; ++i) static_cast<int64_t*>(pos.data())[i] = 2 * i;
  agree_on_device("rope_half", {q, k, c, s, pos});
  static_cast<int64_t*>(pos.data())[2] = 9;
  const auto [want, dev] = errors("rope_half", {q, k, c, s, pos});
  EXPECT_FALSE(want.empty());
  EXPECT_EQ(dev, want);
}

TEST_F(CudaDevice, MatMulRunsThroughCublas) {
  // cuBLAS's calls are counted by the emulated cuBLAS (a GPU's has no counter).
  const char* lib = std::getenv("TF_CUBLAS_LIBRARY");
  int64_t (*gemms)() = nullptr;
  if (void* h = lib ? dlopen(lib, RTLD_NOW) : nullptr)
    gemms = reinterpret_cast<int64_t (*)()>(dlsym(h, "tf_emu_gemms"));
  const int64_t before = gemms ? gemms() : 0;
  std::mt19937 rng(16);
  for (auto [n, d, p] : {std::array<int64_t, 3>{1, 1, 1}, {5, 33, 7}, {17, 300, 40}}) {
    SCOPED_TRACE(std::to_string(n) + " x " + std::to_string(d) + " x " + std::to_string(p));
    const NDArray a = random_array(DType::kF32, {n, d}, rng), b = random_array(DType::kF32, {d, p}, rng);
    agree_on_device("mm", {a, b});
    // Transposed operands: unit stride in the other axis (cuBLAS's op T).
    const NDArray at = random_array(DType::kF32, {d, n}, rng), bt = random_array(DType::kF32, {p, d}, rng);
    agree_on_device("mm", {NDArray::view(at, {n, d}, {1, n}), NDArray::view(bt, {d, p}, {1, d})});
    agree_on_device("mm64", {random_array(DType::kF64, {n, d}, rng), random_array(DType::kF64, {d, p}, rng)});
    agree_on_device("mlp", {random_array(DType::kBF16, {n, d}, rng), random_array(DType::kBF16, {d, p}, rng),
                            random_array(DType::kBF16, {d, p}, rng)});
    agree_on_device("bmm", {random_array(DType::kF32, {2, 3, n, d}, rng), random_array(DType::kF32, {3, d, p}, rng)});
  }
  if (gemms) {
    EXPECT_GT(gemms(), before);
  }
  // An operand without a unit stride in its matrix axes is refused, saying so.
  const NDArray wide = random_array(DType::kF32, {8, 12}, rng);
  const ir::Function& fn = *module_->lookup("mm");
  std::string got;
  try {
    run_on_device(*compiler::cuda::CudaFunction::compile(fn), fn,
                  {NDArray::view(wide, {4, 3}, {24, 2}), random_array(DType::kF32, {3, 2}, rng)});
  } catch (const ir::Error& e) {
    got = e.what();
  }
  EXPECT_NE(got.find("operand a (strides 24, 2) has no unit stride"), std::string::npos) << got;
}

TEST_F(CudaDevice, Conv2DRunsAsColumnsAndACublasMatMul) {
  // Padding, stride, groups and bias (f32); dilation and no bias (bf16,
  // widened to float as the evaluator does); extents from one compile.
  std::mt19937 rng(21);
  for (auto [n, p] : {std::pair<int64_t, int64_t>{1, 3}, {2, 8}}) {
    SCOPED_TRACE(std::to_string(n) + " images of height " + std::to_string(p));
    agree_on_device("conv", {random_array(DType::kF32, {n, 4, p, 7}, rng), random_array(DType::kF32, {6, 2, 3, 3}, rng),
                             random_array(DType::kF32, {6}, rng)});
    agree_on_device("conv_dilated",
                    {random_array(DType::kBF16, {n, 3, 9, 9}, rng), random_array(DType::kBF16, {5, 3, 2, 3}, rng)});
  }
  const auto f = compiler::cuda::CudaFunction::compile(*module_->lookup("conv"));
  EXPECT_TRUE(f->has_gemm());
  EXPECT_FALSE(f->reports_errors()) << "a convolution cannot fail at run time";
}

TEST_F(CudaDevice, TopKKeepsTorchsOrder) {
  std::mt19937 rng(17);
  for (auto [n, d] : {std::pair<int64_t, int64_t>{2, 3}, {5, 300}}) {
    SCOPED_TRACE(std::to_string(n) + " x " + std::to_string(d));
    NDArray x = random_array(DType::kF32, {n, d}, rng);
    // Ties (equal values: the lower index first) and NaN (above every number).
    auto* px = static_cast<float*>(x.data());
    px[1] = px[2] = 7.0f;
    px[0] = std::nanf("");
    agree_on_device("top3", {x});
    agree_on_device("bottom2", {random_array(DType::kBF16, {n, d}, rng)});
  }
  // k above the axis length: the evaluator's error, before anything runs.
  const auto [want, got] = errors("bottom2", {random_array(DType::kBF16, {1, 4}, rng)});
  EXPECT_FALSE(want.empty());
  EXPECT_EQ(got, want);
}

TEST_F(CudaDevice, NothingIsLeftAllocatedOrLoadedTwice) {
  // A workspace the caller gives is used as is; without one the call's own
  // is freed on the stream. (Observed through the emulated driver only.)
  if (!compiler::cuda::driver_status().takes_source) GTEST_SKIP() << "needs the emulated driver's counters";
  void* lib = dlopen(compiler::cuda::driver_status().library.c_str(), RTLD_NOW);
  ASSERT_NE(lib, nullptr);
  auto live = reinterpret_cast<int64_t (*)()>(dlsym(lib, "tf_emu_live_allocations"));
  auto loads = reinterpret_cast<int64_t (*)()>(dlsym(lib, "tf_emu_module_loads"));
  ASSERT_TRUE(live && loads);
  std::mt19937 rng(15);
  const ir::Function& fn = *module_->lookup("two_stages");
  const auto f = compiler::cuda::CudaFunction::compile(fn);
  // Loading allocates once per device (the shared zero error words).
  compiler::cuda::CudaFunction::compile(*module_->lookup("rmsnorm"))->prepare(0);
  const int64_t before = live(), loaded = loads();
  for (int64_t n : {2, 9}) {
    const NDArray x = random_array(DType::kF32, {n, 70}, rng);
    const auto got = run_on_device(*f, fn, {x});
    EXPECT_EQ(compare(got[0], eval::evaluate(*module_, fn, {x})[0], tolerance(DType::kF32)), "");
  }
  EXPECT_EQ(live(), before);
  EXPECT_EQ(loads(), loaded + 1);  // one load, at the first call; no extent loads again
}

}  // namespace
}  // namespace tf::comptest

namespace tf::comptest {
namespace {

// The emulator itself: a block's threads exchange through shared memory;
// with the barrier every thread reads its mirror's value, without it the
// schedule (highest thread first) makes the reads come before the writes.
compiler::cuda::CudaProgram mirror_program(bool barrier) {
  compiler::cuda::CudaProgram p;
  p.slots = {compiler::Slot{compiler::Slot::kOutput, 0, nullptr}};
  p.kernels = {{"tf_k0", Launch::kOneBlock, false, std::nullopt, nullptr}};
  p.source = std::string(compiler::cuda::cuda_prelude_source()) +
             "struct tf_args { void* B[1]; int64_t SH[1]; int64_t ST[1]; int64_t RS[1]; int* err; int* pre; "
             "int64_t* info; };\n"
             "extern \"C\" __global__ void tf_k0(const __grid_constant__ tf_args A) {\n"
             "  __shared__ int buf[64];\n"
             "  buf[threadIdx.x] = int(threadIdx.x) + 1;\n" +
             std::string(barrier ? "  __syncthreads();\n" : "") +
             "  static_cast<int*>(A.B[0])[threadIdx.x] = buf[blockDim.x - 1 - threadIdx.x];\n}\n";
  return p;
}

TEST(CudaEmulator, AMissingBarrierShowsInTheResult) {
  for (bool barrier : {true, false}) {
    EmulatedCudaProgram emu(mirror_program(barrier));
    NDArray out = NDArray::empty(DType::kI32, {64});
    emu.run({}, {out}, {}, /*block_threads=*/64);
    int mirrored = 0;
    for (int t = 0; t < 64; ++t) mirrored += static_cast<int32_t*>(out.data())[t] == 64 - t;
    if (barrier) EXPECT_EQ(mirrored, 64);
    else EXPECT_LT(mirrored, 64);
  }
}

}  // namespace
}  // namespace tf::comptest
