#include "core/ir/type.h"

#include "core/ir/error.h"

namespace tf::ir {

TensorTypePtr TensorType::make(Shape shape, DType dtype, LayoutPtr layout, StorageKind storage) {
  for (const auto& d : shape)
    if (d.is_static() && d.value() < 0)
      fail(ErrorKind::kType, "tensor extent must be non-negative, but got " + std::to_string(d.value()));
  return std::make_shared<const TensorType>(std::move(shape), dtype, std::move(layout), storage);
}

TupleTypePtr TupleType::make(std::vector<TypePtr> fields) {
  for (const auto& f : fields) TF_CHECK(f != nullptr, "null tuple field type");
  return std::make_shared<const TupleType>(std::move(fields));
}

CallableTypePtr CallableType::make(std::vector<TypePtr> params, TypePtr ret) {
  return std::make_shared<const CallableType>(std::move(params), std::move(ret));
}

const TensorType* as_tensor(const TypePtr& t) {
  return t && t->kind() == TypeKind::kTensor ? static_cast<const TensorType*>(t.get()) : nullptr;
}
const TupleType* as_tuple(const TypePtr& t) {
  return t && t->kind() == TypeKind::kTuple ? static_cast<const TupleType*>(t.get()) : nullptr;
}

bool type_equal(const TypePtr& a, const TypePtr& b) {
  if (!a || !b) return a == b;
  return a == b || a->structural_equal(*b);
}

bool Type::structural_equal(const Type& o) const {
  if (kind() != o.kind()) return false;
  switch (kind()) {
    case TypeKind::kTensor: {
      auto& a = static_cast<const TensorType&>(*this);
      auto& b = static_cast<const TensorType&>(o);
      if (a.dtype() != b.dtype() || a.storage() != b.storage() || !shape_equal(a.shape(), b.shape()))
        return false;
      if (!a.layout() || !b.layout()) return a.layout() == b.layout();
      return a.layout()->structural_equal(*b.layout());
    }
    case TypeKind::kTuple: {
      auto& a = static_cast<const TupleType&>(*this).fields();
      auto& b = static_cast<const TupleType&>(o).fields();
      if (a.size() != b.size()) return false;
      for (size_t i = 0; i < a.size(); ++i)
        if (!type_equal(a[i], b[i])) return false;
      return true;
    }
    case TypeKind::kCallable: {
      auto& a = static_cast<const CallableType&>(*this);
      auto& b = static_cast<const CallableType&>(o);
      if (a.params().size() != b.params().size() || !type_equal(a.ret(), b.ret())) return false;
      for (size_t i = 0; i < a.params().size(); ++i)
        if (!type_equal(a.params()[i], b.params()[i])) return false;
      return true;
    }
  }
  return false;
}

size_t Type::structural_hash() const {
  size_t h = static_cast<size_t>(kind()) * 0x9e3779b97f4a7c15ULL;
  auto mix = [&h](size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  switch (kind()) {
    case TypeKind::kTensor: {
      auto& t = static_cast<const TensorType&>(*this);
      mix(static_cast<size_t>(t.dtype()));
      mix(static_cast<size_t>(t.storage()));
      for (const auto& d : t.shape()) mix(d.structural_hash());
      if (t.layout()) mix(t.layout()->structural_hash());
      break;
    }
    case TypeKind::kTuple:
      for (const auto& f : static_cast<const TupleType&>(*this).fields()) mix(f->structural_hash());
      break;
    case TypeKind::kCallable: {
      auto& c = static_cast<const CallableType&>(*this);
      for (const auto& p : c.params()) mix(p->structural_hash());
      if (c.ret()) mix(c.ret()->structural_hash());
      break;
    }
  }
  return h;
}

std::string Type::to_string() const {
  switch (kind()) {
    case TypeKind::kTensor: {
      auto& t = static_cast<const TensorType&>(*this);
      std::string s = "Tensor[" + shape_to_string(t.shape()) + ", " + std::string(dtype_name(t.dtype()));
      if (t.layout()) s += ", " + t.layout()->to_string();
      if (t.storage() != StorageKind::kGmem) s += ", \"" + std::string(storage_name(t.storage())) + "\"";
      return s + "]";
    }
    case TypeKind::kTuple: {
      std::string s = "tuple[";
      auto& f = static_cast<const TupleType&>(*this).fields();
      for (size_t i = 0; i < f.size(); ++i) s += (i ? ", " : "") + f[i]->to_string();
      return s + "]";
    }
    case TypeKind::kCallable: {
      auto& c = static_cast<const CallableType&>(*this);
      std::string s = "Callable[[";
      for (size_t i = 0; i < c.params().size(); ++i) s += (i ? ", " : "") + c.params()[i]->to_string();
      return s + "], " + (c.ret() ? c.ret()->to_string() : "None") + "]";
    }
  }
  return "?";
}

std::vector<TensorTypePtr> flatten_tensor_types(const TypePtr& t) {
  std::vector<TensorTypePtr> out;
  if (as_tensor(t)) {
    out.push_back(std::static_pointer_cast<const TensorType>(t));
  } else if (auto* tu = as_tuple(t)) {
    for (const auto& f : tu->fields()) {
      auto sub = flatten_tensor_types(f);
      out.insert(out.end(), sub.begin(), sub.end());
    }
  }
  return out;
}

}  // namespace tf::ir
