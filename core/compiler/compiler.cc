#include "core/compiler/compiler.h"

#include <cstring>
#include <map>
#include <mutex>
#include <sstream>

#include "core/compiler/codegen.h"
#include "core/compiler/library.h"
#include "core/compiler/loop_plan.h"
#include "core/compiler/prelude.h"
#include "core/compiler/toolchain.h"
#include "core/ir/error.h"
#include "core/runtime/buffer_pool.h"
#include "core/runtime/threads.h"
#include "core/runtime/dnnl_primitives.h"
#include "core/runtime/gemm.h"
#include "core/runtime/kernel_errors.h"
#include "core/runtime/scalar_numerics.h"
#include "core/sema/dispatch.h"

namespace tf::compiler {
namespace {

// Mirrors struct tf_rt in the prelude.
struct RuntimeTable {
  void (*sgemm)(int, int, int64_t, int64_t, int64_t, const float*, int64_t, const float*, int64_t, float*,
                int64_t);
  void (*dgemm)(int, int, int64_t, int64_t, int64_t, const double*, int64_t, const double*, int64_t, double*,
                int64_t);
  bool (*matmul_bf16)(int64_t, int64_t, int64_t, const uint16_t*, int64_t, int64_t, const uint16_t*, int64_t,
                      int64_t, uint16_t*);
  bool (*conv2d_f32)(const int64_t*, const float*, const float*, const float*, float*);
  int64_t* info;  // where a kernel writes the details of its error code
};

// The prelude's flat conv2d_f32 arguments (its tf_conv2d_onednn spells the order).
bool conv2d_f32(const int64_t* d, const float* x, const float* w, const float* bias, float* y) {
  const runtime::Conv2DGeometry g{d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7], d[8], d[9],
                                  {d[10], d[11]}, {d[12], d[13]}, {d[14], d[15]}};
  return runtime::conv2d_f32(g, x, d + 16, w, d + 20, bias, d[24], y);
}

// The same GEMM and oneDNN calls as the evaluator's (runtime/gemm.h,
// runtime/dnnl_primitives.h), so products agree bit for bit.
const RuntimeTable kRuntime{runtime::sgemm, runtime::dgemm, runtime::matmul_bf16, conv2d_f32, nullptr};

// tf_floordiv (scalar_numerics.h) records division by zero itself: its code
// must be the one codegen.h gives that error.
static_assert(kErrDivByZero == tf_err_div_by_zero, "codegen.h and scalar_numerics.h number division by zero alike");


// The temporaries of one call, returned to the pool when the call ends
// (also when it throws).
class TempBuffers {
 public:
  TempBuffers() = default;
  TempBuffers(const TempBuffers&) = delete;
  TempBuffers& operator=(const TempBuffers&) = delete;
  ~TempBuffers() {
    for (runtime::Buffer* b : held_) runtime::buffer_release(b);
  }
  void* allocate(size_t bytes) {
    void* data = nullptr;
    held_.reserve(held_.size() + 1);  // so that push_back cannot throw after the allocation
    held_.push_back(runtime::buffer_allocate(bytes, &data));
    return data;
  }

 private:
  std::vector<runtime::Buffer*> held_;
};

std::string single_source(const Program& p) {
  return std::string(prelude_source()) + "#define TF_ENTRY tf_entry\n" + p.body;
}

// Every kernel source starts with the prelude: the toolchain compiles it
// once into a precompiled header (toolchain.h).
size_t prelude_length() {
  static const size_t n = std::strlen(prelude_source());
  return n;
}

std::vector<ir::TensorTypePtr> temp_types(const Program& p) {
  std::vector<ir::TensorTypePtr> out;
  for (const Slot& s : p.slots)
    if (s.kind == Slot::kTemp) out.push_back(s.type);
  return out;
}

std::mutex g_mu;
std::map<std::string, std::shared_ptr<const Library>> g_loaded;  // key -> library

std::string bytes_literal(const std::string& s) {
  std::ostringstream o;
  o << "{";
  for (unsigned char c : s) o << static_cast<int>(c) << ",";
  o << "0}";
  return o.str();
}

}  // namespace

