#include "core/compiler/cpu/entry_printer.h"

#include <sstream>
#include <utility>
#include <vector>

#include "core/compiler/cpu/cpp_printer.h"
#include "core/compiler/emit_util.h"

namespace tf::compiler::cpu {

namespace {

// The entry's variables as the function below spells them, and its own
// locals, which no stage variable may be named as.
std::vector<std::pair<tir::VarPtr, std::string>> entry_spellings(const LoweredEntry& e) {
  std::vector<std::pair<tir::VarPtr, std::string>> out{
      {e.err, "err"}, {e.rt, "rt"}, {e.info, "rt->info"}, {e.scalars, "RS"}};
  for (size_t k = 0; k < e.slot_vars.size(); ++k) {
    const SlotVars& v = e.slot_vars[k];
    out.emplace_back(v.data, "static_cast<" + ctype(e.slots[k].type->dtype()) + "*>(B[" + S(k) + "])");
    out.emplace_back(v.shape, "sh" + S(k));
    out.emplace_back(v.strides, "st" + S(k));
  }
  for (const char* n : {"B", "P", "SH", "ST", "err_"})
    out.emplace_back(tir::Var::make(n, tir::Type::scalar(ir::DType::kI64)), n);
  return out;
}

}  // namespace

std::string print_entry(const LoweredEntry& e) {
  const auto spellings = entry_spellings(e);
  // A printer per stage: it names a stage's variables, which die with it.
  auto block = [&](const tir::StmtPtr& s) {
    CppPrinter p;
    for (const auto& [v, name] : spellings) p.predeclare(v, name);
    return "  {\n" + p.stmt(s, 1) + "  }\n";
  };
  std::ostringstream o;
  o << "extern \"C\" int TF_ENTRY(void* const* P, const int64_t* SH, const int64_t* ST, const tf_rt* rt) {\n";
  o << "  (void)rt;\n";
  o << "  int err_ = 0; int* const err = &err_; (void)err;\n";
  o << "  void* B[" << (e.slots.empty() ? 1 : e.slots.size()) << "];\n";
  size_t off = 0;
  for (size_t k = 0; k < e.slots.size(); ++k) {
    o << "  const int64_t* sh" << k << " = SH + " << off << "; const int64_t* st" << k << " = ST + " << off
      << "; (void)sh" << k << "; (void)st" << k << ";\n";
    off += e.slots[k].type->rank();
    o << "  B[" << k << "] = P[" << k << "];\n";
  }
  o << "  const int64_t* RS = SH + " << off << "; (void)RS;\n";
  for (const tir::StmtPtr& s : e.prechecks) o << block(s);  // may return: nothing is written yet
  for (const tir::StmtPtr& s : e.stages) o << block(s);
  o << "  return __atomic_load_n(err, __ATOMIC_RELAXED);\n";
  o << "}\n";
  return o.str();
}

}  // namespace tf::compiler::cpu
