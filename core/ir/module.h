// Module: a Target, its ordered Topology hierarchy, and a symbol table of
// Functions (docs/ir.md, Modules). Immutable. Built by sema::seal, which verifies and
// types every Function first; Module::make itself only checks the table.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/ir/expr.h"

namespace tf::ir {

// The execution domain a Module declares: a target name ("cpu") and the
// ordered Topology levels, outermost first, e.g. {{"device", 1}, {"cta", 8}}.
struct Target {
  std::string name = "cpu";
  std::vector<std::pair<std::string, int64_t>> topology;
  bool operator==(const Target& o) const { return name == o.name && topology == o.topology; }
  // The default domain: cpu with (("device", 1), ("cta", <cores>)).
  static Target default_cpu();
  std::string to_string() const;  // Target("cpu", topology=(("device", 1), ("cta", 8)))
};

class Module;
using ModulePtr = std::shared_ptr<const Module>;

class Module {
 public:
  // Names must be distinct. The caller (sema::seal) has verified the functions.
  static ModulePtr make(Target target, std::vector<FunctionPtr> functions);
  const Target& target() const { return target_; }
  const std::vector<FunctionPtr>& functions() const { return functions_; }
  // Null when there is no function of that name.
  FunctionPtr lookup(const std::string& name) const;

  Module(Target t, std::vector<FunctionPtr> fns, std::map<std::string, size_t> index)
      : target_(std::move(t)), functions_(std::move(fns)), index_(std::move(index)) {}

 private:
  Target target_;
  std::vector<FunctionPtr> functions_;
  std::map<std::string, size_t> index_;
};

}  // namespace tf::ir
