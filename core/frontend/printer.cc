// The canonical printer. Its output is what the parser reads back to a
// structurally equal Module:
//  * a node with more than one use gets a `tN = ...` line (the parser shares
//    a bound name's node across uses); single-use nodes nest inline;
//  * operator-spelled Binary ops print as `a + b`, parenthesized whenever
//    they are an operand of another operator; every other op prints as its
//    surface call `name(operands..., attr=value, ...)` with every attribute
//    spelled out by keyword;
//  * a Constant prints as a literal, which only reads back to the same dtype
//    as an operand next to a tensor of that dtype (spec parser §1.9); any
//    other Constant cannot be printed faithfully and is Error(kInternal).
#include "core/frontend/printer.h"

#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "core/ir/error.h"
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
    if (fn_.is_prototype() || fn_.is_variant() || !fn_.body())
      unprintable(fn_.name(), "dispatch prototypes and variants are not supported yet");
    count(fn_.body());
    std::unordered_set<const ir::Expr*> done;
    bind_shared(fn_.body(), &done);
    std::string out = "@func\n" + print_signature(fn_) + ":\n" + body_;
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

 private:
  static std::vector<ExprPtr> children(const ExprPtr& e) {
    if (auto* c = ir::expr_as<ir::Call>(e)) return c->args();
    if (auto* t = ir::expr_as<ir::Tuple>(e)) return t->fields();
    if (auto* g = ir::expr_as<ir::TupleGetItem>(e)) return {g->tuple()};
    return {};
  }

  void count(const ExprPtr& e) {
    if (uses_[e.get()]++ > 0) return;
    switch (e->kind()) {
      case ExprKind::kFunction:
      case ExprKind::kGridRegion:
        unprintable(fn_.name(), "loops (GridRegionExpr) and nested functions are not supported yet");
      case ExprKind::kVar:
        if (!names_.count(e.get())) unprintable(fn_.name(), "it uses a Var that is not one of its parameters");
        break;
      default: break;
    }
    for (const auto& c : children(e)) count(c);
  }

  // Post-order: a shared node's line follows the lines of the nodes it uses.
  void bind_shared(const ExprPtr& e, std::unordered_set<const ir::Expr*>* done) {
    if (!done->insert(e.get()).second) return;
    for (const auto& c : children(e)) bind_shared(c, done);
    if (uses_[e.get()] < 2 || e->kind() == ExprKind::kVar) return;
    if (e->kind() == ExprKind::kConstant)
      unprintable(fn_.name(), "a Constant node is shared; each literal reads back as its own node");
    std::string rhs = render(e, false);
    std::string name = fresh_name();
    body_ += "    " + name + " = " + rhs + "\n";
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
        return render(g.tuple(), true) + "[" + std::to_string(g.index()) + "]";
      }
      case ExprKind::kConstant:
        unprintable(fn_.name(), "a Constant outside an op's operand list has no DSL spelling");
      default: unprintable(fn_.name(), "unsupported node");
    }
  }

  // The operands of a call; a Constant prints as a literal that reads back
  // with the dtype of the first non-Constant tensor operand.
  std::vector<std::string> render_args(const std::vector<ExprPtr>& args, bool as_operand) {
    const ir::TensorType* partner = nullptr;
    for (const auto& a : args)
      if (a->kind() != ExprKind::kConstant && (partner = ir::as_tensor(a->type()))) break;
    std::vector<std::string> out;
    for (const auto& a : args) {
      auto* c = ir::expr_as<ir::Constant>(a);
      out.push_back(c && !names_.count(a.get()) ? literal(*c, partner) : render(a, as_operand));
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
    if (v != v || v - v != 0) unprintable(fn_.name(), "a non-finite float Constant has no DSL literal");
    return ir::format_double(v);
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
    std::vector<std::string> parts = render_args(call.args(), false);
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
  int next_tmp_ = 0;
};

// DimVars mentioned anywhere in a function: signature, node types, op attrs.
void collect_function_vars(const ir::Function& fn, std::map<std::string, std::pair<int64_t, int64_t>>* out) {
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
    }
  }
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
  for (const auto& s : ops::all_surfaces()) reserved.insert(s.name);
  for (const auto& d : dims) reserved.insert(d.first);

  std::string out = "from tilefoundry.dsl import *\n\nTARGET = " + m.target().to_string() + "\n";
  if (!dims.empty()) out += "\n";
  for (const auto& [name, range] : dims)
    out += name + " = DimVar(\"" + name + "\", " + std::to_string(range.first) + ", " +
           std::to_string(range.second) + ")\n";
  std::set<std::string> printed;
  for (const auto& f : m.functions()) {
    out += "\n" + FunctionPrinter(*f, reserved, printed).print();
    printed.insert(f->name());
  }
  return out;
}

}  // namespace tf::frontend
