#include "core/tir/names.h"

namespace tf::tir {

const std::string& NameTable::name(const Var* v) {
  auto it = names_.find(v);
  if (it != names_.end()) return it->second;
  std::string n = v->name();
  for (int k = 1; used_.count(n); ++k) n = v->name() + "_" + std::to_string(k);
  used_.insert(n);
  return names_.emplace(v, n).first->second;
}

}  // namespace tf::tir
