#include "core/spmd/blocks.h"

#include <algorithm>
#include <limits>

#include "core/eval/kernels/dispatch.h"
#include "core/ir/error.h"
#include "core/ops/sharding/shard_util.h"

namespace tf::spmd {

using runtime::NDArray;
using eval::dispatch_dtype;
using eval::mutable_data_of;
using eval::data_of;

void unsupported(const std::string& what) { ir::fail(ir::ErrorKind::kUnsupported, "spmd: " + what); }

std::vector<int64_t> concrete_shape(const ir::Shape& s, const ir::DimBindings& b) {
  std::vector<int64_t> out;
  for (const auto& d : s) {
    if (d.is_static()) {
      out.push_back(d.value());
      continue;
    }
    try {
      out.push_back(d.evaluate(b));
    } catch (const ir::Error&) {
      unsupported("needs static shapes, but got " + ir::shape_to_string(s));
    }
  }
  return out;
}

std::vector<int64_t> coords_of(const std::vector<int64_t>& shape, size_t rank) {
  std::vector<int64_t> c(shape.size());
  for (size_t m = c.size(); m-- > 0;) {
    c[m] = static_cast<int64_t>(rank) % shape[m];
    rank /= static_cast<size_t>(shape[m]);
  }
  return c;
}

size_t rank_of(const std::vector<int64_t>& shape, const std::vector<int64_t>& coords) {
  size_t r = 0;
  for (size_t m = 0; m < coords.size(); ++m) r = r * static_cast<size_t>(shape[m]) + static_cast<size_t>(coords[m]);
  return r;
}

std::vector<int64_t> Grid::coords(size_t rank) const { return mesh ? coords_of(mesh->shape, rank) : std::vector<int64_t>{}; }

size_t Grid::rank_of(const std::vector<int64_t>& coords) const { return mesh ? spmd::rank_of(mesh->shape, coords) : 0; }

std::optional<std::vector<ir::ShardAttr>> block_attrs(const ir::TensorType& t, const ir::DimBindings& b) {
  const ir::ShardLayout* l = ir::as_shard_layout(t.layout());
  if (!l) return std::nullopt;
  // A canonical layout over symbolic extents ((2, F // 2) for F) reads as
  // written; a verbose one may factor only the resolved extents.
  auto logical = ops::shard::to_block_logical(t.shape(), *l);
  if (!logical) {
    std::vector<int64_t> shape = concrete_shape(t.shape(), b);
    logical = ops::shard::to_block_logical(ir::Shape(shape.begin(), shape.end()), *l);
  }
  if (!logical) unsupported("a composed ShardLayout " + l->to_string());
  return logical;
}

Block block_of(const ir::TensorType& t, const Grid& g, size_t rank, const ir::DimBindings& b) {
  Block blk{std::vector<int64_t>(t.rank(), 0), concrete_shape(t.shape(), b)};
  auto logical = block_attrs(t, b);
  if (!logical) return blk;
  const ir::ShardLayout& l = *ir::as_shard_layout(t.layout());
  auto c = g.coords(rank);
  for (size_t k = 0; k < t.rank(); ++k) {
    int64_t index = 0, parts = 1;
    for (size_t m = 0; m < logical->size(); ++m)
      if ((*logical)[m].is_split() && (*logical)[m].pos == static_cast<int64_t>(k)) {
        index = index * l.mesh()->shape[m] + c[m];
        parts *= l.mesh()->shape[m];
      }
    if (blk.extent[k] % parts != 0)
      ir::fail(ir::ErrorKind::kInvalidArgument, "axis " + std::to_string(k) + " of " + t.to_string() + " has extent " +
                                                    std::to_string(blk.extent[k]) + ", which its " +
                                                    std::to_string(parts) + " shares do not divide");
    blk.extent[k] /= parts;
    blk.offset[k] = index * blk.extent[k];
  }
  return blk;
}

NDArray view_of(const NDArray& a, const Block& blk) {
  int64_t off = 0;
  for (size_t k = 0; k < blk.offset.size(); ++k) off += blk.offset[k] * a.strides()[k];
  return NDArray::view(a, blk.extent, a.strides(), off);
}

NDArray copy_of(const NDArray& a) {
  NDArray out = NDArray::empty(a.dtype(), a.shape());
  a.copy_to(out);
  return out;
}

std::optional<ir::Reduction> partial_reduction(const ir::ShardLayout& l) {
  std::optional<ir::Reduction> red;
  for (const auto& a : l.attrs())
    if (a.is_partial()) {
      if (red && *red != a.reduction) unsupported("Partial states with different reductions");
      red = a.reduction;
    }
  return red;
}

void fill_identity(const NDArray& a, ir::Reduction r) {
  dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_arithmetic_v<T>) {
      T v = r == ir::Reduction::kMax ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
      if constexpr (std::is_floating_point_v<T>)
        v = r == ir::Reduction::kMax ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
      if (r == ir::Reduction::kSum) v = T(0);
      T* p = mutable_data_of<T>(a);
      for (int64_t i = 0; i < a.numel(); ++i) p[i] = v;
    } else {
      unsupported("Partial of dtype " + std::string(ir::dtype_name(a.dtype())));
    }
  });
}

