// Unique spellings of TIR variables for a printer: a Var keeps its name
// unless another Var took it first, then gets the first free name_<n>.
// (Variables are identified by node; lowering may reuse a name.)
#pragma once

#include <string>
#include <unordered_map>
#include <unordered_set>

#include "core/tir/expr.h"

namespace tf::tir {

class NameTable {
 public:
  const std::string& name(const Var* v);
  // Marks a spelling as taken (a printer's own identifiers).
  void reserve(const std::string& s) { used_.insert(s); }

 private:
  std::unordered_map<const Var*, std::string> names_;
  std::unordered_set<std::string> used_;
};

}  // namespace tf::tir
