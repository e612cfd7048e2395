// The function typing rules of docs/ir.md (verifier, run at seal), calls
// between functions, and run-time signature binding.
#include <gtest/gtest.h>

#include "core/ir/error.h"
#include "core/ops/math/math.h"
#include "core/ops/nn/nn.h"
#include "core/sema/bind.h"
#include "core/sema/typeinfer.h"
#include "core/sema/verify.h"

using namespace tf;
using namespace tf::ir;

namespace {

const ShapeDim N = ShapeDim::var("N", 1, 1024);

TensorTypePtr f32(Shape s) { return TensorType::make(std::move(s), DType::kF32); }

ExprPtr add(ExprPtr a, ExprPtr b) {
  return sema::make_op_call(std::make_shared<ops::Binary>(ops::BinaryKind::kAdd), {std::move(a), std::move(b)});
}

FunctionPtr fn(const std::string& name, std::vector<VarPtr> params, ExprPtr body, TypePtr ret) {
  return Function::make({name, std::move(params), std::move(body), std::move(ret), {}, {}, "", {}});
}

template <typename F>
std::string error_of(F f, ErrorKind kind) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "expected an error";
  return "";
}

}  // namespace

TEST(HirConformance, Function_BodyTypeMustMatchReturnType) {
  VarPtr x = Var::make("x", f32({N, 8}));
  EXPECT_NO_THROW(sema::seal(Target::default_cpu(), {fn("ok", {x}, add(x, x), f32({N, 8}))}));
  std::string msg = error_of([&] { sema::seal(Target::default_cpu(), {fn("bad", {x}, add(x, x), f32({N, 4}))}); },
                             ErrorKind::kType);
  EXPECT_NE(msg.find("'bad' declares return type Tensor[(N, 4), f32]"), std::string::npos) << msg;
}

