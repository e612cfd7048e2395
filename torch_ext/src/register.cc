// tf_torch_register: defines tilefoundry::<op> and tilefoundry::<op>.out at
// run time (an op with in-place outputs mutates its inputs and has no .out:
// kernel_schema.h); tf_torch_register_cuda adds their CUDA kernels.
//
// Each registration owns one torch::Library fragment (namespace
// "tilefoundry") holding both schemas and their CPU impls. The fragments live
// in a registry that is deliberately never destroyed: the header promises the
// registration lasts for the life of the process, and tearing fragments down
// from a static destructor would race the Dispatcher's and
// libtilefoundry.so's own teardown.
#include <memory>
#include <mutex>
#include <type_traits>
#include <string>
#include <unordered_map>
#include <vector>

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/autograd/autograd_not_implemented_fallback.h>
#include <torch/library.h>
#include <tilefoundry/tilefoundry_torch.h>

#include "boxed_kernel.h"
#include "kernel_schema.h"
#include "no_derivative.h"

namespace tf::torch_ext {
namespace {

thread_local std::string g_last_error;

// torch >= 2.x knows at::Tag::out, which tells torch.compile that an op's
// mutable arguments are write-only output buffers (so it functionalizes the
// op); older torch has no such tag and needs none.
template <typename T, typename = void>
struct HasOutTag : std::false_type {};
template <typename T>
struct HasOutTag<T, std::void_t<decltype(T::out)>> : std::true_type {};

template <typename T = at::Tag>
std::vector<T> out_tags() {
  if constexpr (HasOutTag<T>::value) {
    return {T::out};
  } else {
    return {};
  }
}

// One op this library registered: its fragment, the schemas it defined and
// the two kernels behind them (owned by the fragment's impls).
struct Registration {
  std::unique_ptr<torch::Library> lib;
  KernelSchemas schemas;
  BoxedKernel* functional = nullptr;
  BoxedKernel* out = nullptr;
  BoxedKernel* cuda_functional = nullptr;  // the CUDA dispatch key's, once added
  BoxedKernel* cuda_out = nullptr;
};

struct Registry {
  std::mutex mu;
  std::unordered_map<std::string, Registration> ops;
};

Registry& registry() {
  static Registry* r = new Registry();  // leaked on purpose, see the file comment
  return *r;
}

tf_status fail(tf_status s, std::string msg) {
  g_last_error = std::move(msg);
  return s;
}

bool torch_knows(const std::string& op_name) {
  return c10::Dispatcher::singleton()
      .findSchema(c10::OperatorName("tilefoundry::" + op_name, ""))
      .has_value();
}

// Points the op's two kernels at k, when k's schemas are the op's.
tf_status replace_locked(tf_kernel k, const std::string& op_name, Registration& reg,
                         const KernelSchemas& schemas) {
  if (schemas.functional != reg.schemas.functional || schemas.out != reg.schemas.out) {
    return fail(TF_ERR_INVALID_ARGUMENT, "tf_torch_register_replace: tilefoundry::" + op_name + " is " +
                                             reg.schemas.functional + ", and the new kernel's schema is " +
                                             schemas.functional + "; a schema cannot change, pick another op_name");
  }
  reg.functional->replace(k);
  if (reg.out) reg.out->replace(k);
  return TF_OK;
}

tf_status register_locked(tf_kernel k, const std::string& op_name, bool replace) {
  if (!is_identifier(op_name)) {
    return fail(TF_ERR_INVALID_ARGUMENT,
                "tf_torch_register: op name '" + op_name + "' is not an identifier");
  }
  Registry& r = registry();
  auto known = r.ops.find(op_name);
  if ((known != r.ops.end() && !replace) || (known == r.ops.end() && torch_knows(op_name))) {
    return fail(TF_ERR_INVALID_ARGUMENT, "tf_torch_register: tilefoundry::" + op_name +
                                             " is already registered; pick another op_name" +
                                             (known == r.ops.end() ? "" : " or replace it"));
  }
  KernelSchemas schemas;
  std::string why;
  if (tf_status s = derive_schemas(k, op_name, &schemas, &why); s != TF_OK) {
    return fail(s, "tf_torch_register: deriving the schema of tilefoundry::" + op_name +
                       " failed: " + (why.empty() ? tf_last_error() : why));
  }
  if (known != r.ops.end()) return replace_locked(k, op_name, known->second, schemas);
  auto lib = std::make_unique<torch::Library>(torch::Library::FRAGMENT, "tilefoundry",
                                              c10::nullopt, __FILE__, __LINE__);
  const std::string qualified = "tilefoundry::" + op_name;
  lib->def(schemas.functional.c_str());
  auto functional = std::make_unique<BoxedKernel>(k, qualified);
  Registration reg{nullptr, schemas, functional.get(), nullptr, nullptr, nullptr};
  lib->impl(op_name.c_str(),
            torch::dispatch(c10::DispatchKey::CPU, torch::CppFunction::makeFromBoxedFunctor(std::move(functional))));
  // No backward yet: autograd records the op, so a backward through it
  // fails and names it, instead of the graph being dropped silently (an
  // input that requires grad gave an output that did not). An op that
  // mutates an input also bumps its version counter (ADInplaceOrView).
  // An overload that writes no input takes no_derivative.h's kernel (fast
  // when no input requires grad); one that does keeps torch's generic
  // fallback, which also checks and rebases the written tensors' history.
  auto not_differentiable = [&](const std::string& name, bool writes, bool mutates) {
    lib->impl(name.c_str(),
              torch::dispatch(c10::DispatchKey::Autograd,
                              writes ? torch::autograd::autogradNotImplementedFallback()
                                     : torch::CppFunction::makeFromBoxedFunction<&no_derivative>()));
    if (mutates)
      lib->impl(name.c_str(), torch::dispatch(c10::DispatchKey::ADInplaceOrView,
                                              torch::autograd::autogradNotImplementedInplaceOrViewFallback()));
  };
  // An op with in-place outputs returns none of its mutated inputs, so
  // torch's ADInplaceOrView fallback would bump no version: its CPU kernel
  // bumps them (boxed_kernel.h).
  const bool functional_writes = schemas.out.empty();  // only an op writing inputs has no .out
  not_differentiable(op_name, functional_writes, false);
  if (!schemas.out.empty()) {
    const std::vector<at::Tag> tags = out_tags();
    lib->def(schemas.out.c_str(), tags);
    auto out = std::make_unique<BoxedKernel>(k, qualified + ".out", BoxedKernel::Mode::kOut, schemas.out_names);
    reg.out = out.get();
    lib->impl((op_name + ".out").c_str(),
              torch::dispatch(c10::DispatchKey::CPU, torch::CppFunction::makeFromBoxedFunctor(std::move(out))));
    not_differentiable(op_name + ".out", true, true);
  }
  reg.lib = std::move(lib);
  r.ops.emplace(op_name, std::move(reg));
  return TF_OK;
}

// The op's CUDA kernels: added beside the CPU ones, or pointed at k.
tf_status register_cuda_locked(tf_kernel k, const std::string& op_name) {
  const char* fn = "tf_torch_register_cuda";
  Registry& r = registry();
  auto known = r.ops.find(op_name);
  if (known == r.ops.end())
    return fail(TF_ERR_INVALID_ARGUMENT, std::string(fn) + ": tilefoundry::" + op_name +
                                             " was not registered by tf_torch_register; register its CPU kernel first");
  int32_t backend = -1;
  if (tf_status s = tf_kernel_backend(k, &backend); s != TF_OK)
    return fail(s, std::string(fn) + ": " + tf_last_error());
  if (backend != TF_BACKEND_CUDA)
    return fail(TF_ERR_INVALID_ARGUMENT, std::string(fn) + ": the kernel for tilefoundry::" + op_name +
                                             " was not compiled with TF_BACKEND_CUDA");
  Registration& reg = known->second;
  KernelSchemas schemas;
  std::string why;
  if (tf_status s = derive_schemas(k, op_name, &schemas, &why); s != TF_OK)
    return fail(s, std::string(fn) + ": " + (why.empty() ? tf_last_error() : why));
  if (schemas.functional != reg.schemas.functional || schemas.out != reg.schemas.out)
    return fail(TF_ERR_INVALID_ARGUMENT, std::string(fn) + ": tilefoundry::" + op_name + " is " +
                                             reg.schemas.functional + ", and the CUDA kernel's schema is " +
                                             schemas.functional);
  if (reg.cuda_functional) {
    reg.cuda_functional->replace(k);
    if (reg.cuda_out) reg.cuda_out->replace(k);
    return TF_OK;
  }
  const std::string qualified = "tilefoundry::" + op_name;
  auto functional = std::make_unique<BoxedKernel>(k, qualified, BoxedKernel::Mode::kFunctional,
                                                  std::vector<std::string>{}, BoxedKernel::Device::kCuda);
  reg.cuda_functional = functional.get();
  reg.lib->impl(op_name.c_str(), torch::dispatch(c10::DispatchKey::CUDA,
                                                 torch::CppFunction::makeFromBoxedFunctor(std::move(functional))));
  if (!schemas.out.empty()) {
    auto out = std::make_unique<BoxedKernel>(k, qualified + ".out", BoxedKernel::Mode::kOut, schemas.out_names,
                                             BoxedKernel::Device::kCuda);
    reg.cuda_out = out.get();
    reg.lib->impl((op_name + ".out").c_str(),
                  torch::dispatch(c10::DispatchKey::CUDA, torch::CppFunction::makeFromBoxedFunctor(std::move(out))));
  }
  return TF_OK;
}

// Every entry point: no exception crosses the C boundary.
tf_status register_entry(tf_kernel k, const char* op_name, bool replace, bool cuda = false) {
  g_last_error.clear();
  try {
    if (!k) return fail(TF_ERR_INVALID_ARGUMENT, "tf_torch_register: kernel is NULL");
    std::string name;
    if (op_name) {
      name = op_name;
    } else {
      const char* fn = nullptr;
      if (tf_status s = tf_kernel_name(k, &fn); s != TF_OK) {
        return fail(s, std::string("tf_torch_register: ") + tf_last_error());
      }
      name = fn;
    }
    std::lock_guard<std::mutex> lock(registry().mu);
    return cuda ? register_cuda_locked(k, name) : register_locked(k, name, replace);
  } catch (const c10::Error& e) {
    return fail(TF_ERR_INTERNAL,
                std::string("tf_torch_register: torch refused the registration: ") +
                    e.what_without_backtrace());
  } catch (const std::bad_alloc&) {
    return fail(TF_ERR_OUT_OF_MEMORY, "tf_torch_register: out of memory");
  } catch (const std::exception& e) {
    return fail(TF_ERR_INTERNAL, std::string("tf_torch_register: ") + e.what());
  } catch (...) {
    return fail(TF_ERR_INTERNAL, "tf_torch_register: unknown exception");
  }
}

}  // namespace
}  // namespace tf::torch_ext

extern "C" {

TF_API tf_status tf_torch_register(tf_kernel k, const char* op_name) {
  return tf::torch_ext::register_entry(k, op_name, /*replace=*/false);
}

TF_API tf_status tf_torch_register_replace(tf_kernel k, const char* op_name) {
  return tf::torch_ext::register_entry(k, op_name, /*replace=*/true);
}

TF_API tf_status tf_torch_register_cuda(tf_kernel k, const char* op_name) {
  return tf::torch_ext::register_entry(k, op_name, /*replace=*/true, /*cuda=*/true);
}

TF_API const char* tf_torch_last_error(void) { return tf::torch_ext::g_last_error.c_str(); }

}  // extern "C"
