#include "core/frontend/suggest.h"

#include <algorithm>
#include <map>

namespace tf::frontend {

size_t edit_distance(const std::string& a, const std::string& b) {
  // Optimal string alignment: Levenshtein plus the transposition of two
  // neighbouring characters ("nrom" for "norm" is one edit, not two).
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1));
  for (size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[n][m];
}

std::optional<std::string> nearest_name(const std::string& got, const std::vector<std::string>& candidates) {
  // PyTorch's keyword names for what the DSL calls otherwise: a user coming
  // from torch writes them, and no edit distance connects them.
  static const std::map<std::string, std::vector<std::string>> torch_spelling = {
      {"dim", {"axis", "axes"}}, {"keepdims", {"keepdim"}}, {"input", {"x"}}};
  if (auto it = torch_spelling.find(got); it != torch_spelling.end())
    for (const std::string& s : it->second)
      if (std::find(candidates.begin(), candidates.end(), s) != candidates.end()) return s;
  // A typo is short; a very long name gets no guess (and no quadratic table).
  constexpr size_t kLongest = 64;
  if (got.size() > kLongest) return std::nullopt;
  std::optional<std::string> best;
  size_t best_d = 0;
  for (const std::string& c : candidates) {
    if (c == got || c.size() > kLongest) continue;
    const size_t d = edit_distance(got, c);
    const size_t limit = std::max<size_t>(1, std::max(got.size(), c.size()) / 3);
    if (d <= limit && (!best || d < best_d)) {
      best = c;
      best_d = d;
    }
  }
  return best;
}

std::string did_you_mean(const std::string& got, const std::vector<std::string>& candidates) {
  auto n = nearest_name(got, candidates);
  return n ? "; did you mean '" + *n + "'?" : "";
}

}  // namespace tf::frontend
