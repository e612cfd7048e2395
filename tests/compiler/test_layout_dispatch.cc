// Compiled vs evaluator for Reduce over any axes (first, middle, several,
// all; keepdim both ways; f32 / f64 / bf16 / i32), Reshape / Transpose /
// Slice (contiguous and strided operands, symbolic and negative bounds, the
// evaluator's window error), and dispatch prototypes (each variant compiled
// once, selected per call, the evaluator's out-of-envelope error).
#include <chrono>
#include <cstdlib>
#include <functional>

#include "compiler_helpers.h"
#include "core/frontend/parser.h"
#include "core/ir/error.h"
#include "core/sema/dispatch.h"

namespace tf::comptest {
namespace {

const char* kSource = R"(from tilefoundry.dsl import *

N = DimVar("N", 1, 1 << 20)
D = DimVar("D", 0, 1 << 16)
M = DimVar("M", 1, 1 << 16)
S = DimVar("S", 1, 4096)

@func
def sum0(x: Tensor[(N, D), f32]) -> Tensor[(D,), f32]:
    return sum(x * 2.0, axes=0, keepdim=False)

@func
def mean_mid(x: Tensor[(N, M, D), f64]) -> Tensor[(N, 1, D), f64]:
    return mean(x, axes=1)

@func
def max02(x: Tensor[(N, M, D), f32]) -> Tensor[(M,), f32]:
    return amax(x + 1.0, axes=(0, 2), keepdim=False)

@func
def absmax_all(x: Tensor[(N, D), bf16]) -> Tensor[(1, 1), bf16]:
    return abs_max(x, axes=(0, 1))

@func
def isum01(x: Tensor[(N, M, D), i32]) -> Tensor[(D,), i32]:
    return sum(x, axes=(1, 0), keepdim=False)

@func
def mean16(x: Tensor[(N, M, D), f16]) -> Tensor[(1, M, 1), f16]:
    return mean(x, axes=(-1, 0))

@func
def tr(x: Tensor[(N, M, D), f32]) -> Tensor[(D, N, M), f32]:
    return transpose(x * 3.0, axes=(2, 0, 1)) + 1.0

@func
def tr16(x: Tensor[(N, D), bf16]) -> Tensor[(D, N), bf16]:
    return transpose(x, axes=(-1, 0))

@func
def rs(x: Tensor[(N, M, D), f32]) -> Tensor[(N, M * D), f32]:
    return relu(reshape(x, (N, M * D)))

@func
def rs_t(x: Tensor[(N, D), i64]) -> Tensor[(D * N,), i64]:
    return reshape(transpose(x, axes=(1, 0)), (D * N,))

@func
def sl(x: Tensor[(N, D), f32]) -> Tensor[(N - 2, 3), f32]:
    return x[1:-1, 0:6:2] * 2.0

@func
def sl_sym(x: Tensor[(N, M), f64]) -> Tensor[(N, M - 1), f64]:
    return exp(x[:, 1:M])

@func
def sl_fixed(x: Tensor[(N, M), f32]) -> Tensor[(N, 2), f32]:
    return x[:, 1:3]

@func
def dec(q: Tensor[(S, 8), f32]) -> Tensor[(S, 8), f32]:
    pass

@dec.specialize(S=(1, 64))
def dec_small(q: Tensor[(S, 8), f32]) -> Tensor[(S, 8), f32]:
    return softmax(q, axis=-1)

@dec.specialize(S=(64, 4096))
def dec_large(q: Tensor[(S, 8), f32]) -> Tensor[(S, 8), f32]:
    return sum(q * 2.0, axes=0) + q
)";

class LayoutDispatch : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { module_ = frontend::parse_module(kSource, "layout.tf"); }
  static ir::ModulePtr module_;

  const ir::Function& fn(const std::string& name) {
    ir::FunctionPtr f = module_->lookup(name);
    if (!f) ADD_FAILURE() << "no function " << name;
    return *f;
  }
  static DType param_dtype(const ir::Function& f, size_t i) {
    return std::static_pointer_cast<const ir::TensorType>(f.params()[i]->type())->dtype();
  }
  // Agreement at each shape set; no recompile for new extents.
  void check(const std::string& name, const std::vector<std::vector<int64_t>>& shapes) {
    const ir::Function& f = fn(name);
    auto k = compiler::compile(f);
    const int64_t before = compiler::compiler_invocations();
    std::mt19937 rng(11);
    for (const auto& shape : shapes)
      expect_agree(*k, *module_, f, {random_array(param_dtype(f, 0), shape, rng)}, name);
    EXPECT_EQ(compiler::compiler_invocations(), before) << name << " recompiled for new extents";
  }
};
ir::ModulePtr LayoutDispatch::module_;

TEST_F(LayoutDispatch, ReduceOverTheFirstAxis) { check("sum0", {{3, 5}, {300, 257}, {1, 0}}); }
TEST_F(LayoutDispatch, MeanOverAMiddleAxisKeepdim) { check("mean_mid", {{2, 3, 4}, {5, 70, 33}}); }
TEST_F(LayoutDispatch, MaxOverTwoAxes) { check("max02", {{2, 3, 4}, {7, 65, 300}}); }
TEST_F(LayoutDispatch, AbsMaxOverAllAxesBf16) { check("absmax_all", {{3, 4}, {64, 1000}}); }
TEST_F(LayoutDispatch, IntegerSumOverTwoAxes) { check("isum01", {{2, 3, 4}, {9, 40, 17}}); }
TEST_F(LayoutDispatch, HalfMeanOverTwoAxes) { check("mean16", {{2, 3, 4}, {9, 40, 17}}); }
TEST_F(LayoutDispatch, Transpose) { check("tr", {{2, 3, 4}, {17, 33, 65}}); }
TEST_F(LayoutDispatch, TransposeBf16) { check("tr16", {{1, 1}, {129, 300}}); }
TEST_F(LayoutDispatch, Reshape) { check("rs", {{2, 3, 4}, {5, 60, 70}}); }
TEST_F(LayoutDispatch, ReshapeOfATranspose) { check("rs_t", {{2, 3}, {40, 77}}); }
TEST_F(LayoutDispatch, SliceWithNegativeBoundsAndAStride) { check("sl", {{3, 6}, {100, 9}}); }
TEST_F(LayoutDispatch, SliceWithASymbolicEnd) { check("sl_sym", {{2, 2}, {30, 500}}); }

