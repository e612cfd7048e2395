#include "core/compiler/toolchain.h"

#include <dirent.h>
#include <dlfcn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <mutex>
#include <sstream>
#include <thread>

#include "core/ir/error.h"

namespace tf::compiler {
namespace {

std::atomic<int64_t> g_invocations{0};

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

void make_dirs(const std::string& path) {
  for (size_t i = 1; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') {
      std::string prefix = path.substr(0, i);
      if (mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST)
        ir::fail(ir::ErrorKind::kRuntime, "cannot create directory '" + prefix + "'");
    }
  }
}

// A name no other process or thread uses at the same moment.
std::string unique_suffix() {
  static std::atomic<uint64_t> counter{0};
  std::ostringstream s;
  s << ".tmp." << getpid() << "." << std::hash<std::thread::id>()(std::this_thread::get_id()) % 100000 << "."
    << counter++;
  return s.str();
}

void write_atomically(const std::string& path, const std::string& text) {
  std::string tmp = path + unique_suffix();
  {
    std::ofstream f(tmp, std::ios::binary);
    f << text;
    if (!f) ir::fail(ir::ErrorKind::kRuntime, "cannot write '" + tmp + "'");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    ir::fail(ir::ErrorKind::kRuntime, "cannot rename '" + tmp + "' to '" + path + "'");
  }
}

std::string read_head(const std::string& path, size_t max) {
  std::ifstream f(path);
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return s.size() > max ? s.substr(0, max) + "..." : s;
}

// The process's umask, read without changing it (umask(2) can only set
// it, which would race with other threads creating files); 022 where
// /proc does not say.
unsigned process_umask() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("Umask:", 0) == 0) return static_cast<unsigned>(std::strtoul(line.c_str() + 6, nullptr, 8));
  return 022;
}

bool exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace

// -ffp-contract=off: every product is rounded before it is added, as the
// evaluator computes (GCC's C++ default fuses a * b - c into one FMA, so
// x - max(x) came out as the tiny rounding error of x instead of 0, and a
// floor of it as -1). The prelude writes its FMAs explicitly.
// -mprefer-vector-width=512: GCC vectorizes with 256-bit registers on
// AVX-512 CPUs unless told otherwise (a choice made for CPUs that lower
// their clock on 512-bit instructions); a row's double-accumulated sum or
// its exp pass then takes twice the instructions. Where the CPU has no
// AVX-512 the flag changes nothing.
Toolchain toolchain() {
#if defined(__x86_64__) && defined(__GLIBC__)
  const char* libs = "-lmvec";
#else
  const char* libs = "";
#endif
  return Toolchain{env_or("TF_CC", "c++"),
                   "-std=c++17 -O3 -march=native -mprefer-vector-width=512 -fopenmp -fno-math-errno "
                   "-ffp-contract=off -fPIC -w",
                   "x86_64-native", libs};
}

std::string cache_dir() {
  std::string dir = env_or("TF_CACHE_DIR", env_or("HOME", "/tmp") + "/.cache/tilefoundry");
  make_dirs(dir);
  return dir;
}

namespace {

std::string fnv_hex(std::initializer_list<const std::string*> parts) {
  uint64_t h = 1469598103934665603ull;
  for (const std::string* part : parts) {
    for (unsigned char c : *part) h = (h ^ c) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace

std::string cache_key(const std::string& source) {
  const Toolchain t = toolchain();
  return fnv_hex({&source, &t.cc, &t.flags, &t.target, &t.libs});
}

std::string source_hash(const std::string& source) { return fnv_hex({&source}); }

namespace {

constexpr int kNotMoved = -2;  // run_compiler's code when the output could not be renamed

// Runs `cc flags -o out in libs` (out written under a temporary name, then
// renamed); "" on success, else the start of the diagnostics. Exit code in
// *code (kNotMoved: compiled, but not renamed into place).
std::string run_compiler(const std::string& cc, const std::string& flags, const std::string& in,
                         const std::string& out, int* code, const std::string& libs = "") {
  const std::string suffix = unique_suffix(), obj = out + suffix, log = out + suffix + ".log";
  const std::string cmd =
      cc + " " + flags + " -o " + quote(obj) + " " + quote(in) + " " + libs + " >" + quote(log) + " 2>&1";
  const int rc = std::system(cmd.c_str());
  *code = rc == -1 ? -1 : (WIFEXITED(rc) ? WEXITSTATUS(rc) : 128);
  std::string diag = *code == 0 ? "" : read_head(log, 2000);
  std::remove(log.c_str());
  if (*code == 0 && std::rename(obj.c_str(), out.c_str()) != 0) {
    *code = kNotMoved;
    diag = "cannot move the compiled output to '" + out + "'";
  }
  if (*code != 0) std::remove(obj.c_str());
  return diag;
}

std::string header_name(const std::string& header) { return "pch-" + cache_key(header) + ".h"; }

// `path` made absolute ("" when it does not exist). A relative path would
// not do in the #include that names the precompiled header: GCC resolves a
// quoted include against the including file's directory (the kernel
// cache), not the process's, so every compile failed and every kernel ran
// on the evaluator (a library opened as build/lib/libtilefoundry.so).
std::string absolute(const std::string& path) {
  char* real = path.empty() ? nullptr : realpath(path.c_str(), nullptr);
  if (!real) return "";
  std::string out = real;
  std::free(real);
  return out;
}

// The directory of the shared object (or executable) this code is linked
// into: libtilefoundry.so's, where the build puts the precompiled prelude.
std::string own_directory() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&own_directory), &info) == 0 || !info.dli_fname) return "";
  std::string path = info.dli_fname;
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

// The precompiled form of `header` shipped beside the library (see
// write_precompiled_header) or in TF_PCH_DIR, or "" when there is none for
// this header and toolchain: the caller compiles the text.
std::string installed_header(const std::string& header) {
  static const std::string beside = absolute(own_directory() + "/" + kPrecompiledDir);
  const std::string env = env_or("TF_PCH_DIR", "");
  const std::string dir = env.empty() ? beside : absolute(env);
  const std::string path = dir + "/" + header_name(header);
  if (dir.empty() || path.find_first_of("\"\\\n") != std::string::npos) return "";  // not spellable in #include
  return exists(path) && exists(path + ".gch") ? path : "";
}

}  // namespace