void combine(const NDArray& acc, const NDArray& x, ir::Reduction r) {
  dispatch_dtype(acc.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
      T* a = mutable_data_of<T>(acc);
      const T* v = data_of<T>(x);
      for (int64_t i = 0; i < acc.numel(); ++i)
        a[i] = r == ir::Reduction::kSum ? a[i] + v[i] : r == ir::Reduction::kMax ? std::max(a[i], v[i]) : std::min(a[i], v[i]);
    } else {
      unsupported("Partial of dtype " + std::string(ir::dtype_name(acc.dtype())));
    }
  });
}

ir::TypePtr local_type(const ir::TypePtr& t) {
  if (const ir::TensorType* tt = ir::as_tensor(t)) {
    const ir::ShardLayout* l = ir::as_shard_layout(tt->layout());
    return ir::TensorType::make(l ? ops::shard::local_shape(tt->shape(), *l) : tt->shape(), tt->dtype(), nullptr,
                                tt->storage());
  }
  if (const ir::TupleType* tu = ir::as_tuple(t)) {
    std::vector<ir::TypePtr> f;
    for (const auto& x : tu->fields()) f.push_back(local_type(x));
    return ir::TupleType::make(std::move(f));
  }
  return t;
}

bool splits_axis(const ir::TensorType& t, const std::vector<int64_t>& axes) {
  const ir::ShardLayout* l = ir::as_shard_layout(t.layout());
  if (!l) return false;
  auto logical = ops::shard::to_block_logical(t.shape(), *l);
  if (!logical) return false;
  for (const auto& a : *logical)
    if (a.is_split() && std::find(axes.begin(), axes.end(), a.pos) != axes.end()) return true;
  return false;
}

std::pair<size_t, size_t> partial_share(const ir::ShardLayout& l, const Grid& g, size_t rank) {
  auto c = g.coords(rank);
  size_t share = 0, shares = 1;
  for (size_t m = 0; m < l.attrs().size(); ++m)
    if (l.attrs()[m].is_partial()) {
      share = share * static_cast<size_t>(l.mesh()->shape[m]) + static_cast<size_t>(c[m]);
      shares *= static_cast<size_t>(l.mesh()->shape[m]);
    }
  return {share, shares};
}

NDArray localize(const NDArray& global, const ir::TensorType& t, const Grid& g, size_t rank,
                 const ir::DimBindings& b) {
  NDArray local = copy_of(view_of(global, block_of(t, g, rank, b)));
  const ir::ShardLayout* l = ir::as_shard_layout(t.layout());
  if (!l || !l->has_partial()) return local;
  auto red = partial_reduction(*l);
  if (partial_share(*l, g, rank).first != 0) fill_identity(local, *red);
  return local;
}

NDArray assemble(const std::vector<const NDArray*>& locals, const ir::TensorType& t, const Grid& g,
                 const ir::DimBindings& b) {
  NDArray global = NDArray::empty(t.dtype(), concrete_shape(t.shape(), b));
  const ir::ShardLayout* l = ir::as_shard_layout(t.layout());
  if (!l) {
    locals[0]->copy_to(global);
    return global;
  }
  std::optional<ir::Reduction> red = partial_reduction(*l);
  if (red) fill_identity(global, *red);
  for (size_t rank = 0; rank < g.size(); ++rank) {
    auto c = g.coords(rank);
    bool representative = true;  // coordinate 0 on every Broadcast axis
    for (size_t m = 0; m < l->attrs().size(); ++m)
      if (l->attrs()[m].kind == ir::ShardAttr::Kind::kBroadcast && c[m] != 0) representative = false;
    if (!representative) continue;
    NDArray dst = view_of(global, block_of(t, g, rank, b));
    if (!red) {
      locals[rank]->copy_to(dst);
      continue;
    }
    NDArray acc = copy_of(dst);
    combine(acc, *locals[rank], *red);
    acc.copy_to(dst);
  }
  return global;
}

}  // namespace tf::spmd
