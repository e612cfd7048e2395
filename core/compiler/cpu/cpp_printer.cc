#include "core/compiler/cpu/cpp_printer.h"

#include <cmath>
#include <cstdio>

#include "core/compiler/emit_util.h"
#include "core/ir/error.h"
#include "core/tir/op.h"

namespace tf::compiler::cpu {

using namespace tir;

std::string cpp_type(const Type& t) {
  if (t.opaque) return "void*";
  return ctype(t.dtype) + (t.handle ? "*" : "");
}

void CppPrinter::predeclare(const VarPtr& v, const std::string& spelling) {
  fixed_[v.get()] = spelling;
  names_.reserve(spelling);
}

std::string CppPrinter::name(const Var* v) {
  auto it = fixed_.find(v);
  return it != fixed_.end() ? it->second : names_.name(v);
}

namespace {

std::string float_imm(const FloatImm& f) {
  const std::string t = ctype(f.dtype());
  const double v = f.value();
  if (std::isnan(v)) return "std::numeric_limits<" + t + ">::quiet_NaN()";
  if (std::isinf(v)) return std::string(v < 0 ? "-" : "") + "std::numeric_limits<" + t + ">::infinity()";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", v);  // exact
  return std::string(buf) + (f.dtype() == DType::kF32 ? "f" : "");
}

std::string int_imm(const IntImm& k) {
  if (k.dtype() == DType::kBool) return k.value() ? "true" : "false";
  if (k.value() == INT64_MIN) return "std::numeric_limits<int64_t>::min()";
  if (k.dtype() == DType::kI64) return "INT64_C(" + std::to_string(k.value()) + ")";
  return "((" + ctype(k.dtype()) + ")" + std::to_string(k.value()) + ")";
}

bool is_storage(DType d) { return !is_compute_dtype(d); }

}  // namespace

std::string CppPrinter::cast(const Cast& c) {
  const DType from = c.value()->dtype(), to = c.dtype();
  const std::string v = expr(c.value());
  if (is_storage(from) && to == DType::kF32) return "tf_widen(" + v + ")";
  if (is_storage(from)) return "((" + ctype(to) + ")tf_widen(" + v + "))";
  if (is_storage(to)) return "tf_narrow<" + ctype(to) + ">(" + v + ")";
  if (to == DType::kBool) return "((" + v + ") != 0)";
  if (ir::is_int(to) && ir::is_float(from)) return "tf_f2i<" + ctype(to) + ">(" + v + ")";
  return "((" + ctype(to) + ")(" + v + "))";
}

std::string CppPrinter::call_spelling(const std::string& fn, const Call& c, const std::string& leading) {
  std::string s = fn;
  if (!c.type_args().empty()) {
    s += "<";
    for (size_t i = 0; i < c.type_args().size(); ++i) s += (i ? ", " : "") + cpp_type(c.type_args()[i]);
    s += ">";
  }
  s += "(" + leading;
  for (size_t i = 0; i < c.args().size(); ++i) s += (i || !leading.empty() ? ", " : "") + expr(c.args()[i]);
  return s + ")";
}

std::string CppPrinter::call(const Call& c) { return call_spelling(c.name(), c); }

std::string CppPrinter::let_line(const LetStmt& l) {
  const Type& t = l.var()->type();
  const std::string decl = t.handle ? cpp_type(t) + (l.no_alias() ? " __restrict " : " ")
                                    : (l.var()->is_mutable() ? "" : "const ") + cpp_type(t) + " ";
  const std::string value = expr(l.value());
  return decl + name(l.var().get()) + " = " + value + ";";
}

std::string CppPrinter::expr(const ExprPtr& e) {
  switch (e->kind()) {
    case ExprKind::kIntImm: return int_imm(static_cast<const IntImm&>(*e));
    case ExprKind::kFloatImm: return float_imm(static_cast<const FloatImm&>(*e));
    case ExprKind::kVar: return name(static_cast<const Var*>(e.get()));
    case ExprKind::kBinary: {
      auto& b = static_cast<const Binary&>(*e);
      const std::string x = expr(b.a()), y = expr(b.b());
      // A select on the comparison, by value: GCC vectorizes a max-reduction
      // written so into vmaxps, while std::max's reference result kept a
      // composed softmax's max pass at a third of that speed.
      if (b.op() == BinaryOp::kMin) return "(" + y + " < " + x + " ? " + y + " : " + x + ")";
      if (b.op() == BinaryOp::kMax) return "(" + y + " > " + x + " ? " + y + " : " + x + ")";
      // C promotes narrow integers to int: the result converts back.
      const bool narrow = !is_compare(b.op()) && !is_logical(b.op()) && (b.dtype() == DType::kI8 || b.dtype() == DType::kBool);
      const std::string r = "(" + x + " " + binary_spelling(b.op()) + " " + y + ")";
      return narrow ? "((" + ctype(b.dtype()) + ")" + r + ")" : r;
    }
    case ExprKind::kUnary: {
      auto& u = static_cast<const Unary&>(*e);
      const std::string x = expr(u.a());
      if (u.op() == UnaryOp::kNot) return "(!" + x + ")";
      return u.dtype() == DType::kI8 ? "((int8_t)(-" + x + "))" : "(-" + x + ")";
    }
    case ExprKind::kSelect: {
      auto& s = static_cast<const Select&>(*e);
      const std::string c = expr(s.cond()), t = expr(s.t());
      return "(" + c + " ? " + t + " : " + expr(s.f()) + ")";
    }
    case ExprKind::kCast: return cast(static_cast<const Cast&>(*e));
    case ExprKind::kLoad: {
      auto& l = static_cast<const Load&>(*e);
      const std::string base = name(l.base().get());
      // A bool read as its byte, 0 or 1 (a bool tensor's values, in torch
      // and at the ABI): GCC 12 vectorizes no loop that loads a bool (a
      // mask's where became per-element branches), and a line of 16 that
      // converts the byte's comparison with zero to float neither; the
      // byte itself converts and tests as the bool would.
      if (l.dtype() == DType::kBool)
        return "reinterpret_cast<const uint8_t*>(" + base + ")[" + expr(l.index()) + "]";
      return base + "[" + expr(l.index()) + "]";
    }
    case ExprKind::kAddress: {
      auto& a = static_cast<const Address&>(*e);
      const std::string base = name(a.base().get());
      return "(" + base + " + " + expr(a.index()) + ")";
    }
    case ExprKind::kCall: return call(static_cast<const Call&>(*e));
  }
  return "?";
}

void CppPrinter::print_for(const For& f, int depth) {
  const std::string pad(2 * static_cast<size_t>(depth), ' ');
  const std::string v = name(f.var().get());
  const std::string lo = expr(f.min()), n = expr(f.extent());
  // [min, min + (e - min)) is [min, e): the common chunk loop, spelled plainly.
  std::string hi = is_const_int(f.min(), 0) ? n : "(" + lo + " + " + n + ")";
  if (auto* d = as<Binary>(f.extent()); d && d->op() == BinaryOp::kSub && d->b() == f.min()) hi = expr(d->a());
  switch (f.for_kind()) {
    case ForKind::kSerial: break;
    case ForKind::kVectorized: {
      out_ += pad + "#pragma omp simd";
      for (const Reduction& r : f.reductions())
        out_ += std::string(" reduction(") + (r.op == BinaryOp::kAdd ? "+" : "max") + ":" + name(r.var.get()) + ")";
      out_ += "\n";
      break;
    }
    case ForKind::kParallel:
      out_ += pad + "#pragma omp parallel for schedule(static)";
      if (f.min_work()) out_ += " if (" + expr(f.min_work()) + ")";
      out_ += "\n";
      break;
    case ForKind::kUnrolled: out_ += pad + "#pragma GCC unroll 16\n"; break;
    case ForKind::kGpuBlock:
    case ForKind::kGpuThread: unsupported(std::string("a ") + for_kind_name(f.for_kind()) + " loop on the CPU");
  }
  out_ += pad + "for (int64_t " + v + " = " + lo + "; " + v + " < " + hi + "; ++" + v + ") {\n";
  print(f.body(), depth + 1);
  out_ += pad + "}\n";
}

void CppPrinter::print(const StmtPtr& s, int depth) {
  const std::string pad(2 * static_cast<size_t>(depth), ' ');
  switch (s->kind()) {
    case StmtKind::kFor: return print_for(static_cast<const For&>(*s), depth);
    case StmtKind::kLetStmt: {
      auto& l = static_cast<const LetStmt&>(*s);
      out_ += pad + let_line(l) + "\n";
      return print(l.body(), depth);
    }
    case StmtKind::kStore: {
      auto& st = static_cast<const Store&>(*s);
      const std::string base = name(st.base().get()), index = expr(st.index());
      out_ += pad + base + "[" + index + "] = " + expr(st.value()) + ";\n";
      return;
    }
    case StmtKind::kAssign: {
      auto& a = static_cast<const Assign&>(*s);
      out_ += pad + name(a.var().get()) + " = " + expr(a.value()) + ";\n";
      return;
    }
    case StmtKind::kIfThenElse: {
      auto& i = static_cast<const IfThenElse&>(*s);
      out_ += pad + "if (" + expr(i.cond()) + ") {\n";
      print(i.then_case(), depth + 1);
      if (i.else_case()) {
        out_ += pad + "} else {\n";
        print(i.else_case(), depth + 1);
      }
      out_ += pad + "}\n";
      return;
    }
    case StmtKind::kAllocate: {
      auto& a = static_cast<const Allocate&>(*s);
      const std::string T = ctype(a.var()->dtype()), v = name(a.var().get());
      if (a.scope() == MemoryScope::kLocal) {
        out_ += pad + "alignas(64) " + T + " " + v + "[" + expr(a.extent()) + "];\n";
        return print(a.body(), depth);
      }
      // The heap, freed where the body ends (the verifier keeps Return out of it).
      if (a.scope() != MemoryScope::kGlobal) unsupported(std::string("a ") + memory_scope_name(a.scope()) + " allocation");
      out_ += pad + T + "* " + v + " = static_cast<" + T + "*>(std::malloc(static_cast<size_t>(" + expr(a.extent()) +
              ") * sizeof(" + T + ")));\n";
      print(a.body(), depth);
      out_ += pad + "std::free(" + v + ");\n";
      return;
    }
    case StmtKind::kEvaluate: out_ += pad + expr(static_cast<const Evaluate&>(*s).value()) + ";\n"; return;
    case StmtKind::kSeq:
      for (const StmtPtr& c : static_cast<const Seq&>(*s).stmts()) {
        // A binding statement in the middle of a sequence scopes over its
        // own body only: braces keep its names from meeting a sibling's.
        const bool scoped = c->kind() == StmtKind::kLetStmt || c->kind() == StmtKind::kAllocate;
        if (scoped) out_ += pad + "{\n";
        print(c, depth + scoped);
        if (scoped) out_ += pad + "}\n";
      }
      return;
    case StmtKind::kBarrier: out_ += pad + "#pragma omp barrier\n"; return;
    case StmtKind::kReturn: out_ += pad + "return " + expr(static_cast<const Return&>(*s).code()) + ";\n"; return;
    case StmtKind::kComment: out_ += pad + "// " + static_cast<const Comment&>(*s).text() + "\n"; return;
  }
}

std::string CppPrinter::stmt(const StmtPtr& s, int depth) {
  out_.clear();
  print(s, depth);
  return out_;
}

}  // namespace tf::compiler::cpu
