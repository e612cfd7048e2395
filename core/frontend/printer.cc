// The canonical printer. Its output is what the parser reads back to a
// structurally equal Module:
//  * a node with more than one use gets a `tN = ...` line (the parser shares
//    a bound name's node across uses); single-use nodes nest inline;
//  * operator-spelled Binary ops print as `a + b`, parenthesized whenever
//    they are an operand of another operator; every other op prints as its
//    surface call `name(operands..., attr=value, ...)` with every attribute
//    spelled out by keyword;
//  * a Constant prints as a literal, which only reads back to the same dtype
//    as an operand next to a tensor of that dtype (docs/dsl.md §6.2); any
//    other Constant cannot be printed faithfully and is Error(kInternal);
//  * a GridRegionExpr prints as `c = <init>` lines, then
//    `for i in range(start, stop, step):` whose block rebinds each carry
//    (`c = <yield>`); shared nodes that do not depend on the loop's binders
//    are bound before the loop, the others inside it;
//  * a dispatch prototype prints as a `pass` body followed by one
//    `@f.specialize(S=(lo, hi))` definition per variant, named by its label.
#include "core/frontend/printer.h"

#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "core/ir/error.h"
#include "core/ir/shard.h"
#include "core/ops/math/math.h"
#include "core/ops/surface.h"

namespace tf::frontend {
namespace {

using ir::ExprKind;
using ir::ExprPtr;

[[noreturn]] void unprintable(const std::string& fn, const std::string& why) {
  ir::fail(ir::ErrorKind::kInternal, "cannot print function '" + fn + "': " + why);
}

// Every DimVar mentioned by a type, with its bounds.
void collect_type_vars(const ir::TypePtr& t, std::map<std::string, std::pair<int64_t, int64_t>>* out) {
  for (const auto& leaf : ir::flatten_tensor_types(t))
    for (const auto& d : leaf->shape()) d.collect_vars(out);
}

// "@func\n", or "@func(inplace=...)\n" as the parser reads it.
std::string decorator(const ir::Function& fn) {
  if (fn.inplace().empty()) return "@func\n";
  auto entry = [&](int64_t p) { return p < 0 ? std::string("None") : "\"" + fn.params()[static_cast<size_t>(p)]->name() + "\""; };
  if (fn.inplace().size() == 1 && fn.return_type()->kind() != ir::TypeKind::kTuple)
    return "@func(inplace=" + entry(fn.inplace()[0]) + ")\n";
  std::string s = "@func(inplace=(";
  for (size_t i = 0; i < fn.inplace().size(); ++i) s += (i ? ", " : "") + entry(fn.inplace()[i]);
  return s + (fn.inplace().size() == 1 ? ",))\n" : "))\n");
}

class FunctionPrinter {
 public:
  FunctionPrinter(const ir::Function& fn, const std::set<std::string>& reserved,
                  const std::set<std::string>& printed_functions)
      : fn_(fn), taken_(reserved), printed_functions_(printed_functions) {
    for (const auto& p : fn.params()) {
      names_[p.get()] = p->name();
      taken_.insert(p->name());
    }
  }

  std::string print() {
    if (fn_.is_prototype()) {
      std::string out = decorator(fn_) + print_signature(fn_) + ":\n    pass\n";
      for (const auto& v : fn_.variants()) {
        std::set<std::string> reserved = taken_;
        out += "\n" + FunctionPrinter(*v, reserved, printed_functions_).print();
      }
      return out;
    }
    if (!fn_.body()) unprintable(fn_.name(), "it has no body and no variants");
    std::string head = decorator(fn_) + print_signature(fn_);
    if (fn_.is_variant()) {
      const auto& sp = fn_.specializations();
      if (sp.size() != 1) unprintable(fn_.name(), "a variant carries exactly one DimVarRangePat");
      std::string label = fn_.label().empty() ? fn_.name() + "_" + sp[0].dim_var + "_" + std::to_string(sp[0].lo) +
                                                    "_" + std::to_string(sp[0].hi)
                                              : fn_.label();
      std::string sig = print_signature(fn_);
      head = "@" + fn_.name() + ".specialize(" + sp[0].dim_var + "=(" + std::to_string(sp[0].lo) + ", " +
             std::to_string(sp[0].hi) + "))\ndef " + label + sig.substr(4 + fn_.name().size());
    }
    count(fn_.body());
    std::unordered_set<const ir::Expr*> done;
    bind_shared(fn_.body(), &done);
    std::string out = head + ":\n" + body_;
    const ExprPtr& b = fn_.body();
    auto* tuple = ir::expr_as<ir::Tuple>(b);
    if (tuple && !names_.count(b.get()) && tuple->fields().size() >= 2) {
      out += "    return ";
      for (size_t i = 0; i < tuple->fields().size(); ++i)
        out += (i ? ", " : "") + render(tuple->fields()[i], false);
      return out + "\n";
    }
    return out + "    return " + render(b, false) + "\n";
  }

