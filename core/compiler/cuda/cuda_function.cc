#include "core/compiler/cuda/cuda_function.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>
#include <utility>

#include "core/compiler/codegen.h"
#include "core/compiler/compiler.h"
#include "core/compiler/cuda/cublas.h"
#include "core/compiler/cuda/cuda_loop_plan.h"
#include "core/compiler/cuda/grid_size.h"
#include "core/compiler/cuda/nvrtc.h"
#include "core/compiler/cuda/prelude.h"
#include "core/compiler/cuda/workspace.h"
#include "core/compiler/loop_tree.h"
#include "core/compiler/scalars.h"
#include "core/compiler/toolchain.h"
#include "core/ir/error.h"
#include "core/runtime/strided.h"
#include "core/sema/dispatch.h"

namespace tf::compiler::cuda {
namespace {

// Blocks per multiprocessor in a grid-strided launch: 8 x kBlockThreads
// threads fill a multiprocessor (2048 resident threads on sm_80 / sm_90).
constexpr int kBlocksPerMultiprocessor = 8;

// The error words at the workspace's start: err, pre (int), info.
struct ErrorWords {
  int32_t err;
  int32_t pre;
  int64_t info[kInfoSize];
};
static_assert(sizeof(ErrorWords) <= kWorkspaceAlign, "the error words fit the first scratch block");

std::vector<int64_t> extents(const ir::TensorType& t, const ir::DimBindings& b) {
  std::vector<int64_t> shape;
  for (const ir::ShapeDim& d : t.shape()) shape.push_back(d.evaluate(b));
  return shape;
}

uint64_t byte_size(const ir::TensorType& t, const std::vector<int64_t>& shape) {
  return static_cast<uint64_t>(runtime::shape_numel(shape)) * static_cast<uint64_t>(ir::dtype_bytes(t.dtype()));
}

// Where a call's scratch arrays lie in its workspace: the error words, the
// temporaries, and (for a program that may fail after writing) a staging
// copy of each output.
struct Layout {
  std::vector<std::pair<const Slot*, uint64_t>> temps, staging;  // slot, byte offset
  std::vector<std::vector<int64_t>> temp_shapes, staging_shapes;
  uint64_t cublas = 0;  // cuBLAS's workspace, when the program has a MatMul step
  uint64_t bytes = kWorkspaceAlign;
};

Layout layout(const CudaProgram& p, bool gemm, const ir::DimBindings& b) {
  Layout l;
  if (gemm) {
    l.cublas = l.bytes;
    l.bytes += kCublasWorkspaceBytes;
  }
  for (const Slot& s : p.slots) {
    const bool temp = s.kind == Slot::kTemp, staged = s.kind == Slot::kOutput && p.may_fail;
    if (!temp && !staged) continue;
    std::vector<int64_t> shape = extents(*s.type, b);
    const uint64_t size = workspace_aligned(byte_size(*s.type, shape));
    (temp ? l.temps : l.staging).emplace_back(&s, l.bytes);
    (temp ? l.temp_shapes : l.staging_shapes).push_back(std::move(shape));
    l.bytes += size;
  }
  return l;
}

// Error words that stay zero, one set per device for the process's life:
// what a program that cannot fail reads as its `pre` and `err`.
ErrorWords* zero_words(int device) {
  static std::mutex mu;
  static std::map<int, ErrorWords*> zeros;
  std::lock_guard<std::mutex> lock(mu);
  ErrorWords*& z = zeros[device];
  if (!z) {
    const ErrorWords host{};
    z = static_cast<ErrorWords*>(device_alloc(device, sizeof host));
    copy_to_device(device, z, &host, sizeof host);
  }
  return z;
}

CUdeviceptr address(const runtime::NDArray& a) { return reinterpret_cast<CUdeviceptr>(a.data()); }

uint64_t array_bytes(const runtime::NDArray& a) {
  return static_cast<uint64_t>(a.numel()) * static_cast<uint64_t>(ir::dtype_bytes(a.dtype()));
}

std::string joined_keys(const std::vector<std::shared_ptr<const CudaFunction>>& vs) {
  std::string k;
  for (const auto& v : vs) k += (k.empty() ? "" : "-") + v->key();
  return k;
}

// Images by cache key, for the process's life (a module is loaded from one
// per device).
std::mutex g_images_mu;
std::unordered_map<std::string, std::string> g_images;

std::string compile_image(const CudaProgram& p, const std::string& name, int arch, const std::string& path,
                          const std::string& stem) {
  const NvrtcOutput out = nvrtc_compile(p.source, name + ".cu", arch, /*cubin=*/true);
  if (!out.ok) {
    if (out.log.find("gpu-architecture") != std::string::npos)
      ir::fail(ir::ErrorKind::kUnsupported, "NVRTC " + std::to_string(nvrtc_status().major) + "." +
                                                std::to_string(nvrtc_status().minor) + " cannot compile for sm_" +
                                                std::to_string(arch) + ": " + out.log.substr(0, 400));
    ir::fail(ir::ErrorKind::kInternal,
             "NVRTC rejected the CUDA generated for " + name + " (sm_" + std::to_string(arch) + "):\n" +
                 out.log.substr(0, 4000));
  }
  write_file_atomically(path, out.cubin);
  write_file_atomically(path + ".ptx", out.ptx);
  dump_text(stem + ".ptx", out.ptx);
  return out.cubin;
}

// The blocks a launch of `step` takes: one for kOneBlock; for the others
// those with work (grid_size.h), at least one and at most the full grid.
unsigned launch_grid(const CudaKernel& step, const std::vector<int64_t>& words, int full) {
  if (step.launch == Launch::kOneBlock) return 1u;
  int64_t blocks = full;
  if (step.blocks)
    if (const std::optional<int64_t> b = evaluate_blocks(step.blocks, words)) blocks = std::clamp<int64_t>(*b, 1, full);
  return static_cast<unsigned>(blocks);
}

}  // namespace

void require_available() {
  driver();
  if (!driver_status().takes_source && !nvrtc_status().available)
    ir::fail(ir::ErrorKind::kUnsupported, "the CUDA backend is unavailable: " + nvrtc_status().why);
}

std::vector<int64_t> pack_kernel_args(const std::vector<runtime::NDArray>& arrays,
                                      const std::vector<int64_t>& scalars, void* err, void* pre, void* info) {
  std::vector<int64_t> words;
  auto pointer = [&](const void* p) {
    int64_t w = 0;
    std::memcpy(&w, &p, sizeof p);
    words.push_back(w);
  };
  // Each array of the struct has at least one element (cuda_codegen.cc).
  auto pad = [&](size_t from) {
    if (words.size() == from) words.push_back(0);
  };
  size_t from = words.size();
  for (const runtime::NDArray& a : arrays) pointer(a.data());
  pad(from);
  from = words.size();
  for (const runtime::NDArray& a : arrays) words.insert(words.end(), a.shape().begin(), a.shape().end());
  pad(from);
  from = words.size();
  for (const runtime::NDArray& a : arrays) words.insert(words.end(), a.strides().begin(), a.strides().end());
  pad(from);
  from = words.size();
  words.insert(words.end(), scalars.begin(), scalars.end());
  pad(from);
  pointer(err);
  pointer(pre);
  pointer(info);
  return words;
}

std::string cubin_image(const CudaProgram& p, const std::string& name, int arch) {
  const NvrtcStatus& nv = nvrtc_status();
  if (!nv.available) ir::fail(ir::ErrorKind::kUnsupported, "the CUDA backend is unavailable: " + nv.why);
  const std::string key = source_hash(p.source + "\n// sm_" + std::to_string(arch) + ", NVRTC " +
                                      std::to_string(nv.major) + "." + std::to_string(nv.minor));
  const std::string stem = name + "." + key;
  dump_text(stem + ".cu", p.source);
  if (!p.tir.empty()) dump_text(stem + ".tir", p.tir);
  std::lock_guard<std::mutex> lock(g_images_mu);
  auto it = g_images.find(key);
  if (it != g_images.end()) return it->second;
  const std::string path = cache_dir() + "/" + key + ".sm_" + std::to_string(arch) + ".cubin";
  std::string image;
  if (!read_file(path, &image) || image.empty()) {
    image = compile_image(p, name, arch, path, stem);
  } else if (std::string ptx; read_file(path + ".ptx", &ptx)) {
    dump_text(stem + ".ptx", ptx);
  }
  return g_images.emplace(key, std::move(image)).first->second;
}

std::string module_image(const CudaProgram& p, const std::string& name, int arch) {
  if (!driver_status().takes_source) return cubin_image(p, name, arch);
  const std::string stem = name + "." + source_hash(p.source);
  dump_text(stem + ".cu", p.source);
  if (!p.tir.empty()) dump_text(stem + ".tir", p.tir);
  return p.source;
}

CudaFunction::CudaFunction(CudaProgram p, std::string name)
    : program_(std::move(p)), name_(std::move(name)), key_(source_hash(program_.source)) {
  has_checks_ = std::any_of(program_.kernels.begin(), program_.kernels.end(),
                            [](const CudaKernel& k) { return k.precheck; });
  reports_errors_ = program_.may_fail || has_checks_;
  has_gemm_ = compiler::cuda::has_gemm(program_);
}

CudaFunction::CudaFunction(ir::FunctionPtr base, std::vector<std::shared_ptr<const CudaFunction>> variants)
    : name_(base->name()), key_(joined_keys(variants)), base_(std::move(base)), variants_(std::move(variants)) {
  TF_CHECK(base_->variants().size() == variants_.size(), "one CUDA program per variant");
  for (const auto& v : variants_) {
    reports_errors_ = reports_errors_ || v->reports_errors();
    has_gemm_ = has_gemm_ || v->has_gemm();
  }
}

CudaFunction::CudaFunction(std::shared_ptr<const CudaLoopPlan> plan, std::string name)
    : name_(std::move(name)), key_(loop_plan_key(*plan)), plan_(std::move(plan)) {
  reports_errors_ = loop_plan_reports_errors(*plan_);
  has_gemm_ = loop_plan_has_gemm(*plan_);
}

CudaFunction::~CudaFunction() {
  for (auto& [device, l] : loaded_) {
    try {
      if (!l.module) continue;
      ContextScope scope(device);
      driver().module_unload(l.module);
    } catch (const ir::Error&) {
      // The driver is going away with the process; the module goes with it.
    }
  }
}

std::shared_ptr<const CudaFunction> CudaFunction::compile(const ir::Function& fn) {
  if (fn.is_prototype()) {
    std::vector<std::shared_ptr<const CudaFunction>> vs;
    for (const ir::FunctionPtr& v : fn.variants()) vs.push_back(compile(*v));
    return std::make_shared<const CudaFunction>(own(fn), std::move(vs));
  }
  require_available();
  if (fn.body() && loops::contains_loop(fn.body()))
    return std::make_shared<const CudaFunction>(build_cuda_loop_plan(fn), fn.name());
  return std::make_shared<const CudaFunction>(generate_cuda(fn), fn.name());
}


const CudaFunction& CudaFunction::variant(const ir::DimBindings& bindings) const {
  const ir::Function& v = sema::select_variant(*base_, bindings);
  for (size_t i = 0; i < variants_.size(); ++i)
    if (base_->variants()[i].get() == &v) return *variants_[i];
  TF_CHECK(false, "select_variant returned one of the prototype's variants");
}

void CudaFunction::prepare(int device) const {
  ContextScope scope(device);
  for (const auto& v : variants_) v->prepare(device);
  if (plan_) prepare_loop_plan(*plan_, device);
  if (variants_.empty() && !plan_) loaded(device);
}

const CudaFunction::Loaded& CudaFunction::loaded(int device) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = loaded_.find(device);
  if (it != loaded_.end()) return it->second;
  const DriverApi& d = driver();
  zero_words(device);  // allocated with the code, not by a call
  Loaded l;
  l.grid = std::max(1, multiprocessor_count(device) * kBlocksPerMultiprocessor);
  l.kernels.assign(program_.kernels.size(), nullptr);
  const bool any_kernel = std::any_of(program_.kernels.begin(), program_.kernels.end(),
                                      [](const CudaKernel& k) { return !k.gemm; });
  if (!any_kernel) return loaded_.emplace(device, std::move(l)).first->second;  // cuBLAS steps only
  const int arch = compute_capability(device);
  const std::string image = module_image(program_, name_, arch);
  if (const CUresult r = d.module_load_data(&l.module, image.c_str()); r != 0) {
    // The usual cause: a CUBIN from an NVRTC newer than the driver.
    const DriverStatus& ds = driver_status();
    const NvrtcStatus& nv = nvrtc_status();
    const std::string what =
        "cuModuleLoadData (" + name_ + ", sm_" + std::to_string(arch) + ", NVRTC " + std::to_string(nv.major) + "." +
        std::to_string(nv.minor) + ", driver " + std::to_string(ds.version / 1000) + "." +
        std::to_string(ds.version % 1000 / 10) +
        "; a driver loads code from an NVRTC of its own CUDA version or older: TF_NVRTC_LIBRARY picks another)";
    check(r, what.c_str());
  }
  for (size_t k = 0; k < program_.kernels.size(); ++k)
    if (!program_.kernels[k].gemm)
      check(d.module_function(&l.kernels[k], l.module, program_.kernels[k].name.c_str()), "cuModuleGetFunction");
  return loaded_.emplace(device, std::move(l)).first->second;
}

