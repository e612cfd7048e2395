// Toolchain: runs the system C++ compiler on generated source, with a
// content-addressed on-disk cache. Safe across processes: every file is
// written under a unique temporary name and renamed into place, so two
// processes building the same key at once both end with a complete file.
#pragma once

#include <cstdint>
#include <string>

namespace tf::compiler {

struct Toolchain {
  std::string cc;     // TF_CC or "c++"
  std::string flags;  // fixed optimization + shared-object flags
  std::string target; // what the code is tuned for (-march=native: this host)
};

// Read from the environment on every call (TF_CC may change between compiles).
Toolchain toolchain();

// The cache directory (TF_CACHE_DIR or ~/.cache/tilefoundry), created.
std::string cache_dir();

// Hex FNV-1a 64 of source + compiler + flags + target: the cache key.
std::string cache_key(const std::string& source);

// Hex FNV-1a 64 of source alone: identifies generated code independently of
// the toolchain (an AOT library is bound in processes without TF_CC).
std::string source_hash(const std::string& source);

// Compiles `source` into a shared object at `out_path` (atomically). Throws
// Error(kUnsupported) when the compiler cannot be run or fails; the message
// carries the start of its diagnostics.
void compile_shared(const std::string& source, const std::string& out_path);

// Path of the cached object for source (key.so), compiled if missing.
std::string cached_shared(const std::string& source, const std::string& key);

// Writes source to TF_DUMP_DIR/<stem>.cc when TF_DUMP_DIR is set, and the
// TIR it was printed from (when given) to TF_DUMP_DIR/<stem>.tir.
void dump_source(const std::string& stem, const std::string& source, const std::string& tir = "");

int64_t invocation_count();

}  // namespace tf::compiler
