// OpPartTable<T>: how a layer above ops attaches its per-op part — the
// evaluator's kernel, the native compiler's lowering — keyed by the op's
// registry name. It is open: parts may be added at any time, from any
// thread, under the rule "register before use" (an addition is safe against
// concurrent lookups; a part, once added, never changes or goes away). A
// name takes one part: adding a second is an error, not a silent override.
// part() describes the table to the completeness check (completeness.h).
#pragma once

#include <map>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/error.h"
#include "core/ops/completeness.h"

namespace tf::ops {

template <typename T>
class OpPartTable {
 public:
  // what: the part, as "<Op> lacks <what>" reads ("an evaluator kernel").
  explicit OpPartTable(std::string what) : what_(std::move(what)) {}
  OpPartTable(const OpPartTable&) = delete;
  OpPartTable& operator=(const OpPartTable&) = delete;

  // Error(kInvalidArgument) when op_name already has one.
  void add(std::string op_name, T part) {
    std::unique_lock lock(mu_);
    if (parts_.count(op_name))
      ir::fail(ir::ErrorKind::kInvalidArgument, "op '" + op_name + "' already has " + what_);
    parts_.emplace(std::move(op_name), std::move(part));
  }

  // Null when there is none. The part lives as long as the table.
  const T* find(std::string_view op_name) const {
    std::shared_lock lock(mu_);
    auto it = parts_.find(op_name);
    return it == parts_.end() ? nullptr : &it->second;
  }

  std::vector<std::string> names() const {
    std::shared_lock lock(mu_);
    std::vector<std::string> out;
    for (const auto& entry : parts_) out.push_back(entry.first);
    return out;
  }

  // The table as one part of the completeness check; it refers to this table.
  OpPart part() const {
    return {what_, [this](const OpInfo& op) { return find(op.name) != nullptr; }, [this] { return names(); }};
  }

 private:
  const std::string what_;
  mutable std::shared_mutex mu_;
  std::map<std::string, T, std::less<>> parts_;  // a map: entries never move once added
};

}  // namespace tf::ops
