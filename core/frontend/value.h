// Value: what a DSL expression evaluates to at parse time. Inside a function
// body a tensor (or tuple) expression is an IR node; everything else — ints,
// dims, floats, strings, dtypes, literal tuples — is a compile-time value
// that becomes an op attribute, a shape dim, or (next to a tensor operand) a
// Constant.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/frontend/shard_value.h"
#include "core/frontend/source.h"
#include "core/ir/dtype.h"
#include "core/ir/expr.h"
#include "core/ir/op.h"
#include "core/ir/shape.h"

namespace tf::frontend {

struct Value {
  enum class Kind : uint8_t {
    kExpr,    // an IR node: tensor or tuple value
    kInt,     // a static int (literal, folded arithmetic, module constant)
    kDim,     // a symbolic ShapeDim (DimVar or DimExpr); static dims are kInt
    kFloat,
    kBool,
    kString,
    kDType,
    kTuple,   // a literal tuple of compile-time values
    kNone,
    kRangeSlice,  // a tile(stop, step=s) loop variable: [dim, dim + items[0]) in a subscript
    kMesh,        // a Mesh binding (module level or `with Mesh(...) as m:`)
    kShardAttr,   // Split(...) / Broadcast() / Partial(...)
    kLayout,      // ShardLayout(...) / Layout(...), resolved against a shape at its use
  };
  Kind kind = Kind::kNone;
  ir::ExprPtr expr;
  int64_t i = 0;
  ir::ShapeDim dim;
  double f = 0;
  bool b = false;
  std::string s;
  ir::DType dtype = ir::DType::kF32;
  std::vector<Value> items;
  ir::MeshPtr mesh;                           // kMesh
  std::shared_ptr<const ShardAttrSpec> shard_attr;  // kShardAttr
  std::shared_ptr<const LayoutSpec> layout;   // kLayout
  Pos pos;  // where the expression starts

  static Value of_expr(ir::ExprPtr e, Pos p);
  static Value of_int(int64_t v, Pos p);
  // kInt when d is static, else kDim.
  static Value of_dim(const ir::ShapeDim& d, Pos p);
  static Value of_float(double v, Pos p);
  static Value of_bool(bool v, Pos p);
  static Value of_string(std::string v, Pos p);
  static Value of_dtype(ir::DType d, Pos p);
  static Value of_tuple(std::vector<Value> items, Pos p);
  // The tile loop variable: the half-open window [start, start + step).
  static Value of_range_slice(const ir::ShapeDim& start, const ir::ShapeDim& step, Pos p);

  bool is_expr() const { return kind == Kind::kExpr; }
  bool is_dim_like() const { return kind == Kind::kInt || kind == Kind::kDim; }
  // A scalar literal that may stand next to a tensor operand.
  bool is_scalar_literal() const {
    return kind == Kind::kInt || kind == Kind::kFloat || kind == Kind::kBool;
  }
  ir::ShapeDim as_dim() const { return kind == Kind::kInt ? ir::ShapeDim(i) : dim; }

  // The attribute this literal spells: a tuple of ints becomes a vector of
  // ints, a tuple with a symbolic dim a Shape, a lone symbolic dim a 1-Shape.
  // nullopt for an IR node, None, or a tuple holding anything else.
  std::optional<ir::AttrValue> to_attr() const;
  // What the value is, for messages: "an int", "a tensor Tensor[(4,), f32]".
  std::string describe() const;
};

}  // namespace tf::frontend