  static std::vector<ExprPtr> children(const ExprPtr& e) {
    if (auto* c = ir::expr_as<ir::Call>(e)) return c->args();
    if (auto* t = ir::expr_as<ir::Tuple>(e)) return t->fields();
    if (auto* g = ir::expr_as<ir::TupleGetItem>(e)) return {g->tuple()};
    if (auto* r = ir::expr_as<ir::GridRegionExpr>(e)) {
      std::vector<ExprPtr> out = r->fields().init_args;
      out.insert(out.end(), r->fields().yield_values.begin(), r->fields().yield_values.end());
      return out;
    }
    return {};
  }

 private:
  // The loop binders (induction Vars and carried phis) a node depends on;
  // an induction variable also counts through the DimVar of its name in op
  // attributes.
  const std::set<const ir::Expr*>& free_binders(const ExprPtr& e) {
    auto it = free_.find(e.get());
    if (it != free_.end()) return it->second;
    std::set<const ir::Expr*> out;
    if (binders_.count(e.get())) out.insert(e.get());
    for (const auto& c : children(e)) {
      const auto& cf = free_binders(c);
      out.insert(cf.begin(), cf.end());
    }
    std::map<std::string, std::pair<int64_t, int64_t>> dims;
    if (auto* c = ir::expr_as<ir::Call>(e); c && c->op())
      for (const auto& a : c->op()->surface_attrs())
        if (auto* sh = std::get_if<ir::Shape>(&a.value))
          for (const auto& d : *sh) d.collect_vars(&dims);
    if (auto* r = ir::expr_as<ir::GridRegionExpr>(e)) {
      for (const auto* d : {&r->fields().start, &r->fields().extent, &r->fields().step}) d->collect_vars(&dims);
      out.erase(r->fields().induction_var.get());
      for (const auto& c : r->fields().carried_args) out.erase(c.get());
    }
    for (const auto& [name, range] : dims) {
      auto iv = induction_by_name_.find(name);
      if (iv != induction_by_name_.end()) out.insert(iv->second);
    }
    return free_.emplace(e.get(), std::move(out)).first->second;
  }

  // Binds, at the current level, the shared nodes under e that do not depend
  // on the region's own binders.
  void hoist(const ExprPtr& e, const ir::GridRegionExpr& g, std::unordered_set<const ir::Expr*>* done,
             std::unordered_set<const ir::Expr*>* seen) {
    if (!seen->insert(e.get()).second || done->count(e.get())) return;
    // Invariant: it depends only on binders of the loops already open here.
    bool invariant = true;
    for (const ir::Expr* b : free_binders(e)) invariant = invariant && open_.count(b);
    if (invariant) return bind_shared(e, done);
    for (const auto& c : children(e)) hoist(c, g, done, seen);
  }

  void emit_region(const ir::GridRegionExpr& g, std::unordered_set<const ir::Expr*>* done) {
    const auto& f = g.fields();
    bool single = f.yield_values.size() == 1;
    if (single ? f.body != f.yield_values[0] : !ir::expr_as<ir::Tuple>(f.body))
      unprintable(fn_.name(), "a loop's body is not its yield value(s)");
    for (const auto& init : f.init_args) bind_shared(init, done);
    std::vector<std::string> carry;
    for (size_t k = 0; k < f.carried_args.size(); ++k) {
      std::string rhs = render(f.init_args[k], false);
      carry.push_back(fresh_name(f.carried_args[k]->name()));
      body_ += indent_ + carry[k] + " = " + rhs + "\n";
      names_[f.carried_args[k].get()] = carry[k];
    }
    std::unordered_set<const ir::Expr*> seen;
    for (const auto& y : f.yield_values) hoist(y, g, done, &seen);
    body_ += indent_ + "for " + f.induction_var->name() + " in range(" + f.start.to_string() + ", " +
             f.extent.to_string() + ", " + f.step.to_string() + "):\n";
    indent_ += "    ";
    open_.insert(f.induction_var.get());
    for (const auto& c : f.carried_args) open_.insert(c.get());
    for (const auto& y : f.yield_values) bind_shared(y, done);
    for (size_t k = 0; k < carry.size(); ++k) {
      std::string rhs = render(f.yield_values[k], false);
      body_ += indent_ + carry[k] + " = " + rhs + "\n";
    }
    indent_.resize(indent_.size() - 4);
    open_.erase(f.induction_var.get());
    for (const auto& c : f.carried_args) open_.erase(c.get());
    if (single) names_[&g] = carry[0];
    for (size_t k = 0; k < carry.size(); ++k) region_items_[{&g, k}] = carry[k];
  }

