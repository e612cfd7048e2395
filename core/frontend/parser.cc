#include "core/frontend/parser.h"

#include <algorithm>

#include "core/frontend/lexer.h"
#include "core/frontend/parser_impl.h"
#include "core/frontend/suggest.h"
#include "core/sema/boundary.h"
#include "core/sema/elaborate.h"
#include "core/sema/verify.h"

namespace tf::frontend {

ir::ModulePtr parse_module(std::string_view source, const std::string& filename) {
  SourceText src(source, filename);
  Parser parser(src, tokenize(src));
  return parser.parse();
}

// --- token cursor ---

const Token& Parser::peek(size_t k) const {
  size_t i = pos_ + k;
  return i < toks_.size() ? toks_[i] : toks_.back();
}

const Token& Parser::next() {
  const Token& t = peek();
  if (pos_ < toks_.size() - 1) ++pos_;
  return t;
}

bool Parser::accept_op(const char* op) {
  if (!peek().is_op(op)) return false;
  next();
  return true;
}

const Token& Parser::expect_op(const char* op) {
  if (!peek().is_op(op)) unexpected(peek(), std::string("'") + op + "'");
  return next();
}

const Token& Parser::expect_name() {
  if (peek().kind != TokenKind::kName) unexpected(peek(), "a name");
  return next();
}

void Parser::expect_newline() {
  if (peek().kind != TokenKind::kNewline) unexpected(peek(), "end of line");
  next();
}

void Parser::unexpected(const Token& t, const std::string& expected) const {
  if (t.kind == TokenKind::kIndent) src_.parse_error(t.pos, "unexpected indent");
  src_.parse_error(t.pos, "expected " + expected + ", but got " + describe_token(t));
}

// --- module level ---

ir::ModulePtr Parser::parse() {
  sema::ElaborationSession session;  // one parser run is one elaboration session
  while (peek().kind != TokenKind::kEnd) module_statement();
  // Every prototype enters the Module sealed; a later variant is rejected.
  for (auto& [name, proto] : prototypes_) seal_prototype(name, Pos{});
  return sema::seal(target_ ? *target_ : ir::Target::default_cpu(), functions_);
}

void Parser::seal_prototype(const std::string& name, Pos use) {
  auto& [builder, slot] = prototypes_.at(name);
  if (builder.sealed()) return;
  try {
    functions_[slot] = builder.seal();
  } catch (const ir::Error& e) {
    src_.rethrow_at(e, use.line ? use : Pos{builder.base().span.line, builder.base().span.col});
  }
  function_index_[name] = functions_[slot];
}

ir::FunctionPtr Parser::lookup_function(const std::string& name, Pos use) {
  if (prototypes_.count(name)) seal_prototype(name, use);
  auto f = function_index_.find(name);
  return f == function_index_.end() ? nullptr : f->second;
}

void Parser::check_return(const std::string& fn, Pos at, const ir::TypePtr& value, const ir::TypePtr& declared) {
  if (auto why = sema::return_mismatch(value, declared))
    src_.fail(ir::ErrorKind::kType, at,
              "'" + fn + "' returns " + value->to_string() + ", but its signature declares " + declared->to_string() +
                  ": " + *why);
}

void Parser::module_statement() {
  const Token& t = peek();
  if (t.kind == TokenKind::kNewline) {
    next();
  } else if (t.is_name("from") || t.is_name("import")) {
    skip_line();  // the names come from tilefoundry.dsl; the frontend knows them
  } else if (t.is_op("@")) {
    function_def();
  } else if (t.kind == TokenKind::kString) {
    next();  // module docstring
    expect_newline();
  } else if (t.is_name("def")) {
    src_.parse_error(t.pos, "a function needs the @func decorator");
  } else if (t.kind == TokenKind::kName && peek(1).is_op("=")) {
    module_assign();
  } else {
    unexpected(t, "an import, a constant, or an @func definition");
  }
}

void Parser::skip_line() {
  while (peek().kind != TokenKind::kNewline && peek().kind != TokenKind::kEnd) next();
  if (peek().kind == TokenKind::kNewline) next();
}

void Parser::module_assign() {
  const Token& name = next();
  next();  // '='
  refuse_literal_name(name);
  if (name.text == "TARGET") {
    parse_target(name);
  } else {
    Value v = expression();
    if (v.kind == Value::Kind::kExpr || v.kind == Value::Kind::kNone)
      src_.parse_error(v.pos, "a module-level name must be bound to a constant or a DimVar");
    globals_[name.text] = v.kind == Value::Kind::kMesh ? named_mesh(v, name.text) : v;
  }
  expect_newline();
}

// TARGET = Target("cpu", topology=(("device", 1), ("cta", 4)))
void Parser::parse_target(const Token& name_tok) {
  if (target_) src_.parse_error(name_tok.pos, "TARGET is declared twice");
  if (mesh_seen_) src_.parse_error(name_tok.pos, "TARGET must be declared before any Mesh that names its levels");
  const Token& head = expect_name();
  if (head.text != "Target") src_.parse_error(head.pos, "TARGET must be bound to Target(...)");
  expect_op("(");
  std::vector<Arg> args = call_args();
  auto slots = bind_args("Target", head, {"name", "topology"}, {false, true}, args);
  const Value& kind = slots[0]->value;
  if (kind.kind != Value::Kind::kString)
    src_.parse_error(kind.pos, "Target name must be a string such as \"cpu\", but got " + kind.describe());
  ir::Target target = ir::Target::default_cpu();
  target.name = kind.s;
  if (slots[1]) {
    const Value& topo = slots[1]->value;
    const char* shape_msg = "topology must be a tuple of (level name, extent) pairs, e.g. "
                            "((\"device\", 1), (\"cta\", 4))";
    if (topo.kind != Value::Kind::kTuple || topo.items.empty()) src_.parse_error(topo.pos, shape_msg);
    target.topology.clear();
    for (const auto& level : topo.items) {
      if (level.kind != Value::Kind::kTuple || level.items.size() != 2 ||
          level.items[0].kind != Value::Kind::kString || level.items[1].kind != Value::Kind::kInt)
        src_.parse_error(level.pos, shape_msg);
      if (level.items[1].i < 1)
        src_.parse_error(level.items[1].pos, "a topology level's extent must be positive");
      target.topology.emplace_back(level.items[0].s, level.items[1].i);
    }
  }
  target_ = target;
}

// --- function definitions ---

void Parser::function_def() {
  const Token& at = next();  // '@'
  const Token& deco = expect_name();
  if (peek().is_op(".")) return specialize_def(deco);
  if (deco.text != "func") src_.parse_error(deco.pos, "unknown decorator '" + deco.text + "'; expected @func");
  (void)at;
  const std::vector<Arg> deco_args = decorator_args();
  expect_newline();
  const Token& def = peek();
  if (!def.is_name("def")) unexpected(def, "'def' after @func");
  next();
  const Token& name = expect_name();
  if (function_index_.count(name.text) || prototypes_.count(name.text))
    src_.parse_error(name.pos, "function '" + name.text + "' is defined twice");
  expect_op("(");
  std::vector<ir::VarPtr> params = parameters();
  if (!peek().is_op("->"))
    src_.parse_error(peek().pos, "function '" + name.text + "' needs a return annotation '-> Tensor[...]'");
  next();
  ir::TypePtr ret_type = type_annotation();
  expect_op(":");
  std::vector<int64_t> inplace = inplace_of(deco_args, params, ret_type);

  std::map<std::string, Value> locals;
  for (const auto& p : params) locals[p->name()] = Value::of_expr(p, Pos{p->span().line, p->span().col});
  locals_ = &locals;
  ir::ExprPtr body = function_body(name.text, def.pos);
  locals_ = nullptr;

  if (!body) {  // a `pass` prototype: its variants come from @name.specialize
    ir::Function::Fields f;
    f.name = name.text;
    f.params = std::move(params);
    f.return_type = std::move(ret_type);
    f.span = src_.span(def.pos);
    f.inplace = std::move(inplace);
    prototypes_.emplace(name.text, std::make_pair(sema::PrototypeBuilder(std::move(f)), functions_.size()));
    functions_.push_back(nullptr);
    return;
  }
  check_return(name.text, name.pos, body->type(), ret_type);
  ir::Function::Fields f;
  f.name = name.text;
  f.params = std::move(params);
  f.body = std::move(body);
  f.return_type = std::move(ret_type);
  f.span = src_.span(def.pos);
  f.inplace = std::move(inplace);
  ir::FunctionPtr fn;
  try {
    fn = ir::Function::make(std::move(f));
  } catch (const ir::Error& e) {
    src_.rethrow_at(e, name.pos);
  }
  functions_.push_back(fn);
  function_index_[fn->name()] = fn;
}

std::vector<Parser::Arg> Parser::decorator_args() {
  if (!accept_op("(")) return {};
  std::vector<Arg> args = call_args();
  for (const Arg& a : args) {
    if (a.keyword.empty()) src_.parse_error(a.value.pos, "@func takes keyword arguments only, e.g. @func(inplace=\"cache\")");
    if (a.keyword != "inplace")
      src_.parse_error(a.keyword_pos, "unknown @func argument '" + a.keyword + "'; expected inplace=");
  }
  return args;
}

// inplace="p" (a one-result function) or inplace=("p", None, ...) with one
// entry per result: the parameter whose buffer receives that result.
std::vector<int64_t> Parser::inplace_of(const std::vector<Arg>& deco_args, const std::vector<ir::VarPtr>& params,
                                        const ir::TypePtr& ret_type) {
  if (deco_args.empty()) return {};
  const Value& v = deco_args[0].value;
  const size_t results = ir::flatten_tensor_types(ret_type).size();
  std::vector<Value> entries;
  if (v.kind == Value::Kind::kString) {
    if (results != 1)
      src_.parse_error(v.pos, "inplace=\"" + v.s + "\" names one result, but the function returns " +
                                  std::to_string(results) + "; give a tuple with one entry (a parameter name or None) per result");
    entries.push_back(v);
  } else if (v.kind == Value::Kind::kTuple) {
    entries = v.items;
    if (entries.size() != results)
      src_.parse_error(v.pos, "inplace= has " + std::to_string(entries.size()) + " entries, but the function returns " +
                                  std::to_string(results) + " results");
  } else {
    src_.parse_error(v.pos, "inplace= takes a parameter name or a tuple of them (None for a fresh result), but got " +
                                v.describe());
  }
  std::vector<int64_t> out;
  for (const Value& e : entries) {
    if (e.kind == Value::Kind::kNone) {
      out.push_back(-1);
      continue;
    }
    if (e.kind != Value::Kind::kString)
      src_.parse_error(e.pos, "an inplace= entry is a parameter name (a string) or None, but got " + e.describe());
    auto it = std::find_if(params.begin(), params.end(), [&](const ir::VarPtr& p) { return p->name() == e.s; });
    if (it == params.end()) {
      std::vector<std::string> names;
      for (const auto& p : params) names.push_back(p->name());
      src_.parse_error(e.pos, "inplace= names '" + e.s + "', which is not a parameter" + did_you_mean(e.s, names));
    }
    out.push_back(it - params.begin());
  }
  if (std::all_of(out.begin(), out.end(), [](int64_t p) { return p < 0; })) return {};
  return out;
}

// @f.specialize(S=(lo, hi)) / def label(params) -> T: body. The variant
// shares f's name; the decorated identifier is its display label.
void Parser::specialize_def(const Token& base_name) {
  next();  // '.'
  const Token& attr = expect_name();
  if (attr.text != "specialize")
    src_.parse_error(attr.pos, "unknown decorator '@" + base_name.text + "." + attr.text + "'; expected @" +
                                   base_name.text + ".specialize(...)");
  auto proto = prototypes_.find(base_name.text);
  if (proto == prototypes_.end())
    src_.parse_error(base_name.pos, "'" + base_name.text +
                                        "' is not a dispatch prototype; declare it first with @func and a 'pass' body");
  expect_op("(");
  std::vector<Arg> args = call_args();
  if (args.size() != 1 || args[0].keyword.empty())
    src_.parse_error(attr.pos, "specialize takes exactly one DimVar range, e.g. specialize(S=(1, 64))");
  const Value& r = args[0].value;
  if (r.kind != Value::Kind::kTuple || r.items.size() != 2 || r.items[0].kind != Value::Kind::kInt ||
      r.items[1].kind != Value::Kind::kInt)
    src_.parse_error(r.pos, "a specialize range must be a pair of ints (lo, hi), but got " + r.describe());
  expect_newline();
  const Token& def = peek();
  if (!def.is_name("def")) unexpected(def, "'def' after @" + base_name.text + ".specialize(...)");
  next();
  const Token& label = expect_name();
  expect_op("(");
  std::vector<ir::VarPtr> params = parameters();
  if (!peek().is_op("->")) src_.parse_error(peek().pos, "a variant needs the return annotation of its base");
  next();
  ir::TypePtr ret_type = type_annotation();
  expect_op(":");
  std::map<std::string, Value> locals;
  for (const auto& p : params) locals[p->name()] = Value::of_expr(p, Pos{p->span().line, p->span().col});
  locals_ = &locals;
  ir::ExprPtr body = function_body(label.text, def.pos);
  locals_ = nullptr;
  if (!body) src_.parse_error(def.pos, "a variant needs a body; only the base is a 'pass' prototype");
  check_return(label.text, label.pos, body->type(), ret_type);
  ir::Function::Fields f;
  f.name = base_name.text;
  f.label = label.text;
  f.params = std::move(params);
  f.body = std::move(body);
  f.return_type = std::move(ret_type);
  f.specializations.push_back({args[0].keyword, r.items[0].i, r.items[1].i});
  f.span = src_.span(def.pos);
  try {
    proto->second.first.add_variant(ir::Function::make(std::move(f)));
  } catch (const ir::Error& e) {
    src_.rethrow_at(e, base_name.pos);
  }
}

std::vector<ir::VarPtr> Parser::parameters() {
  std::vector<ir::VarPtr> params;
  while (!peek().is_op(")")) {
    const Token& pname = expect_name();
    for (const auto& p : params)
      if (p->name() == pname.text) src_.parse_error(pname.pos, "duplicate parameter '" + pname.text + "'");
    if (!peek().is_op(":"))
      src_.parse_error(peek().pos, "parameter '" + pname.text + "' needs a Tensor[...] annotation");
    next();
    params.push_back(ir::Var::make(pname.text, type_annotation(), src_.span(pname.pos)));
    if (!accept_op(",")) break;
  }
  expect_op(")");
  return params;
}

ir::TypePtr Parser::type_annotation() {
  const Token& head = expect_name();
  if (head.text == "Tensor") return tensor_annotation(head);
  if (head.text != "tuple") src_.parse_error(head.pos, "expected a Tensor[...] or tuple[...] type, but got '" + head.text + "'");
  expect_op("[");
  std::vector<ir::TypePtr> fields;
  do {
    if (peek().is_op("]")) break;
    fields.push_back(type_annotation());
  } while (accept_op(","));
  expect_op("]");
  if (fields.empty()) src_.parse_error(head.pos, "tuple[...] needs at least one field type");
  return ir::TupleType::make(std::move(fields));
}

// Tensor[(dims...), dtype] or Tensor[(dims...), dtype, "storage"].
ir::TypePtr Parser::tensor_annotation(const Token& head) {
  expect_op("[");
  Value shape = bit_or();
  if (shape.kind != Value::Kind::kTuple)
    src_.parse_error(shape.pos, "a Tensor shape must be a tuple such as (N, 4096) or (N,)");
  ir::Shape dims;
  for (const auto& d : shape.items) {
    if (!d.is_dim_like()) src_.parse_error(d.pos, "a shape extent must be an int or a dim, but got " + d.describe());
    if (d.kind == Value::Kind::kInt && d.i < 0) src_.parse_error(d.pos, "a shape extent must be non-negative");
    dims.push_back(d.as_dim());
  }
  expect_op(",");
  Value dtype = bit_or();
  if (dtype.kind != Value::Kind::kDType)
    src_.parse_error(dtype.pos, "expected a dtype such as f32, but got " + dtype.describe());
  ir::StorageKind storage = ir::StorageKind::kGmem;
  ir::LayoutPtr layout;
  bool more = accept_op(",");
  if (more && peek().kind != TokenKind::kString) {
    Value l = bit_or();  // a ShardLayout(...) / Layout(...) annotation
    if (l.kind != Value::Kind::kLayout)
      src_.parse_error(l.pos, "expected a layout or a storage kind string, but got " + l.describe());
    layout = resolve_layout(l, dims, true);  // signature binding materializes strides
    more = accept_op(",");
  }
  if (more) {
    const Token& st = peek();
    if (st.kind != TokenKind::kString) unexpected(st, "a storage kind string (\"rmem\", \"smem\", \"gmem\")");
    auto kind = ir::storage_from_name(st.text);
    if (!kind) src_.parse_error(st.pos, "unknown storage kind \"" + st.text + "\"; expected \"rmem\", \"smem\" or \"gmem\"");
    storage = *kind;
    next();
  }
  expect_op("]");
  try {
    return ir::TensorType::make(std::move(dims), dtype.dtype, std::move(layout), storage);
  } catch (const ir::Error& e) {
    src_.rethrow_at(e, head.pos);
  }
}

// --- statements ---

ir::ExprPtr Parser::function_body(const std::string& fn_name, Pos def_pos) {
  std::optional<Value> ret;
  Pos ret_pos;
  bool only_pass = true;  // the body is nothing but pass / docstrings
  auto one = [&] {
    if (ret) src_.parse_error(peek().pos, "unreachable statement after return");
    const Token& t = peek();
    if (t.is_name("pass")) {
      next();
      expect_newline();
      return;
    }
    if (t.kind == TokenKind::kString && peek(1).kind == TokenKind::kNewline) {
      next();  // docstring
      next();
      return;
    }
    only_pass = false;
    statement(&ret, &ret_pos);
  };
  if (peek().kind == TokenKind::kNewline) {
    next();
    if (peek().kind != TokenKind::kIndent) unexpected(peek(), "an indented block");
    next();
    while (peek().kind != TokenKind::kDedent && peek().kind != TokenKind::kEnd) one();
    if (peek().kind == TokenKind::kDedent) next();
  } else {
    one();  // def f(...) -> T: return x
  }
  if (only_pass) return nullptr;  // a dispatch prototype
  if (!ret) src_.parse_error(def_pos, "function '" + fn_name + "' has no return statement");
  return to_expr(*ret, "a function's return value");
}

void Parser::statement(std::optional<Value>* ret, Pos* ret_pos) {
  const Token& t = peek();
  if (t.is_name("for")) {
    for_loop();
    return;
  }
  if (t.is_name("with")) {
    with_mesh(ret, ret_pos);
    return;
  }
  static const char* const kUnsupported[] = {"while", "if", "def", "del",
                                             "global", "nonlocal", "lambda", "class"};
  for (const char* kw : kUnsupported)
    if (t.is_name(kw)) src_.parse_error(t.pos, std::string("'") + kw + "' statements are not supported yet");
  if (t.is_name("return")) {
    next();
    *ret_pos = t.pos;
    *ret = return_value(t.pos);
  } else if (t.kind == TokenKind::kName && (peek(1).is_op("=") || peek(1).is_op(","))) {
    assignment();
  } else {
    Value v = expression();
    src_.parse_error(v.pos, "expression statement has no effect; bind it with 'name = ...' or return it");
  }
  expect_newline();
}

// inf and nan always mean the float literals (name_value): binding them
// would make a name that can never be read back.
void Parser::refuse_literal_name(const Token& name) const {
  if (name.text == "inf" || name.text == "nan")
    src_.parse_error(name.pos, "'" + name.text + "' is the float literal " + name.text + "; bind another name");
}

// `return a` or `return a, b` (a Tuple of the values).
Value Parser::return_value(Pos pos) {
  if (peek().kind == TokenKind::kNewline) src_.parse_error(pos, "return needs a value");
  Value first = expression();
  if (!peek().is_op(",")) return first;
  std::vector<ir::ExprPtr> fields{to_expr(first, "a returned tuple field")};
  while (accept_op(",")) {
    if (peek().kind == TokenKind::kNewline) break;
    fields.push_back(to_expr(expression(), "a returned tuple field"));
  }
  return Value::of_expr(ir::Tuple::make(std::move(fields), src_.span(first.pos)), first.pos);
}

// `name = expr` or `a, b = expr` (unpacks a tuple value into its items).
void Parser::assignment() {
  std::vector<const Token*> targets{&next()};
  while (accept_op(",")) targets.push_back(&expect_name());
  expect_op("=");
  for (const Token* t : targets) refuse_literal_name(*t);
  Value v = expression();
  if (targets.size() == 1) {
    (*locals_)[targets[0]->text] = v;
    return;
  }
  std::vector<Value> items;
  if (v.kind == Value::Kind::kTuple) {
    items = v.items;
  } else if (v.is_expr() && ir::as_tuple(v.expr->type())) {
    size_t n = ir::as_tuple(v.expr->type())->fields().size();
    for (size_t i = 0; i < n; ++i)
      items.push_back(Value::of_expr(
          ir::TupleGetItem::make(v.expr, static_cast<int64_t>(i), src_.span(v.pos)), v.pos));
  } else {
    src_.parse_error(v.pos, "cannot unpack " + v.describe() + " into " + std::to_string(targets.size()) + " names");
  }
  if (items.size() != targets.size())
    src_.parse_error(v.pos, "cannot unpack " + std::to_string(items.size()) + " values into " +
                                std::to_string(targets.size()) + " names");
  for (size_t i = 0; i < targets.size(); ++i) (*locals_)[targets[i]->text] = items[i];
}

ir::ExprPtr Parser::to_expr(const Value& v, const std::string& what) const {
  if (!v.is_expr())
    src_.parse_error(v.pos, what + " must be a tensor value, but got " + v.describe());
  return v.expr;
}

}  // namespace tf::frontend
