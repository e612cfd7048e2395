#include "core/ir/module.h"

#include <thread>

#include "core/ir/error.h"

namespace tf::ir {

Target Target::default_cpu() {
  unsigned cores = std::thread::hardware_concurrency();
  return Target{"cpu", {{"device", 1}, {"cta", cores ? static_cast<int64_t>(cores) : 1}}};
}

namespace {

// A DSL string literal holding s: escapes what the lexer would otherwise end
// the literal on or reinterpret (fuzz finding, tests/fuzz/regressions/parser).
std::string quoted(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '\\' || c == '"') q += '\\', q += c;
    else if (c == '\n') q += "\\n";
    else if (c == '\t') q += "\\t";
    else q += c;
  }
  return q + "\"";
}

}  // namespace

std::string Target::to_string() const {
  std::string s = "Target(" + quoted(name) + ", topology=(";
  for (size_t i = 0; i < topology.size(); ++i)
    s += (i ? ", (" : "(") + quoted(topology[i].first) + ", " + std::to_string(topology[i].second) + ")";
  return s + (topology.size() == 1 ? ",))" : "))");
}

ModulePtr Module::make(Target target, std::vector<FunctionPtr> functions) {
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < functions.size(); ++i) {
    TF_CHECK(functions[i] != nullptr, "null function in module");
    if (!index.emplace(functions[i]->name(), i).second)
      fail(ErrorKind::kVerify, "module defines function '" + functions[i]->name() + "' twice");
  }
  return std::make_shared<const Module>(std::move(target), std::move(functions), std::move(index));
}

FunctionPtr Module::lookup(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : functions_[it->second];
}

}  // namespace tf::ir