  void count(const ExprPtr& e) {
    if (uses_[e.get()]++ > 0) return;
    switch (e->kind()) {
      case ExprKind::kFunction: unprintable(fn_.name(), "nested functions have no DSL spelling");
      case ExprKind::kGridRegion: {
        const auto& f = static_cast<const ir::GridRegionExpr&>(*e).fields();
        binders_.insert(f.induction_var.get());
        induction_by_name_[f.induction_var->name()] = f.induction_var.get();
        for (const auto& c : f.carried_args) binders_.insert(c.get());
        break;
      }
      case ExprKind::kVar:
        if (!names_.count(e.get()) && !binders_.count(e.get()))
          unprintable(fn_.name(), "it uses a Var that is not one of its parameters or loop binders");
        break;
      default: break;
    }
    for (const auto& c : children(e)) count(c);
  }

  // Post-order: a shared node's line follows the lines of the nodes it uses.
  void bind_shared(const ExprPtr& e, std::unordered_set<const ir::Expr*>* done) {
    if (!done->insert(e.get()).second) return;
    if (auto* g = ir::expr_as<ir::GridRegionExpr>(e)) return emit_region(*g, done);
    for (const auto& c : children(e)) bind_shared(c, done);
    if (uses_[e.get()] < 2 || e->kind() == ExprKind::kVar) return;
    if (e->kind() == ExprKind::kConstant)
      unprintable(fn_.name(), "a Constant node is shared; each literal reads back as its own node");
    std::string rhs = render(e, false);
    std::string name = fresh_name();
    body_ += indent_ + name + " = " + rhs + "\n";
    names_[e.get()] = name;
  }

  std::string fresh_name() {
    std::string n;
    do {
      n = "t" + std::to_string(next_tmp_++);
    } while (taken_.count(n));
    taken_.insert(n);
    return n;
  }
  // `base` when free, else base_1, base_2, ...
  std::string fresh_name(const std::string& base) {
    std::string n = base;
    for (int k = 1; taken_.count(n); ++k) n = base + "_" + std::to_string(k);
    taken_.insert(n);
    return n;
  }

  // as_operand: the text is an operand of an operator and must bind tightly.
  std::string render(const ExprPtr& e, bool as_operand) {
    auto it = names_.find(e.get());
    if (it != names_.end()) return it->second;
    switch (e->kind()) {
      case ExprKind::kCall: return render_call(static_cast<const ir::Call&>(*e), as_operand);
      case ExprKind::kTuple: {
        auto& f = static_cast<const ir::Tuple&>(*e).fields();
        if (f.empty()) unprintable(fn_.name(), "an empty Tuple has no DSL spelling");
        std::string s = "(";
        for (size_t i = 0; i < f.size(); ++i) s += (i ? ", " : "") + render(f[i], false);
        return s + (f.size() == 1 ? ",)" : ")");
      }
      case ExprKind::kTupleGetItem: {
        auto& g = static_cast<const ir::TupleGetItem&>(*e);
        auto item = region_items_.find({g.tuple().get(), static_cast<size_t>(g.index())});
        if (item != region_items_.end()) return item->second;
        return render(g.tuple(), true) + "[" + std::to_string(g.index()) + "]";
      }
      case ExprKind::kConstant:
        unprintable(fn_.name(), "a Constant outside an op's operand list has no DSL spelling");
      default: unprintable(fn_.name(), "unsupported node");
    }
  }

