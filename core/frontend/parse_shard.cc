// The sharding surface (docs/sharding.md; the mesh-scope rule and signature
// strides materialization): Mesh bindings,
// ShardLayout / Split / Broadcast / Partial / Layout values, the
// `with Mesh(...) as m:` block, and the reshard / local calls.
//
// Scope. A Mesh is a binding in the parser's lexical environment: module
// level (`cta = Mesh(...)`, usable by signatures) or a with-block inside an
// @func body (usable until the block ends). ShardLayout takes the mesh by
// name, so its mesh is always an active binding on the lexical path; naming a
// with-block mesh after its block ended is an error that says so.
#include <set>

#include "core/frontend/parser_impl.h"
#include "core/ops/sharding/shard_util.h"
#include "core/ops/sharding/sharding.h"

namespace tf::frontend {
namespace {

std::string ints_text(const std::vector<int64_t>& v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + (v.size() == 1 ? ",)" : ")");
}

std::string levels_text(const ir::Target& t) {
  std::string s;
  for (size_t i = 0; i < t.topology.size(); ++i)
    s += (i ? ", " : "") + std::string("\"") + t.topology[i].first + "\" (" + std::to_string(t.topology[i].second) + ")";
  return s;
}

}  // namespace

bool Parser::shard_call(const Token& name, const std::vector<Arg>& args, Value* out) {
  const std::string& n = name.text;
  if (n == "Mesh") {
    if (locals_)
      src_.parse_error(name.pos, "inside an @func body a Mesh is bound by a block: `with Mesh(...) as name:`");
    out->kind = Value::Kind::kMesh;
    out->mesh = mesh_value(name, args);
  } else if (n == "Split" || n == "Broadcast" || n == "Partial") {
    out->kind = Value::Kind::kShardAttr;
    out->shard_attr = std::make_shared<const ShardAttrSpec>(shard_attr_value(name, args));
  } else if (n == "Layout" || n == "ShardLayout") {
    out->kind = Value::Kind::kLayout;
    out->layout = std::make_shared<const LayoutSpec>(n == "Layout" ? layout_value(name, args)
                                                                   : shard_layout_value(name, args));
  } else if (n == "reshard" || n == "local") {
    *out = sharding_op_call(name, args);
    return true;
  } else {
    return false;
  }
  out->pos = name.pos;
  return true;
}

// Mesh(topology=, shape=, axes=): checked against the Module's Target. The
// level MUST be declared; the product of shape MUST equal its extent.
ir::MeshPtr Parser::mesh_value(const Token& head, const std::vector<Arg>& args) {
  auto slots = bind_args("Mesh", head, {"topology", "shape", "axes"}, {false, false, false}, args);
  const Value& topo = slots[0]->value;
  const Value& shape = slots[1]->value;
  const Value& axes = slots[2]->value;
  if (topo.kind != Value::Kind::kString)
    src_.parse_error(topo.pos, "Mesh topology must be a level name such as \"cta\", but got " + topo.describe());
  auto mesh = std::make_shared<ir::Mesh>();
  mesh->level = topo.s;
  if (shape.kind != Value::Kind::kTuple || shape.items.empty())
    src_.parse_error(shape.pos, "Mesh shape must be a non-empty tuple of ints such as (2, 2)");
  for (const auto& e : shape.items) {
    if (e.kind != Value::Kind::kInt || e.i < 1)
      src_.parse_error(e.pos, "a Mesh extent must be a positive int, but got " + e.describe());
    mesh->shape.push_back(e.i);
  }
  if (axes.kind != Value::Kind::kTuple || axes.items.size() != mesh->shape.size())
    src_.parse_error(axes.pos, "Mesh axes must be a tuple of " + std::to_string(mesh->shape.size()) +
                                   " axis names, one per extent of shape");
  for (const auto& a : axes.items) {
    if (a.kind != Value::Kind::kString || a.s.empty())
      src_.parse_error(a.pos, "a Mesh axis name must be a non-empty string, but got " + a.describe());
    for (const auto& prev : mesh->axes)
      if (prev == a.s) src_.parse_error(a.pos, "Mesh axis \"" + a.s + "\" is named twice");
    mesh->axes.push_back(a.s);
  }
  mesh_seen_ = true;
  const ir::Target target = target_ ? *target_ : ir::Target::default_cpu();
  for (const auto& [level, extent] : target.topology) {
    if (level != mesh->level) continue;
    if (mesh->size() != extent)
      src_.fail(ir::ErrorKind::kType, shape.pos,
                "Mesh shape " + ints_text(mesh->shape) + " has " + std::to_string(mesh->size()) +
                    " instances, but Topology level \"" + level + "\" has extent " + std::to_string(extent) +
                    ": a Mesh MAY reshape a level but MUST NOT change its extent");
    return mesh;
  }
  src_.fail(ir::ErrorKind::kType, topo.pos,
            "Mesh topology \"" + mesh->level + "\" is not a level the module declares (" + levels_text(target) +
                "): a Mesh MUST name one of the Module's Topology levels and MUST NOT create one");
}

ShardAttrSpec Parser::shard_attr_value(const Token& head, const std::vector<Arg>& args) {
  ShardAttrSpec spec;
  if (head.text == "Broadcast") {
    bind_args("Broadcast", head, {}, {}, args);
    spec.attr = ir::ShardAttr::broadcast();
    return spec;
  }
  if (head.text == "Partial") {
    auto slots = bind_args("Partial", head, {"reduction"}, {false}, args);
    const Value& r = slots[0]->value;
    auto red = r.kind == Value::Kind::kString ? ir::reduction_from_name(r.s) : std::nullopt;
    if (!red) src_.parse_error(r.pos, "Partial takes a reduction \"sum\", \"max\" or \"min\", but got " + r.describe());
    spec.attr = ir::ShardAttr::partial(*red);
    return spec;
  }
  auto slots = bind_args("Split", head, {"axis", "pos"}, {true, true}, args);
  if (!slots[0] == !slots[1])
    src_.parse_error(head.pos, "Split takes exactly one of axis= (a tensor axis) or pos= (a layout position)");
  const Value& v = (slots[0] ? slots[0] : slots[1])->value;
  if (v.kind != Value::Kind::kInt || v.i < 0)
    src_.parse_error(v.pos, "Split's " + std::string(slots[0] ? "axis" : "pos") +
                                " must be a non-negative int, but got " + v.describe());
  spec.attr = ir::ShardAttr::split(v.i);
  spec.by_axis = slots[0] != nullptr;
  return spec;
}

// Layout(shape, strides=None): strides=None is the sugar materialized later.
LayoutSpec Parser::layout_value(const Token& head, const std::vector<Arg>& args) {
  auto slots = bind_args("Layout", head, {"shape", "strides"}, {false, true}, args);
  const Value& shape = slots[0]->value;
  if (shape.kind != Value::Kind::kTuple || shape.items.empty())
    src_.parse_error(shape.pos, "Layout shape must be a tuple of layout positions such as (4, 2, 16)");
  LayoutSpec spec;
  spec.positions.emplace();
  for (const auto& d : shape.items) {
    if (!d.is_dim_like() || (d.kind == Value::Kind::kInt && d.i < 1))
      src_.parse_error(d.pos, "a layout position must be a positive int or a dim, but got " + d.describe());
    spec.positions->push_back(d.as_dim());
  }
  if (slots[1] && slots[1]->value.kind != Value::Kind::kNone) {
    const Value& st = slots[1]->value;
    if (st.kind != Value::Kind::kTuple || st.items.size() != spec.positions->size())
      src_.parse_error(st.pos, "Layout strides must be None or a tuple of " +
                                   std::to_string(spec.positions->size()) + " ints or dims, one per position");
    spec.strides.emplace();
    for (const auto& s : st.items) {
      if (!s.is_dim_like() || (s.kind == Value::Kind::kInt && s.i < 0))
        src_.parse_error(s.pos, "a stride must be a non-negative int or a dim, but got " + s.describe());
      spec.strides->push_back(s.as_dim());
    }
  }
  return spec;
}

// ShardLayout(mesh, attrs, layout=None): mesh is a binding name, attrs one
// ShardAttr per mesh axis. Without layout=, Split(axis=k) builds the
// canonical positions; with it, Split(pos=p) names them.
LayoutSpec Parser::shard_layout_value(const Token& head, const std::vector<Arg>& args) {
  auto slots = bind_args("ShardLayout", head, {"mesh", "attrs", "layout"}, {false, false, true}, args);
  const Value& mesh = slots[0]->value;
  if (mesh.kind != Value::Kind::kMesh)
    src_.parse_error(mesh.pos, "ShardLayout's mesh must be an active Mesh binding, but got " + mesh.describe());
  const Value& attrs = slots[1]->value;
  if (attrs.kind != Value::Kind::kTuple)
    src_.parse_error(attrs.pos, "ShardLayout attrs must be a tuple, one per mesh axis, e.g. (Split(axis=0),)");
  LayoutSpec spec;
  spec.mesh = mesh.mesh;
  for (const auto& a : attrs.items) {
    if (a.kind != Value::Kind::kShardAttr)
      src_.parse_error(a.pos, "expected Split(...), Broadcast() or Partial(...), but got " + a.describe());
    spec.attrs.push_back(*a.shard_attr);
  }
  if (spec.attrs.size() != spec.mesh->shape.size())
    src_.fail(ir::ErrorKind::kType, attrs.pos,
              "ShardLayout needs one ShardAttr per axis of mesh '" + spec.mesh->name + "' (" +
                  std::to_string(spec.mesh->shape.size()) + "), but got " + std::to_string(spec.attrs.size()));
  bool verbose = slots[2] && slots[2]->value.kind != Value::Kind::kNone;
  if (verbose) {
    const Value& l = slots[2]->value;
    if (l.kind != Value::Kind::kLayout || l.layout->mesh)
      src_.parse_error(l.pos, "ShardLayout's layout= must be a Layout(...), but got " + l.describe());
    spec.positions = l.layout->positions;
    spec.strides = l.layout->strides;
  }
  for (const auto& a : spec.attrs) {
    if (!a.attr.is_split() || a.by_axis != verbose) continue;
    src_.parse_error(attrs.pos, verbose ? "with layout=, a Split names a layout position: use Split(pos=p)"
                                        : "Split(pos=p) names a layout position; give layout=Layout(...) or "
                                          "use Split(axis=k)");
  }
  return spec;
}

// The ir::Layout a written layout denotes over a tensor `shape`. With
// `materialize` (a signature annotation) strides=None becomes
// shared-engine C-order over the canonical global positions; verbose strides
// are kept verbatim. Without it (reshard's target) the sugar stays None for
// Reshard's stride-resolution table.
ir::LayoutPtr Parser::resolve_layout(const Value& v, const ir::Shape& shape, bool materialize) const {
  const LayoutSpec& spec = *v.layout;
  try {
    ir::Shape positions;
    std::optional<ir::Shape> strides = spec.strides;
    std::vector<ir::ShardAttr> attrs;
    for (const auto& a : spec.attrs) attrs.push_back(a.attr);
    if (spec.positions) {
      positions = *spec.positions;
      if (!ops::shard::axis_runs(shape, positions))
        src_.fail(ir::ErrorKind::kType, v.pos,
                  "layout positions " + ir::shape_to_string(positions) + " do not factor the tensor shape " +
                      ir::shape_to_string(shape) + " (each axis is a run of positions whose product is its extent)");
    } else {
      ir::ShardLayoutPtr canon = ops::shard::canonical_layout(spec.mesh, attrs, shape);
      positions = canon->shape();
      attrs = canon->attrs();
      strides.reset();  // the sugar: materialized below when asked
    }
    if (materialize && !strides) strides = ops::shard::c_order(positions);
    if (!spec.mesh) return std::make_shared<const ir::Layout>(std::move(positions), std::move(strides));
    return ir::ShardLayout::make(spec.mesh, std::move(attrs), std::move(positions), std::move(strides));
  } catch (const ir::Error& e) {
    src_.rethrow_at(e, v.pos);
  }
}

// reshard(x, layout=None, storage=None) and local(x).
Value Parser::sharding_op_call(const Token& name, const std::vector<Arg>& args) {
  require_body(name);
  if (name.text == "local") {
    auto slots = bind_args("local", name, {"x"}, {false}, args);
    ir::ExprPtr x = to_expr(slots[0]->value, "local's x");
    return Value::of_expr(make_call(std::make_shared<const ops::Local>(), {x}, name.pos), name.pos);
  }
  auto slots = bind_args("reshard", name, {"x", "layout", "storage"}, {false, true, true}, args);
  ir::ExprPtr x = to_expr(slots[0]->value, "reshard's x");
  const ir::TensorType* xt = ir::as_tensor(x->type());
  if (!xt) src_.fail(ir::ErrorKind::kType, slots[0]->value.pos, "reshard's x must be a tensor");
  ir::ShardLayoutPtr layout;
  if (slots[1] && slots[1]->value.kind != Value::Kind::kNone) {
    const Value& l = slots[1]->value;
    if (l.kind != Value::Kind::kLayout || !l.layout->mesh)
      src_.fail(ir::ErrorKind::kType, l.pos, "reshard's layout must be a ShardLayout(...), but got " + l.describe());
    layout = std::static_pointer_cast<const ir::ShardLayout>(resolve_layout(l, xt->shape(), false));
  }
  std::optional<ir::StorageKind> storage;
  if (slots[2] && slots[2]->value.kind != Value::Kind::kNone) {
    const Value& s = slots[2]->value;
    storage = s.kind == Value::Kind::kString ? ir::storage_from_name(s.s) : std::nullopt;
    if (!storage)
      src_.parse_error(s.pos, "reshard's storage must be \"rmem\", \"smem\", \"gmem\" or \"unmaterialized\", but got " +
                                  s.describe());
  }
  return Value::of_expr(make_call(std::make_shared<const ops::Reshard>(layout, storage), {x}, name.pos), name.pos);
}

// `with Mesh(...) as name:` and its block. The binding is active inside the
// block only; names the block binds stay visible after it (Python scoping).
void Parser::with_mesh(std::optional<Value>* ret, Pos* ret_pos) {
  next();  // 'with'
  const Token& head = expect_name();
  if (head.text != "Mesh") src_.parse_error(head.pos, "only `with Mesh(...) as name:` blocks are supported");
  expect_op("(");
  std::vector<Arg> args = call_args();
  Value mesh;
  mesh.kind = Value::Kind::kMesh;
  mesh.pos = head.pos;
  ir::MeshPtr m = mesh_value(head, args);
  const Token& as = expect_name();
  if (as.text != "as") unexpected(as, "'as name' after with Mesh(...)");
  const Token& bind = expect_name();
  auto named = std::make_shared<ir::Mesh>(*m);
  named->name = bind.text;
  mesh.mesh = named;
  expect_op(":");
  expect_newline();
  if (peek().kind != TokenKind::kIndent) unexpected(peek(), "an indented block");
  next();
  std::optional<Value> shadowed;
  if (auto it = locals_->find(bind.text); it != locals_->end()) shadowed = it->second;
  (*locals_)[bind.text] = mesh;
  closed_meshes_.erase(bind.text);
  while (peek().kind != TokenKind::kDedent && peek().kind != TokenKind::kEnd) {
    if (*ret) src_.parse_error(peek().pos, "unreachable statement after return");
    if (peek().is_name("pass")) {
      next();
      expect_newline();
      continue;
    }
    statement(ret, ret_pos);
  }
  if (peek().kind == TokenKind::kDedent) next();
  if (shadowed) {
    (*locals_)[bind.text] = *shadowed;
  } else {
    locals_->erase(bind.text);
    closed_meshes_.insert(bind.text);
  }
}

// A module-level `name = Mesh(...)` takes its binding name (display only).
Value Parser::named_mesh(const Value& v, const std::string& name) {
  auto named = std::make_shared<ir::Mesh>(*v.mesh);
  named->name = name;
  Value out = v;
  out.mesh = named;
  return out;
}

}  // namespace tf::frontend
