// The CPU target's printer: TIR -> C++17 that compiles against the prelude
// (prelude.h) with `-O3 -march=native -fopenmp`. The printer decides no
// schedule: every loop kind, allocation and call is in the TIR already;
// it only spells them (a vectorized For is `#pragma omp simd` with its
// reductions, a parallel one `#pragma omp parallel for`, a local Allocate
// a 64-byte-aligned stack array (a global one malloc / free), a storage-type
// Cast the prelude's tf_widen / tf_narrow, a no-alias pointer `__restrict`).
#pragma once

#include <string>
#include <unordered_map>

#include "core/tir/names.h"
#include "core/tir/stmt.h"

namespace tf::compiler::cpu {

// The C++ spelling of a TIR type (tf_f16 for f16, float* for f32*).
std::string cpp_type(const tir::Type& t);

// The CUDA printer (cuda/cuda_printer.h) derives from it: expressions are
// spelled alike in both, statements and calls are the targets' own.
class CppPrinter {
 public:
  virtual ~CppPrinter() = default;
  // Variables the printed code finds already declared under a given name
  // (the entry's own locals); others are declared where TIR binds them.
  void predeclare(const tir::VarPtr& v, const std::string& spelling);
  // `s` as statements indented by `depth` levels of two spaces.
  std::string stmt(const tir::StmtPtr& s, int depth);
  std::string expr(const tir::ExprPtr& e);

 protected:
  virtual void print(const tir::StmtPtr& s, int depth);
  virtual void print_for(const tir::For& f, int depth);
  virtual std::string call(const tir::Call& c);
  // A call's name with its type arguments (f<float, tf_bf16>) and its
  // arguments after `leading` ones.
  std::string call_spelling(const std::string& fn, const tir::Call& c, const std::string& leading = "");
  std::string name(const tir::Var* v);
  // A LetStmt's declaration (`const float x = ...;`).
  std::string let_line(const tir::LetStmt& l);

  std::string out_;
  // Spellings fixed by predeclare (a derived printer may respell a variable
  // over a region it prints).
  std::unordered_map<const tir::Var*, std::string> fixed_;

 private:
  std::string cast(const tir::Cast& c);

  tir::NameTable names_;
};

}  // namespace tf::compiler::cpu
