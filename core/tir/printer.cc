#include "core/tir/printer.h"

#include <sstream>

#include "core/ir/op.h"
#include "core/tir/names.h"

namespace tf::tir {

namespace {

class TextPrinter {
 public:
  std::string expr(const ExprPtr& e) {
    switch (e->kind()) {
      case ExprKind::kIntImm: return int_imm(static_cast<const IntImm&>(*e));
      case ExprKind::kFloatImm: {
        auto& f = static_cast<const FloatImm&>(*e);
        return ir::format_double(f.value()) + (f.dtype() == DType::kF32 ? "f" : "");
      }
      case ExprKind::kVar: return names_.name(static_cast<const Var*>(e.get()));
      case ExprKind::kBinary: {
        // Operands are spelled left to right (names are given on first sight).
        auto& b = static_cast<const Binary&>(*e);
        const std::string a = expr(b.a()), c = expr(b.b());
        if (b.op() == BinaryOp::kMin || b.op() == BinaryOp::kMax)
          return std::string(binary_spelling(b.op())) + "(" + a + ", " + c + ")";
        return "(" + a + " " + binary_spelling(b.op()) + " " + c + ")";
      }
      case ExprKind::kUnary: {
        auto& u = static_cast<const Unary&>(*e);
        return (u.op() == UnaryOp::kNeg ? "-" : "!") + expr(u.a());
      }
      case ExprKind::kSelect: {
        auto& s = static_cast<const Select&>(*e);
        const std::string c = expr(s.cond()), t = expr(s.t());
        return "select(" + c + ", " + t + ", " + expr(s.f()) + ")";
      }
      case ExprKind::kCast:
        return std::string(ir::dtype_name(e->dtype())) + "(" + expr(static_cast<const Cast&>(*e).value()) + ")";
      case ExprKind::kLoad: {
        auto& l = static_cast<const Load&>(*e);
        const std::string base = names_.name(l.base().get());
        return base + "[" + expr(l.index()) + "]";
      }
      case ExprKind::kAddress: {
        auto& a = static_cast<const Address&>(*e);
        const std::string base = names_.name(a.base().get());
        return "&" + base + "[" + expr(a.index()) + "]";
      }
      case ExprKind::kCall: return call(static_cast<const Call&>(*e));
    }
    return "?";
  }

  void stmt(const StmtPtr& s, int depth) {
    const std::string pad(2 * static_cast<size_t>(depth), ' ');
    switch (s->kind()) {
      case StmtKind::kFor: {
        auto& f = static_cast<const For&>(*s);
        o_ << pad << "for (" << names_.name(f.var().get()) << ", " << expr(f.min()) << ", " << expr(f.extent()) << ") "
           << for_kind_name(f.for_kind());
        for (const Reduction& r : f.reductions())
          o_ << " reduce(" << binary_spelling(r.op) << ": " << names_.name(r.var.get()) << ")";
        if (f.min_work()) o_ << " min_work(" << expr(f.min_work()) << ")";
        o_ << " {\n";
        stmt(f.body(), depth + 1);
        o_ << pad << "}\n";
        return;
      }
      case StmtKind::kLetStmt: {
        auto& l = static_cast<const LetStmt&>(*s);
        o_ << pad << (l.var()->is_mutable() ? "var " : "let ") << names_.name(l.var().get()) << ": "
           << type_name(l.var()->type()) << (l.no_alias() ? " noalias" : "") << " = " << expr(l.value()) << "\n";
        stmt(l.body(), depth);
        return;
      }
      case StmtKind::kStore: {
        auto& st = static_cast<const Store&>(*s);
        o_ << pad << names_.name(st.base().get()) << "[" << expr(st.index()) << "] = " << expr(st.value()) << "\n";
        return;
      }
      case StmtKind::kAssign: {
        auto& a = static_cast<const Assign&>(*s);
        o_ << pad << names_.name(a.var().get()) << " = " << expr(a.value()) << "\n";
        return;
      }
      case StmtKind::kIfThenElse: {
        auto& i = static_cast<const IfThenElse&>(*s);
        o_ << pad << "if (" << expr(i.cond()) << ") {\n";
        stmt(i.then_case(), depth + 1);
        if (i.else_case()) {
          o_ << pad << "} else {\n";
          stmt(i.else_case(), depth + 1);
        }
        o_ << pad << "}\n";
        return;
      }
      case StmtKind::kAllocate: {
        auto& a = static_cast<const Allocate&>(*s);
        o_ << pad << "allocate " << names_.name(a.var().get()) << ": " << ir::dtype_name(a.var()->dtype()) << "["
           << expr(a.extent()) << "] " << memory_scope_name(a.scope()) << " {\n";
        stmt(a.body(), depth + 1);
        o_ << pad << "}\n";
        return;
      }
      case StmtKind::kEvaluate: o_ << pad << expr(static_cast<const Evaluate&>(*s).value()) << "\n"; return;
      case StmtKind::kSeq:
        for (const StmtPtr& c : static_cast<const Seq&>(*s).stmts()) stmt(c, depth);
        return;
      case StmtKind::kBarrier: o_ << pad << "barrier\n"; return;
      case StmtKind::kReturn: o_ << pad << "return " << expr(static_cast<const Return&>(*s).code()) << "\n"; return;
      case StmtKind::kComment: o_ << pad << "// " << static_cast<const Comment&>(*s).text() << "\n"; return;
    }
  }

  std::string function(const Function& f) {
    o_ << "func " << f.name << "(";
    for (size_t i = 0; i < f.params.size(); ++i)
      o_ << (i ? ", " : "") << names_.name(f.params[i].get()) << ": " << type_name(f.params[i]->type());
    o_ << ") {\n";
    stmt(f.body, 1);
    o_ << "}\n";
    return o_.str();
  }

  std::string text() const { return o_.str(); }

 private:
  static std::string int_imm(const IntImm& k) {
    if (k.dtype() == DType::kBool) return k.value() ? "true" : "false";
    if (k.dtype() == DType::kI64) return std::to_string(k.value());
    return std::string(ir::dtype_name(k.dtype())) + "(" + std::to_string(k.value()) + ")";
  }

  std::string call(const Call& c) {
    std::string s = c.effect() == Call::kExtern ? "@" + c.name() : c.name();
    if (!c.type_args().empty()) {
      s += "<";
      for (size_t i = 0; i < c.type_args().size(); ++i) s += (i ? ", " : "") + type_name(c.type_args()[i]);
      s += ">";
    }
    s += "(";
    for (size_t i = 0; i < c.args().size(); ++i) s += (i ? ", " : "") + expr(c.args()[i]);
    return s + ")";
  }

  NameTable names_;
  std::ostringstream o_;
};

}  // namespace

std::string to_string(const ExprPtr& e) { return TextPrinter().expr(e); }

std::string to_string(const StmtPtr& s) {
  TextPrinter p;
  p.stmt(s, 0);
  return p.text();
}

std::string to_string(const Function& f) { return TextPrinter().function(f); }

}  // namespace tf::tir
