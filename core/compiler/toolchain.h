// Toolchain: runs the system C++ compiler on generated source, with a
// content-addressed on-disk cache. Safe across processes: every file is
// written under a unique temporary name and renamed into place, so two
// processes building the same key at once both end with a complete file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace tf::compiler {

struct Toolchain {
  std::string cc;     // TF_CC or "c++"
  // The fixed code-generation flags, shared by kernels (which add -shared)
  // and the precompiled prelude (-x c++-header): a .gch fits only the
  // flags it was built with.
  std::string flags;
  std::string target; // what the code is tuned for (-march=native: this host)
  // Linked into kernels after their source: glibc's vector math (libmvec)
  // on x86-64 glibc, whose 16-lane sin / log / tanh / erf ... the prelude
  // declares for GCC's vectorizer; "" elsewhere.
  std::string libs;
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
// carries the start of its diagnostics. When the first `prefix_bytes` of
// source (the kernel prelude, the same in every kernel) have a precompiled
// header for this toolchain beside the library (write_precompiled_header),
// the compile includes it instead of the text: the same object code,
// without parsing the prelude and its system headers again (0.55 s of a
// 1.3 s cold compile here). GCC reads the header's text when its .gch
// does not fit the flags or the compiler, so only the time depends on it.
void compile_shared(const std::string& source, const std::string& out_path, size_t prefix_bytes = 0);

// Where the build puts the precompiled prelude, relative to the directory
// of libtilefoundry.so (installed with it). TF_PCH_DIR names another.
inline constexpr const char* kPrecompiledDir = "tilefoundry-pch";

// Writes `header` and its precompiled form (pch-<key>.h and .h.gch, key =
// cache_key(header): the toolchain's compiler and flags are part of it)
// into `dir`, removing other pch-* files there. Throws Error(kUnsupported)
// when the compiler fails. Run at build time (tools/prelude_pch.cc).
void write_precompiled_header(const std::string& header, const std::string& dir);

// Path of the cached object for source (key.so), compiled if missing.
std::string cached_shared(const std::string& source, const std::string& key, size_t prefix_bytes = 0);

// Writes the library compiled from `source` to `path` (an AOT export),
// through the same cache as cached_shared: a source this toolchain compiled
// before on this machine (the same module exported again, by any process)
// is copied from the cache instead of compiled again. Without a usable
// cache directory it compiles straight to `path`. Throws as compile_shared.
void export_shared(const std::string& source, const std::string& path, size_t prefix_bytes = 0);

// Writes source to TF_DUMP_DIR/<stem>.cc when TF_DUMP_DIR is set, and the
// TIR it was printed from (when given) to TF_DUMP_DIR/<stem>.tir.
void dump_source(const std::string& stem, const std::string& source, const std::string& tir = "");

// Writes TF_DUMP_DIR/<file_name> when TF_DUMP_DIR is set.
void dump_text(const std::string& file_name, const std::string& text);

// Writes `bytes` to path under a unique temporary name, then renames it into
// place (what every cache file is written with).
void write_file_atomically(const std::string& path, const std::string& bytes);
// The whole file at path; false when it cannot be read.
bool read_file(const std::string& path, std::string* bytes);

int64_t invocation_count();

}  // namespace tf::compiler
