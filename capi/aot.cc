// tf_module_export_library / tf_module_load_library over
// core/compiler's export_library / open_library.
#include "capi/aot.h"

#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "capi/checks.h"
#include "capi/error.h"
#include "capi/handles.h"
#include "core/frontend/parser.h"
#include "core/frontend/printer.h"

namespace tf::capi {
namespace {

// Module identity -> (the module, weakly: an address may be reused after the
// module dies; its library). Entries of dead modules are pruned on insert.
struct Entry {
  std::weak_ptr<const ir::Module> module;
  std::shared_ptr<const compiler::Library> lib;
};
std::mutex g_mu;
std::map<const ir::Module*, Entry> g_loaded;

void remember(const ir::ModulePtr& m, std::shared_ptr<const compiler::Library> lib) {
  std::lock_guard<std::mutex> lock(g_mu);
  for (auto it = g_loaded.begin(); it != g_loaded.end();)
    it = it->second.module.expired() ? g_loaded.erase(it) : std::next(it);
  g_loaded[m.get()] = Entry{m, std::move(lib)};
}

}  // namespace

std::shared_ptr<const compiler::Library> aot_library_of(const ir::Module& m) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = g_loaded.find(&m);
  if (it == g_loaded.end()) return nullptr;
  auto alive = it->second.module.lock();
  return alive.get() == &m ? it->second.lib : nullptr;
}

}  // namespace tf::capi

using tf::capi::require_non_null;

extern "C" {

tf_status tf_module_export_library(tf_module m, const char* path) {
  TF_C_API_BEGIN
  tf::ir::ModulePtr mod = tf::capi::module_of(m);
  require_non_null(path, "tf_module_export_library", "path");
  tf::compiler::export_library(mod->functions(), tf::frontend::print_module(*mod), path);
  TF_C_API_END
}

tf_status tf_module_load_library(const char* path, tf_module* out) {
  TF_C_API_BEGIN
  require_non_null(path, "tf_module_load_library", "path");
  require_non_null(out, "tf_module_load_library", "out");
  std::string text;
  auto lib = tf::compiler::open_library(path, &text);
  tf::ir::ModulePtr mod = tf::frontend::parse_module(text, path);
  tf::capi::remember(mod, std::move(lib));
  *out = tf::capi::new_module_handle(std::move(mod));
  TF_C_API_END
}

}  // extern "C"
