// Typeinfer of every op in the foundation catalog: an accept and a reject
// case per rule, through the sema driver (the path the frontend uses).
#include <gtest/gtest.h>

#include "core/ir/error.h"
#include "core/ops/math/math.h"
#include "core/ops/nn/nn.h"
#include "core/ops/registry.h"
#include "core/ops/surface.h"
#include "core/ops/tensor/tensor.h"
#include "core/sema/typeinfer.h"

using namespace tf;
using namespace tf::ir;
using namespace tf::ops;

namespace {

const ShapeDim N = ShapeDim::var("N", 1, 1024);

ExprPtr param(const std::string& name, Shape s, DType d = DType::kF32) {
  return Var::make(name, TensorType::make(std::move(s), d));
}

TypePtr infer(OpPtr op, std::vector<ExprPtr> args) { return sema::make_op_call(std::move(op), std::move(args))->type(); }

// Runs f, expects a type error whose message contains every fragment.
template <typename F>
void expect_type_error(F f, std::vector<std::string> fragments) {
  try {
    f();
    ADD_FAILURE() << "expected a type error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kType) << e.what();
    for (const auto& frag : fragments) EXPECT_NE(std::string(e.what()).find(frag), std::string::npos) << e.what();
  }
}

std::string str(const TypePtr& t) { return t->to_string(); }

}  // namespace

TEST(Binary, BroadcastsLikeNumpy) {
  auto t = infer(std::make_shared<Binary>(BinaryKind::kAdd), {param("a", {N, 1, 8}), param("b", {4, 1})});
  EXPECT_EQ(str(t), "Tensor[(N, 4, 8), f32]");
}

TEST(Binary, RejectsIncompatibleShapesNamingTheOperand) {
  expect_type_error([] { infer(std::make_shared<Binary>(BinaryKind::kMul), {param("a", {3}), param("b", {4})}); },
                    {"'mul' operand #1 (rhs)", "broadcast"});
}

TEST(Binary, DtypesDoNotPromote) {
  expect_type_error([] { infer(std::make_shared<Binary>(BinaryKind::kAdd), {param("a", {4}), param("b", {4}, DType::kBF16)}); },
                    {"'add' operand #1 (rhs)", "same dtype", "f32", "Tensor[(4,), bf16]"});
}

TEST(Binary, ComparisonsAndLogicalKindsProduceBool) {
  EXPECT_EQ(str(infer(std::make_shared<Binary>(BinaryKind::kLt), {param("a", {4}), param("b", {4})})),
            "Tensor[(4,), bool]");
  EXPECT_EQ(str(infer(std::make_shared<Binary>(BinaryKind::kLogicalXor),
                      {param("a", {4}, DType::kBool), param("b", {4}, DType::kBool)})),
            "Tensor[(4,), bool]");
}

TEST(Binary, ArithmeticRejectsBool) {
  expect_type_error([] { infer(std::make_shared<Binary>(BinaryKind::kSub), {param("a", {4}, DType::kBool), param("b", {4}, DType::kBool)}); },
                    {"'sub' operand #0", "numeric"});
}

TEST(Unary, FloatKindsRejectIntsAndLogicalNotGivesBool) {
  EXPECT_EQ(str(infer(std::make_shared<Unary>(UnaryKind::kExp), {param("x", {4})})), "Tensor[(4,), f32]");
  expect_type_error([] { infer(std::make_shared<Unary>(UnaryKind::kExp), {param("x", {4}, DType::kI32)}); },
                    {"'exp' operand #0 (x)", "floating-point"});
  EXPECT_EQ(str(infer(std::make_shared<Unary>(UnaryKind::kAbs), {param("x", {4}, DType::kI32)})), "Tensor[(4,), i32]");
  EXPECT_EQ(str(infer(std::make_shared<Unary>(UnaryKind::kLogicalNot), {param("x", {4})})), "Tensor[(4,), bool]");
}

