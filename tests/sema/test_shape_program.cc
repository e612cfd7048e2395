// Shape programs (core/sema/shape_program.h): DimVar sites, the program of
// each kind of extent, the input-axis rules, and — run on concrete shapes —
// agreement with bind_arguments and output_descs.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>

#include "core/ir/error.h"
#include "core/sema/bind.h"
#include "core/sema/shape_program.h"

using namespace tf;
using namespace tf::ir;

namespace {

const ShapeDim N = ShapeDim::var("N", 1, 6);
const ShapeDim M = ShapeDim::var("M", 2, 5);

TensorTypePtr f32(Shape s) { return TensorType::make(std::move(s), DType::kF32); }

// A function with this signature; its body is its first parameter (the
// signature is all a shape program reads).
FunctionPtr signature(std::vector<Shape> params, std::vector<Shape> results) {
  std::vector<VarPtr> vars;
  for (size_t i = 0; i < params.size(); ++i)
    vars.push_back(Var::make("p" + std::to_string(i), f32(params[i])));
  std::vector<TypePtr> leaves;
  for (auto& r : results) leaves.push_back(f32(std::move(r)));
  TypePtr ret = leaves.size() == 1 ? leaves[0] : TupleType::make(std::move(leaves));
  return Function::make({"f", vars, vars[0], ret, {}, {}, "", {}});
}

// floor semantics; nullopt for a zero divisor.
std::optional<int64_t> run(const sema::DimProgram& p,
                           const std::vector<std::vector<int64_t>>& shapes) {
  std::vector<int64_t> stack;
  for (const sema::DimInstr& in : p) {
    if (in.kind == DimKind::kConst) {
      stack.push_back(in.a);
      continue;
    }
    if (in.kind == DimKind::kVar) {
      stack.push_back(shapes.at(in.a).at(in.b));
      continue;
    }
    int64_t b = stack.back();
    stack.pop_back();
    int64_t a = stack.back();
    stack.pop_back();
    if ((in.kind == DimKind::kFloorDiv || in.kind == DimKind::kMod) && b == 0) return std::nullopt;
    int64_t q = b ? a / b - ((a % b != 0) && ((a < 0) != (b < 0))) : 0;
    switch (in.kind) {
      case DimKind::kAdd: stack.push_back(a + b); break;
      case DimKind::kSub: stack.push_back(a - b); break;
      case DimKind::kMul: stack.push_back(a * b); break;
      case DimKind::kFloorDiv: stack.push_back(q); break;
      case DimKind::kMod: stack.push_back(a - q * b); break;
      case DimKind::kMin: stack.push_back(std::min(a, b)); break;
      case DimKind::kMax: stack.push_back(std::max(a, b)); break;
      default: ADD_FAILURE() << "not a binary kind";
    }
  }
  EXPECT_EQ(stack.size(), 1u);
  return stack.back();
}

}  // namespace

TEST(ShapeProgram, DimVarSitesAreFirstOccurrences) {
  FunctionPtr f = signature({{4, N * 2}, {M, N}, {N}}, {{N}});
  sema::DimVarSites sites = sema::dimvar_sites(*f);
  ASSERT_EQ(sites.size(), 2u);
  EXPECT_EQ(sites.at("M").input, 1u);
  EXPECT_EQ(sites.at("M").axis, 0u);
  EXPECT_EQ(sites.at("N").input, 1u);  // N * 2 on p0 does not bind N
  EXPECT_EQ(sites.at("N").axis, 1u);
}

TEST(ShapeProgram, ProgramsArePostfixOverSites) {
  FunctionPtr f = signature({{N, 4}}, {{dim_floordiv(N, 2) + 1}});
  sema::DimProgram p = sema::dim_program(flatten_tensor_types(f->return_type())[0]->shape()[0],
                                         sema::dimvar_sites(*f), "out");
  ASSERT_EQ(p.size(), 5u);
  EXPECT_EQ(p[0].kind, DimKind::kVar);
  EXPECT_EQ(p[0].a, 0);
  EXPECT_EQ(p[0].b, 0);
  EXPECT_EQ(p[1].kind, DimKind::kConst);
  EXPECT_EQ(p[1].a, 2);
  EXPECT_EQ(p[2].kind, DimKind::kFloorDiv);
  EXPECT_EQ(p[3].a, 1);
  EXPECT_EQ(p[4].kind, DimKind::kAdd);
  EXPECT_EQ(sema::dim_program(7, {}, "out").size(), 1u);
}

