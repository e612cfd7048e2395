#include "capi/options.h"

#include <cstddef>
#include <string>

#include "capi/error.h"

namespace tf::capi {
namespace {

constexpr size_t kMinSize = offsetof(tf_compile_options, backend) + sizeof(int32_t);

[[noreturn]] void invalid(const std::string& why) {
  fail(TF_ERR_INVALID_ARGUMENT, "tf_kernel_compile: opts: " + why);
}

// True when the caller's struct (of struct_size bytes) contains the field
// that ends `end` bytes into the struct.
bool covers(const tf_compile_options& o, size_t end) { return o.struct_size >= end; }

void check_reserved(const tf_compile_options& o) {
  if (covers(o, offsetof(tf_compile_options, flags) + sizeof(o.flags)) && o.flags != 0) {
    invalid("flags must be 0, but got " + std::to_string(o.flags));
  }
  for (size_t i = 0; i < sizeof(o.reserved) / sizeof(o.reserved[0]); ++i) {
    size_t end = offsetof(tf_compile_options, reserved) + (i + 1) * sizeof(o.reserved[0]);
    if (covers(o, end) && o.reserved[i] != 0) {
      invalid("reserved[" + std::to_string(i) + "] must be 0, but got " +
              std::to_string(o.reserved[i]));
    }
  }
}

}  // namespace

tf_backend requested_backend(const tf_compile_options* opts) {
  if (opts == nullptr) return TF_BACKEND_NATIVE;
  if (opts->struct_size < kMinSize || opts->struct_size > sizeof(tf_compile_options)) {
    invalid("struct_size " + std::to_string(opts->struct_size) + " is outside [" +
            std::to_string(kMinSize) + ", " + std::to_string(sizeof(tf_compile_options)) +
            "]; set it to sizeof(tf_compile_options)");
  }
  check_reserved(*opts);
  switch (opts->backend) {
    case TF_BACKEND_NATIVE: return TF_BACKEND_NATIVE;
    case TF_BACKEND_EVALUATOR: return TF_BACKEND_EVALUATOR;
    case TF_BACKEND_VIRTUAL_MESH: return TF_BACKEND_VIRTUAL_MESH;
    case TF_BACKEND_CUDA: return TF_BACKEND_CUDA;
    default: invalid("unknown backend " + std::to_string(opts->backend));
  }
}

RunOptions run_options(const char* fn, const tf_run_options* opts, tf_backend backend) {
  RunOptions r;
  if (opts == nullptr) return r;
  const auto bad = [&](const std::string& why) { fail(TF_ERR_INVALID_ARGUMENT, std::string(fn) + ": opts: " + why); };
  constexpr size_t kMin = offsetof(tf_run_options, flags) + sizeof(uint32_t);
  if (opts->struct_size < kMin || opts->struct_size > sizeof(tf_run_options))
    bad("struct_size " + std::to_string(opts->struct_size) + " is outside [" + std::to_string(kMin) + ", " +
        std::to_string(sizeof(tf_run_options)) + "]; set it to sizeof(tf_run_options)");
  if (opts->flags != 0) bad("flags must be 0, but got " + std::to_string(opts->flags));
  const auto has = [&](size_t offset, size_t size) { return opts->struct_size >= offset + size; };
  if (has(offsetof(tf_run_options, stream), sizeof(void*))) r.stream = opts->stream;
  if (has(offsetof(tf_run_options, workspace), sizeof(void*))) r.workspace = opts->workspace;
  if (has(offsetof(tf_run_options, workspace_bytes), sizeof(uint64_t))) r.workspace_bytes = opts->workspace_bytes;
  if (backend != TF_BACKEND_CUDA && (r.stream || r.workspace))
    bad("a stream or a workspace is for a kernel compiled with TF_BACKEND_CUDA");
  if (r.workspace == nullptr && r.workspace_bytes != 0)
    bad("workspace_bytes is " + std::to_string(r.workspace_bytes) + " but workspace is NULL");
  return r;
}

}  // namespace tf::capi
