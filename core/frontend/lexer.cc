#include "core/frontend/lexer.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <utility>

namespace tf::frontend {

std::string describe_token(const Token& t) {
  switch (t.kind) {
    case TokenKind::kName: return "'" + t.text + "'";
    case TokenKind::kInt:
    case TokenKind::kFloat: return "number " + t.text;
    case TokenKind::kString: return "a string";
    case TokenKind::kOp: return "'" + t.text + "'";
    case TokenKind::kNewline: return "end of line";
    case TokenKind::kIndent: return "an indent";
    case TokenKind::kDedent: return "a dedent";
    case TokenKind::kEnd: return "end of file";
  }
  return "?";
}

namespace {

// Longest spellings first so that "//" wins over "/".
const char* const kOperators[] = {"//", "<<", ">>", "<=", ">=", "==", "!=", "->", "**",
                                  "+",  "-",  "*",  "/",  "%",  "@",  "&",  "|",  "^",
                                  "~",  "<",  ">",  "=",  "(",  ")",  "[",  "]",  ",",
                                  ":",  ".",  ";"};

class Lexer {
 public:
  explicit Lexer(const SourceText& src) : src_(src), s_(src.text()) {}

  std::vector<Token> run() {
    while (i_ < s_.size()) {
      if (at_line_start_ && opens_.empty()) {
        if (indentation()) continue;  // blank or comment-only line
      }
      char c = s_[i_];
      if (c == '\n') {
        newline_char();
        continue;
      }
      if (c == ' ' || c == '\t' || c == '\r' || c == '\f') {
        advance();
        continue;
      }
      if (c == '#') {
        while (i_ < s_.size() && s_[i_] != '\n') advance();
        continue;
      }
      if (c == '\\') {
        continuation();
        continue;
      }
      token();
    }
    if (!opens_.empty())
      src_.parse_error(opens_.back().second,
                       std::string("'") + opens_.back().first + "' was never closed");
    if (!out_.empty() && out_.back().kind != TokenKind::kNewline) emit(TokenKind::kNewline, "", pos());
    while (indents_.size() > 1) {
      indents_.pop_back();
      emit(TokenKind::kDedent, "", pos());
    }
    emit(TokenKind::kEnd, "", pos());
    return std::move(out_);
  }

 private:
  Pos pos() const { return Pos{line_, col_}; }
  void advance() {
    if (s_[i_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++i_;
  }
  void emit(TokenKind k, std::string text, Pos p) {
    Token t;
    t.kind = k;
    t.text = std::move(text);
    t.pos = p;
    out_.push_back(std::move(t));
  }

  // Measures the indentation of a new line and emits INDENT / DEDENT.
  // Returns true when the line is blank or holds only a comment.
  bool indentation() {
    size_t j = i_;
    int width = 0;
    while (j < s_.size() && (s_[j] == ' ' || s_[j] == '\t')) {
      if (s_[j] == '\t') src_.parse_error(Pos{line_, static_cast<int>(j - i_) + 1},
                                          "tabs are not allowed in indentation; use spaces");
      ++width;
      ++j;
    }
    if (j >= s_.size() || s_[j] == '\n' || s_[j] == '#' || s_[j] == '\r') {
      while (i_ < s_.size() && s_[i_] != '\n') advance();
      if (i_ < s_.size()) advance();
      return true;
    }
    while (i_ < j) advance();
    at_line_start_ = false;
    if (width > indents_.back()) {
      indents_.push_back(width);
      emit(TokenKind::kIndent, "", pos());
    } else {
      while (width < indents_.back()) {
        indents_.pop_back();
        emit(TokenKind::kDedent, "", pos());
      }
      if (width != indents_.back())
        src_.parse_error(pos(), "unindent does not match any outer indentation level");
    }
    return false;
  }

  void newline_char() {
    if (opens_.empty()) {
      if (!out_.empty() && out_.back().kind != TokenKind::kNewline) emit(TokenKind::kNewline, "", pos());
      at_line_start_ = true;
    }
    advance();
  }

  void continuation() {
    Pos p = pos();
    advance();
    if (i_ < s_.size() && s_[i_] == '\r') advance();
    if (i_ >= s_.size() || s_[i_] != '\n') src_.parse_error(p, "unexpected character after line continuation '\\'");
    advance();
  }

  void token() {
    char c = s_[i_];
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') return name();
    if (std::isdigit(static_cast<unsigned char>(c)) ||
        (c == '.' && i_ + 1 < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_ + 1]))))
      return number();
    if (c == '"' || c == '\'') return string();
    for (const char* op : kOperators) {
      size_t n = std::char_traits<char>::length(op);
      if (s_.compare(i_, n, op) == 0) return punct(op, n);
    }
    src_.parse_error(pos(), std::string("unexpected character '") + c + "'");
  }