  // The operands of a call; a Constant prints as a literal that reads back
  // with the dtype of the first non-Constant tensor operand among those
  // `partners` marks (all, when null: ops::SurfaceParam::literal_partner).
  std::vector<std::string> render_args(const std::vector<ExprPtr>& args, bool as_operand,
                                       const std::vector<bool>* partners = nullptr) {
    auto is_partner = [&](size_t i) { return !partners || (*partners)[i]; };
    const ir::TensorType* partner = nullptr;
    for (size_t i = 0; i < args.size() && !partner; ++i)
      if (is_partner(i) && args[i]->kind() != ExprKind::kConstant) partner = ir::as_tensor(args[i]->type());
    std::vector<std::string> out;
    for (size_t i = 0; i < args.size(); ++i) {
      auto* c = ir::expr_as<ir::Constant>(args[i]);
      out.push_back(c && !names_.count(args[i].get()) ? literal(*c, is_partner(i) ? partner : nullptr)
                                                      : render(args[i], as_operand));
    }
    return out;
  }

  std::string literal(const ir::Constant& c, const ir::TensorType* partner) {
    if (!partner || partner->dtype() != c.dtype())
      unprintable(fn_.name(), "a " + std::string(ir::dtype_name(c.dtype())) +
                                  " Constant is not next to a tensor operand of its dtype");
    if (ir::is_bool(c.dtype())) return c.int_value() ? "True" : "False";
    if (ir::is_int(c.dtype())) return std::to_string(c.int_value());
    double v = c.value();
    if (v != v) return "nan";
    if (v - v != 0) return v > 0 ? "inf" : "-inf";
    return ir::format_double(v);
  }

  // Operands of tuple params (ops::SurfaceParam::tuple) re-rendered: the empty
  // Tuple prints as None, an i64 Constant (alone or as a Tuple field) as an
  // int literal — the parser reads both back the same (parse_call.cc).
  std::vector<std::string> render_op_args(const ir::Op& op, const std::vector<ExprPtr>& args) {
    std::vector<bool> is_tuple(args.size(), false), partner(args.size(), true);
    if (const ops::SurfaceFn* fn = ops::find_surface(op.surface_name())) {
      size_t i = 0;
      for (const auto& p : fn->params)
        if (p.is_tensor && i < args.size()) {
          partner[i] = p.literal_partner;
          is_tuple[i++] = p.tuple;
        }
    }
    std::vector<ExprPtr> plain;
    std::vector<bool> plain_partner;
    for (size_t i = 0; i < args.size(); ++i)
      if (!is_tuple[i]) {
        plain.push_back(args[i]);
        plain_partner.push_back(partner[i]);
      }
    std::vector<std::string> plain_parts = render_args(plain, false, &plain_partner), parts;
    for (size_t i = 0, j = 0; i < args.size(); ++i)
      parts.push_back(!is_tuple[i] ? plain_parts[j++]
                      : names_.count(args[i].get()) ? render(args[i], false) : render_tuple_operand(args[i]));
    return parts;
  }

  std::string render_tuple_operand(const ExprPtr& a) {
    auto field = [&](const ExprPtr& e) {
      auto* c = ir::expr_as<ir::Constant>(e);
      if (!c || names_.count(e.get())) return render(e, false);
      if (c->dtype() != ir::DType::kI64)
        unprintable(fn_.name(), "a " + std::string(ir::dtype_name(c->dtype())) +
                                    " Constant in a tuple operand has no DSL literal (an int literal reads back as i64)");
      return std::to_string(c->int_value());
    };
    auto* t = ir::expr_as<ir::Tuple>(a);
    if (!t) return field(a);
    if (t->fields().empty()) return "None";
    std::string s = "(";
    for (size_t i = 0; i < t->fields().size(); ++i) s += (i ? ", " : "") + field(t->fields()[i]);
    return s + (t->fields().size() == 1 ? ",)" : ")");
  }

  std::string render_call(const ir::Call& call, bool as_operand) {
    if (call.callee()) {
      if (!printed_functions_.count(call.callee()->name()))
        unprintable(fn_.name(), "it calls '" + call.callee()->name() + "', which is not defined before it");
      return call.callee()->name() + "(" + join(render_args(call.args(), false)) + ")";
    }
    const ir::Op& op = *call.op();
    if (auto* bin = dynamic_cast<const ops::Binary*>(&op)) {
      std::string_view sym = ops::binary_kind_operator(bin->kind);
      if (!sym.empty() && call.args().size() == 2) {
        auto a = render_args(call.args(), true);
        std::string s = a[0] + " " + std::string(sym) + " " + a[1];
        return as_operand ? "(" + s + ")" : s;
      }
    }
    std::vector<std::string> parts = render_op_args(op, call.args());
    for (const auto& attr : op.surface_attrs())
      parts.push_back(attr.name + "=" + ir::attr_value_to_string(attr.value));
    return op.surface_name() + "(" + join(parts) + ")";
  }