void compile_shared(const std::string& source, const std::string& out_path, size_t prefix_bytes) {
  const Toolchain t = toolchain();
  std::string text = source;
  if (prefix_bytes > 0 && prefix_bytes <= source.size()) {
    const std::string header = installed_header(source.substr(0, prefix_bytes));
    if (!header.empty()) text = "#include \"" + header + "\"\n" + source.substr(prefix_bytes);
  }
  const std::string src = out_path + unique_suffix() + ".cc";
  write_atomically(src, text);
  ++g_invocations;
  int code = 0;
  const std::string diag = run_compiler(t.cc, t.flags + " -shared", src, out_path, &code, t.libs);
  std::remove(src.c_str());
  if (code == kNotMoved) ir::fail(ir::ErrorKind::kRuntime, diag);
  if (code == 127)
    ir::fail(ir::ErrorKind::kUnsupported, "no C++ compiler: '" + t.cc + "' could not be run (set TF_CC)");
  if (code != 0)
    ir::fail(ir::ErrorKind::kUnsupported,
             "native compile with '" + t.cc + "' failed (exit " + std::to_string(code) + "): " + diag);
}

std::string cached_shared(const std::string& source, const std::string& key, size_t prefix_bytes) {
  std::string path = cache_dir() + "/" + key + ".so";
  if (!exists(path)) compile_shared(source, path, prefix_bytes);
  return path;
}

void export_shared(const std::string& source, const std::string& path, size_t prefix_bytes) {
  std::string cached, bytes;
  try {
    cached = cache_dir() + "/" + cache_key(source) + ".so";
  } catch (const ir::Error&) {  // no cache directory to be had: nothing to reuse or keep
  }
  if (!cached.empty() && read_file(cached, &bytes)) {
    write_atomically(path, bytes);
    // The mode the linker gives its output: executable, less the umask.
    ::chmod(path.c_str(), static_cast<mode_t>(0777 & ~process_umask()));
    return;
  }
  compile_shared(source, path, prefix_bytes);
  if (cached.empty() || !read_file(path, &bytes)) return;
  try {
    write_atomically(cached, bytes);
  } catch (const ir::Error&) {  // the export is written; only its reuse is lost
  }
}

void write_precompiled_header(const std::string& header, const std::string& dir) {
  make_dirs(dir);
  // Only the current prelude's: an older build's files are dead weight.
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d))
      if (std::string(e->d_name).rfind("pch-", 0) == 0) std::remove((dir + "/" + e->d_name).c_str());
    closedir(d);
  }
  const Toolchain t = toolchain();
  const std::string path = dir + "/" + header_name(header);
  write_atomically(path, header);
  int code = 0;
  const std::string diag = run_compiler(t.cc, t.flags + " -x c++-header", path, path + ".gch", &code);
  if (code != 0)
    ir::fail(ir::ErrorKind::kUnsupported, "precompiling the kernel prelude with '" + t.cc + "' failed (exit " +
                                              std::to_string(code) + "): " + diag);
}

void dump_source(const std::string& stem, const std::string& source, const std::string& tir) {
  dump_text(stem + ".cc", source);
  if (!tir.empty()) dump_text(stem + ".tir", tir);
}

void dump_text(const std::string& file_name, const std::string& text) {
  const char* dir = std::getenv("TF_DUMP_DIR");
  if (!dir || !*dir) return;
  make_dirs(dir);
  write_atomically(std::string(dir) + "/" + file_name, text);
}

void write_file_atomically(const std::string& path, const std::string& bytes) { write_atomically(path, bytes); }

bool read_file(const std::string& path, std::string* bytes) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  bytes->assign((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return static_cast<bool>(f) || f.eof();
}

int64_t invocation_count() { return g_invocations.load(); }

}  // namespace tf::compiler