namespace {

std::string joined_keys(const std::vector<std::shared_ptr<const CompiledFunction>>& vs) {
  std::string k;
  for (const auto& v : vs) k += (k.empty() ? "" : "-") + v->key();
  return k;
}

bool any_may_fail(const std::vector<std::shared_ptr<const CompiledFunction>>& vs) {
  for (const auto& v : vs)
    if (v->may_fail()) return true;
  return false;
}


// The name a variant's entry has in an AOT library.
std::string aot_name(const ir::Function& base, const ir::Function& variant) {
  return base.name() + "$" + variant.canonical_signature();
}

}  // namespace

CompiledFunction::CompiledFunction(ir::FunctionPtr base, std::vector<std::shared_ptr<const CompiledFunction>> variants)
    : entry_(nullptr), base_(std::move(base)), variants_(std::move(variants)), key_(joined_keys(variants_)),
      may_fail_(any_may_fail(variants_)) {
  TF_CHECK(base_->variants().size() == variants_.size(), "one compiled variant per variant");
}

CompiledFunction::CompiledFunction(std::shared_ptr<const LoopPlan> plan)
    : entry_(nullptr), plan_(std::move(plan)), key_(loop_plan_key(*plan_)), may_fail_(loop_plan_may_fail(*plan_)) {}

void CompiledFunction::run(const std::vector<runtime::NDArray>& inputs,
                           const std::vector<runtime::NDArray>& outputs, const ir::DimBindings& bindings) const {
  if (base_) {
    const ir::Function& v = sema::select_variant(*base_, bindings);
    for (size_t i = 0; i < variants_.size(); ++i)
      if (base_->variants()[i].get() == &v) return variants_[i]->run(inputs, outputs, bindings);
    TF_CHECK(false, "select_variant returned one of the prototype's variants");
  }
  if (plan_) return run_loop_plan(*plan_, inputs, outputs, bindings);
  // Reused per thread: the hot path allocates nothing once warm (one
  // thread-local block: each access to one costs a TLS lookup).
  thread_local struct {
    std::vector<void*> ptrs;
    std::vector<int64_t> shapes, strides;
  } args;
  auto& ptrs = args.ptrs;
  auto& shapes = args.shapes;
  auto& strides = args.strides;
  ptrs.clear();
  shapes.clear();
  strides.clear();
  for (const auto* group : {&inputs, &outputs}) {
    for (const runtime::NDArray& a : *group) {
      ptrs.push_back(a.data());
      shapes.insert(shapes.end(), a.shape().begin(), a.shape().end());
      strides.insert(strides.end(), a.strides().begin(), a.strides().end());
    }
  }
  // Materialized intermediates live in pooled memory: a large one is then
  // warm from the second call on, like the outputs.
  TempBuffers temp_buffers;
  for (const ir::TensorTypePtr& t : temps_) {
    size_t base = strides.size();
    for (const ir::ShapeDim& d : t->shape()) shapes.push_back(d.evaluate(bindings));
    strides.resize(base + t->rank());
    int64_t s = 1;
    for (size_t a = t->rank(); a-- > 0;) {
      strides[base + a] = s;
      s *= shapes[base + a];
    }
    ptrs.push_back(temp_buffers.allocate(static_cast<size_t>(s > 0 ? s : 1) * ir::dtype_bytes(t->dtype())));
  }
  for (const RuntimeScalar& sc : scalars_) shapes.push_back(resolve_scalar(sc, bindings));
  int64_t info[kInfoSize] = {0, 0, 0, 0};
  RuntimeTable rt = kRuntime;
  rt.info = info;
  const runtime::OmpTeamScope threads(lib_->omp_get_max_threads, lib_->omp_set_num_threads);
  const int code = entry_(ptrs.data(), shapes.data(), strides.data(), &rt);
  if (code != 0) raise_kernel_error(code, info);
}