  void name() {
    Pos p = pos();
    size_t b = i_;
    while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_')) advance();
    emit(TokenKind::kName, s_.substr(b, i_ - b), p);
  }

  void number() {
    Pos p = pos();
    size_t b = i_;
    bool is_float = false;
    if (s_.compare(i_, 2, "0x") == 0 || s_.compare(i_, 2, "0X") == 0) {
      advance();
      advance();
      while (i_ < s_.size() && std::isxdigit(static_cast<unsigned char>(s_[i_]))) advance();
    } else {
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) advance();
      if (i_ < s_.size() && s_[i_] == '.') {
        is_float = true;
        advance();
        while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) advance();
      }
      if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
        is_float = true;
        advance();
        if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) advance();
        if (i_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[i_])))
          src_.parse_error(pos(), "malformed float literal: expected exponent digits");
        while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) advance();
      }
    }
    if (i_ < s_.size() && (std::isalpha(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_'))
      src_.parse_error(pos(), "malformed number literal");
    std::string text = s_.substr(b, i_ - b);
    Token t;
    t.text = text;
    t.pos = p;
    errno = 0;
    if (is_float) {
      t.kind = TokenKind::kFloat;
      t.float_value = std::strtod(text.c_str(), nullptr);
    } else {
      t.kind = TokenKind::kInt;
      t.int_value = std::strtoll(text.c_str(), nullptr, 0);
      if (text.size() > 1 && text[0] == '0' && std::isdigit(static_cast<unsigned char>(text[1])))
        src_.parse_error(p, "leading zeros in an int literal are not allowed");
    }
    if (errno == ERANGE) src_.parse_error(p, "number literal " + text + " is out of range");
    out_.push_back(std::move(t));
  }

  void string() {
    Pos p = pos();
    char q = s_[i_];
    bool triple = s_.compare(i_, 3, std::string(3, q)) == 0;
    for (int k = 0; k < (triple ? 3 : 1); ++k) advance();
    std::string value;
    while (true) {
      if (i_ >= s_.size() || (!triple && s_[i_] == '\n')) src_.parse_error(p, "unterminated string literal");
      if (triple ? s_.compare(i_, 3, std::string(3, q)) == 0 : s_[i_] == q) break;
      // Printed modules are NUL-terminated C strings (tf_module_print), so a
      // NUL could never round-trip (fuzz finding, tests/fuzz/regressions/parser).
      if (s_[i_] == '\0') src_.parse_error(pos(), "NUL byte in a string literal");
      if (s_[i_] == '\\' && i_ + 1 < s_.size()) {
        advance();
        char e = s_[i_];
        // An escaped NUL is a NUL all the same (a second fuzz finding).
        if (e == '\0') src_.parse_error(pos(), "NUL byte in a string literal");
        value += e == 'n' ? '\n' : e == 't' ? '\t' : e;
        advance();
        continue;
      }
      value += s_[i_];
      advance();
    }
    for (int k = 0; k < (triple ? 3 : 1); ++k) advance();
    emit(TokenKind::kString, std::move(value), p);
  }

  void punct(const char* op, size_t n) {
    Pos p = pos();
    char c = op[0];
    if (n == 1 && (c == '(' || c == '[')) opens_.push_back({c, p});
    if (n == 1 && (c == ')' || c == ']')) {
      char want = c == ')' ? '(' : '[';
      if (opens_.empty() || opens_.back().first != want)
        src_.parse_error(p, std::string("unmatched '") + c + "'");
      opens_.pop_back();
    }
    for (size_t k = 0; k < n; ++k) advance();
    emit(TokenKind::kOp, op, p);
  }

  const SourceText& src_;
  const std::string& s_;
  size_t i_ = 0;
  int line_ = 1, col_ = 1;
  // Open brackets; while any is open, newlines are whitespace.
  std::vector<std::pair<char, Pos>> opens_;
  bool at_line_start_ = true;
  std::vector<int> indents_{0};
  std::vector<Token> out_;
};

}  // namespace

std::vector<Token> tokenize(const SourceText& src) { return Lexer(src).run(); }

}  // namespace tf::frontend
