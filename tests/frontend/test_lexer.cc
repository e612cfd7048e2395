#include <gtest/gtest.h>

#include "core/frontend/lexer.h"

namespace tf::frontend {
namespace {

std::vector<Token> lex(const std::string& text) {
  SourceText src(text, "t.tf");
  return tokenize(src);
}

std::vector<TokenKind> kinds(const std::vector<Token>& toks) {
  std::vector<TokenKind> k;
  for (const auto& t : toks) k.push_back(t.kind);
  return k;
}

TEST(Lexer, TokensCarryLineAndColumn) {
  auto t = lex("x = foo(a, 2)\ny = 1.5e-3\n");
  ASSERT_GE(t.size(), 12u);
  EXPECT_EQ(t[0].text, "x");
  EXPECT_EQ(t[0].pos.line, 1);
  EXPECT_EQ(t[0].pos.col, 1);
  EXPECT_TRUE(t[3].is_op("("));
  EXPECT_EQ(t[3].pos.col, 8);
  EXPECT_EQ(t[6].kind, TokenKind::kInt);
  EXPECT_EQ(t[6].int_value, 2);
  EXPECT_EQ(t[6].pos.col, 12);
  EXPECT_EQ(t[9].text, "y");
  EXPECT_EQ(t[9].pos.line, 2);
  EXPECT_EQ(t[11].kind, TokenKind::kFloat);
  EXPECT_DOUBLE_EQ(t[11].float_value, 1.5e-3);
  EXPECT_EQ(t[11].pos.col, 5);
}

TEST(Lexer, IndentDedentAndBlankLines) {
  auto t = lex("def f():\n    a = 1\n\n    # comment\n    return a\nb = 2\n");
  auto k = kinds(t);
  std::vector<TokenKind> want = {
      TokenKind::kName, TokenKind::kName, TokenKind::kOp,      TokenKind::kOp,   TokenKind::kOp,
      TokenKind::kNewline, TokenKind::kIndent, TokenKind::kName, TokenKind::kOp, TokenKind::kInt,
      TokenKind::kNewline, TokenKind::kName, TokenKind::kName, TokenKind::kNewline, TokenKind::kDedent,
      TokenKind::kName, TokenKind::kOp, TokenKind::kInt, TokenKind::kNewline, TokenKind::kEnd};
  EXPECT_EQ(k, want);
}

TEST(Lexer, DedentsClosedAtEndOfFile) {
  auto k = kinds(lex("def f():\n  if x:\n    y"));
  ASSERT_GE(k.size(), 4u);
  EXPECT_EQ(k[k.size() - 1], TokenKind::kEnd);
  EXPECT_EQ(k[k.size() - 2], TokenKind::kDedent);
  EXPECT_EQ(k[k.size() - 3], TokenKind::kDedent);
  EXPECT_EQ(k[k.size() - 4], TokenKind::kNewline);
}

TEST(Lexer, NewlinesInsideBracketsContinueTheLine) {
  auto k = kinds(lex("f(a,\n      b\n)\n"));
  int newlines = 0;
  for (auto x : k) newlines += x == TokenKind::kNewline;
  EXPECT_EQ(newlines, 1);
  for (auto x : k) EXPECT_NE(x, TokenKind::kIndent);
}

TEST(Lexer, BackslashContinuation) {
  auto k = kinds(lex("a = 1 + \\\n    2\n"));
  int newlines = 0;
  for (auto x : k) newlines += x == TokenKind::kNewline;
  EXPECT_EQ(newlines, 1);
}

TEST(Lexer, LongestOperatorWins) {
  auto t = lex("a // b << 2 <= c -> d != e\n");
  EXPECT_TRUE(t[1].is_op("//"));
  EXPECT_TRUE(t[3].is_op("<<"));
  EXPECT_TRUE(t[5].is_op("<="));
  EXPECT_TRUE(t[7].is_op("->"));
  EXPECT_TRUE(t[9].is_op("!="));
}

TEST(Lexer, NumberForms) {
  auto t = lex("1e-6 2.0 .5 7 0x10\n");
  EXPECT_EQ(t[0].kind, TokenKind::kFloat);
  EXPECT_DOUBLE_EQ(t[0].float_value, 1e-6);
  EXPECT_EQ(t[1].kind, TokenKind::kFloat);
  EXPECT_EQ(t[2].kind, TokenKind::kFloat);
  EXPECT_DOUBLE_EQ(t[2].float_value, 0.5);
  EXPECT_EQ(t[3].kind, TokenKind::kInt);
  EXPECT_EQ(t[4].int_value, 16);
}

TEST(Lexer, StringsAndDocstrings) {
  auto t = lex("'a\\'b' \"\"\"doc\nmore\"\"\" x\n");
  EXPECT_EQ(t[0].kind, TokenKind::kString);
  EXPECT_EQ(t[0].text, "a'b");
  EXPECT_EQ(t[1].text, "doc\nmore");
  EXPECT_EQ(t[2].text, "x");
  EXPECT_EQ(t[2].pos.line, 2);
}

void expect_lex_error(const std::string& text, int line, int col, const std::string& word) {
  try {
    lex(text);
    ADD_FAILURE() << "expected a lex error for " << text;
  } catch (const ir::Error& e) {
    EXPECT_EQ(e.kind(), ir::ErrorKind::kParse);
    std::string msg = e.what();
    std::string loc = "t.tf:" + std::to_string(line) + ":" + std::to_string(col) + ": error: ";
    EXPECT_EQ(msg.rfind(loc, 0), 0u) << msg;
    EXPECT_NE(msg.find(word), std::string::npos) << msg;
    EXPECT_NE(msg.find("\n    " + std::string(col - 1, ' ') + "^"), std::string::npos) << msg;
  }
}

TEST(Lexer, ErrorsPointAtTheOffendingCharacter) {
  expect_lex_error("a = 1 $ 2\n", 1, 7, "unexpected character '$'");
  expect_lex_error("a = 'abc\n", 1, 5, "unterminated string");
  expect_lex_error("def f():\n    a\n  b\n", 3, 3, "unindent does not match");
  expect_lex_error("a = f(1,\n", 1, 6, "never closed");
  expect_lex_error("a = 1)\n", 1, 6, "unmatched ')'");
  expect_lex_error("a = 1e\n", 1, 7, "exponent");
  expect_lex_error("def f():\n\tx\n", 2, 1, "tabs");
}

}  // namespace
}  // namespace tf::frontend