ir::FunctionPtr own(const ir::Function& fn) {
  ir::Function::Fields f{fn.name(), fn.params(), fn.body(), fn.return_type(), fn.specializations(),
                         fn.variants(), fn.label(), fn.span(), fn.inplace()};
  return std::make_shared<const ir::Function>(std::move(f), fn.type());
}

[[noreturn]] void raise_kernel_error(int code, const int64_t* info) {
  std::string message;
  switch (code) {
    case kErrDivByZero: message = runtime::div_by_zero_message(); break;
    case kErrEmptyMean: message = runtime::empty_mean_message(); break;
    case kErrRopePosition: message = runtime::rope_position_message(info[0], info[1]); break;
    case kErrInsertWindow: message = runtime::insert_window_message(info[0], info[1], info[2], info[3]); break;
    case kErrCachePos: message = runtime::cache_pos_message(info[0]); break;
    case kErrCacheCount: message = runtime::cache_count_message(info[0], info[1]); break;
    case kErrCacheEnd: message = runtime::cache_end_message(info[0], info[1], info[2]); break;
    case kErrGatherIndex: message = runtime::gather_index_message(info[0], info[1], info[2]); break;
    case kErrTopKCount: message = runtime::topk_count_message(info[0], info[1], info[2]); break;
    case kErrShapeIndex: message = runtime::shape_index_message(info[0], info[1]); break;
    case kErrScatterWindow: message = runtime::cache_scatter_message(info[0], info[1], info[2], info[3]); break;
    default: ir::fail(ir::ErrorKind::kInternal, "native kernel returned an unknown error code");
  }
  ir::fail(ir::ErrorKind::kRuntime, message);
}

std::shared_ptr<const CompiledFunction> compile(const ir::Function& fn) {
  if (fn.is_prototype()) {
    std::vector<std::shared_ptr<const CompiledFunction>> vs;
    for (const ir::FunctionPtr& v : fn.variants()) vs.push_back(compile(*v));
    return std::make_shared<const CompiledFunction>(own(fn), std::move(vs));
  }
  if (fn.body() && contains_loop(fn.body()))
    return std::make_shared<const CompiledFunction>(build_loop_plan(fn, compile_program));
  return compile_program(generate(fn), fn.name());
}

std::shared_ptr<const CompiledFunction> compile_program(const Program& p, const std::string& name) {
  std::string source = single_source(p);
  std::string key = cache_key(source);
  dump_source(name + "." + key, source, p.tir);
  std::shared_ptr<const Library> lib;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    auto it = g_loaded.find(key);
    if (it != g_loaded.end()) {
      lib = it->second;
    } else {
      lib = std::make_shared<const Library>(cached_shared(source, key, prelude_length()));
      g_loaded[key] = lib;
    }
  }
  auto entry = reinterpret_cast<CompiledFunction::Entry>(lib->symbol("tf_entry"));
  if (!entry) ir::fail(ir::ErrorKind::kRuntime, "kernel library '" + lib->path() + "' has no tf_entry");
  return std::make_shared<const CompiledFunction>(lib, entry, temp_types(p), key, p.may_fail, p.scalars);
}

int64_t compiler_invocations() { return invocation_count(); }

