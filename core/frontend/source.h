// SourceText: one DSL file held for diagnostics. Every frontend error points
// at a position in it and is shaped
//   file:line:col: error: <message>
//       <the source line>
//       <caret under the column>
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/error.h"
#include "core/ir/expr.h"

namespace tf::frontend {

// A 1-based source position; col counts bytes.
struct Pos {
  int line = 0;
  int col = 0;
};

class SourceText {
 public:
  SourceText(std::string_view text, const std::string& filename);

  const std::string& text() const { return text_; }
  const std::shared_ptr<const std::string>& file() const { return file_; }
  ir::Span span(Pos p) const { return ir::Span{file_, p.line, p.col}; }
  // "file:line:col"
  std::string location(Pos p) const;
  // The source line and a caret line, each indented four spaces.
  std::string snippet(Pos p) const;

  // Error(kind) "file:line:col: error: <message>" plus the snippet.
  [[noreturn]] void fail(ir::ErrorKind kind, Pos p, const std::string& message) const;
  [[noreturn]] void parse_error(Pos p, const std::string& message) const {
    fail(ir::ErrorKind::kParse, p, message);
  }
  // Re-throws an error raised while building IR at p (a sema type error, an op
  // factory's rule) with the same kind, adding the location prefix when the
  // message lacks one and the snippet when it lacks one.
  [[noreturn]] void rethrow_at(const ir::Error& e, Pos p) const;

 private:
  std::string text_;
  std::shared_ptr<const std::string> file_;
  std::vector<size_t> line_starts_;  // byte offset of each line
};

}  // namespace tf::frontend
