// The recursive-descent parser behind parse_module. One instance parses one
// file: it owns the module-level environment (DimVars, int constants, the
// Target, the functions defined so far) and, while inside an @func body, the
// lexical environment of that body. Binding a name stores the Value itself,
// so every later use of the name shares the same IR node (SSA as a DAG).
//
// The implementation is split by grammar level: parser.cc (module level,
// signatures, statements), parse_expr.cc (operators, atoms, subscripts),
// parse_call.cc (calls and argument binding).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/frontend/token.h"
#include "core/frontend/value.h"
#include "core/ir/module.h"
#include "core/ops/surface.h"
#include "core/sema/dispatch.h"

namespace tf::frontend {

class Parser {
 public:
  Parser(const SourceText& src, std::vector<Token> tokens) : src_(src), toks_(std::move(tokens)) {}
  ir::ModulePtr parse();

 private:
  // One argument at a call site.
  struct Arg {
    std::string keyword;  // empty for a positional argument
    Pos keyword_pos;
    Value value;
  };
  // One subscript entry: an index expression or a slice a:b:s.
  struct SubItem {
    bool is_slice = false;
    std::optional<Value> begin, end, step;
    Value index;
    Pos pos;
  };

  // --- token cursor ---
  const Token& peek(size_t k = 0) const;
  const Token& next();
  bool accept_op(const char* op);
  const Token& expect_op(const char* op);
  const Token& expect_name();
  void expect_newline();
  [[noreturn]] void unexpected(const Token& t, const std::string& expected) const;

  // --- module level and statements (parser.cc) ---
  void module_statement();
  void skip_line();
  void module_assign();
  void parse_target(const Token& name_tok);
  void function_def();
  // @f.specialize(S=(lo, hi)) after the '@f' tokens: parses the variant and
  // adds it to f's prototype.
  void specialize_def(const Token& base_name);
  // @func(inplace=...): the decorator's arguments, resolved against the
  // parameters once they are parsed (inplace_of).
  std::vector<Arg> decorator_args();
  std::vector<int64_t> inplace_of(const std::vector<Arg>& deco_args, const std::vector<ir::VarPtr>& params,
                                  const ir::TypePtr& ret_type);
  // The body's value must be returnable as the declared type (core/sema/boundary.h).
  void check_return(const std::string& fn, Pos at, const ir::TypePtr& value, const ir::TypePtr& declared);
  // The function a call site names: a prototype is sealed at its first use.
  std::vector<std::string> callable_names() const;
  void refuse_literal_name(const Token& name) const;
  std::vector<std::string> value_names() const;
  ir::FunctionPtr lookup_function(const std::string& name, Pos use);
  void seal_prototype(const std::string& name, Pos use);
  std::vector<ir::VarPtr> parameters();
  ir::TypePtr type_annotation();
  ir::TypePtr tensor_annotation(const Token& head);
  ir::ExprPtr function_body(const std::string& fn_name, Pos def_pos);
  // Parses one statement; sets *ret (and *ret_pos) for a return.
  void statement(std::optional<Value>* ret, Pos* ret_pos);

  // --- loops (parse_loop.cc) ---
  // `for i in tile(...)/range(...):` and its block; binds the carried names
  // to the GridRegionExpr (or its tuple_get_items) in the enclosing scope.
  void for_loop();
  // Names the loop block rebinds with `name = ...` / `a, b = ...`, found by a
  // token pre-scan from the block start up to its closing dedent.
  std::vector<std::string> rebound_names() const;
  void assignment();
  Value return_value(Pos pos);
  ir::ExprPtr to_expr(const Value& v, const std::string& what) const;