TEST(Cast, ChangesOnlyTheDtype) {
  EXPECT_EQ(str(infer(std::make_shared<Cast>(DType::kBF16), {param("x", {N, 4})})), "Tensor[(N, 4), bf16]");
  // Typeinfer accepts every dtype; the evaluator decides what it computes.
  EXPECT_EQ(str(infer(std::make_shared<Cast>(DType::kF4E2M1), {param("x", {4})})), "Tensor[(4,), f4e2m1]");
  expect_type_error([] { infer(std::make_shared<Cast>(DType::kF32), {}); }, {"'cast' takes 1 operand"});
}

TEST(Reduce, FollowsNumpyShapeRules) {
  EXPECT_EQ(str(infer(std::make_shared<Reduce>(std::vector<int64_t>{-1}, true, ReduceKind::kSum), {param("x", {N, 8})})),
            "Tensor[(N, 1), f32]");
  EXPECT_EQ(str(infer(std::make_shared<Reduce>(std::vector<int64_t>{0, 2}, false, ReduceKind::kMax), {param("x", {2, 3, 4})})),
            "Tensor[(3,), f32]");
}

TEST(Reduce, RejectsBadAxesAndMeanOfInts) {
  expect_type_error([] { infer(std::make_shared<Reduce>(std::vector<int64_t>{2}, true, ReduceKind::kSum), {param("x", {2, 3})}); },
                    {"'reduce'", "out of range"});
  expect_type_error([] { infer(std::make_shared<Reduce>(std::vector<int64_t>{0, -2}, true, ReduceKind::kSum), {param("x", {2, 3})}); },
                    {"distinct"});
  expect_type_error([] { infer(std::make_shared<Reduce>(std::vector<int64_t>{}, true, ReduceKind::kSum), {param("x", {2, 3})}); },
                    {"at least one axis"});
  expect_type_error([] { infer(std::make_shared<Reduce>(std::vector<int64_t>{0}, true, ReduceKind::kMean), {param("x", {2}, DType::kI32)}); },
                    {"operand #0 (x)", "\"mean\""});
}

TEST(Reshape, KeepsElementCountIncludingSymbolicFactors) {
  EXPECT_EQ(str(infer(std::make_shared<Reshape>(Shape{N, 4096}), {param("x", {N, 64, 64})})), "Tensor[(N, 4096), f32]");
  EXPECT_EQ(str(infer(std::make_shared<Reshape>(Shape{N * 8}), {param("x", {N, 8})})), "Tensor[(N * 8,), f32]");
  expect_type_error([] { infer(std::make_shared<Reshape>(Shape{N, 4095}), {param("x", {N, 64, 64})}); },
                    {"'reshape' operand #0 (x)", "(N, 4095)"});
  // A sum's static content is a factor: (N - 2) * 4 folds to N * 4 - 8.
  const ShapeDim n2 = N - ShapeDim(2);
  EXPECT_EQ(str(infer(std::make_shared<Reshape>(Shape{n2 * 4}), {param("x", {n2, 4})})), "Tensor[((N * 4) - 8,), f32]");
  EXPECT_EQ(str(infer(std::make_shared<Reshape>(Shape{2, n2 * 6}), {param("x", {N * 3 - ShapeDim(6), 4})})),
            "Tensor[(2, (N * 6) - 12), f32]");
  expect_type_error([] { infer(std::make_shared<Reshape>(Shape{(N - ShapeDim(2)) * 4}), {param("x", {N - ShapeDim(1), 4})}); },
                    {"'reshape' operand #0 (x)"});
}

TEST(Transpose, NeedsAFullPermutation) {
  EXPECT_EQ(str(infer(std::make_shared<Transpose>(std::vector<int64_t>{1, 0, 2}), {param("x", {N, 3, 4})})),
            "Tensor[(3, N, 4), f32]");
  expect_type_error([] { infer(std::make_shared<Transpose>(std::vector<int64_t>{0, 0}), {param("x", {2, 3})}); }, {"permutation"});
  expect_type_error([] { infer(std::make_shared<Transpose>(std::vector<int64_t>{0}), {param("x", {2, 3})}); }, {"full permutation"});
}

