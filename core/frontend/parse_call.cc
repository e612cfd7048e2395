// Calls: surface ops (resolved through ops::find_surface), @funcs defined
// earlier in the file, and the compile-time builtins DimVar, dim_min, dim_max.
#include "core/frontend/parser_impl.h"
#include "core/frontend/suggest.h"
#include "core/frontend/syntax_functions.h"
#include "core/ops/tensor/tensor.h"
#include "core/sema/typeinfer.h"

namespace tf::frontend {

Value Parser::call(const Token& name) {
  expect_op("(");
  std::vector<Arg> args = call_args();
  if (locals_ && locals_->count(name.text))
    src_.parse_error(name.pos, "'" + name.text + "' is a value, not a function");
  if (name.text == "DimVar") return dimvar_call(name, args);
  if (name.text == "dim_min" || name.text == "dim_max") return dim_minmax_call(name, args);
  if (name.text == "load_tile") return load_tile_call(name, args);
  if (name.text == "Target") src_.parse_error(name.pos, "Target(...) may only be bound to TARGET");
  if (Value v; shard_call(name, args, &v)) return v;
  if (ir::FunctionPtr f = lookup_function(name.text, name.pos)) return function_call(f, name, args);
  if (const ops::SurfaceFn* fn = ops::find_surface(name.text)) return surface_call(*fn, name, args);
  src_.parse_error(name.pos, "unknown function '" + name.text + "'" + did_you_mean(name.text, callable_names()));
}

// Every name a call can spell here: the frontend's own, the ops', and the
// @funcs defined so far.
std::vector<std::string> Parser::callable_names() const {
  std::vector<std::string> names = {"DimVar", "dim_min", "dim_max"};
  for (const std::string& n : syntax_function_names()) names.push_back(n);
  for (const ops::SurfaceFn& fn : ops::all_surfaces()) names.push_back(fn.name);
  for (const auto& [n, f] : function_index_) names.push_back(n);
  for (const auto& [n, p] : prototypes_) names.push_back(n);
  return names;
}

// load_tile(x, i, axis=-1): the tile of x that the loop variable i selects on
// `axis` — x[:, ..., i] with i at that axis. A surface alias of the subscript
// (it prints as one): the window is read where it is used, so an rmem
// accumulator adding it stays rmem (an op's result takes its most local
// operand's storage).
Value Parser::load_tile_call(const Token& name, const std::vector<Arg>& args) {
  require_body(name);
  auto slots = bind_args("load_tile", name, {"x", "i", "axis"}, {false, false, true}, args);
  const Value& x = slots[0]->value;
  if (!x.is_expr() || !ir::as_tensor(x.expr->type()))
    src_.fail(ir::ErrorKind::kType, x.pos, "load_tile's x must be a tensor, but got " + x.describe());
  const Value& i = slots[1]->value;
  if (i.kind != Value::Kind::kRangeSlice && !i.is_dim_like())
    src_.fail(ir::ErrorKind::kType, i.pos,
              "load_tile's i must be a tile loop variable (or an int / dim index), but got " + i.describe());
  int64_t rank = static_cast<int64_t>(ir::as_tensor(x.expr->type())->rank());
  int64_t axis = -1;
  if (slots[2]) {
    const Value& a = slots[2]->value;
    if (a.kind != Value::Kind::kInt)
      src_.fail(ir::ErrorKind::kType, a.pos, "load_tile's axis must be an int, but got " + a.describe());
    axis = a.i;
  }
  if (axis < -rank || axis >= rank)
    src_.fail(ir::ErrorKind::kType, slots[2] ? slots[2]->value.pos : name.pos,
              "load_tile's axis " + std::to_string(axis) + " is out of range for a rank-" + std::to_string(rank) +
                  " tensor");
  if (axis < 0) axis += rank;
  std::vector<SubItem> items(static_cast<size_t>(axis) + 1);
  for (int64_t ax = 0; ax < axis; ++ax) items[ax].is_slice = true, items[ax].pos = name.pos;
  items[axis].index = i;
  items[axis].pos = i.pos;
  return tensor_slice(x, items, name);
}

// After '(' : positional arguments, then keyword arguments, then ')'.
std::vector<Parser::Arg> Parser::call_args() {
  std::vector<Arg> args;
  while (!peek().is_op(")")) {
    Arg a;
    if (peek().kind == TokenKind::kName && peek(1).is_op("=")) {
      const Token& kw = next();
      next();
      a.keyword = kw.text;
      a.keyword_pos = kw.pos;
    } else if (!args.empty() && !args.back().keyword.empty()) {
      src_.parse_error(peek().pos, "positional argument follows keyword argument");
    }
    a.value = expression();
    args.push_back(std::move(a));
    if (!accept_op(",")) break;
  }
  expect_op(")");
  return args;
}

std::vector<const Parser::Arg*> Parser::bind_args(const std::string& callee, const Token& name,
                                                  const std::vector<std::string>& params,
                                                  const std::vector<bool>& has_default,
                                                  const std::vector<Arg>& args) const {
  std::vector<const Arg*> slots(params.size(), nullptr);
  size_t positional = 0;
  for (const auto& a : args) {
    if (!a.keyword.empty()) continue;
    if (positional >= params.size())
      src_.parse_error(a.value.pos, "'" + callee + "' takes " + std::to_string(params.size()) +
                                        " arguments, but more were given");
    slots[positional++] = &a;
  }
  for (const auto& a : args) {
    if (a.keyword.empty()) continue;
    size_t i = 0;
    while (i < params.size() && params[i] != a.keyword) ++i;
    if (i == params.size())
      src_.parse_error(a.keyword_pos,
                       "'" + callee + "' has no parameter named '" + a.keyword + "'" + did_you_mean(a.keyword, params));
    if (slots[i]) src_.parse_error(a.keyword_pos, "'" + callee + "' got multiple values for argument '" + a.keyword + "'");
    slots[i] = &a;
  }
  for (size_t i = 0; i < params.size(); ++i)
    if (!slots[i] && !has_default[i])
      src_.parse_error(name.pos, "'" + callee + "' is missing required argument '" + params[i] + "'");
  return slots;
}

void Parser::require_body(const Token& name) const {
  if (!locals_) src_.parse_error(name.pos, "'" + name.text + "' can only be called inside an @func body");
}

const ir::TensorType* Parser::literal_partner(const std::vector<const Arg*>& tensor_args) const {
  for (const Arg* a : tensor_args)
    if (a && a->value.is_expr())
      if (auto* t = ir::as_tensor(a->value.expr->type())) return t;
  return nullptr;
}

Value Parser::surface_call(const ops::SurfaceFn& fn, const Token& name, const std::vector<Arg>& args) {
  require_body(name);
  std::vector<std::string> names;
  std::vector<bool> has_default;
  for (const auto& p : fn.params) {
    names.push_back(p.name);
    has_default.push_back(p.is_tensor ? p.optional : p.default_value.has_value());
  }
  auto slots = bind_args(fn.name, name, names, has_default, args);
  std::vector<const Arg*> tensor_args;
  for (size_t i = 0; i < fn.params.size(); ++i)
    if (fn.params[i].is_tensor && fn.params[i].literal_partner) tensor_args.push_back(slots[i]);
  const ir::TensorType* partner = literal_partner(tensor_args);

  std::vector<ir::ExprPtr> operands;
  std::vector<ir::AttrValue> attrs;
  for (size_t i = 0; i < fn.params.size(); ++i) {
    const ops::SurfaceParam& p = fn.params[i];
    if (p.is_tensor) {
      operands.push_back(p.tuple ? tuple_operand(p, slots[i], name)
                                 : operand(slots[i]->value, p.literal_partner ? partner : nullptr, name));
      continue;
    }
    if (!slots[i]) {
      attrs.push_back(*p.default_value);
      continue;
    }
    const Value& v = slots[i]->value;
    auto raw = v.to_attr();
    auto coerced = raw ? ops::coerce_attr(*raw, p.type) : std::nullopt;
    if (!coerced)
      src_.fail(ir::ErrorKind::kType, v.pos,
                "'" + fn.name + "' argument '" + p.name + "' must be " +
                    std::string(ops::attr_type_name(p.type)) + ", but got " + v.describe());
    attrs.push_back(*coerced);
  }
  ir::OpPtr op;
  try {
    op = fn.make(attrs);
    // InsertSlice records its literal offsets so typeinfer checks their windows.
    if (dynamic_cast<const ops::InsertSlice*>(op.get()))
      op = std::make_shared<ops::InsertSlice>(ops::insert_slice_literals(operands.back()));
  } catch (const ir::Error& e) {
    src_.rethrow_at(e, name.pos);
  }
  return Value::of_expr(make_call(op, std::move(operands), name.pos), name.pos);
}

ir::ExprPtr Parser::tuple_operand(const ops::SurfaceParam& p, const Arg* arg, const Token& name) const {
  if (!arg || arg->value.kind == Value::Kind::kNone) {
    if (!p.optional) src_.parse_error(arg ? arg->value.pos : name.pos, "'" + name.text + "' operand '" + p.name + "' cannot be None");
    return ir::Tuple::make({}, src_.span(arg ? arg->value.pos : name.pos));
  }
  auto field = [&](const Value& f) -> ir::ExprPtr {
    if (f.is_expr()) return f.expr;
    if (f.kind == Value::Kind::kInt) return ir::Constant::make_int(f.i, ir::DType::kI64, src_.span(f.pos));
    src_.parse_error(f.pos, "'" + name.text + "' operand '" + p.name + "' takes tensors and int literals, but got " +
                                f.describe());
  };
  const Value& v = arg->value;
  if (v.kind != Value::Kind::kTuple) return field(v);
  std::vector<ir::ExprPtr> fields;
  for (const auto& it : v.items) fields.push_back(field(it));
  return ir::Tuple::make(std::move(fields), src_.span(v.pos));
}

// A call to an @func defined earlier in the file: every parameter is a tensor.
Value Parser::function_call(const ir::FunctionPtr& fn, const Token& name, const std::vector<Arg>& args) {
  require_body(name);
  std::vector<std::string> names;
  for (const auto& p : fn->params()) names.push_back(p->name());
  auto slots = bind_args(fn->name(), name, names, std::vector<bool>(names.size(), false), args);
  const ir::TensorType* partner = literal_partner(slots);
  std::vector<ir::ExprPtr> operands;
  for (const Arg* a : slots) operands.push_back(operand(a->value, partner, name));
  try {
    return Value::of_expr(sema::make_function_call(fn, std::move(operands), src_.span(name.pos)), name.pos);
  } catch (const ir::Error& e) {
    src_.rethrow_at(e, name.pos);
  }
}

// DimVar("N", lo, hi): the range is half-open [lo, hi).
Value Parser::dimvar_call(const Token& name, const std::vector<Arg>& args) {
  if (locals_) src_.parse_error(name.pos, "DimVar(...) must be declared at module level");
  auto slots = bind_args("DimVar", name, {"name", "lo", "hi"}, {false, false, false}, args);
  const Value& n = slots[0]->value;
  if (n.kind != Value::Kind::kString) src_.parse_error(n.pos, "DimVar name must be a string, but got " + n.describe());
  // The printer writes the name as a variable (N = DimVar("N", ...)), so it
  // must lex as one (fuzz finding, tests/fuzz/regressions/parser).
  auto ident_char = [](char c, bool first) {
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (!first && c >= '0' && c <= '9');
  };
  bool ident = !n.s.empty();
  for (size_t i = 0; ident && i < n.s.size(); ++i) ident = ident_char(n.s[i], i == 0);
  if (!ident) src_.parse_error(n.pos, "DimVar name must be an identifier, but got " + n.describe());
  for (int i = 1; i < 3; ++i)
    if (slots[i]->value.kind != Value::Kind::kInt)
      src_.parse_error(slots[i]->value.pos, "DimVar bounds must be ints, but got " + slots[i]->value.describe());
  Value v;
  try {
    v = Value::of_dim(ir::ShapeDim::var(n.s, slots[1]->value.i, slots[2]->value.i), name.pos);
  } catch (const ir::Error& e) {
    src_.rethrow_at(e, name.pos);
  }
  // One name, one range per module: types and the printed module name a
  // DimVar by its name alone, so a second range could not be told apart (the
  // printer would have to declare the name twice; a fuzz finding).
  auto [first, fresh] = dimvars_.emplace(n.s, v);
  if (!fresh && !first->second.dim.structural_equal(v.dim)) {
    auto range = [](const ir::ShapeDim& d) {
      return "[" + std::to_string(d.var_lo()) + ", " + std::to_string(d.var_hi()) + ")";
    };
    src_.fail(ir::ErrorKind::kVerify, name.pos,
              "DimVar '" + n.s + "' is declared with bounds " + range(v.dim) + " here but " + range(first->second.dim) +
                  " at line " + std::to_string(first->second.pos.line) +
                  "; the DimVars of one name in a module MUST agree on their bounds (give this one another name)");
  }
  return v;
}

Value Parser::dim_minmax_call(const Token& name, const std::vector<Arg>& args) {
  auto slots = bind_args(name.text, name, {"a", "b"}, {false, false}, args);
  for (const Arg* a : slots)
    if (!a->value.is_dim_like())
      src_.parse_error(a->value.pos, "'" + name.text + "' takes ints or dims, but got " + a->value.describe());
  auto kind = name.text == "dim_min" ? ir::DimKind::kMin : ir::DimKind::kMax;
  return Value::of_dim(ir::ShapeDim::binary(kind, slots[0]->value.as_dim(), slots[1]->value.as_dim()), name.pos);
}

ir::ExprPtr Parser::make_call(const ir::OpPtr& op, std::vector<ir::ExprPtr> args, Pos pos) const {
  try {
    return sema::make_op_call(op, std::move(args), src_.span(pos));
  } catch (const ir::Error& e) {
    src_.rethrow_at(e, pos);
  }
}

}  // namespace tf::frontend
