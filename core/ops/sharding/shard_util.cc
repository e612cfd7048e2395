#include "core/ops/sharding/shard_util.h"

#include "core/ir/error.h"

namespace tf::ops::shard {

namespace {

// A symbolic axis d is one position equal to d, or a canonical Split's run:
// static (mesh extent) positions of product P, then d // P, then size-1
// positions. Returns the end of the run starting at p, or nullopt.
std::optional<size_t> symbolic_run(const ir::ShapeDim& d, const ir::Shape& positions, size_t p) {
  int64_t product = 1;
  while (p < positions.size() && positions[p].is_static()) {
    product *= positions[p].value();
    ++p;
  }
  if (p >= positions.size() || product == 0) return std::nullopt;
  const ir::ShapeDim want = product == 1 ? d : ir::ShapeDim::binary(ir::DimKind::kFloorDiv, d, product);
  if (!positions[p].structural_equal(want)) return std::nullopt;
  return p + 1;
}

}  // namespace

std::optional<std::vector<std::pair<size_t, size_t>>> axis_runs(const ir::Shape& shape,
                                                                const ir::Shape& positions) {
  std::vector<std::pair<size_t, size_t>> runs;
  size_t p = 0;
  for (const auto& d : shape) {
    size_t begin = p;
    if (!d.is_static()) {
      auto end = symbolic_run(d, positions, p);
      if (!end) return std::nullopt;
      p = *end;
    } else {
      int64_t product = 1;
      do {
        if (p >= positions.size() || !positions[p].is_static()) return std::nullopt;
        product *= positions[p++].value();
      } while (product < d.value() && product != 0);
      if (product != d.value()) return std::nullopt;
    }
    // Trailing size-1 positions (a canonical Split's local remainder) belong
    // to this axis while enough positions remain for the axes after it.
    size_t axes_left = shape.size() - runs.size() - 1;
    while (p < positions.size() && positions.size() - p > axes_left && positions[p].is_static() &&
           positions[p].value() == 1)
      ++p;
    runs.emplace_back(begin, p);
  }
  if (p != positions.size()) return std::nullopt;
  return runs;
}

namespace {

// to_logical / to_block_logical. With `block`, the last Split-bound position
// of a run may have an extent that is a multiple of its mesh extent.
std::optional<std::vector<ir::ShardAttr>> logical_form(const ir::Shape& shape, const ir::ShardLayout& l, bool block) {
  auto runs = axis_runs(shape, l.shape());
  if (!runs) return std::nullopt;
  std::vector<ir::ShardAttr> out = l.attrs();
  std::vector<size_t> next_split(runs->size());  // next expected split position offset per axis
  std::vector<bool> closed(runs->size());        // a run whose last Split owns a multi-extent block
  for (size_t m = 0; m < out.size(); ++m) {
    if (!out[m].is_split()) continue;
    size_t pos = static_cast<size_t>(out[m].pos);
    for (size_t k = 0; k < runs->size(); ++k) {
      auto [b, e] = (*runs)[k];
      if (pos < b || pos >= e) continue;
      const ir::ShapeDim& ext = l.shape()[pos];
      int64_t mesh_ext = l.mesh()->shape[m];
      if (pos != b + next_split[k] || !ext.is_static() || closed[k]) return std::nullopt;
      if (ext.value() != mesh_ext) {
        if (!block || ext.value() % mesh_ext != 0) return std::nullopt;
        closed[k] = true;
      }
      ++next_split[k];
      out[m].pos = static_cast<int64_t>(k);
    }
  }
  return out;
}

}  // namespace

std::optional<std::vector<ir::ShardAttr>> to_logical(const ir::Shape& shape, const ir::ShardLayout& l) {
  return logical_form(shape, l, false);
}

std::optional<std::vector<ir::ShardAttr>> to_block_logical(const ir::Shape& shape, const ir::ShardLayout& l) {
  return logical_form(shape, l, true);
}

ir::Shape c_order(const ir::Shape& positions) {
  ir::Shape s(positions.size());
  ir::ShapeDim acc(1);
  for (size_t i = positions.size(); i-- > 0;) {
    s[i] = acc;
    acc = acc * positions[i];
  }
  return s;
}

ir::ShardLayoutPtr canonical_layout(const ir::MeshPtr& mesh, const std::vector<ir::ShardAttr>& logical,
                                    const ir::Shape& shape) {
  for (size_t m = 0; m < logical.size(); ++m)
    if (logical[m].is_split() && (logical[m].pos < 0 || logical[m].pos >= static_cast<int64_t>(shape.size())))
      ir::fail(ir::ErrorKind::kType, "Split(axis=" + std::to_string(logical[m].pos) +
                                         ") is out of range for a rank-" + std::to_string(shape.size()) + " tensor");
  std::vector<ir::ShardAttr> attrs = logical;
  ir::Shape positions;
  for (size_t k = 0; k < shape.size(); ++k) {
    int64_t split_product = 1;
    for (size_t m = 0; m < attrs.size(); ++m) {
      if (!logical[m].is_split() || logical[m].pos != static_cast<int64_t>(k)) continue;
      attrs[m].pos = static_cast<int64_t>(positions.size());
      positions.push_back(ir::ShapeDim(mesh->shape[m]));
      split_product *= mesh->shape[m];
    }
    if (split_product == 1) {
      positions.push_back(shape[k]);
      continue;
    }
    // A symbolic extent's divisibility is checked when a call binds it.
    if (shape[k].is_static() && shape[k].value() % split_product != 0)
      ir::fail(ir::ErrorKind::kType, "tensor axis " + std::to_string(k) + " of extent " +
                                         std::to_string(shape[k].value()) +
                                         " is not divisible by its mesh extent " + std::to_string(split_product));
    positions.push_back(ir::ShapeDim::binary(ir::DimKind::kFloorDiv, shape[k], split_product));
  }
  ir::Shape strides = c_order(positions);
  return ir::ShardLayout::make(mesh, std::move(attrs), std::move(positions), std::move(strides));
}

ir::Shape local_shape(const ir::Shape& shape, const ir::ShardLayout& l) {
  auto logical = to_block_logical(shape, l);
  TF_CHECK(logical.has_value(), "local_shape of a ShardLayout whose shards are not blocks");
  ir::Shape out = shape;
  for (size_t m = 0; m < logical->size(); ++m) {
    const ir::ShardAttr& a = (*logical)[m];
    if (a.is_split()) out[a.pos] = ir::ShapeDim::binary(ir::DimKind::kFloorDiv, out[a.pos], l.mesh()->shape[m]);
  }
  return out;
}

ir::TypePtr with_layout(const ir::TensorType& t, ir::LayoutPtr layout) {
  return ir::TensorType::make(t.shape(), t.dtype(), std::move(layout), t.storage());
}

std::string mesh_axis_name(const ir::ShardLayout& l, size_t mesh_axis) {
  const auto& axes = l.mesh()->axes;
  return "mesh axis \"" + (mesh_axis < axes.size() ? axes[mesh_axis] : std::to_string(mesh_axis)) + "\"";
}

bool all_broadcast(const ir::ShardLayout& l) {
  for (const auto& a : l.attrs())
    if (a.kind != ir::ShardAttr::Kind::kBroadcast) return false;
  return true;
}

}  // namespace tf::ops::shard
