// "Did you mean ...?" for a misspelled name: the nearest candidate by edit
// distance, when it is near enough to be a typo, or the DSL's spelling of a
// PyTorch keyword (dim -> axis / axes).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace tf::frontend {

// Edits (insert, delete, substitute, swap two neighbours) from a to b.
size_t edit_distance(const std::string& a, const std::string& b);

// The candidate a user most likely meant by `got`: PyTorch's keyword
// spelling first, then the nearest name within max(1, longer / 3) edits
// (ties: the first in `candidates`). None when nothing is that near.
std::optional<std::string> nearest_name(const std::string& got, const std::vector<std::string>& candidates);

// "; did you mean 'x'?" for the nearest name, or "".
std::string did_you_mean(const std::string& got, const std::vector<std::string>& candidates);

}  // namespace tf::frontend