TEST_F(LayoutDispatch, StridedOperandsAgree) {
  std::mt19937 rng(5);
  NDArray big = random_array(DType::kF32, {6, 8, 10}, rng);
  NDArray x = NDArray::view(big, {6, 4, 5}, {80, 20, 2});  // every other row and column
  NDArray x2 = NDArray::view(big, {6, 5}, {80, 2});
  for (const char* name : {"rs", "tr", "max02", "sum0", "sl", "tr16"}) {
    const ir::Function& f = fn(name);
    NDArray in = f.params()[0]->type() == nullptr ? x : std::static_pointer_cast<const ir::TensorType>(f.params()[0]->type())->rank() == 2 ? x2 : x;
    if (param_dtype(f, 0) == DType::kBF16) in = NDArray::view(random_array(DType::kBF16, {6, 10}, rng), {6, 5}, {10, 2});
    expect_agree(*compiler::compile(f), *module_, f, {in}, std::string("strided ") + name);
  }
}

TEST_F(LayoutDispatch, SliceWindowTooShortIsTheEvaluatorsError) {
  const ir::Function& f = fn("sl_fixed");
  auto k = compiler::compile(f);
  std::mt19937 rng(1);
  expect_agree(*k, *module_, f, {random_array(DType::kF32, {4, 5}, rng)}, "sl_fixed");
  NDArray shortx = random_array(DType::kF32, {4, 2}, rng);
  for (auto run : {std::function<void()>([&] { run_native(*k, f, {shortx}); }),
                   std::function<void()>([&] { eval::evaluate(*module_, f, {shortx}); })}) {
    try {
      run();
      ADD_FAILURE() << "a window past the axis ran";
    } catch (const ir::Error& e) {
      EXPECT_EQ(e.kind(), ir::ErrorKind::kRuntime);
      EXPECT_NE(std::string(e.what()).find("'slice' axis 1"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("gives 1"), std::string::npos) << e.what();
    }
  }
}

// Each variant compiles once (a fresh cache: the compiler runs once per
// variant), the call selects by S, and new extents inside the envelope
// compile nothing.
TEST_F(LayoutDispatch, DispatchCompilesEachVariantOnceAndSelectsPerCall) {
  const std::string tag = std::to_string(::getpid()) + "_" +
                          std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
  std::string dir = ::testing::TempDir() + "/tf_dispatch_" + tag;
  const char* old = std::getenv("TF_CACHE_DIR");
  std::string saved = old ? old : "";
  setenv("TF_CACHE_DIR", dir.c_str(), 1);
  // Constants no other test uses: neither variant's code is loaded in this
  // process (kernels are shared by content, so a plain softmax would be).
  std::string text = kSource;
  text.replace(text.find("q * 2.0"), 7, "q * 2.25");
  text.replace(text.find("softmax(q, axis=-1)"), 19, "softmax(q * 1.75, axis=-1)");
  ir::ModulePtr fresh = frontend::parse_module(text, "fresh.tf");
  const int64_t before = compiler::compiler_invocations();
  auto k = compiler::compile(*fresh->lookup("dec"));
  const int64_t after = compiler::compiler_invocations();
  if (old) setenv("TF_CACHE_DIR", saved.c_str(), 1);
  else unsetenv("TF_CACHE_DIR");
  EXPECT_EQ(after - before, 2) << "not one compile per variant";
  const ir::Function& f = *fresh->lookup("dec");
  std::mt19937 rng(4);
  for (int64_t s : {1, 5, 63, 64, 65, 300})
    expect_agree(*k, *fresh, f, {random_array(DType::kF32, {s, 8}, rng)}, "dec S=" + std::to_string(s));
  EXPECT_EQ(compiler::compiler_invocations(), after) << "a call recompiled";
  EXPECT_EQ(compiler::compile(f)->key(), k->key());
  EXPECT_EQ(compiler::compiler_invocations(), after) << "a second compile ran the compiler";
}

TEST_F(LayoutDispatch, OutsideTheEnvelopeIsTheEvaluatorsError) {
  const ir::Function& f = fn("dec");
  auto k = compiler::compile(f);
  // bind_arguments accepts S = 4096 only if the DimVar's range does; build
  // the bindings by hand so the envelope (not binding) is what fails.
  NDArray x = NDArray::empty(DType::kF32, {4096, 8});
  NDArray out = NDArray::empty(DType::kF32, {4096, 8});
  std::string native_msg, eval_msg;
  try {
    k->run({x}, {out}, ir::DimBindings{{"S", 4096}});
    ADD_FAILURE() << "S = 4096 ran natively";
  } catch (const ir::Error& e) {
    EXPECT_EQ(e.kind(), ir::ErrorKind::kInvalidArgument);
    native_msg = e.what();
  }
  try {
    sema::select_variant(f, ir::DimBindings{{"S", 4096}});
  } catch (const ir::Error& e) {
    eval_msg = e.what();
  }
  EXPECT_EQ(native_msg, eval_msg);
  EXPECT_NE(native_msg.find("outside the dispatch envelope"), std::string::npos) << native_msg;
}

}  // namespace
}  // namespace tf::comptest