std::vector<std::string> export_library(const std::vector<ir::FunctionPtr>& fns, const std::string& module_text,
                                        const std::string& path) {
  std::ostringstream src, names, entries, keys, tir;
  src << prelude_source();
  std::vector<std::string> done;
  int64_t count = 0;
  for (const ir::FunctionPtr& fn : fns) {
    // A prototype's variants are entries of their own (aot_name); the
    // prototype counts as compiled when all of them are.
    std::vector<std::pair<std::string, Program>> units;
    try {
      if (!fn->is_prototype()) units.emplace_back(fn->name(), generate(*fn));
      for (const ir::FunctionPtr& v : fn->variants()) units.emplace_back(aot_name(*fn, *v), generate(*v));
    } catch (const ir::Error& e) {
      if (e.kind() != ir::ErrorKind::kUnsupported) throw;
      continue;  // left to the evaluator in the loading process
    }
    for (const auto& [name, p] : units) {
      const std::string entry = "tf_aot_entry_" + std::to_string(count++);
      src << "#define TF_ENTRY " << entry << "\n" << p.body << "#undef TF_ENTRY\n";
      names << "\"" << name << "\",";
      entries << "reinterpret_cast<const void*>(&" << entry << "),";
      keys << "\"" << source_hash(single_source(p)) << "\",";
      if (!p.tir.empty()) tir << "// " << name << "\n" << p.tir;
    }
    done.push_back(fn->name());
  }
  src << "extern \"C\" const char tf_aot_module_text[] = " << bytes_literal(module_text) << ";\n";
  src << "extern \"C\" const int64_t tf_aot_num_functions = " << count << ";\n";
  src << "extern \"C\" const char* const tf_aot_function_names[] = {" << names.str() << "nullptr};\n";
  src << "extern \"C\" const char* const tf_aot_function_keys[] = {" << keys.str() << "nullptr};\n";
  src << "extern \"C\" const void* const tf_aot_entries[] = {" << entries.str() << "nullptr};\n";
  dump_source("aot." + cache_key(src.str()), src.str(), tir.str());
  export_shared(src.str(), path, prelude_length());
  return done;
}

std::shared_ptr<const Library> open_library(const std::string& path, std::string* module_text) {
  auto lib = std::make_shared<const Library>(path);
  auto* text = static_cast<const char*>(lib->symbol("tf_aot_module_text"));
  if (!text || !lib->symbol("tf_aot_num_functions"))
    ir::fail(ir::ErrorKind::kInvalidArgument, "'" + path + "' is not a TileFoundry kernel library");
  *module_text = text;
  return lib;
}

namespace {

// The library's entry named `name` for fn, or null (see bind_library_function).
std::shared_ptr<const CompiledFunction> bind_entry(const std::shared_ptr<const Library>& lib, const std::string& name,
                                                   const ir::Function& fn) {
  const int64_t n = *static_cast<const int64_t*>(lib->symbol("tf_aot_num_functions"));
  auto names = static_cast<const char* const*>(lib->symbol("tf_aot_function_names"));
  auto keys = static_cast<const char* const*>(lib->symbol("tf_aot_function_keys"));
  auto entries = static_cast<const void* const*>(lib->symbol("tf_aot_entries"));
  for (int64_t i = 0; i < n; ++i) {
    if (name != names[i]) continue;
    Program p;
    try {
      p = generate(fn);
    } catch (const ir::Error& e) {
      if (e.kind() != ir::ErrorKind::kUnsupported) throw;
      return nullptr;
    }
    // A library built by another version of the code generator would read
    // its arguments differently: refuse it rather than guess.
    if (source_hash(single_source(p)) != keys[i]) return nullptr;
    auto entry = reinterpret_cast<CompiledFunction::Entry>(const_cast<void*>(entries[i]));
    return std::make_shared<const CompiledFunction>(lib, entry, temp_types(p), keys[i], p.may_fail, p.scalars);
  }
  return nullptr;
}

}  // namespace

std::shared_ptr<const CompiledFunction> bind_library_function(const std::shared_ptr<const Library>& lib,
                                                              const ir::Function& fn) {
  if (!fn.is_prototype()) return bind_entry(lib, fn.name(), fn);
  std::vector<std::shared_ptr<const CompiledFunction>> vs;
  for (const ir::FunctionPtr& v : fn.variants()) {
    vs.push_back(bind_entry(lib, aot_name(fn, *v), *v));
    if (!vs.back()) return nullptr;
  }
  return std::make_shared<const CompiledFunction>(own(fn), std::move(vs));
}

}  // namespace tf::compiler
