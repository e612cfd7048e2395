// The lexer: Python-style tokens with INDENT / DEDENT. Newlines inside
// brackets and after a backslash continue the logical line; comments and
// blank lines produce nothing. Throws Error(kParse) at the offending column.
#pragma once

#include <vector>

#include "core/frontend/token.h"

namespace tf::frontend {

// The token stream always ends with NEWLINE (if any tokens), the closing
// DEDENTs, and one kEnd.
std::vector<Token> tokenize(const SourceText& src);

}  // namespace tf::frontend
