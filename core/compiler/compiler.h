// The native backend (docs/internals.md): a sealed normal Function -> C++
// source (codegen.h) -> shared object in a content-addressed cache -> dlopen.
//
// Environment: TF_CC (compiler, default "c++"), TF_CACHE_DIR (default
// ~/.cache/tilefoundry), TF_DUMP_DIR (when set, every generated source is
// also written there as <function>.<key>.cc for reading).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/compiler/scalars.h"
#include "core/ir/expr.h"
#include "core/runtime/ndarray.h"

namespace tf::compiler {

class Library;
struct LoopPlan;

// One compiled function. Immutable; run() may be called from many threads.
class CompiledFunction {
 public:
  using Entry = int (*)(void* const*, const int64_t*, const int64_t*, const void*);
  CompiledFunction(std::shared_ptr<const Library> lib, Entry entry, std::vector<ir::TensorTypePtr> temps,
                   std::string key, bool may_fail, std::vector<RuntimeScalar> scalars = {})
      : lib_(std::move(lib)), entry_(entry), temps_(std::move(temps)), scalars_(std::move(scalars)),
        key_(std::move(key)), may_fail_(may_fail) {}
  // A dispatch prototype: `variants[i]` is the code of base->variants()[i];
  // run() selects one with sema::select_variant.
  CompiledFunction(ir::FunctionPtr base, std::vector<std::shared_ptr<const CompiledFunction>> variants);
  // A function with GridRegionExpr loops: a host-driven plan (loop_plan.h).
  explicit CompiledFunction(std::shared_ptr<const LoopPlan> plan);

  // Computes the outputs into `outputs`: C-contiguous, shaped as
  // sema::output_descs says, disjoint from the inputs. `bindings` are the
  // DimVar values bind_arguments returned for these inputs. Throws
  // Error(kRuntime) for a run-time check (integer division by zero, mean
  // over an empty axis), with the evaluator's message; the outputs then hold
  // unspecified values. Only when may_fail(). Errors the evaluator reports
  // before computing (a shape outside a dispatch envelope, a Slice window or
  // loop bound that does not resolve) are thrown before anything is written.
  void run(const std::vector<runtime::NDArray>& inputs, const std::vector<runtime::NDArray>& outputs,
           const ir::DimBindings& bindings) const;

  // The cache key: a hash of the generated source, compiler and flags.
  const std::string& key() const { return key_; }
  // Whether run() can throw after writing into `outputs` (the function
  // divides integers, takes a mean, ...). A check that runs before anything
  // is written (RoPE positions given as a parameter) leaves this false.
  bool may_fail() const { return may_fail_; }

 private:
  std::shared_ptr<const Library> lib_;  // keeps the code mapped
  Entry entry_;
  std::vector<ir::TensorTypePtr> temps_;
  std::vector<RuntimeScalar> scalars_;
  ir::FunctionPtr base_;  // dispatch prototype (then variants_ run, not entry_)
  std::vector<std::shared_ptr<const CompiledFunction>> variants_;
  std::shared_ptr<const LoopPlan> plan_;  // loops (then plan_ runs, not entry_)
  std::string key_;
  bool may_fail_;
};

// Compiles fn (a normal function, a variant, or a dispatch prototype: each
// variant is compiled, and cached, on its own). Throws Error(kUnsupported)
// when the code generator does not handle a construct of fn or no compiler
// can be run; the message says which. Cached in process and on disk: the
// same function compiles (runs TF_CC) once per machine.
std::shared_ptr<const CompiledFunction> compile(const ir::Function& fn);

struct Program;
// Compiles one generated program (cached as compile() caches); `name` names
// the TF_DUMP_DIR file.
std::shared_ptr<const CompiledFunction> compile_program(const Program& p, const std::string& name);

// An owned copy of a function node (a target's compile receives a
// reference and keeps a dispatch prototype for choosing its variants).
ir::FunctionPtr own(const ir::Function& fn);

// A generated kernel's nonzero result (codegen.h's kErr* codes, details in
// `info`) as the evaluator's Error: the same message functions
// (runtime/kernel_errors.h). Every target's host side reports through it.
[[noreturn]] void raise_kernel_error(int code, const int64_t* info);

// How many times this process ran TF_CC (tests count recompiles).
int64_t compiler_invocations();

// AOT: compiles every compilable function of `fns` into one shared library
// at `path`, with `module_text` (the printed module) embedded. Functions
// the code generator does not handle are left to the evaluator. Returns the
// names of the compiled functions. Throws Error(kUnsupported) without a compiler.
std::vector<std::string> export_library(const std::vector<ir::FunctionPtr>& fns,
                                        const std::string& module_text, const std::string& path);

// AOT: opens a library written by export_library (any process, no
// compiler needed) and returns its embedded module text. Throws
// Error(kNotFound) when it cannot be opened, Error(kInvalidArgument) when it
// is not a TileFoundry kernel library.
std::shared_ptr<const Library> open_library(const std::string& path, std::string* module_text);
// The library's code for fn (matched by name and by the hash of the code
// generated for fn now); null when it has none.
std::shared_ptr<const CompiledFunction> bind_library_function(const std::shared_ptr<const Library>& lib,
                                                              const ir::Function& fn);

}  // namespace tf::compiler
