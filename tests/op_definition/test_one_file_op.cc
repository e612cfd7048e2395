// An op defined entirely in this file: ScaledSoftplus, spelled
// scaled_softplus(x, beta=1.0) — torch.nn.functional.softplus(x, beta):
// log(1 + exp(beta * x)) / beta, and x itself where beta * x > 20. Its Op
// struct, typeinfer, surface function, sharding traits, evaluator kernel
// and native scalar form are all here, registered at test start through the
// public registration calls (ops::register_op, eval::register_kernel,
// compiler::register_scalar_lowering); nothing else in the tree names it.
// It is then used like a built-in op, through the entry points the other
// tests use: parsed from DSL source, type-checked (and rejected with a
// clear message), printed and parsed back, checked for completeness, and run
// by every backend in backends(): the evaluator, and compiled to native code
// (fused with the arithmetic around it).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "core/compiler/compiler.h"
#include "core/compiler/scalar_lowering.h"
#include "core/eval/evaluator.h"
#include "core/eval/kernel.h"
#include "core/eval/kernels/dispatch.h"
#include "core/spmd/virtual_mesh.h"
#include "core/frontend/parser.h"
#include "core/frontend/printer.h"
#include "core/ir/error.h"
#include "core/ops/completeness.h"
#include "core/ops/registry.h"
#include "core/sema/bind.h"
#include "core/tir/op.h"

namespace tf {
namespace {

using runtime::NDArray;

// ---- the definition ---------------------------------------------------------

struct ScaledSoftplus final : ir::Op {
  explicit ScaledSoftplus(double b) : beta(b) {}
  double beta;
  std::string_view name() const override { return "ScaledSoftplus"; }
  std::vector<ir::Attr> attrs() const override { return {{"beta", beta}}; }
  std::string surface_name() const override { return "scaled_softplus"; }
};

ir::TypePtr infer_scaled_softplus(const ir::Op& op, ops::TypeCtx& ctx) {
  const ir::TensorType& x = ctx.float_tensor(0);
  double beta = static_cast<const ScaledSoftplus&>(op).beta;
  if (!(beta > 0)) ctx.error("beta must be positive, but got " + ir::format_double(beta));
  return ir::TensorType::make(x.shape(), x.dtype(), x.layout(), x.storage());
}

ops::OpInfo scaled_softplus_def() {
  ops::OpInfo d;
  d.name = "ScaledSoftplus";
  d.summary = "log(1 + exp(beta * x)) / beta, torch's softplus";
  d.operands = {"x"};
  d.attrs = {"beta"};
  d.surfaces = {{"scaled_softplus",
                 {ops::tensor_param("x"), ops::attr_param("beta", ops::AttrType::kFloat, 1.0)},
                 [](const std::vector<ir::AttrValue>& a) -> ir::OpPtr {
                   return std::make_shared<ScaledSoftplus>(ops::attr_arg<double>(a, 0));
                 }}};
  d.typeinfer = infer_scaled_softplus;
  // Increasing for beta > 0 (typeinfer's rule): max / min commute, sum does not.
  d.shard = ops::ShardSpec::elementwise(ops::monotone());
  return d;
}

template <typename T>
void scaled_softplus_typed(const NDArray& x, const NDArray& out, double beta) {
  using C = eval::compute_t<T>;
  const C b = static_cast<C>(beta);
  eval::map_unary<T, T>(x, out, [b](T v) {
    C w = eval::widen(v);
    return eval::narrow<T>(b * w > C(20) ? w : std::log1p(std::exp(b * w)) / b);
  });
}

NDArray scaled_softplus_kernel(const eval::KernelArgs& args) {
  NDArray out = NDArray::empty(args.out_dtype(), args.out_shape());
  double beta = args.op<ScaledSoftplus>().beta;
  eval::dispatch_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (eval::is_float_v<T> && !eval::is_f8_v<T>) scaled_softplus_typed<T>(args.inputs[0], out, beta);
    else eval::unsupported_dtype(out.dtype());
  });
  return out;
}