TEST(Slice, PythonBoundsClampAndStride) {
  auto s = std::make_shared<Slice>(Shape{1, -3}, Shape{100, 8}, std::vector<int64_t>{2, 1});
  EXPECT_EQ(str(infer(s, {param("x", {10, 8})})), "Tensor[(5, 3), f32]");
  auto sym = std::make_shared<Slice>(Shape{0, 0}, Shape{N, 2}, std::vector<int64_t>{1, 1});
  EXPECT_EQ(str(infer(sym, {param("x", {N, 8})})), "Tensor[(N, 2), f32]");
  expect_type_error([] { infer(std::make_shared<Slice>(Shape{0}, Shape{4}, std::vector<int64_t>{0}), {param("x", {4})}); },
                    {"strides must be positive"});
  expect_type_error([] { infer(std::make_shared<Slice>(Shape{0}, Shape{4}, std::vector<int64_t>{1}), {param("x", {4, 4})}); },
                    {"one entry per axis"});
}

TEST(Zeros, TypesFromAttributesAndNeedsConcreteStorage) {
  EXPECT_EQ(str(infer(std::make_shared<Zeros>(Shape{N}, DType::kF32, StorageKind::kRmem), {})),
            "Tensor[(N,), f32, \"rmem\"]");
  expect_type_error([] { infer(std::make_shared<Zeros>(Shape{4}, DType::kF32, StorageKind::kUnmaterialized), {}); },
                    {"storage must be concrete"});
}

// A multi-input op's result takes the most local storage among its operands
// (rmem < smem < gmem); unmaterialized counts only when every operand is.
TEST(ResultStorage, IsTheMostLocalStorageAmongTheOperands) {
  auto in = [](const char* name, StorageKind s) { return Var::make(name, TensorType::make({4}, DType::kF32, nullptr, s)); };
  auto add = [] { return std::make_shared<Binary>(BinaryKind::kAdd); };
  const std::vector<std::pair<std::pair<StorageKind, StorageKind>, StorageKind>> cases = {
      {{StorageKind::kRmem, StorageKind::kGmem}, StorageKind::kRmem},
      {{StorageKind::kGmem, StorageKind::kRmem}, StorageKind::kRmem},
      {{StorageKind::kSmem, StorageKind::kGmem}, StorageKind::kSmem},
      {{StorageKind::kSmem, StorageKind::kRmem}, StorageKind::kRmem},
      {{StorageKind::kGmem, StorageKind::kGmem}, StorageKind::kGmem},
      {{StorageKind::kUnmaterialized, StorageKind::kSmem}, StorageKind::kSmem},
      {{StorageKind::kUnmaterialized, StorageKind::kUnmaterialized}, StorageKind::kUnmaterialized},
  };
  for (const auto& [ops, want] : cases) {
    TypePtr t = infer(add(), {in("a", ops.first), in("b", ops.second)});
    EXPECT_EQ(as_tensor(t)->storage(), want) << storage_name(ops.first) << " + " << storage_name(ops.second);
  }
  // The same rule for other multi-input families (matmul, rms_norm).
  auto m = Var::make("m", TensorType::make({4, 4}, DType::kF32, nullptr, StorageKind::kRmem));
  auto g = Var::make("g", TensorType::make({4, 4}, DType::kF32));
  TypePtr mm = infer(std::make_shared<MatMul>(), {g, m});
  TypePtr norm = infer(std::make_shared<RMSNorm>(1e-6), {m, param("w", {4})});
  EXPECT_EQ(as_tensor(mm)->storage(), StorageKind::kRmem);
  EXPECT_EQ(as_tensor(norm)->storage(), StorageKind::kRmem);
}