uint64_t CudaFunction::workspace_bytes(const ir::DimBindings& bindings) const {
  if (!variants_.empty()) return variant(bindings).workspace_bytes(bindings);
  if (plan_) return loop_plan_workspace_bytes(*plan_, bindings);
  return layout(program_, has_gemm_, bindings).bytes;
}

void CudaFunction::run(const std::vector<runtime::NDArray>& inputs, const std::vector<runtime::NDArray>& outputs,
                       const ir::DimBindings& bindings, int device, CUstream stream, void* workspace,
                       uint64_t workspace_bytes) const {
  if (!variants_.empty())
    return variant(bindings).run(inputs, outputs, bindings, device, stream, workspace, workspace_bytes);
  const bool reports = reports_errors_;
  ContextScope scope(device);
  if (reports && stream_is_capturing(stream))
    ir::fail(ir::ErrorKind::kUnsupported,
             name_ + " can fail at run time (a check, an integer division, a mean over an empty axis), and a "
                     "call reads its error back from the device, which a CUDA graph cannot capture");
  if (plan_) return run_cuda_loop_plan(*plan_, inputs, outputs, bindings, device, stream, workspace, workspace_bytes);
  const Loaded& l = loaded(device);
  const DriverApi& d = driver();
  const Layout lay = layout(program_, has_gemm_, bindings);
  Workspace ws(workspace, workspace_bytes, lay.bytes, stream);
  // A program that cannot report an error never writes its error words, so
  // it reads the device's shared zeros: no memset per call.
  ErrorWords* words = reports ? reinterpret_cast<ErrorWords*>(ws.ptr(0)) : zero_words(device);
  if (reports) check(d.memset_d8_async(ws.at(0), 0, sizeof(ErrorWords), stream), "cuMemsetD8Async");

  // The slots' arrays in order: inputs, outputs (or their staging copies),
  // temporaries.
  std::vector<runtime::NDArray> arrays(inputs.begin(), inputs.end());
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!program_.may_fail) {
      arrays.push_back(outputs[i]);
      continue;
    }
    const runtime::NDArray& o = outputs[i];
    const uint64_t at = lay.staging[i].second;
    arrays.push_back(runtime::NDArray::borrow(o.dtype(), ws.ptr(at), o.shape(), o.strides()));
    // An in-place output is written where it changes: its staging copy
    // starts as the input.
    if (i < program_.aliased.size() && program_.aliased[i])
      check(d.memcpy_dtod_async(ws.at(at), address(o), array_bytes(o), stream), "cuMemcpyDtoDAsync");
  }
  for (size_t t = 0; t < lay.temps.size(); ++t)
    arrays.push_back(runtime::NDArray::borrow(lay.temps[t].first->type->dtype(), ws.ptr(lay.temps[t].second),
                                              lay.temp_shapes[t], runtime::contiguous_strides(lay.temp_shapes[t])));
  std::vector<int64_t> scalars;
  for (const RuntimeScalar& sc : program_.scalars) scalars.push_back(resolve_scalar(sc, bindings));
  std::vector<int64_t> args = pack_kernel_args(arrays, scalars, &words->err, &words->pre, words->info);
  void* params[] = {args.data()};
  ErrorWords host{};
  // The error words on the host (a synchronization); a failed check raises.
  const auto read_errors = [&] {
    check(d.memcpy_dtoh_async(&host, ws.at(0), sizeof host, stream), "cuMemcpyDtoHAsync");
    check(d.stream_synchronize(stream), "cuStreamSynchronize");
    if (host.pre != 0) raise_kernel_error(host.pre, host.info);
  };
  bool unchecked = has_checks_;  // the checks' outcome is still to be learned before a host step
  for (size_t k = 0; k < l.kernels.size(); ++k) {
    const CudaKernel& step = program_.kernels[k];
    if (step.gemm) {
      // A kernel returns at once after a failed check; a host step must
      // learn it first, so that nothing is written.
      if (unchecked) {
        read_errors();
        unchecked = false;
      }
      gemm(arrays.at(step.gemm->a), arrays.at(step.gemm->b), arrays.at(step.gemm->out), device, stream,
           ws.ptr(lay.cublas), kCublasWorkspaceBytes);
      continue;
    }
    const unsigned grid = launch_grid(step, args, l.grid);
    check(d.launch(l.kernels[k], grid, 1, 1, kBlockThreads, 1, 1, 0, stream, params, nullptr), "cuLaunchKernel");
  }
  if (!reports) return;
  read_errors();
  if (host.err != 0) raise_kernel_error(host.err, host.info);
  if (!program_.may_fail) return;
  for (size_t i = 0; i < outputs.size(); ++i)
    check(d.memcpy_dtod_async(address(outputs[i]), ws.at(lay.staging[i].second), array_bytes(outputs[i]), stream),
          "cuMemcpyDtoDAsync");
}

}  // namespace tf::compiler::cuda
