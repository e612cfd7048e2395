// Negative twins: every rule the parser enforces fails with the right kind,
// at file:line:col, with the source line and a caret.
#include <gtest/gtest.h>

#include "core/frontend/suggest.h"
#include "frontend/round_trip.h"

namespace tf::frontend {
namespace {

using testing::expect_error;
using ir::ErrorKind;

// Wraps a body (4-space indented lines) in a function over x, y: f32 and
// w: bf16; the body starts on line 3.
std::string fn(const std::string& body) {
  return "@func\n"
         "def f(x: Tensor[(4,), f32], y: Tensor[(4,), f32], w: Tensor[(4,), bf16]) -> Tensor[(4,), f32]:\n" +
         body;
}

TEST(ParseError, MalformedExpression) {
  expect_error(fn("    return x +\n"), ErrorKind::kParse, 3, 15, {"expected an expression"});
  expect_error(fn("    return (x + y\n"), ErrorKind::kParse, 3, 12, {"never closed"});
  expect_error(fn("    return x y\n"), ErrorKind::kParse, 3, 14, {"expected end of line", "'y'"});
}

// Nesting is bounded (200 levels, Python's own parenthesis limit) so deep
// input cannot exhaust the stack of the parser or of a pass over its IR.
TEST(ParseError, NestingDeeperThan200LevelsIsRefused) {
  auto parses = [](const std::string& src) {
    try {
      parse_module("from tilefoundry.dsl import *\n" + src, "t.tf");
      return true;
    } catch (const ir::Error&) {
      return false;
    }
  };
  // 199 unary minus + the atom's own level: 200 levels, accepted.
  EXPECT_TRUE(parses(fn("    return " + std::string(199, '-') + "x\n")));
  EXPECT_TRUE(parses(fn("    return " + std::string(199, '(') + "x" + std::string(199, ')') + "\n")));
  expect_error(fn("    return " + std::string(200, '~') + "x\n"), ErrorKind::kParse, 3, 212,
               {"expression nested more than 200 levels deep"});
  expect_error(fn("    return " + std::string(5000, '(') + "x" + std::string(5000, ')') + "\n"), ErrorKind::kParse,
               3, 212, {"expression nested more than 200 levels deep"});
  std::string calls;
  for (int i = 0; i < 300; ++i) calls += "exp(";
  expect_error(fn("    return " + calls + "x" + std::string(300, ')') + "\n"), ErrorKind::kParse, 3, 812,
               {"expression nested more than 200 levels deep"});
}

TEST(ParseError, UnknownFunction) {
  expect_error(fn("    return frobnicate(x)\n"), ErrorKind::kParse, 3, 12, {"unknown function 'frobnicate'"});
}

TEST(ParseError, UnknownFunctionSuggestsTheNearestName) {
  // An op, a frontend call and an @func defined earlier in the file.
  expect_error(fn("    return rms_nrom(x, x)\n"), ErrorKind::kParse, 3, 12,
               {"unknown function 'rms_nrom'; did you mean 'rms_norm'?"});
  expect_error(fn("    return sofmax(x)\n"), ErrorKind::kParse, 3, 12,
               {"unknown function 'sofmax'; did you mean 'softmax'?"});
  expect_error(fn("    return reshrd(x)\n"), ErrorKind::kParse, 3, 12, {"did you mean 'reshard'?"});
  expect_error("@func\ndef helper(x: Tensor[(4,), f32]) -> Tensor[(4,), f32]:\n    return x\n\n" + fn("    return helpr(x)\n"),
               ErrorKind::kParse, 7, 12, {"unknown function 'helpr'; did you mean 'helper'?"});
  // Nothing near: no guess.
  try {
    frontend::parse_module(fn("    return frobnicate(x)\n"), "t.py");
    FAIL() << "parsed";
  } catch (const ir::Error& e) {
    EXPECT_EQ(std::string(e.what()).find("did you mean"), std::string::npos) << e.what();
  }
}

TEST(ParseError, UnknownKeyword) {
  // PyTorch's name for the axis is answered with the DSL's.
  expect_error(fn("    return softmax(x, dim=0)\n"), ErrorKind::kParse, 3, 23,
               {"'softmax' has no parameter named 'dim'; did you mean 'axis'?"});
  expect_error(fn("    return softmax(x, axsi=0)\n"), ErrorKind::kParse, 3, 23,
               {"'softmax' has no parameter named 'axsi'; did you mean 'axis'?"});
  expect_error(fn("    return rms_norm(x, x, epsilon=1e-5)\n"), ErrorKind::kParse, 3, 27,
               {"'rms_norm' has no parameter named 'epsilon'"});
}

TEST(ParseError, InfAndNanCannotBeRebound) {
  expect_error(fn("    inf = x\n    return x\n"), ErrorKind::kParse, 3, 5,
               {"'inf' is the float literal inf; bind another name"});
  expect_error("nan = 3\n" + fn("    return x\n"), ErrorKind::kParse, 1, 1, {"'nan' is the float literal nan"});
}

TEST(ParseError, WhereTakesALiteralsDtypeFromAValueNeverFromTheMask) {
  // A literal value beside a literal value has nothing to take a dtype from.
  expect_error(fn("    return where(x < y, 1.0, 2.0)\n"), ErrorKind::kType, 3, 25,
               {"a literal operand of 'where' needs a tensor partner operand"});
  // A literal mask is not a bool tensor.
  expect_error(fn("    return where(True, x, y)\n"), ErrorKind::kType, 3, 18,
               {"a literal operand of 'where' needs a tensor partner operand"});
  expect_error(fn("    return where(x, x, y)\n"), ErrorKind::kType, 3, 12,
               {"'where' operand #0 (cond) must be a bool tensor"});
}

TEST(ParseError, ClampBoundsAreScalars) {
  expect_error(fn("    return clamp(x, min=y)\n"), ErrorKind::kType, 3, 25, {"'clamp' argument 'min' must be a float"});
}

TEST(ParseError, UndefinedNameSuggestsALocalOrGlobal) {
  expect_error(fn("    hidden = x * 2.0\n    return hiden\n"), ErrorKind::kParse, 4, 12,
               {"undefined name 'hiden'; did you mean 'hidden'?"});
}

TEST(Suggest, EditDistanceCountsASwapOfNeighboursAsOneEdit) {
  EXPECT_EQ(frontend::edit_distance("norm", "nrom"), 1u);
  EXPECT_EQ(frontend::edit_distance("", "abc"), 3u);
  EXPECT_EQ(frontend::edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(frontend::nearest_name("x", {"y", "xx"}), std::optional<std::string>("y"));  // ties: the first
  EXPECT_EQ(frontend::nearest_name("abcdef", {"uvwxyz"}), std::nullopt);
  EXPECT_EQ(frontend::nearest_name("dim", {"x", "axes"}), std::optional<std::string>("axes"));
  // A name longer than any typo (64 characters) gets no guess.
  EXPECT_EQ(frontend::nearest_name(std::string(65, 'a'), {std::string(64, 'a')}), std::nullopt);
  EXPECT_EQ(frontend::nearest_name(std::string(64, 'a'), {std::string(63, 'a')}), std::optional<std::string>(std::string(63, 'a')));
}

TEST(ParseError, MissingArgument) {
  expect_error(fn("    return rms_norm(x, eps=1e-5)\n"), ErrorKind::kParse, 3, 12,
               {"missing required argument 'weight'"});
}

TEST(ParseError, DuplicateArgument) {
  expect_error(fn("    return softmax(x, 0, axis=0)\n"), ErrorKind::kParse, 3, 26,
               {"multiple values for argument 'axis'"});
}

TEST(ParseError, TooManyArguments) {
  expect_error(fn("    return silu(x, y)\n"), ErrorKind::kParse, 3, 20, {"'silu' takes 1 arguments"});
}

TEST(ParseError, PositionalAfterKeyword) {
  expect_error(fn("    return softmax(axis=0, x)\n"), ErrorKind::kParse, 3, 28, {"positional argument follows keyword"});
}

TEST(ParseError, BadAttributeValue) {
  expect_error(fn("    return softmax(x, axis=\"last\")\n"), ErrorKind::kType, 3, 28, {"'softmax' argument 'axis' must be an int"});
}

TEST(ParseError, UnexpectedIndent) {
  expect_error(fn("    a = x\n        return a\n"), ErrorKind::kParse, 4, 9, {"unexpected indent"});
}

TEST(ParseError, UnindentMismatch) {
  expect_error(fn("    a = x\n  return a\n"), ErrorKind::kParse, 4, 3, {"unindent does not match"});
}

TEST(ParseError, MissingIndentedBlock) {
  expect_error(fn("return x\n"), ErrorKind::kParse, 3, 1, {"expected an indented block"});
}

TEST(ParseError, DtypeMismatchInBinary) {
  // Typing is sema's; the frontend adds the source line and caret.
  expect_error(fn("    return x + w\n"), ErrorKind::kType, 3, 14, {"'add'", "bf16", "f32"});
}

TEST(ParseError, FloatLiteralWithIntTensor) {
  expect_error("@func\ndef f(i: Tensor[(4,), i32]) -> Tensor[(4,), i32]:\n    return i * 1.5\n", ErrorKind::kType, 3,
               16, {"float 1.5", "i32", "no implicit promotion"});
}

TEST(ParseError, TwoLiterals) {
  expect_error(fn("    return 1.0 + 2.0\n"), ErrorKind::kParse, 3, 16, {"both operands are literals"});
}

TEST(ParseError, PythonBoolKeywords) {
  expect_error(fn("    return not x\n"), ErrorKind::kParse, 3, 12, {"'not' is not supported", "~"});
  expect_error(fn("    return (x < y) and (y < x)\n"), ErrorKind::kParse, 3, 20, {"'and' is not supported", "&"});
}

TEST(ParseError, ChainedComparison) {
  expect_error(fn("    return x < y < x\n"), ErrorKind::kParse, 3, 18, {"chained comparisons"});
}

TEST(ParseError, UndefinedName) {
  expect_error(fn("    return x + z\n"), ErrorKind::kParse, 3, 16, {"undefined name 'z'"});
}

TEST(ParseError, UnknownDtypeInSignature) {
  expect_error("@func\ndef f(x: Tensor[(4,), f33]) -> Tensor[(4,), f32]:\n    return x\n", ErrorKind::kParse, 2, 23,
               {"undefined name 'f33'"});
}

TEST(ParseError, ShapeMustBeATuple) {
  expect_error("@func\ndef f(x: Tensor[4, f32]) -> Tensor[(4,), f32]:\n    return x\n", ErrorKind::kParse, 2, 17,
               {"shape must be a tuple"});
}

TEST(ParseError, ReturnTypeMismatch) {
  expect_error(fn("    return w\n"), ErrorKind::kType, 2, 5, {"returns Tensor[(4,), bf16]", "declares Tensor[(4,), f32]"});
}

TEST(ParseError, MissingReturn) {
  expect_error(fn("    a = x\n"), ErrorKind::kParse, 2, 1, {"no return statement"});
}

TEST(ParseError, StatementAfterReturn) {
  expect_error(fn("    return x\n    a = y\n"), ErrorKind::kParse, 4, 5, {"unreachable"});
}

TEST(ParseError, SpecializeNeedsAPrototype) {
  expect_error("@decode.specialize(S=(1, 64))\ndef g(x: Tensor[(4,), f32]) -> Tensor[(4,), f32]:\n    return x\n",
               ErrorKind::kParse, 1, 2, {"not a dispatch prototype"});
}

TEST(ParseError, WhileNotSupportedYet) {
  expect_error(fn("    while x:\n        x = x\n    return x\n"), ErrorKind::kParse, 3, 5,
               {"'while' statements are not supported yet"});
}

TEST(ParseError, CallToLaterFunction) {
  expect_error("@func\ndef f(x: Tensor[(4,), f32]) -> Tensor[(4,), f32]:\n    return g(x)\n"
               "@func\ndef g(x: Tensor[(4,), f32]) -> Tensor[(4,), f32]:\n    return x\n",
               ErrorKind::kParse, 3, 12, {"unknown function 'g'"});
}

TEST(ParseError, FunctionCallTypeMismatch) {
  expect_error("@func\ndef g(x: Tensor[(4,), f32]) -> Tensor[(4,), f32]:\n    return x\n"
               "@func\ndef f(x: Tensor[(8,), f32]) -> Tensor[(4,), f32]:\n    return g(x)\n",
               ErrorKind::kType, 6, 12, {"call to 'g'"});
}

TEST(ParseError, DuplicateFunctionAndParameter) {
  expect_error("@func\ndef f(x: Tensor[(4,), f32]) -> Tensor[(4,), f32]:\n    return x\n"
               "@func\ndef f(x: Tensor[(4,), f32]) -> Tensor[(4,), f32]:\n    return x\n",
               ErrorKind::kParse, 5, 5, {"defined twice"});
  expect_error("@func\ndef f(x: Tensor[(4,), f32], x: Tensor[(4,), f32]) -> Tensor[(4,), f32]:\n    return x\n",
               ErrorKind::kParse, 2, 29, {"duplicate parameter 'x'"});
}

TEST(ParseError, MissingAnnotations) {
  expect_error("@func\ndef f(x) -> Tensor[(4,), f32]:\n    return x\n", ErrorKind::kParse, 2, 8,
               {"needs a Tensor[...] annotation"});
  expect_error("@func\ndef f(x: Tensor[(4,), f32]):\n    return x\n", ErrorKind::kParse, 2, 28,
               {"needs a return annotation"});
}

TEST(ParseError, NoDecorator) {
  expect_error("def f(x: Tensor[(4,), f32]) -> Tensor[(4,), f32]:\n    return x\n", ErrorKind::kParse, 1, 1,
               {"@func"});
}

TEST(ParseError, TooManyIndices) {
  expect_error(fn("    return x[0, 1]\n"), ErrorKind::kParse, 3, 13, {"too many indices"});
}

TEST(ParseError, BadDimVar) {
  expect_error("N = DimVar(\"N\", 8, 8)\n", ErrorKind::kType, 1, 5, {"lo < hi"});
  expect_error("N = DimVar(\"N\", 1.5, 8)\n", ErrorKind::kParse, 1, 17, {"bounds must be ints"});
}

TEST(ParseError, BadTarget) {
  expect_error("TARGET = Target(\"cpu\", topology=((\"cta\", 0),))\n", ErrorKind::kParse, 1, 42,
               {"extent must be positive"});
  expect_error("TARGET = Tarjet(\"cpu\")\n", ErrorKind::kParse, 1, 10, {"Target(...)"});
}

TEST(ParseError, TensorOpOutsideBody) {
  expect_error("X = zeros((4,), f32)\n", ErrorKind::kParse, 1, 5, {"inside an @func body"});
}

TEST(ParseError, ExpressionStatement) {
  expect_error(fn("    x + y\n    return x\n"), ErrorKind::kParse, 3, 5, {"has no effect"});
}

// @func(inplace=...): each mistake located at the argument at fault.
TEST(ParseError, InPlaceAnnotation) {
  const std::string sig = "def f(cache: Tensor[(4, 8), f32], new: Tensor[(1, 8), f32]) -> Tensor[(4, 8), f32]:\n"
                          "    return insert_slice(cache, new, (0, 0))\n";
  expect_error("@func(inplace=\"cahce\")\n" + sig, ErrorKind::kParse, 1, 15,
               {"inplace= names 'cahce', which is not a parameter; did you mean 'cache'?"});
  expect_error("@func(donate=\"cache\")\n" + sig, ErrorKind::kParse, 1, 7, {"unknown @func argument 'donate'"});
  expect_error("@func(\"cache\")\n" + sig, ErrorKind::kParse, 1, 7, {"@func takes keyword arguments only"});
  expect_error("@func(inplace=3)\n" + sig, ErrorKind::kParse, 1, 15, {"inplace= takes a parameter name"});
  expect_error("@func(inplace=(\"cache\", None))\n" + sig, ErrorKind::kParse, 1, 15,
               {"inplace= has 2 entries, but the function returns 1 results"});
  // The buffer receives the result as it is: the types must be the same.
  expect_error("@func(inplace=\"new\")\n" + sig, ErrorKind::kType, 2, 5,
               {"result 0 (Tensor[(4, 8), f32]) is written in place of parameter 'new' (Tensor[(1, 8), f32]), "
                "which needs the same type"});
  const std::string two = "def g(a: Tensor[(4,), f32]) -> tuple[Tensor[(4,), f32], Tensor[(4,), f32]]:\n"
                          "    return a + 1.0, a * 2.0\n";
  expect_error("@func(inplace=\"a\")\n" + two, ErrorKind::kParse, 1, 15,
               {"inplace=\"a\" names one result, but the function returns 2"});
  expect_error("@func(inplace=(\"a\", \"a\"))\n" + two, ErrorKind::kType, 2, 5,
               {"parameter 'a' receives two results in place"});
}

TEST(ParseError, PowerNeedsAFloatTensor) {
  expect_error("@func\ndef f(i: Tensor[(4,), i32]) -> Tensor[(4,), f32]:\n    return cast(i ** 2, f32)\n",
               ErrorKind::kType, 3, 19, {"'pow'", "i32"});
  expect_error("N = 2 ** 3\n", ErrorKind::kParse, 1, 7, {"operator '**' is not defined on ints and dims"});
}

}  // namespace
}  // namespace tf::frontend
