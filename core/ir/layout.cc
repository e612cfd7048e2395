#include "core/ir/layout.h"

namespace tf::ir {
namespace {
constexpr std::string_view kStorageNames[] = {
#define TF_X(e, s) s,
    TF_STORAGE_LIST(TF_X)
#undef TF_X
};
}  // namespace

std::string_view storage_name(StorageKind s) { return kStorageNames[static_cast<int>(s)]; }

std::optional<StorageKind> storage_from_name(std::string_view name) {
  for (size_t i = 0; i < sizeof(kStorageNames) / sizeof(kStorageNames[0]); ++i)
    if (kStorageNames[i] == name) return static_cast<StorageKind>(i);
  return std::nullopt;
}

bool Layout::structural_equal(const Layout& o) const {
  return !o.is_shard() && shape_equal(shape_, o.shape_) && strides_equal(strides_, o.strides_);
}

size_t Layout::structural_hash() const {
  size_t h = 0x51ed;
  for (const auto& d : shape_) h = h * 31 + d.structural_hash();
  if (strides_)
    for (const auto& s : *strides_) h = h * 131 + s.structural_hash();
  return h;
}

std::string Layout::to_string() const {
  std::string out = "Layout(" + shape_to_string(shape_);
  if (strides_) {
    out += ", strides=(";
    for (size_t i = 0; i < strides_->size(); ++i) out += (i ? ", " : "") + (*strides_)[i].to_string();
    out += strides_->size() == 1 ? ",)" : ")";
  }
  return out + ")";
}

std::vector<int64_t> c_order_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size());
  int64_t acc = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    s[i] = acc;
    acc *= shape[i];
  }
  return s;
}

bool strides_equal(const std::optional<Shape>& a, const std::optional<Shape>& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a || shape_equal(*a, *b);
}

}  // namespace tf::ir