TEST(HirConformance, Function_SameNameDimVarsMustAgreeOnBounds) {
  VarPtr x = Var::make("x", f32({N, 8}));
  VarPtr y = Var::make("y", f32({ShapeDim::var("N", 1, 2048), 8}));
  std::string msg = error_of([&] { sema::seal(Target::default_cpu(), {fn("f", {x, y}, x, f32({N, 8}))}); },
                             ErrorKind::kVerify);
  EXPECT_NE(msg.find("DimVar 'N'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("MUST agree"), std::string::npos) << msg;
  // Twin: the same DimVar everywhere is accepted.
  VarPtr y2 = Var::make("y", f32({N, 8}));
  EXPECT_NO_THROW(sema::seal(Target::default_cpu(), {fn("f", {x, y2}, add(x, y2), f32({N, 8}))}));
}

TEST(HirConformance, Function_BodyUsesOnlyItsParams) {
  VarPtr x = Var::make("x", f32({4}));
  VarPtr stray = Var::make("stray", f32({4}));
  std::string msg = error_of([&] { sema::seal(Target::default_cpu(), {fn("f", {x}, add(x, stray), f32({4}))}); },
                             ErrorKind::kVerify);
  EXPECT_NE(msg.find("'stray'"), std::string::npos) << msg;
}

TEST(HirConformance, Function_TopLevelVariantIsAVerifierError) {
  VarPtr x = Var::make("x", f32({N}));
  FunctionPtr v = Function::make({"f", {x}, x, f32({N}), {{"N", 1, 8}}, {}, "f_small", {}});
  std::string msg = error_of([&] { sema::seal(Target::default_cpu(), {v}); }, ErrorKind::kVerify);
  EXPECT_NE(msg.find("MUST NOT be a variant"), std::string::npos) << msg;
}

TEST(HirConformance, Function_PrototypeWithoutVariantsIsUncallable) {
  VarPtr x = Var::make("x", f32({N}));
  std::string msg = error_of([&] { sema::seal(Target::default_cpu(), {fn("f", {x}, nullptr, f32({N}))}); },
                             ErrorKind::kVerify);
  EXPECT_NE(msg.find("uncallable"), std::string::npos) << msg;
}

TEST(HirConformance, Function_CallTypeIsRederivedAtSeal) {
  // A Call stamped with a type its op does not derive is caught by the verifier.
  VarPtr x = Var::make("x", f32({4}));
  ExprPtr forged = Call::make_op(std::make_shared<ops::Unary>(ops::UnaryKind::kLogicalNot), {x}, f32({4}));
  std::string msg = error_of([&] { sema::seal(Target::default_cpu(), {fn("f", {x}, forged, f32({4}))}); },
                             ErrorKind::kVerify);
  EXPECT_NE(msg.find("typeinfer derives Tensor[(4,), bool]"), std::string::npos) << msg;
}

TEST(Seal, CalleesMustBeFunctionsOfTheModule) {
  VarPtr a = Var::make("a", f32({4}));
  FunctionPtr g = fn("g", {a}, add(a, a), f32({4}));
  VarPtr x = Var::make("x", f32({4}));
  FunctionPtr f = fn("f", {x}, sema::make_function_call(g, {x}), f32({4}));
  EXPECT_NO_THROW(sema::seal(Target::default_cpu(), {g, f}));
  std::string msg = error_of([&] { sema::seal(Target::default_cpu(), {f}); }, ErrorKind::kVerify);
  EXPECT_NE(msg.find("calls 'g'"), std::string::npos) << msg;
}

TEST(FunctionCall, ArityAndTypesAreChecked) {
  VarPtr a = Var::make("a", f32({N, 8}));
  FunctionPtr g = fn("g", {a}, add(a, a), f32({N, 8}));
  VarPtr x = Var::make("x", f32({4, 8}));
  // A static extent inside the DimVar's envelope binds it in the result type.
  EXPECT_EQ(sema::make_function_call(g, {x})->type()->to_string(), "Tensor[(4, 8), f32]");
  EXPECT_NE(error_of([&] { sema::make_function_call(g, {x, x}); }, ErrorKind::kType).find("takes 1 argument"),
            std::string::npos);
  VarPtr wrong = Var::make("w", f32({4, 9}));
  EXPECT_NE(error_of([&] { sema::make_function_call(g, {wrong}); }, ErrorKind::kType).find("axis 1"), std::string::npos);
  VarPtr huge = Var::make("h", f32({5000, 8}));
  EXPECT_NE(error_of([&] { sema::make_function_call(g, {huge}); }, ErrorKind::kType).find("envelope"), std::string::npos);
}

TEST(Bind, BindsDimVarsAndDerivesOutputShapes) {
  VarPtr x = Var::make("x", f32({N, 8}));
  VarPtr w = Var::make("w", f32({8}));
  FunctionPtr f = fn("f", {x, w}, add(x, w), f32({N, 8}));
  DimBindings b = sema::bind_arguments(*f, {{DType::kF32, {5, 8}}, {DType::kF32, {8}}});
  EXPECT_EQ(b.at("N"), 5);
  auto out = sema::output_descs(*f, b);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{5, 8}));
}

TEST(Bind, RejectsEveryMismatchWithTheArgumentNamed) {
  VarPtr x = Var::make("x", f32({N, 8}));
  VarPtr y = Var::make("y", f32({N, 8}));
  FunctionPtr f = fn("f", {x, y}, add(x, y), f32({N, 8}));
  auto msg = [&](std::vector<sema::ArgDesc> args) {
    return error_of([&] { sema::bind_arguments(*f, args); }, ErrorKind::kInvalidArgument);
  };
  EXPECT_NE(msg({{DType::kF32, {2, 8}}}).find("takes 2 input tensor(s), but got 1"), std::string::npos);
  EXPECT_NE(msg({{DType::kF32, {2, 8}}, {DType::kF16, {2, 8}}}).find("argument #1 (y): dtype must be f32"),
            std::string::npos);
  EXPECT_NE(msg({{DType::kF32, {2, 8}}, {DType::kF32, {16}}}).find("rank must be 2"), std::string::npos);
  EXPECT_NE(msg({{DType::kF32, {2, 7}}, {DType::kF32, {2, 8}}}).find("axis 1 must be 8, but got 7"), std::string::npos);
  EXPECT_NE(msg({{DType::kF32, {0, 8}}, {DType::kF32, {0, 8}}}).find("outside its range [1, 1024)"), std::string::npos);
  EXPECT_NE(msg({{DType::kF32, {2, 8}}, {DType::kF32, {3, 8}}}).find("DimVar N = 2 from argument #0"), std::string::npos);
}