  static std::string join(const std::vector<std::string>& parts) {
    std::string s;
    for (size_t i = 0; i < parts.size(); ++i) s += (i ? ", " : "") + parts[i];
    return s;
  }

  const ir::Function& fn_;
  std::set<std::string> taken_;
  const std::set<std::string>& printed_functions_;
  std::unordered_map<const ir::Expr*, int> uses_;
  std::unordered_map<const ir::Expr*, std::string> names_;
  std::string body_;
  std::string indent_ = "    ";
  int next_tmp_ = 0;
  std::unordered_set<const ir::Expr*> binders_;
  std::set<const ir::Expr*> open_;  // binders of the loops being printed
  std::map<std::string, const ir::Expr*> induction_by_name_;
  std::unordered_map<const ir::Expr*, std::set<const ir::Expr*>> free_;
  std::map<std::pair<const ir::Expr*, size_t>, std::string> region_items_;
};

void collect_body_vars(const ir::Function& fn, std::map<std::string, std::pair<int64_t, int64_t>>* out,
                       std::set<std::string>* inductions);

// DimVars mentioned anywhere in a function: signature, node types, op attrs,
// loop domains, variants; loop induction variables are not module DimVars.
void collect_function_vars(const ir::Function& fn, std::map<std::string, std::pair<int64_t, int64_t>>* out) {
  for (const auto& v : fn.variants()) collect_function_vars(*v, out);
  std::set<std::string> inductions;
  std::map<std::string, std::pair<int64_t, int64_t>> found;
  collect_body_vars(fn, &found, &inductions);
  for (const auto& [name, range] : found)
    if (!inductions.count(name)) out->emplace(name, range);
}

void collect_body_vars(const ir::Function& fn, std::map<std::string, std::pair<int64_t, int64_t>>* out,
                       std::set<std::string>* inductions) {
  for (const auto& p : fn.params()) collect_type_vars(p->type(), out);
  collect_type_vars(fn.return_type(), out);
  std::vector<ExprPtr> stack;
  std::unordered_set<const ir::Expr*> seen;
  if (fn.body()) stack.push_back(fn.body());
  while (!stack.empty()) {
    ExprPtr e = stack.back();
    stack.pop_back();
    if (!e || !seen.insert(e.get()).second) continue;
    if (e->kind() != ExprKind::kFunction) collect_type_vars(e->type(), out);
    if (auto* c = ir::expr_as<ir::Call>(e)) {
      if (c->op())
        for (const auto& a : c->op()->surface_attrs())
          if (auto* s = std::get_if<ir::Shape>(&a.value))
            for (const auto& d : *s) d.collect_vars(out);
      for (const auto& a : c->args()) stack.push_back(a);
    } else if (auto* t = ir::expr_as<ir::Tuple>(e)) {
      for (const auto& f : t->fields()) stack.push_back(f);
    } else if (auto* g = ir::expr_as<ir::TupleGetItem>(e)) {
      stack.push_back(g->tuple());
    } else if (auto* r = ir::expr_as<ir::GridRegionExpr>(e)) {
      const auto& f = r->fields();
      inductions->insert(f.induction_var->name());
      for (const auto* d : {&f.start, &f.extent, &f.step}) d->collect_vars(out);
      for (const auto& i : f.init_args) stack.push_back(i);
      for (const auto& y : f.yield_values) stack.push_back(y);
    }
  }
}

void collect_type_meshes(const ir::TypePtr& t, std::vector<ir::MeshPtr>* out) {
  for (const auto& leaf : ir::flatten_tensor_types(t))
    if (auto* l = ir::as_shard_layout(leaf->layout())) out->push_back(l->mesh());
}

// Every Mesh a function's types and layout attributes name (variants too).
void collect_function_meshes(const ir::Function& fn, std::vector<ir::MeshPtr>* out) {
  for (const auto& v : fn.variants()) collect_function_meshes(*v, out);
  for (const auto& p : fn.params()) collect_type_meshes(p->type(), out);
  collect_type_meshes(fn.return_type(), out);
  std::vector<ExprPtr> stack;
  std::unordered_set<const ir::Expr*> seen;
  if (fn.body()) stack.push_back(fn.body());
  while (!stack.empty()) {
    ExprPtr e = stack.back();
    stack.pop_back();
    if (!e || !seen.insert(e.get()).second || e->kind() == ExprKind::kFunction) continue;
    collect_type_meshes(e->type(), out);
    if (auto* c = ir::expr_as<ir::Call>(e)) {
      if (c->op())
        for (const auto& a : c->op()->surface_attrs())
          if (auto* l = std::get_if<ir::LayoutPtr>(&a.value))
            if (auto* sl = ir::as_shard_layout(*l)) out->push_back(sl->mesh());
    }
    for (const auto& c : FunctionPrinter::children(e)) stack.push_back(c);
  }
}

// The module-level `name = Mesh(...)` lines. Types print a mesh by its
// binding name, so every with-block mesh is hoisted to a module binding of
// the same name (the IR keeps no binding site); two different meshes under
// one name cannot be printed faithfully.
std::string mesh_bindings(const ir::Module& m, std::set<std::string>* reserved) {
  std::vector<ir::MeshPtr> meshes;
  for (const auto& f : m.functions()) collect_function_meshes(*f, &meshes);
  std::map<std::string, ir::MeshPtr> by_name;
  for (const auto& mesh : meshes) {
    if (mesh->name.empty())
      ir::fail(ir::ErrorKind::kInternal, "cannot print module: a ShardLayout's mesh " + mesh->to_string() +
                                             " has no binding name");
    auto [it, fresh] = by_name.emplace(mesh->name, mesh);
    if (!fresh && !it->second->structural_equal(*mesh))
      ir::fail(ir::ErrorKind::kInternal, "cannot print module: two different meshes are both named '" +
                                             mesh->name + "'");
    if (fresh && reserved->count(mesh->name))
      ir::fail(ir::ErrorKind::kInternal, "cannot print module: mesh name '" + mesh->name +
                                             "' collides with another module-level name");
  }
  std::string out;
  for (const auto& [name, mesh] : by_name) {
    out += name + " = " + mesh->to_string() + "\n";
    reserved->insert(name);
  }
  return out;
}

}  // namespace

std::string print_signature(const ir::Function& fn) {
  std::string s = "def " + fn.name() + "(";
  for (size_t i = 0; i < fn.params().size(); ++i)
    s += (i ? ", " : "") + fn.params()[i]->name() + ": " + fn.params()[i]->type()->to_string();
  return s + ") -> " + fn.return_type()->to_string();
}

std::string print_module(const ir::Module& m) {
  std::map<std::string, std::pair<int64_t, int64_t>> dims;
  std::set<std::string> reserved{"TARGET"};
  for (const auto& f : m.functions()) {
    std::map<std::string, std::pair<int64_t, int64_t>> mine;
    collect_function_vars(*f, &mine);
    for (const auto& [name, range] : mine) {
      auto [it, fresh] = dims.emplace(name, range);
      if (!fresh && it->second != range)
        ir::fail(ir::ErrorKind::kInternal, "cannot print module: DimVar '" + name +
                                               "' appears with two different ranges");
    }
    reserved.insert(f->name());
  }
  for (const ops::SurfaceFn& s : ops::all_surfaces()) reserved.insert(s.name);
  for (const char* s : {"Mesh", "ShardLayout", "Split", "Broadcast", "Partial", "Layout", "reshard", "local"})
    reserved.insert(s);
  for (const auto& d : dims) reserved.insert(d.first);

  std::string out = "from tilefoundry.dsl import *\n\nTARGET = " + m.target().to_string() + "\n";
  if (!dims.empty()) out += "\n";
  for (const auto& [name, range] : dims)
    out += name + " = DimVar(\"" + name + "\", " + std::to_string(range.first) + ", " +
           std::to_string(range.second) + ")\n";
  std::string meshes = mesh_bindings(m, &reserved);
  if (!meshes.empty()) out += "\n" + meshes;
  std::set<std::string> printed;
  for (const auto& f : m.functions()) {
    out += "\n" + FunctionPrinter(*f, reserved, printed).print();
    printed.insert(f->name());
  }
  return out;
}

}  // namespace tf::frontend