TEST(ShapeProgram, UnboundDimVarIsUnsupported) {
  FunctionPtr f = signature({{N * 2}}, {{N}});
  try {
    sema::dim_program(N, sema::dimvar_sites(*f), "'f' output #0 axis 0");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    EXPECT_STREQ(e.what(), "'f' output #0 axis 0 (N) uses DimVar N, which no input axis binds");
  }
  // Twin: once an input axis is exactly N, the same extent has a program.
  FunctionPtr g = signature({{N * 2}, {N}}, {{N}});
  EXPECT_EQ(sema::dim_program(N, sema::dimvar_sites(*g), "x").size(), 1u);
}

TEST(ShapeProgram, InputAxisRules) {
  FunctionPtr f = signature({{N, 3}, {N, N * 2 - 1}}, {{N}});
  sema::DimVarSites sites = sema::dimvar_sites(*f);
  auto rule = [&](size_t i, size_t axis) {
    return sema::input_axis_requirement(*f, sites, i, axis);
  };
  EXPECT_EQ(rule(0, 0).rule, sema::AxisRule::kBindsDimVar);
  EXPECT_EQ(rule(0, 1).rule, sema::AxisRule::kStatic);
  EXPECT_EQ(rule(1, 0).rule, sema::AxisRule::kEqualsDimVar);
  EXPECT_EQ(rule(1, 0).site.input, 0u);
  EXPECT_EQ(rule(1, 1).rule, sema::AxisRule::kExpr);
}

// Every combination of extents in [0, 7): the programs (and the DimVar
// ranges) accept exactly what bind_arguments accepts, and give output_descs'
// shapes.
TEST(ShapeProgram, AgreesWithBinding) {
  FunctionPtr f =
      signature({{N, 3}, {N, N * 2 - 1}, {M}},
                {{dim_mod(dim_max(N, M), 4), dim_floordiv(M, 2) + 1}, {dim_min(N, M) - 2}});
  sema::DimVarSites sites = sema::dimvar_sites(*f);
  int accepted = 0, rejected = 0;
  for (int code = 0; code < 7 * 7 * 7 * 7 * 7; ++code) {
    std::vector<int64_t> e;
    for (int c = code, k = 0; k < 5; ++k, c /= 7) e.push_back(c % 7);
    std::vector<std::vector<int64_t>> shapes = {{e[0], e[1]}, {e[2], e[3]}, {e[4]}};
    bool ok = true;
    for (size_t i = 0; i < shapes.size(); ++i) {
      for (size_t axis = 0; axis < shapes[i].size(); ++axis) {
        sema::AxisRequirement r = sema::input_axis_requirement(*f, sites, i, axis);
        int64_t got = shapes[i][axis];
        if (r.dim.kind() == DimKind::kVar) ok = ok && r.dim.var_lo() <= got && got < r.dim.var_hi();
        auto want = run(sema::dim_program(r.dim, sites, "in"), shapes);
        ok = ok && want && *want == got;
      }
    }
    std::vector<std::vector<int64_t>> outs;
    for (const auto& t : flatten_tensor_types(f->return_type())) {
      outs.emplace_back();
      for (const auto& d : t->shape()) {
        auto v = ok ? run(sema::dim_program(d, sites, "out"), shapes) : std::nullopt;
        ok = ok && v && *v >= 0;
        outs.back().push_back(v.value_or(-1));
      }
    }
    std::vector<sema::ArgDesc> args;
    for (const auto& s : shapes) args.push_back({DType::kF32, s});
    try {
      std::vector<sema::ArgDesc> want = sema::output_descs(*f, sema::bind_arguments(*f, args));
      ASSERT_TRUE(ok) << "the programs reject extents binding accepts (code " << code << ")";
      for (size_t o = 0; o < want.size(); ++o) EXPECT_EQ(want[o].shape, outs[o]) << "code " << code;
      ++accepted;
    } catch (const Error& e) {
      ASSERT_FALSE(ok) << "the programs accept extents binding rejects: " << e.what();
      ++rejected;
    }
  }
  EXPECT_GT(accepted, 0);
  EXPECT_GT(rejected, 0);
}
