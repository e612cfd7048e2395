#include "core/frontend/value.h"

namespace tf::frontend {

Value Value::of_expr(ir::ExprPtr e, Pos p) {
  Value v;
  v.kind = Kind::kExpr;
  v.expr = std::move(e);
  v.pos = p;
  return v;
}

Value Value::of_int(int64_t x, Pos p) {
  Value v;
  v.kind = Kind::kInt;
  v.i = x;
  v.pos = p;
  return v;
}

Value Value::of_dim(const ir::ShapeDim& d, Pos p) {
  if (d.is_static()) return of_int(d.value(), p);
  Value v;
  v.kind = Kind::kDim;
  v.dim = d;
  v.pos = p;
  return v;
}

Value Value::of_float(double x, Pos p) {
  Value v;
  v.kind = Kind::kFloat;
  v.f = x;
  v.pos = p;
  return v;
}

Value Value::of_bool(bool x, Pos p) {
  Value v;
  v.kind = Kind::kBool;
  v.b = x;
  v.pos = p;
  return v;
}

Value Value::of_string(std::string x, Pos p) {
  Value v;
  v.kind = Kind::kString;
  v.s = std::move(x);
  v.pos = p;
  return v;
}

Value Value::of_dtype(ir::DType d, Pos p) {
  Value v;
  v.kind = Kind::kDType;
  v.dtype = d;
  v.pos = p;
  return v;
}

Value Value::of_tuple(std::vector<Value> items, Pos p) {
  Value v;
  v.kind = Kind::kTuple;
  v.items = std::move(items);
  v.pos = p;
  return v;
}

std::optional<ir::AttrValue> Value::to_attr() const {
  switch (kind) {
    case Kind::kInt: return ir::AttrValue(i);
    case Kind::kDim: return ir::AttrValue(ir::Shape{dim});
    case Kind::kFloat: return ir::AttrValue(f);
    case Kind::kBool: return ir::AttrValue(b);
    case Kind::kString: return ir::AttrValue(s);
    case Kind::kDType: return ir::AttrValue(dtype);
    case Kind::kTuple: {
      bool symbolic = false;
      for (const auto& it : items) {
        if (!it.is_dim_like()) return std::nullopt;
        symbolic |= it.kind == Kind::kDim;
      }
      if (symbolic) {
        ir::Shape shape;
        for (const auto& it : items) shape.push_back(it.as_dim());
        return ir::AttrValue(shape);
      }
      std::vector<int64_t> ints;
      for (const auto& it : items) ints.push_back(it.i);
      return ir::AttrValue(ints);
    }
    case Kind::kExpr:
    case Kind::kRangeSlice:
    case Kind::kMesh:
    case Kind::kShardAttr:
    case Kind::kLayout:
    case Kind::kNone: return std::nullopt;
  }
  return std::nullopt;
}

std::string Value::describe() const {
  switch (kind) {
    case Kind::kExpr: return "a value of type " + (expr->type() ? expr->type()->to_string() : "?");
    case Kind::kInt: return "the int " + std::to_string(i);
    case Kind::kDim: return "the dim " + dim.to_string();
    case Kind::kFloat: return "the float " + ir::format_double(f);
    case Kind::kBool: return b ? "True" : "False";
    case Kind::kString: return "the string \"" + s + "\"";
    case Kind::kDType: return "the dtype " + std::string(ir::dtype_name(dtype));
    case Kind::kTuple: return "a tuple";
    case Kind::kNone: return "None";
    case Kind::kMesh: return "the mesh " + mesh->to_string();
    case Kind::kShardAttr: return "the shard attribute " + shard_attr->attr.to_string();
    case Kind::kLayout: return layout->mesh ? "a ShardLayout" : "a Layout";
    case Kind::kRangeSlice: return "the tile range slice [" + dim.to_string() + ", " + dim.to_string() + " + " +
                                   items[0].as_dim().to_string() + ")";
  }
  return "?";
}

Value Value::of_range_slice(const ir::ShapeDim& start, const ir::ShapeDim& step, Pos p) {
  Value v;
  v.kind = Kind::kRangeSlice;
  v.dim = start;
  v.items.push_back(of_dim(step, p));
  v.pos = p;
  return v;
}

}  // namespace tf::frontend
