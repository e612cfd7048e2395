#include "core/frontend/source.h"

namespace tf::frontend {

SourceText::SourceText(std::string_view text, const std::string& filename)
    : text_(text), file_(std::make_shared<const std::string>(filename)) {
  line_starts_.push_back(0);
  for (size_t i = 0; i < text_.size(); ++i)
    if (text_[i] == '\n') line_starts_.push_back(i + 1);
}

std::string SourceText::location(Pos p) const {
  return *file_ + ":" + std::to_string(p.line) + ":" + std::to_string(p.col);
}

std::string SourceText::snippet(Pos p) const {
  if (p.line < 1 || static_cast<size_t>(p.line) > line_starts_.size()) return "";
  size_t begin = line_starts_[p.line - 1];
  size_t end = text_.find('\n', begin);
  std::string line = text_.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  // Tabs are copied into the caret line so the caret stays aligned.
  std::string caret;
  for (int i = 0; i + 1 < p.col && static_cast<size_t>(i) < line.size(); ++i)
    caret += line[i] == '\t' ? '\t' : ' ';
  return "    " + line + "\n    " + caret + "^";
}

void SourceText::fail(ir::ErrorKind kind, Pos p, const std::string& message) const {
  throw ir::Error(kind, location(p) + ": error: " + message + "\n" + snippet(p));
}

void SourceText::rethrow_at(const ir::Error& e, Pos p) const {
  std::string msg = e.what();
  bool located = msg.rfind(*file_ + ":", 0) == 0 && msg.find(": error: ") != std::string::npos;
  if (!located) msg = location(p) + ": error: " + msg;
  if (msg.find('\n') == std::string::npos) msg += "\n" + snippet(p);
  throw ir::Error(e.kind(), msg);
}

}  // namespace tf::frontend
