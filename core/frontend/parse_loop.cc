// Loops (docs/ir.md, Loops): `for i in tile(stop, step=s)`,
// `for i in tile(stop)` and `for i in range([start,] stop[, step])` all lower
// to one GridRegionExpr; range is not unrolled. The loop variable is the
// region's induction Var; in the body it is also a DimVar of the same name
// (bounded by the domain) so it can index and slice: tile with a step binds
// the window [i, i + step) (a RangeSlice), every other form binds the scalar
// i. An outer tensor name the body rebinds is loop-carried.
#include <set>

#include "core/frontend/parser_impl.h"

namespace tf::frontend {
namespace {

struct Domain {
  ir::ShapeDim start = 0, extent = 0, step = 1;
  bool binds_slice = false;
};

// The DimVar the loop variable is in the body: [start, extent) bounds.
ir::ShapeDim induction_dim(const std::string& name, const Domain& d) {
  int64_t lo = d.start.is_static() ? d.start.value() : 0;
  auto ub = d.extent.upper_bound();
  int64_t hi = ub ? *ub + 1 : (int64_t{1} << 62);
  if (hi <= lo) hi = lo + 1;
  return ir::ShapeDim::var(name, lo, hi);
}

}  // namespace

std::vector<std::string> Parser::rebound_names() const {
  std::vector<std::string> names;
  std::set<std::string> seen;
  int depth = 1;
  bool at_start = true;
  for (size_t k = pos_; k < toks_.size() && depth > 0; ++k) {
    const Token& t = toks_[k];
    if (t.kind == TokenKind::kIndent) ++depth;
    if (t.kind == TokenKind::kDedent) --depth;
    if (t.kind == TokenKind::kNewline || t.kind == TokenKind::kIndent || t.kind == TokenKind::kDedent) {
      at_start = true;
      continue;
    }
    if (at_start && t.kind == TokenKind::kName) {
      // name (, name)* '='
      std::vector<std::string> targets{t.text};
      size_t j = k + 1;
      while (j + 1 < toks_.size() && toks_[j].is_op(",") && toks_[j + 1].kind == TokenKind::kName) {
        targets.push_back(toks_[j + 1].text);
        j += 2;
      }
      if (j < toks_.size() && toks_[j].is_op("="))
        for (const auto& n : targets)
          if (seen.insert(n).second) names.push_back(n);
    }
    at_start = false;
  }
  return names;
}

void Parser::for_loop() {
  const Token& for_tok = next();  // 'for'
  const Token& var = expect_name();
  const Token& in = expect_name();
  if (in.text != "in") unexpected(in, "'in'");
  const Token& head = expect_name();
  if (head.text != "tile" && head.text != "range")
    src_.parse_error(head.pos, "a loop iterates over tile(...) or range(...), but got '" + head.text + "'");
  expect_op("(");
  std::vector<Arg> args = call_args();
  auto dim = [this](const Value& v, const char* what) {
    if (!v.is_dim_like())
      src_.parse_error(v.pos, std::string("a loop ") + what + " must be an int or a dim, but got " + v.describe());
    return v.as_dim();
  };
  Domain d;
  if (head.text == "tile") {
    auto slots = bind_args("tile", head, {"stop", "step"}, {false, true}, args);
    d.extent = dim(slots[0]->value, "stop");
    if (slots[1]) {
      d.step = dim(slots[1]->value, "step");
      d.binds_slice = true;
    }
  } else {
    for (const Arg& a : args)
      if (!a.keyword.empty()) src_.parse_error(a.keyword_pos, "range takes positional arguments only");
    if (args.empty() || args.size() > 3) src_.parse_error(head.pos, "range takes 1 to 3 arguments");
    if (args.size() == 1) d.extent = dim(args[0].value, "stop");
    if (args.size() >= 2) d.start = dim(args[0].value, "start"), d.extent = dim(args[1].value, "stop");
    if (args.size() == 3) d.step = dim(args[2].value, "step");
  }
  if (d.step.is_static() && d.step.value() <= 0) src_.parse_error(head.pos, "a loop step must be positive");
  if ((d.start.is_static() && d.start.value() < 0) || (d.extent.is_static() && d.extent.value() < 0))
    src_.parse_error(head.pos, "a loop's start and stop must be non-negative");
  expect_op(":");
  expect_newline();
  if (peek().kind != TokenKind::kIndent) unexpected(peek(), "an indented loop body");
  next();

  // The carries: outer tensor names the block rebinds, each a phi Var inside.
  std::map<std::string, Value>* outer = locals_;
  std::map<std::string, Value> inner = *outer;
  std::vector<std::string> carried;
  ir::GridRegionExpr::Fields f;
  for (const std::string& n : rebound_names()) {
    auto it = outer->find(n);
    if (it == outer->end()) continue;  // first bound inside: local to the block
    if (!it->second.is_expr() || !ir::as_tensor(it->second.expr->type()))
      src_.parse_error(for_tok.pos, "the loop rebinds '" + n + "', which is " + it->second.describe() +
                                        "; only tensor values can be loop-carried");
    ir::VarPtr phi = ir::Var::make(n, it->second.expr->type(), src_.span(for_tok.pos));
    carried.push_back(n);
    f.carried_args.push_back(phi);
    f.init_args.push_back(it->second.expr);
    inner[n] = Value::of_expr(phi, for_tok.pos);
  }
  if (carried.empty())
    src_.parse_error(for_tok.pos, "the loop rebinds no outer tensor name, so it has no effect; "
                                  "assign to a name bound before the loop (e.g. acc = acc + ...)");
  f.induction_var = ir::Var::make(var.text, ir::TensorType::make({}, ir::DType::kI64), src_.span(var.pos));
  ir::ShapeDim iv = induction_dim(var.text, d);
  inner[var.text] = d.binds_slice ? Value::of_range_slice(iv, d.step, var.pos) : Value::of_dim(iv, var.pos);

  locals_ = &inner;
  while (peek().kind != TokenKind::kDedent && peek().kind != TokenKind::kEnd) {
    std::optional<Value> ret;
    Pos ret_pos;
    statement(&ret, &ret_pos);
    if (ret) src_.parse_error(ret_pos, "'return' inside a loop is not supported; rebind a name and return after it");
  }
  if (peek().kind == TokenKind::kDedent) next();
  locals_ = outer;

  for (size_t k = 0; k < carried.size(); ++k) {
    const Value& y = inner[carried[k]];
    if (!y.is_expr() || !ir::type_equal(y.expr->type(), f.carried_args[k]->type()))
      src_.fail(ir::ErrorKind::kType, for_tok.pos,
                "loop-carried '" + carried[k] + "' enters the loop as " + f.carried_args[k]->type()->to_string() +
                    " but the body rebinds it to " + y.describe() + "; a carry keeps its type");
    f.yield_values.push_back(y.expr);
  }
  f.body = f.yield_values.size() == 1 ? f.yield_values[0] : ir::Tuple::make(f.yield_values, src_.span(for_tok.pos));
  f.start = d.start;
  f.extent = d.extent;
  f.step = d.step;
  f.span = src_.span(for_tok.pos);
  std::shared_ptr<const ir::GridRegionExpr> region;
  try {
    region = ir::GridRegionExpr::make(std::move(f));
  } catch (const ir::Error& e) {
    src_.rethrow_at(e, for_tok.pos);
  }
  // After the loop a carried name is the region (single carry) or its item.
  for (size_t k = 0; k < carried.size(); ++k)
    (*locals_)[carried[k]] =
        carried.size() == 1
            ? Value::of_expr(region, for_tok.pos)
            : Value::of_expr(ir::TupleGetItem::make(region, static_cast<int64_t>(k), src_.span(for_tok.pos)),
                             for_tok.pos);
}

}  // namespace tf::frontend
