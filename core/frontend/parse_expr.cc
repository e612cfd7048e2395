// Expressions, with Python's operator precedence (lowest first):
//   comparison (not chained)  <  |  <  ^  <  &  <  << >>  <  + -  <  * / // % @
//   <  unary - + ~  <  postfix (calls, subscripts)  <  atoms
#include <limits>

#include "core/frontend/parser_impl.h"
#include "core/frontend/suggest.h"
#include "core/ops/math/math.h"
#include "core/ops/tensor/tensor.h"

namespace tf::frontend {
namespace {

bool is_comparison(const Token& t) {
  return t.is_op("<") || t.is_op("<=") || t.is_op(">") || t.is_op(">=") || t.is_op("==") ||
         t.is_op("!=");
}

// The surface function a tensor operator denotes; "" when it has none.
const char* operator_surface(const std::string& op) {
  static const std::pair<const char*, const char*> kTable[] = {
      {"+", "add"},    {"-", "sub"},    {"*", "mul"},    {"/", "div"},         {"<", "cmp_lt"},
      {"<=", "cmp_le"}, {">", "cmp_gt"}, {">=", "cmp_ge"}, {"==", "cmp_eq"},     {"!=", "cmp_ne"},
      {"&", "logical_and"}, {"|", "logical_or"}, {"@", "matmul"}, {"**", "pow"}};
  for (const auto& [o, s] : kTable)
    if (op == o) return s;
  return "";
}

}  // namespace

Value Parser::expression() {
  Value v = comparison();
  if (peek().is_name("and") || peek().is_name("or"))
    src_.parse_error(peek().pos, "'" + peek().text + "' is not supported; use " +
                                     (peek().text == "and" ? "&" : "|") + " on bool tensors");
  return v;
}

Value Parser::comparison() {
  Value lhs = bit_or();
  if (!is_comparison(peek())) return lhs;
  const Token& op = next();
  Value rhs = bit_or();
  if (is_comparison(peek()))
    src_.parse_error(peek().pos, "chained comparisons are not supported; parenthesize each comparison");
  return binary(op, lhs, rhs);
}

Value Parser::bit_or() {
  Value v = bit_xor();
  while (peek().is_op("|")) {
    const Token& op = next();
    v = binary(op, v, bit_xor());
  }
  return v;
}

Value Parser::bit_xor() {
  Value v = bit_and();
  while (peek().is_op("^")) {
    const Token& op = next();
    v = binary(op, v, bit_and());
  }
  return v;
}

Value Parser::bit_and() {
  Value v = shift();
  while (peek().is_op("&")) {
    const Token& op = next();
    v = binary(op, v, shift());
  }
  return v;
}

Value Parser::shift() {
  Value v = arith();
  while (peek().is_op("<<") || peek().is_op(">>")) {
    const Token& op = next();
    v = binary(op, v, arith());
  }
  return v;
}

Value Parser::arith() {
  Value v = term();
  while (peek().is_op("+") || peek().is_op("-")) {
    const Token& op = next();
    v = binary(op, v, term());
  }
  return v;
}

Value Parser::term() {
  Value v = unary();
  while (peek().is_op("*") || peek().is_op("/") || peek().is_op("//") || peek().is_op("%") ||
         peek().is_op("@")) {
    const Token& op = next();
    v = binary(op, v, unary());
  }
  return v;
}

// Deeper nesting is refused rather than recursed into: the parser and every
// recursive pass over the IR it builds would run out of stack (a fuzz
// finding: thousands of '~'). Python's own parser stops at 200 parentheses.
constexpr int kMaxNesting = 200;

Value Parser::unary() {
  struct Depth {
    int& n;
    explicit Depth(int& d) : n(++d) {}
    ~Depth() { --n; }
  } depth(nesting_);
  if (nesting_ > kMaxNesting)
    src_.parse_error(peek().pos, "expression nested more than " + std::to_string(kMaxNesting) + " levels deep");
  if (peek().is_op("-") || peek().is_op("+") || peek().is_op("~")) {
    const Token& op = next();
    Value v = unary();
    return unary_op(op, v);
  }
  if (peek().is_op("**")) src_.parse_error(peek().pos, "operator '**' is not supported");
  if (peek().is_name("not")) src_.parse_error(peek().pos, "'not' is not supported; use ~ on bool tensors");
  return power();
}

// Python's power: binds tighter than a unary minus on its left (-x ** 2 is
// -(x ** 2)), its exponent may carry one (x ** -1), and it groups to the
// right (a ** b ** c is a ** (b ** c)).
Value Parser::power() {
  Value v = postfix();
  if (!peek().is_op("**")) return v;
  const Token& op = next();
  return binary(op, v, unary());
}

Value Parser::postfix() {
  Value v = atom();
  while (true) {
    if (peek().is_op("[")) {
      const Token& open = next();
      v = subscript(v, open);
    } else if (peek().is_op("(")) {
      src_.parse_error(peek().pos, "only a function name can be called");
    } else if (peek().is_op(".")) {
      src_.parse_error(peek().pos, "attribute access is not supported");
    } else {
      return v;
    }
  }
}

Value Parser::atom() {
  const Token& t = peek();
  switch (t.kind) {
    case TokenKind::kInt: next(); return Value::of_int(t.int_value, t.pos);
    case TokenKind::kFloat: next(); return Value::of_float(t.float_value, t.pos);
    case TokenKind::kString: next(); return Value::of_string(t.text, t.pos);
    case TokenKind::kName:
      next();
      if (peek().is_op("(")) return call(t);
      return name_value(t);
    case TokenKind::kOp:
      if (t.is_op("(")) return paren_or_tuple();
      break;
    default: break;
  }
  unexpected(t, "an expression");
}

// (e), (), (a,), (a, b, ...). A tuple of IR values is an ir::Tuple; a tuple
// of literals stays a literal (a shape, axes, ...).
Value Parser::paren_or_tuple() {
  const Token& open = next();
  if (accept_op(")")) return Value::of_tuple({}, open.pos);
  Value first = expression();
  if (accept_op(")")) {
    first.pos = open.pos;
    return first;
  }
  std::vector<Value> items{first};
  while (accept_op(",")) {
    if (peek().is_op(")")) break;
    items.push_back(expression());
  }
  expect_op(")");
  size_t n_expr = 0;
  for (const auto& it : items) n_expr += it.is_expr();
  // A mixed tuple stays a literal tuple: only a tuple operand (insert_slice's
  // offsets, shape_compose's dims) accepts it; operand() rejects it elsewhere.
  if (n_expr != items.size()) return Value::of_tuple(std::move(items), open.pos);
  std::vector<ir::ExprPtr> fields;
  for (const auto& it : items) fields.push_back(it.expr);
  return Value::of_expr(ir::Tuple::make(std::move(fields), src_.span(open.pos)), open.pos);
}

Value Parser::name_value(const Token& name) {
  // Python spells these math.inf / float("nan"); a kernel writes a mask's
  // -inf as a literal, which takes its partner tensor's dtype like 1.5 does.
  if (name.text == "inf") return Value::of_float(std::numeric_limits<double>::infinity(), name.pos);
  if (name.text == "nan") return Value::of_float(std::numeric_limits<double>::quiet_NaN(), name.pos);
  if (locals_) {
    auto it = locals_->find(name.text);
    if (it != locals_->end()) {
      Value v = it->second;
      v.pos = name.pos;
      return v;
    }
  }
  auto g = globals_.find(name.text);
  if (g != globals_.end()) {
    Value v = g->second;
    v.pos = name.pos;
    return v;
  }
  if (auto d = ir::dtype_from_name(name.text)) return Value::of_dtype(*d, name.pos);
  if (name.text == "True" || name.text == "False") return Value::of_bool(name.text == "True", name.pos);
  if (name.text == "None") {
    Value v;
    v.pos = name.pos;
    return v;
  }
  if (function_index_.count(name.text) || prototypes_.count(name.text) || ops::find_surface(name.text))
    src_.parse_error(name.pos, "'" + name.text + "' is a function; call it with (...)");
  if (closed_meshes_.count(name.text))
    src_.parse_error(name.pos, "mesh '" + name.text + "' is not active here: its `with Mesh(...) as " + name.text +
                                   ":` block has ended, and ShardLayout.mesh MUST point at an active binding on "
                                   "the lexical path");
  src_.parse_error(name.pos, "undefined name '" + name.text + "'" + did_you_mean(name.text, value_names()));
}

// Every name a value can spell here: the body's locals, then the module's
// globals.
std::vector<std::string> Parser::value_names() const {
  std::vector<std::string> names;
  if (locals_)
    for (const auto& [n, v] : *locals_) names.push_back(n);
  for (const auto& [n, v] : globals_) names.push_back(n);
  return names;
}

// --- operators ---

Value Parser::binary(const Token& op, const Value& lhs, const Value& rhs) {
  if (lhs.is_expr() || rhs.is_expr()) return tensor_binary(op, lhs, rhs);
  if (lhs.is_dim_like() && rhs.is_dim_like()) return fold_dims(op, lhs, rhs);
  src_.parse_error(op.pos, "operator '" + op.text + "' needs a tensor operand, but both operands are literals (" +
                               lhs.describe() + ", " + rhs.describe() + ")");
}

// Compile-time int / dim arithmetic (shapes, module constants): folded when
// both sides are static, a DimExpr otherwise.
Value Parser::fold_dims(const Token& op, const Value& lhs, const Value& rhs) const {
  const std::string& o = op.text;
  bool ints = lhs.kind == Value::Kind::kInt && rhs.kind == Value::Kind::kInt;
  if ((o == "//" || o == "%") && rhs.kind == Value::Kind::kInt && rhs.i == 0)
    src_.parse_error(op.pos, "division by zero in a dim expression");
  if (o == "<<" || o == ">>") {
    if (!ints) src_.parse_error(op.pos, "operator '" + o + "' needs static int operands");
    if (rhs.i < 0 || rhs.i > 62) src_.parse_error(rhs.pos, "shift count must be in [0, 62]");
    // A negative or overflowing left shift is undefined behaviour in C++17
    // (fuzz finding, tests/fuzz/regressions/parser).
    if (o == "<<" && (lhs.i < 0 || lhs.i > (std::numeric_limits<int64_t>::max() >> rhs.i)))
      src_.parse_error(op.pos, "'<<' needs a non-negative left operand whose result fits in 64 bits, but got " +
                                   std::to_string(lhs.i) + " << " + std::to_string(rhs.i));
    return Value::of_int(o == "<<" ? lhs.i << rhs.i : lhs.i >> rhs.i, lhs.pos);
  }
  ir::DimKind kind;
  if (o == "+") kind = ir::DimKind::kAdd;
  else if (o == "-") kind = ir::DimKind::kSub;
  else if (o == "*") kind = ir::DimKind::kMul;
  else if (o == "//") kind = ir::DimKind::kFloorDiv;
  else if (o == "%") kind = ir::DimKind::kMod;
  else src_.parse_error(op.pos, "operator '" + o + "' is not defined on ints and dims; use // for division");
  try {
    return Value::of_dim(ir::ShapeDim::binary(kind, lhs.as_dim(), rhs.as_dim()), lhs.pos);
  } catch (const ir::Error& e) {
    src_.rethrow_at(e, op.pos);
  }
}

Value Parser::tensor_binary(const Token& op, const Value& lhs, const Value& rhs) {
  std::string surface = operator_surface(op.text);
  if (surface.empty()) src_.parse_error(op.pos, "operator '" + op.text + "' is not defined on tensors");
  if (!locals_) src_.parse_error(op.pos, "tensor operators are only allowed inside an @func body");
  const Value& tensor_side = lhs.is_expr() ? lhs : rhs;
  const ir::TensorType* partner = ir::as_tensor(tensor_side.expr->type());
  std::vector<ir::ExprPtr> args{operand(lhs, partner, op), operand(rhs, partner, op)};
  const ops::SurfaceFn* fn = ops::find_surface(surface);
  TF_CHECK(fn != nullptr, "operator surface '" + surface + "' is not registered");
  return Value::of_expr(make_call(fn->make({}), std::move(args), op.pos), lhs.pos);
}

// Rationale: a Python float literal takes the partner's float
// dtype. An int literal next to an int tensor takes that int dtype; next to a
// float tensor it also becomes a float Constant of the partner's dtype
// (`x * 2` means `x * 2.0`), since HIR has no implicit promotion and a
// rank-0 i64 operand would only produce a dtype-mismatch error.
ir::ExprPtr Parser::operand(const Value& v, const ir::TensorType* partner, const Token& op) const {
  if (v.is_expr()) return v.expr;
  if (v.kind == Value::Kind::kTuple)
    for (const auto& it : v.items)
      if (it.is_expr()) src_.parse_error(v.pos, "a tuple cannot mix tensor values and literals");
  if (!v.is_scalar_literal())
    src_.parse_error(v.pos, "operand of '" + op.text + "' must be a tensor or a scalar literal, but got " +
                                v.describe());
  if (!partner)
    src_.fail(ir::ErrorKind::kType, v.pos, "a literal operand of '" + op.text +
                                               "' needs a tensor partner operand to take its dtype from");
  ir::DType d = partner->dtype();
  ir::Span span = src_.span(v.pos);
  if (v.kind == Value::Kind::kFloat && ir::is_float(d)) return ir::Constant::make_float(v.f, d, span);
  if (v.kind == Value::Kind::kInt && ir::is_float(d))
    return ir::Constant::make_float(static_cast<double>(v.i), d, span);
  if (v.kind == Value::Kind::kInt && ir::is_int(d)) return ir::Constant::make_int(v.i, d, span);
  if (v.kind == Value::Kind::kBool && ir::is_bool(d)) return ir::Constant::make_int(v.b ? 1 : 0, d, span);
  src_.fail(ir::ErrorKind::kType, v.pos,
            "'" + op.text + "': " + v.describe() + " cannot take the dtype " +
                std::string(ir::dtype_name(d)) + " of the other operand (no implicit promotion; use cast)");
}

Value Parser::unary_op(const Token& op, const Value& v) {
  const std::string& o = op.text;
  if (v.is_expr()) {
    if (o == "+") return v;
    auto kind = o == "-" ? ops::UnaryKind::kNeg : ops::UnaryKind::kLogicalNot;
    auto fn = ops::find_surface(ops::unary_kind_name(kind));
    TF_CHECK(fn != nullptr, "unary surface missing");
    Value r = Value::of_expr(make_call(fn->make({}), {v.expr}, op.pos), op.pos);
    return r;
  }
  if (o == "~") src_.parse_error(op.pos, "operator '~' needs a tensor operand");
  Value r = v;
  r.pos = op.pos;
  if (o == "+" && (v.is_dim_like() || v.kind == Value::Kind::kFloat)) return r;
  if (v.kind == Value::Kind::kInt) {
    if (v.i == std::numeric_limits<int64_t>::min()) src_.parse_error(op.pos, "int literal out of range");
    r.i = -v.i;
    return r;
  }
  if (v.kind == Value::Kind::kFloat) {
    r.f = -v.f;
    return r;
  }
  if (v.kind == Value::Kind::kDim) return Value::of_dim(ir::ShapeDim(0) - v.dim, op.pos);
  src_.parse_error(op.pos, "operator '" + o + "' is not defined on " + v.describe());
}

// --- subscripts ---

Value Parser::subscript(const Value& base, const Token& open) {
  std::vector<SubItem> items = subscript_items();
  bool plain_index = items.size() == 1 && !items[0].is_slice;
  if (base.kind == Value::Kind::kTuple || (base.is_expr() && ir::as_tuple(base.expr->type()))) {
    if (!plain_index || items[0].index.kind != Value::Kind::kInt)
      src_.parse_error(items.empty() ? open.pos : items[0].pos, "a tuple is indexed by one int, e.g. t[0]");
    int64_t n = base.kind == Value::Kind::kTuple
                    ? static_cast<int64_t>(base.items.size())
                    : static_cast<int64_t>(ir::as_tuple(base.expr->type())->fields().size());
    int64_t i = items[0].index.i;
    if (i < -n || i >= n)
      src_.parse_error(items[0].pos, "tuple index " + std::to_string(i) + " is out of range for " +
                                         std::to_string(n) + " fields");
    if (i < 0) i += n;
    if (base.kind == Value::Kind::kTuple) return base.items[i];
    return Value::of_expr(ir::TupleGetItem::make(base.expr, i, src_.span(open.pos)), base.pos);
  }
  if (base.is_expr() && ir::as_tensor(base.expr->type())) return tensor_slice(base, items, open);
  src_.parse_error(open.pos, "cannot subscript " + base.describe());
}

std::vector<Parser::SubItem> Parser::subscript_items() {
  std::vector<SubItem> items;
  auto ends_part = [this] { return peek().is_op(":") || peek().is_op(",") || peek().is_op("]"); };
  while (!peek().is_op("]")) {
    SubItem it;
    it.pos = peek().pos;
    if (!ends_part()) {
      Value v = expression();
      if (!peek().is_op(":")) {
        it.index = v;
      } else {
        it.begin = v;
      }
    }
    if (accept_op(":")) {
      it.is_slice = true;
      if (!ends_part()) it.end = expression();
      if (accept_op(":") && !ends_part()) it.step = expression();
    } else if (!it.begin && it.index.kind == Value::Kind::kNone) {
      unexpected(peek(), "an index or a slice");
    }
    items.push_back(std::move(it));
    if (!accept_op(",")) break;
  }
  expect_op("]");
  return items;
}

// x[a:b:s, i, :] -> Slice(begin, end, strides) over every axis; an integer
// index i selects [i, i + 1) and a Reshape then drops that axis.
Value Parser::tensor_slice(const Value& base, const std::vector<SubItem>& items, const Token& open) {
  const ir::TensorType& t = *ir::as_tensor(base.expr->type());
  if (items.size() > t.rank())
    src_.parse_error(open.pos, "too many indices (" + std::to_string(items.size()) + ") for a rank-" +
                                   std::to_string(t.rank()) + " tensor");
  auto dim_of = [this](const Value& v, const char* what) {
    if (!v.is_dim_like())
      src_.parse_error(v.pos, std::string("a slice ") + what + " must be an int or a dim, but got " +
                                  v.describe() + (v.is_expr() ? " (tensor indices: use gather)" : ""));
    return v.as_dim();
  };
  ir::Shape begin, end;
  std::vector<int64_t> strides;
  for (size_t ax = 0; ax < t.rank(); ++ax) {
    const ir::ShapeDim& extent = t.shape()[ax];
    if (ax >= items.size()) {
      begin.push_back(0), end.push_back(extent), strides.push_back(1);
      continue;
    }
    const SubItem& it = items[ax];
    if (!it.is_slice && it.index.kind == Value::Kind::kRangeSlice) {  // a tile window
      begin.push_back(it.index.dim);
      end.push_back(it.index.dim + it.index.items[0].as_dim());
      strides.push_back(1);
      continue;
    }
    if (!it.is_slice) {
      ir::ShapeDim i = dim_of(it.index, "index");
      begin.push_back(i);
      // i = -1 selects the last element: its end is the extent, not 0.
      end.push_back(i.is_static() && i.value() == -1 ? extent : i + ir::ShapeDim(1));
      strides.push_back(1);
      continue;
    }
    begin.push_back(it.begin ? dim_of(*it.begin, "start") : ir::ShapeDim(0));
    end.push_back(it.end ? dim_of(*it.end, "stop") : extent);
    int64_t step = 1;
    if (it.step) {
      if (it.step->kind != Value::Kind::kInt || it.step->i == 0)
        src_.parse_error(it.step->pos, "a slice step must be a non-zero int");
      step = it.step->i;
    }
    strides.push_back(step);
  }
  auto slice_fn = ops::find_surface("slice");
  TF_CHECK(slice_fn != nullptr, "slice surface missing");
  ir::OpPtr op;
  try {
    op = slice_fn->make({begin, end, strides});
  } catch (const ir::Error& e) {
    src_.rethrow_at(e, open.pos);
  }
  ir::ExprPtr sliced = make_call(op, {base.expr}, open.pos);
  bool drops = false;
  auto keeps = [&](size_t ax) { return items[ax].is_slice || items[ax].index.kind == Value::Kind::kRangeSlice; };
  for (size_t ax = 0; ax < items.size(); ++ax) drops |= !keeps(ax);
  if (!drops) return Value::of_expr(sliced, base.pos);
  const ir::TensorType& st = *ir::as_tensor(sliced->type());
  ir::Shape new_shape;
  for (size_t ax = 0; ax < st.rank(); ++ax)
    if (ax >= items.size() || keeps(ax)) new_shape.push_back(st.shape()[ax]);
  auto reshape_fn = ops::find_surface("reshape");
  TF_CHECK(reshape_fn != nullptr, "reshape surface missing");
  return Value::of_expr(make_call(reshape_fn->make({new_shape}), {sliced}, open.pos), base.pos);
}

}  // namespace tf::frontend