// The native compiler's part: one result element as a TIR expression of
// the operand's element (in its compute type), the same formula.
tir::ExprPtr scaled_softplus_scalar(const compiler::ScalarArgs& a) {
  const ir::DType c = compiler::compute_dtype(a.out);
  const tir::Type t = tir::Type::scalar(c);
  const tir::ExprPtr b = tir::imm(c, static_cast<const ScaledSoftplus&>(*a.call.op()).beta);
  const tir::ExprPtr bx = tir::mul(b, a.args[0]);
  const tir::ExprPtr soft = tir::div(tir::call(t, "std::log1p", {tir::call(t, "std::exp", {bx})}), b);
  return tir::select(tir::gt(bx, tir::imm(c, 20)), a.args[0], soft);
}

// Once per process, before any test uses the op.
void register_scaled_softplus() {
  static std::once_flag once;
  std::call_once(once, [] {
    ops::register_op(scaled_softplus_def());
    eval::register_kernel("ScaledSoftplus", scaled_softplus_kernel);
    compiler::register_scalar_lowering(
        "ScaledSoftplus", {scaled_softplus_scalar, [](const ir::Op&) { return true; },
                           [](const ir::Call&) { return false; }});
  });
}

// ---- the backends every program runs on ----------------------------------------

struct Backend {
  std::string name;
  std::function<std::vector<NDArray>(const ir::Module&, const ir::Function&, const std::vector<NDArray>&)> run;
};

std::vector<Backend> backends() {
  return {{"evaluator",
           [](const ir::Module& m, const ir::Function& fn, const std::vector<NDArray>& in) {
             return eval::evaluate(m, fn, in);
           }},
          {"native", [](const ir::Module&, const ir::Function& fn, const std::vector<NDArray>& in) {
             auto k = compiler::compile(fn);  // throws if the op does not compile: no silent fallback
             std::vector<sema::ArgDesc> descs;
             for (const NDArray& a : in) descs.push_back({a.dtype(), a.shape()});
             ir::DimBindings b = sema::bind_arguments(fn, descs);
             std::vector<NDArray> out;
             for (const sema::ArgDesc& d : sema::output_descs(fn, b)) out.push_back(NDArray::empty(d.dtype, d.shape));
             k->run(in, out, b);
             return out;
           }}};
}

// ---- helpers ----------------------------------------------------------------------

class OneFileOp : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { register_scaled_softplus(); }
};

constexpr const char* kHead = "from tilefoundry.dsl import *\n\n";

NDArray f32(std::vector<int64_t> shape, const std::vector<float>& values) {
  NDArray a = NDArray::empty(ir::DType::kF32, std::move(shape));
  std::copy(values.begin(), values.end(), static_cast<float*>(a.data()));
  return a;
}

std::vector<float> values_of(const NDArray& a) {
  const float* p = static_cast<const float*>(a.data());
  return std::vector<float>(p, p + a.numel());
}

float softplus_ref(float x, float beta) { return beta * x > 20 ? x : std::log1p(std::exp(beta * x)) / beta; }

