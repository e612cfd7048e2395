#include "core/ir/shard.h"

#include <functional>

#include "core/ir/error.h"

namespace tf::ir {
namespace {
constexpr std::string_view kReductionNames[] = {
#define TF_X(e, s) s,
    TF_REDUCTION_LIST(TF_X)
#undef TF_X
};

std::string ints_to_string(const std::vector<int64_t>& v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + (v.size() == 1 ? ",)" : ")");
}
}  // namespace

std::string_view reduction_name(Reduction r) { return kReductionNames[static_cast<int>(r)]; }

std::optional<Reduction> reduction_from_name(std::string_view name) {
  for (size_t i = 0; i < std::size(kReductionNames); ++i)
    if (kReductionNames[i] == name) return static_cast<Reduction>(i);
  return std::nullopt;
}

int64_t Mesh::size() const {
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  return n;
}

size_t Mesh::structural_hash() const {
  size_t h = std::hash<std::string>()(level);
  for (int64_t e : shape) h = h * 31 + static_cast<size_t>(e);
  for (const auto& a : axes) h = h * 131 + std::hash<std::string>()(a);
  return h;
}

std::string Mesh::to_string() const {
  std::string s = "Mesh(topology=\"" + level + "\", shape=" + ints_to_string(shape) + ", axes=(";
  for (size_t i = 0; i < axes.size(); ++i) s += (i ? ", \"" : "\"") + axes[i] + "\"";
  return s + (axes.size() == 1 ? ",))" : "))");
}

bool ShardAttr::operator==(const ShardAttr& o) const {
  if (kind != o.kind) return false;
  if (kind == Kind::kSplit) return pos == o.pos;
  if (kind == Kind::kPartial) return reduction == o.reduction;
  return true;
}

std::string ShardAttr::to_string() const {
  switch (kind) {
    case Kind::kSplit: return "Split(pos=" + std::to_string(pos) + ")";
    case Kind::kBroadcast: return "Broadcast()";
    case Kind::kPartial: return "Partial(\"" + std::string(reduction_name(reduction)) + "\")";
  }
  return "?";
}

ShardLayoutPtr ShardLayout::make(MeshPtr mesh, std::vector<ShardAttr> attrs, Shape positions,
                                 std::optional<Shape> strides) {
  TF_CHECK(mesh != nullptr, "ShardLayout needs a mesh");
  if (attrs.size() != mesh->shape.size())
    fail(ErrorKind::kType, "ShardLayout needs one ShardAttr per mesh axis (" + std::to_string(mesh->shape.size()) +
                               "), but got " + std::to_string(attrs.size()));
  if (strides && strides->size() != positions.size())
    fail(ErrorKind::kType, "ShardLayout strides need one entry per layout position");
  for (const auto& a : attrs)
    if (a.is_split() && (a.pos < 0 || a.pos >= static_cast<int64_t>(positions.size())))
      fail(ErrorKind::kType, "Split(pos=" + std::to_string(a.pos) + ") is out of range for " +
                                 std::to_string(positions.size()) + " layout positions");
  return std::make_shared<const ShardLayout>(std::move(mesh), std::move(attrs), std::move(positions),
                                             std::move(strides));
}

bool ShardLayout::has_partial() const {
  for (const auto& a : attrs_)
    if (a.is_partial()) return true;
  return false;
}

bool ShardLayout::structural_equal(const Layout& o) const {
  if (!o.is_shard()) return false;
  auto& s = static_cast<const ShardLayout&>(o);
  return mesh_->structural_equal(*s.mesh_) && attrs_ == s.attrs_ && shape_equal(shape(), s.shape()) &&
         strides_equal(strides(), s.strides());
}

size_t ShardLayout::structural_hash() const {
  size_t h = Layout::structural_hash() ^ (mesh_->structural_hash() * 7);
  for (const auto& a : attrs_)
    h = h * 1000003 + static_cast<size_t>(a.kind) * 31 + static_cast<size_t>(a.pos) * 7 + static_cast<size_t>(a.reduction);
  return h;
}

std::string ShardLayout::to_string() const {
  std::string s = "ShardLayout(" + (mesh_->name.empty() ? mesh_->to_string() : mesh_->name) + ", (";
  for (size_t i = 0; i < attrs_.size(); ++i) s += (i ? ", " : "") + attrs_[i].to_string();
  s += attrs_.size() == 1 ? ",)" : ")";
  return s + ", layout=" + Layout::to_string() + ")";
}

const ShardLayout* as_shard_layout(const LayoutPtr& l) {
  return l && l->is_shard() ? static_cast<const ShardLayout*>(l.get()) : nullptr;
}

}  // namespace tf::ir
