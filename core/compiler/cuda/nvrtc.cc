#include "core/compiler/cuda/nvrtc.h"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <regex>

#include "core/compiler/cuda/driver.h"
#include "core/compiler/cuda/entry_points.h"
#include "core/ir/error.h"

namespace tf::compiler::cuda {
namespace {

NvrtcApi g_api{};
NvrtcStatus g_status;
std::atomic<int64_t> g_compiles{0};

std::vector<std::string> candidates() {
  std::vector<std::string> out;
  if (const char* env = std::getenv("TF_NVRTC_LIBRARY"); env && *env) return {env};
  for (const char* soname : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so"})
    out.push_back(soname);
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* root = std::getenv(var); root && *root) out.push_back(std::string(root) + "/lib64/libnvrtc.so");
  out.push_back("/usr/local/cuda/lib64/libnvrtc.so");
  return out;
}

bool bind_all(void* lib, NvrtcApi* api, std::string* why) {
#define TF_BIND(member, symbol) &&bind_symbol(lib, #symbol, &api->member, why)
  return true TF_NVRTC_ENTRY_POINTS(TF_BIND);
#undef TF_BIND
}

// A candidate's major version, its entry points bound into *api.
int probe(void* lib, NvrtcApi* api, int* minor, std::string* why) {
  int major = 0;
  if (!bind_all(lib, api, why)) return -1;
  if (api->version(&major, minor) != kNvrtcSuccess) {
    *why = "nvrtcVersion failed";
    return -1;
  }
  return major;
}

void load() {
  std::string tried;
  const OpenedLibrary l = open_for_driver(
      candidates(),
      [](void* lib, std::string* why) {
        NvrtcApi api;
        int minor = 0;
        return probe(lib, &api, &minor, why);
      },
      &tried);
  if (l.lib) {  // bound again into the table calls use (it answered once already)
    std::string why;
    g_status.major = probe(l.lib, &g_api, &g_status.minor, &why);
    g_status.available = true;
    g_status.library = l.path;
    return;
  }
  g_status.why = "NVRTC (CUDA's run-time compiler) was not found; tried:" + tried +
                 "\nInstall the CUDA toolkit or set TF_NVRTC_LIBRARY to libnvrtc.so's path.";
}

std::string program_log(nvrtcProgram p) {
  size_t n = 0;
  if (g_api.log_size(p, &n) != kNvrtcSuccess || n == 0) return "";
  std::string log(n, '\0');
  if (g_api.log(p, log.data()) != kNvrtcSuccess) return "";
  while (!log.empty() && log.back() == '\0') log.pop_back();
  return log;
}

std::string program_bytes(nvrtcProgram p, nvrtcResult (*size)(nvrtcProgram, size_t*),
                          nvrtcResult (*get)(nvrtcProgram, char*)) {
  size_t n = 0;
  if (size(p, &n) != kNvrtcSuccess || n == 0) return "";
  std::string out(n, '\0');
  if (get(p, out.data()) != kNvrtcSuccess) return "";
  return out;
}

}  // namespace

const NvrtcStatus& nvrtc_status() {
  static std::once_flag once;
  std::call_once(once, load);
  return g_status;
}

NvrtcOutput nvrtc_compile(const std::string& source, const std::string& name, int arch, bool cubin,
                          const std::vector<std::string>& options) {
  const NvrtcStatus& st = nvrtc_status();
  if (!st.available) ir::fail(ir::ErrorKind::kUnsupported, "the CUDA backend is unavailable: " + st.why);
  // A real architecture makes NVRTC assemble (a CUBIN, ptxas -v in the
  // log); a virtual one stops at PTX, which the driver assembles at load.
  // 177 / 550: a prelude function or a kernel's shape pointer that this
  // kernel does not use.
  std::vector<std::string> opts{(cubin ? "-arch=sm_" : "-arch=compute_") + std::to_string(arch), "--std=c++17",
                                "-default-device", "--diag-suppress=177,550"};
  if (cubin) opts.push_back("-Xptxas=-v");
  opts.insert(opts.end(), options.begin(), options.end());
  std::vector<const char*> argv;
  for (const std::string& o : opts) argv.push_back(o.c_str());
  ++g_compiles;

  nvrtcProgram p = nullptr;
  nvrtcResult r = g_api.create(&p, source.c_str(), name.c_str(), 0, nullptr, nullptr);
  if (r != kNvrtcSuccess)
    ir::fail(ir::ErrorKind::kInternal, std::string("nvrtcCreateProgram failed: ") + g_api.error_string(r));
  NvrtcOutput out;
  r = g_api.compile(p, static_cast<int>(argv.size()), argv.data());
  out.log = program_log(p);
  out.ok = r == kNvrtcSuccess;
  if (out.ok) {
    out.ptx = program_bytes(p, g_api.ptx_size, g_api.ptx);
    if (cubin) out.cubin = program_bytes(p, g_api.cubin_size, g_api.cubin);
  } else if (out.log.empty()) {
    out.log = g_api.error_string(r);
  }
  g_api.destroy(&p);
  return out;
}

int64_t nvrtc_compiles() { return g_compiles.load(); }

std::vector<KernelResources> parse_ptxas_info(const std::string& log) {
  // ptxas -v, per kernel:
  //   ptxas info    : Compiling entry function 'k' for 'sm_80'
  //   ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
  //   ptxas info    : Used 32 registers, used 1 barriers, 1024 bytes smem, 376 bytes cmem[0]
  static const std::regex entry(R"(Compiling entry function '([^']+)' for '([^']+)')");
  static const std::regex frame(R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex used(R"(Used (\d+) registers)");
  static const std::regex smem(R"((\d+) bytes smem)");
  static const std::regex cmem(R"((\d+) bytes cmem\[0\])");
  std::vector<KernelResources> out;
  size_t start = 0;
  while (start < log.size()) {
    size_t end = log.find('\n', start);
    if (end == std::string::npos) end = log.size();
    const std::string line = log.substr(start, end - start);
    start = end + 1;
    std::smatch m;
    if (std::regex_search(line, m, entry)) {
      out.push_back(KernelResources{m[1], m[2]});
      continue;
    }
    if (out.empty()) continue;
    KernelResources& k = out.back();
    if (std::regex_search(line, m, frame)) {
      k.stack_bytes = std::stoll(m[1]);
      k.spill_store_bytes = std::stoll(m[2]);
      k.spill_load_bytes = std::stoll(m[3]);
    }
    if (std::regex_search(line, m, used)) k.registers = std::stoi(m[1]);
    if (std::regex_search(line, m, smem)) k.shared_bytes = std::stoll(m[1]);
    if (std::regex_search(line, m, cmem)) k.constant_bytes = std::stoll(m[1]);
  }
  return out;
}

}  // namespace tf::compiler::cuda