std::string type_error(const std::string& source) {
  try {
    frontend::parse_module(source, "op.py");
  } catch (const ir::Error& e) {
    EXPECT_EQ(e.kind(), ir::ErrorKind::kType) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "expected a type error for:\n" << source;
  return "";
}

// ---- the tests ---------------------------------------------------------------------

TEST_F(OneFileOp, IsCompleteByTheSameCheckAsTheBuiltInOps) {
  std::vector<std::string> gaps = ops::missing_parts({*ops::find_op("ScaledSoftplus")}, {eval::kernel_part()});
  EXPECT_EQ(gaps, std::vector<std::string>{});
}

TEST_F(OneFileOp, ParsesTypesAndRunsOnEveryBackend) {
  std::string src = std::string(kHead) +
                    "N = DimVar(\"N\", 1, 64)\n\n"
                    "@func\n"
                    "def f(x: Tensor[(N, 4), f32]) -> Tensor[(N, 4), f32]:\n"
                    "    return scaled_softplus(x * 2, beta=0.5) + scaled_softplus(x)\n";
  ir::ModulePtr m = frontend::parse_module(src, "op.py");
  NDArray x = f32({2, 4}, {-3, -0.5f, 0, 0.25f, 1, 4, 12, 40});
  for (const Backend& b : backends()) {
    std::vector<NDArray> out = b.run(*m, *m->lookup("f"), {x});
    ASSERT_EQ(out.size(), 1u) << b.name;
    std::vector<float> in = values_of(x), got = values_of(out[0]);
    for (size_t i = 0; i < in.size(); ++i)
      EXPECT_NEAR(got[i], softplus_ref(2 * in[i], 0.5f) + softplus_ref(in[i], 1), 1e-5) << b.name << " x=" << in[i];
  }
}

TEST_F(OneFileOp, PrintsAsItsSurfaceAndParsesBack) {
  std::string src = std::string(kHead) +
                    "@func\n"
                    "def f(x: Tensor[(4,), f64]) -> Tensor[(4,), f64]:\n"
                    "    return scaled_softplus(x, beta=3)\n";
  ir::ModulePtr m = frontend::parse_module(src, "op.py");
  std::string printed = frontend::print_module(*m);
  EXPECT_NE(printed.find("scaled_softplus(x, beta=3.0)"), std::string::npos) << printed;
  EXPECT_EQ(frontend::print_module(*frontend::parse_module(printed, "printed.py")), printed);
}

TEST_F(OneFileOp, RejectsAnIntTensorAndANonPositiveBeta) {
  std::string int_x = type_error(std::string(kHead) +
                                 "@func\n"
                                 "def f(x: Tensor[(4,), i32]) -> Tensor[(4,), i32]:\n"
                                 "    return scaled_softplus(x)\n");
  EXPECT_NE(int_x.find("op.py:5:"), std::string::npos) << int_x;
  EXPECT_NE(int_x.find("error: 'scaled_softplus' operand #0 (x) must be a floating-point tensor, but got "
                       "Tensor[(4,), i32]"),
            std::string::npos)
      << int_x;
  std::string beta = type_error(std::string(kHead) +
                                "@func\n"
                                "def f(x: Tensor[(4,), f32]) -> Tensor[(4,), f32]:\n"
                                "    return scaled_softplus(x, beta=-1.0)\n");
  EXPECT_NE(beta.find("error: 'scaled_softplus' beta must be positive, but got -1.0"), std::string::npos) << beta;
}

// Its sharding traits, stated on the record, decide like a built-in's: a
// Partial("max") passes through (the op is increasing), a Partial("sum") is
// rejected with the reason.
constexpr const char* kSharded =
    "TARGET = Target(\"cpu\", topology=((\"device\", 1), (\"cta\", 4)))\n\n"
    "cta = Mesh(topology=\"cta\", shape=(4,), axes=(\"x\",))\n\n"
    "@func\n"
    "def f(x: Tensor[(8, 4), f32, ShardLayout(cta, (REDUCTION,))]\n"
    "      ) -> Tensor[(8, 4), f32, ShardLayout(cta, (REDUCTION,))]:\n"
    "    return scaled_softplus(x, beta=2.0)\n";

std::string sharded(const std::string& reduction) {
  std::string s = std::string(kHead) + kSharded;
  for (size_t at; (at = s.find("REDUCTION")) != std::string::npos;) s.replace(at, 9, reduction);
  return s;
}

TEST_F(OneFileOp, ItsShardTraitsAcceptAMaxPartialAndRejectASumPartial) {
  EXPECT_NO_THROW(frontend::parse_module(sharded("Partial(\"max\")"), "op.py"));
  std::string sum = type_error(sharded("Partial(\"sum\")"));
  EXPECT_NE(sum.find("'scaled_softplus' operand #0 (x) must be free of Partial(\"sum\")"), std::string::npos) << sum;
  EXPECT_NE(sum.find("scaled_softplus is monotone non-decreasing: it commutes with max / min but not sum"),
            std::string::npos)
      << sum;
}

TEST_F(OneFileOp, RunsShardedOnTheVirtualMesh) {
  ir::ModulePtr m = frontend::parse_module(sharded("Split(axis=0)"), "op.py");
  std::vector<float> in(32);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i) * 0.5f - 8;
  std::vector<float> got = values_of(spmd::evaluate_virtual_mesh(*m, *m->lookup("f"), {f32({8, 4}, in)}).at(0));
  for (size_t i = 0; i < in.size(); ++i) EXPECT_NEAR(got[i], softplus_ref(in[i], 2), 1e-5) << "x=" << in[i];
}

}  // namespace
}  // namespace tf
