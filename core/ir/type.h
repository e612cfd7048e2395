// IR types: TensorType, TupleType, CallableType. Immutable, held by
// shared_ptr<const Type>; structural equality and hashing are explicit.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/ir/dtype.h"
#include "core/ir/layout.h"
#include "core/ir/shape.h"

namespace tf::ir {

enum class TypeKind : uint8_t { kTensor, kTuple, kCallable };

class Type;
using TypePtr = std::shared_ptr<const Type>;

class Type {
 public:
  virtual ~Type() = default;
  TypeKind kind() const { return kind_; }
  bool structural_equal(const Type& other) const;
  size_t structural_hash() const;
  // DSL spelling: Tensor[(N, 4096), f32], tuple[Tensor[...], Tensor[...]].
  std::string to_string() const;

 protected:
  explicit Type(TypeKind kind) : kind_(kind) {}

 private:
  TypeKind kind_;
};

class TensorType final : public Type {
 public:
  static std::shared_ptr<const TensorType> make(Shape shape, DType dtype, LayoutPtr layout = nullptr,
                                                StorageKind storage = StorageKind::kGmem);
  const Shape& shape() const { return shape_; }
  size_t rank() const { return shape_.size(); }
  DType dtype() const { return dtype_; }
  const LayoutPtr& layout() const { return layout_; }  // null: no layout constraint
  StorageKind storage() const { return storage_; }

  TensorType(Shape shape, DType dtype, LayoutPtr layout, StorageKind storage)
      : Type(TypeKind::kTensor), shape_(std::move(shape)), dtype_(dtype), layout_(std::move(layout)),
        storage_(storage) {}

 private:
  Shape shape_;
  DType dtype_;
  LayoutPtr layout_;
  StorageKind storage_;
};
using TensorTypePtr = std::shared_ptr<const TensorType>;

class TupleType final : public Type {
 public:
  static std::shared_ptr<const TupleType> make(std::vector<TypePtr> fields);
  const std::vector<TypePtr>& fields() const { return fields_; }
  explicit TupleType(std::vector<TypePtr> fields) : Type(TypeKind::kTuple), fields_(std::move(fields)) {}

 private:
  std::vector<TypePtr> fields_;
};
using TupleTypePtr = std::shared_ptr<const TupleType>;

class CallableType final : public Type {
 public:
  static std::shared_ptr<const CallableType> make(std::vector<TypePtr> params, TypePtr ret);
  const std::vector<TypePtr>& params() const { return params_; }
  const TypePtr& ret() const { return ret_; }
  CallableType(std::vector<TypePtr> params, TypePtr ret)
      : Type(TypeKind::kCallable), params_(std::move(params)), ret_(std::move(ret)) {}

 private:
  std::vector<TypePtr> params_;
  TypePtr ret_;
};
using CallableTypePtr = std::shared_ptr<const CallableType>;

// Downcasts; null when the kind differs.
const TensorType* as_tensor(const TypePtr& t);
const TupleType* as_tuple(const TypePtr& t);

bool type_equal(const TypePtr& a, const TypePtr& b);  // null-safe structural equality

// The tensor leaves of a type in order (a TensorType is its own single leaf).
std::vector<TensorTypePtr> flatten_tensor_types(const TypePtr& t);

}  // namespace tf::ir
