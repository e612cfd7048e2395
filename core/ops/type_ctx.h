// TypeCtx: what an op's typeinfer sees — its operand types — and how it
// reports a failure. Every diagnostic has one shape:
//   <file:line:col>: error: 'rms_norm' operand #1 (weight) must be rank-1 with
//   the length of x's last axis (4096), but got Tensor[(8,), f32]
#pragma once

#include <string>
#include <vector>

#include "core/ir/error.h"
#include "core/ir/expr.h"

namespace tf::ops {

class TypeCtx {
 public:
  TypeCtx(std::string surface, const std::vector<std::string>* operand_names,
          std::vector<ir::TypePtr> arg_types, ir::Span span)
      : surface_(std::move(surface)), names_(operand_names), types_(std::move(arg_types)),
        span_(std::move(span)) {}

  size_t num_operands() const { return types_.size(); }
  const ir::TypePtr& type(size_t i) const { return types_.at(i); }
  // Operand i as a tensor; an error naming the operand when it is not one.
  const ir::TensorType& tensor(size_t i) const;
  // Operand i as a float tensor.
  const ir::TensorType& float_tensor(size_t i) const;
  // Operand i as a Tuple of tensors (how variadic operands travel: concat's
  // inputs, insert_slice's offsets); a bare tensor is a 1-tuple when
  // allow_bare. An error naming the operand otherwise.
  std::vector<const ir::TensorType*> tensors(size_t i, bool allow_bare = false) const;

  // "'<op>' operand #i (<name>) must be <constraint>, but got <type>"
  [[noreturn]] void operand_error(size_t i, const std::string& constraint) const;
  // "'<op>' <rule>" for a rule about attributes or the op as a whole.
  [[noreturn]] void error(const std::string& rule) const;

  const std::string& surface() const { return surface_; }

 private:
  std::string where() const;
  std::string surface_;
  const std::vector<std::string>* names_;
  std::vector<ir::TypePtr> types_;
  ir::Span span_;
};

// Shared typing helpers used by several families.
// Normalizes a possibly negative axis against rank; error names the attribute.
int64_t normalize_axis(const TypeCtx& ctx, int64_t axis, size_t rank, const char* attr = "axis");
// Numpy broadcasting of two shapes; nullopt when they do not broadcast.
std::optional<ir::Shape> broadcast_shapes(const ir::Shape& a, const ir::Shape& b);
// Storage of the result of a multi-input op: the most local storage among its
// operands (rmem < smem < gmem; an unmaterialized operand counts only when all
// are). Computing with a value loaded from memory yields a value where the
// computation happens: a register accumulator plus a gmem tile stays in rmem,
// so a loop carry keeps its type.
ir::StorageKind result_storage(const std::vector<const ir::TensorType*>& operands);

}  // namespace tf::ops
