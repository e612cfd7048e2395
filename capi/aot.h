// AOT kernel libraries in the C ABI (tf_module_export_library /
// tf_module_load_library). A module loaded from a library remembers it here,
// so that Kernel::compile binds the library's code for a native request
// instead of running a compiler.
#pragma once

#include <memory>

#include "core/compiler/compiler.h"
#include "core/ir/module.h"

namespace tf::capi {

// The library module m was loaded from; null for any other module.
std::shared_ptr<const compiler::Library> aot_library_of(const ir::Module& m);

}  // namespace tf::capi