TEST(MatMul, BatchedWithBroadcastBatchDims) {
  EXPECT_EQ(str(infer(std::make_shared<MatMul>(), {param("a", {2, 1, N, 16}), param("b", {3, 16, 8})})),
            "Tensor[(2, 3, N, 8), f32]");
  expect_type_error([] { infer(std::make_shared<MatMul>(), {param("a", {4, 16}), param("b", {15, 8})}); },
                    {"'matmul' operand #1 (b)", "K = 16"});
  expect_type_error([] { infer(std::make_shared<MatMul>(), {param("a", {16}), param("b", {16, 8})}); }, {"rank >= 2"});
}

TEST(SoftMax, AxisMustBeInRange) {
  EXPECT_EQ(str(infer(std::make_shared<SoftMax>(-1), {param("x", {N, 8})})), "Tensor[(N, 8), f32]");
  expect_type_error([] { infer(std::make_shared<SoftMax>(2), {param("x", {4, 8})}); }, {"'softmax'", "axis 2"});
  expect_type_error([] { infer(std::make_shared<SoftMax>(0), {param("x", {4}, DType::kI32)}); }, {"floating-point"});
}

TEST(Silu, ElementwiseOnFloats) {
  EXPECT_EQ(str(infer(std::make_shared<Silu>(), {param("x", {N, 8}, DType::kBF16)})), "Tensor[(N, 8), bf16]");
  expect_type_error([] { infer(std::make_shared<Silu>(), {param("x", {4}, DType::kI64)}); }, {"'silu' operand #0 (x)"});
}

TEST(Gelu, ApproximateIsTanhOrNone) {
  EXPECT_EQ(str(infer(std::make_shared<Gelu>("tanh"), {param("x", {4})})), "Tensor[(4,), f32]");
  expect_type_error([] { infer(std::make_shared<Gelu>("fast"), {param("x", {4})}); }, {"approximate"});
}

TEST(RMSNorm, WeightIsRank1OverTheLastAxis) {
  EXPECT_EQ(str(infer(std::make_shared<RMSNorm>(1e-6), {param("x", {N, 64}), param("w", {64})})),
            "Tensor[(N, 64), f32]");
  expect_type_error([] { infer(std::make_shared<RMSNorm>(1e-6), {param("x", {N, 64}), param("w", {32})}); },
                    {"'rms_norm' operand #1 (weight)", "rank-1", "(64)", "Tensor[(32,), f32]"});
  expect_type_error([] { infer(std::make_shared<RMSNorm>(1e-6), {param("x", {N, 64}), param("w", {64}, DType::kF16)}); },
                    {"operand #1 (weight)", "x's dtype"});
}

TEST(Registry, EverySurfaceBuildsARegisteredOp) {
  for (const SurfaceFn& s : all_surfaces()) {
    std::vector<AttrValue> attrs;
    bool all_defaults = true;
    for (const auto& p : s.params) {
      if (p.is_tensor) continue;
      if (!p.default_value) { all_defaults = false; break; }
      attrs.push_back(*p.default_value);
    }
    if (!all_defaults) continue;
    OpPtr op = s.make(attrs);
    EXPECT_NE(find_op(op->name()), nullptr) << s.name;
    EXPECT_NE(find_surface(op->surface_name()), nullptr) << s.name;
  }
  EXPECT_EQ(find_op("NoSuchOp"), nullptr);
}

TEST(Registry, CoerceAttrConvertsLiteralsAndRejectsTheRest) {
  EXPECT_EQ(std::get<double>(*coerce_attr(int64_t{2}, AttrType::kFloat)), 2.0);
  EXPECT_EQ(std::get<std::vector<int64_t>>(*coerce_attr(int64_t{1}, AttrType::kAxes)), std::vector<int64_t>{1});
  EXPECT_EQ(std::get<StorageKind>(*coerce_attr(std::string("rmem"), AttrType::kStorage)), StorageKind::kRmem);
  EXPECT_FALSE(coerce_attr(std::string("hbm"), AttrType::kStorage).has_value());
  EXPECT_FALSE(coerce_attr(1.5, AttrType::kInt).has_value());
}
