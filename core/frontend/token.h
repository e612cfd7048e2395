// Tokens of the DSL's Python subset.
#pragma once

#include <cstdint>
#include <string>

#include "core/frontend/source.h"

namespace tf::frontend {

enum class TokenKind : uint8_t {
  kName,     // identifiers and keywords (def, return, pass, ...)
  kInt,      // decimal or 0x literal; value in int_value
  kFloat,    // value in float_value
  kString,   // text holds the decoded contents
  kOp,       // operator or punctuation; text holds its spelling
  kNewline,  // end of a logical line
  kIndent,
  kDedent,
  kEnd,
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string text;  // the spelling (decoded for strings)
  int64_t int_value = 0;
  double float_value = 0;
  Pos pos;

  bool is_op(const char* s) const { return kind == TokenKind::kOp && text == s; }
  bool is_name(const char* s) const { return kind == TokenKind::kName && text == s; }
};

// What a token is called in "expected X, but got Y" messages.
std::string describe_token(const Token& t);

}  // namespace tf::frontend