  // --- expressions (parse_expr.cc) ---
  Value expression();
  Value comparison();
  Value bit_or();
  Value bit_xor();
  Value bit_and();
  Value shift();
  Value arith();
  Value term();
  Value unary();
  Value power();
  Value postfix();
  Value atom();
  Value paren_or_tuple();
  Value name_value(const Token& name);
  Value binary(const Token& op, const Value& lhs, const Value& rhs);
  Value fold_dims(const Token& op, const Value& lhs, const Value& rhs) const;
  Value tensor_binary(const Token& op, const Value& lhs, const Value& rhs);
  Value unary_op(const Token& op, const Value& v);
  // A tensor operand: an IR node as is, or a scalar literal turned into a
  // Constant of the partner operand's dtype (docs/dsl.md §6.2).
  ir::ExprPtr operand(const Value& v, const ir::TensorType* partner, const Token& op) const;
  Value subscript(const Value& base, const Token& open);
  std::vector<SubItem> subscript_items();
  Value tensor_slice(const Value& base, const std::vector<SubItem>& items, const Token& open);

  // --- sharding surface (parse_shard.cc) ---
  // Mesh / Split / Broadcast / Partial / Layout / ShardLayout / reshard /
  // local: sets *out and returns true when `name` is one of them.
  bool shard_call(const Token& name, const std::vector<Arg>& args, Value* out);
  ir::MeshPtr mesh_value(const Token& head, const std::vector<Arg>& args);
  ShardAttrSpec shard_attr_value(const Token& head, const std::vector<Arg>& args);
  LayoutSpec layout_value(const Token& head, const std::vector<Arg>& args);
  LayoutSpec shard_layout_value(const Token& head, const std::vector<Arg>& args);
  ir::LayoutPtr resolve_layout(const Value& v, const ir::Shape& shape, bool materialize) const;
  Value sharding_op_call(const Token& name, const std::vector<Arg>& args);
  void with_mesh(std::optional<Value>* ret, Pos* ret_pos);
  static Value named_mesh(const Value& v, const std::string& name);

  // --- calls (parse_call.cc) ---
  Value call(const Token& name);
  std::vector<Arg> call_args();
  // Matches arguments to parameter names: slot i is the argument for param i
  // or null (use the default; an error names a missing required one).
  std::vector<const Arg*> bind_args(const std::string& callee, const Token& name,
                                    const std::vector<std::string>& params,
                                    const std::vector<bool>& has_default,
                                    const std::vector<Arg>& args) const;
  Value surface_call(const ops::SurfaceFn& fn, const Token& name, const std::vector<Arg>& args);
  // A tuple operand (ops::SurfaceParam::tuple): an IR value as is; int
  // literals, alone or as tuple fields, become i64 Constants; an optional one
  // omitted (arg null) or None is the empty Tuple.
  ir::ExprPtr tuple_operand(const ops::SurfaceParam& p, const Arg* arg, const Token& name) const;
  Value function_call(const ir::FunctionPtr& fn, const Token& name, const std::vector<Arg>& args);
  Value dimvar_call(const Token& name, const std::vector<Arg>& args);
  Value dim_minmax_call(const Token& name, const std::vector<Arg>& args);
  Value load_tile_call(const Token& name, const std::vector<Arg>& args);
  // The dtype a scalar literal argument takes: that of the first tensor argument.
  const ir::TensorType* literal_partner(const std::vector<const Arg*>& tensor_args) const;
  ir::ExprPtr make_call(const ir::OpPtr& op, std::vector<ir::ExprPtr> args, Pos pos) const;
  void require_body(const Token& name) const;

  const SourceText& src_;
  std::vector<Token> toks_;
  size_t pos_ = 0;
  // How many unary() calls are open: every nested expression (parentheses,
  // call arguments, subscripts, unary operators) passes through unary(), so
  // this bounds the parser's recursion (kMaxNesting).
  int nesting_ = 0;
  std::map<std::string, Value> globals_;
  std::optional<ir::Target> target_;
  // Every DimVar declared so far, by DimVar name: its first declaration.
  std::map<std::string, Value> dimvars_;
  std::vector<ir::FunctionPtr> functions_;
  std::map<std::string, ir::FunctionPtr> function_index_;
  std::map<std::string, Value>* locals_ = nullptr;  // null outside a body
  // With-block mesh names whose block has ended (for the scope error).
  std::set<std::string> closed_meshes_;
  bool mesh_seen_ = false;  // a Mesh was checked against the Target
  // Dispatch prototypes being authored, with their slot in functions_.
  std::map<std::string, std::pair<sema::PrototypeBuilder, size_t>> prototypes_;
};

}  // namespace tf::frontend
