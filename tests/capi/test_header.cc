// The C header compiled as C++ (-pedantic-errors): the layout of every public
// struct is pinned, so a change that would break the ABI fails to compile,
// and the version macros equal the CMake project version.
#include <tilefoundry/tilefoundry.h>

#include <cstddef>
#include <cstdio>
#include <type_traits>

static_assert(sizeof(tf_compile_options) == 32, "tf_compile_options size is ABI");
static_assert(offsetof(tf_compile_options, struct_size) == 0, "struct_size must come first");
static_assert(offsetof(tf_compile_options, backend) == 4, "backend offset is ABI");
static_assert(offsetof(tf_compile_options, flags) == 8, "flags offset is ABI");
static_assert(offsetof(tf_compile_options, reserved) == 12, "reserved offset is ABI");
static_assert(sizeof(((tf_compile_options*)nullptr)->reserved) == 5 * sizeof(uint32_t),
              "reserved size");
static_assert(std::is_standard_layout<tf_compile_options>::value, "C layout");
static_assert(std::is_trivial<tf_compile_options>::value, "C layout");
static_assert(sizeof(tf_memory_stats) == 64, "tf_memory_stats size is ABI");
static_assert(sizeof(tf_run_options) == 32, "tf_run_options size is ABI");
static_assert(offsetof(tf_run_options, struct_size) == 0, "struct_size must come first");
static_assert(offsetof(tf_run_options, flags) == 4, "flags offset is ABI");
static_assert(offsetof(tf_run_options, stream) == 8, "stream offset is ABI");
static_assert(offsetof(tf_run_options, workspace) == 16, "workspace offset is ABI");
static_assert(offsetof(tf_run_options, workspace_bytes) == 24, "workspace_bytes offset is ABI");
static_assert(std::is_trivial<tf_run_options>::value, "C layout");
static_assert(TF_BACKEND_CUDA == 3, "backend values are ABI");
static_assert(offsetof(tf_memory_stats, struct_size) == 0, "struct_size must come first");
static_assert(offsetof(tf_memory_stats, bytes_in_use) == 8, "bytes_in_use offset is ABI");
static_assert(offsetof(tf_memory_stats, cache_limit) == 32, "cache_limit offset is ABI");
static_assert(offsetof(tf_memory_stats, bytes_released) == 56, "bytes_released offset is ABI");
static_assert(std::is_trivial<tf_memory_stats>::value, "C layout");

static_assert(sizeof(tf_input_axis) == 48, "tf_input_axis size is ABI");
static_assert(offsetof(tf_input_axis, struct_size) == 0, "struct_size must come first");
static_assert(offsetof(tf_input_axis, rule) == 4, "rule offset is ABI");
static_assert(offsetof(tf_input_axis, value) == 8, "value offset is ABI");
static_assert(offsetof(tf_input_axis, lo) == 16, "lo offset is ABI");
static_assert(offsetof(tf_input_axis, hi) == 24, "hi offset is ABI");
static_assert(offsetof(tf_input_axis, dimvar_input) == 32, "dimvar_input offset is ABI");
static_assert(offsetof(tf_input_axis, dimvar_axis) == 40, "dimvar_axis offset is ABI");
static_assert(std::is_trivial<tf_input_axis>::value, "C layout");
static_assert(TF_DIM_OP_PUSH_CONST == 1 && TF_DIM_OP_PUSH_INPUT_EXTENT == 2 && TF_DIM_OP_ADD == 3 &&
                  TF_DIM_OP_SUB == 4 && TF_DIM_OP_MUL == 5 && TF_DIM_OP_FLOORDIV == 6 &&
                  TF_DIM_OP_MOD == 7 && TF_DIM_OP_MIN == 8 && TF_DIM_OP_MAX == 9,
              "dim program opcodes are ABI");
static_assert(TF_AXIS_STATIC == 1 && TF_AXIS_BINDS_DIMVAR == 2 && TF_AXIS_EQUALS_DIMVAR == 3 &&
                  TF_AXIS_EXPR == 4,
              "input axis rules are ABI");

// DLPack 1.0's versioned managed tensor: our compat declaration (or the
// installed dlpack.h's) must have upstream's LP64 layout exactly.
static_assert(sizeof(DLTensor) == 48, "DLTensor size");
static_assert(sizeof(DLManagedTensorVersioned) == 80, "DLManagedTensorVersioned size");
static_assert(offsetof(DLManagedTensorVersioned, version) == 0, "version offset");
static_assert(offsetof(DLManagedTensorVersioned, manager_ctx) == 8, "manager_ctx offset");
static_assert(offsetof(DLManagedTensorVersioned, deleter) == 16, "deleter offset");
static_assert(offsetof(DLManagedTensorVersioned, flags) == 24, "flags offset");
static_assert(offsetof(DLManagedTensorVersioned, dl_tensor) == 32, "dl_tensor offset");
static_assert(sizeof(DLPackVersion) == 8 && offsetof(DLPackVersion, minor) == 4, "DLPackVersion");
static_assert(DLPACK_FLAG_BITMASK_READ_ONLY == 1 && DLPACK_FLAG_BITMASK_IS_COPIED == 2,
              "DLPack 1.0 flag bits");

static_assert(sizeof(tf_shard_attr) == 12, "tf_shard_attr size is ABI");
static_assert(offsetof(tf_shard_attr, tensor_axis) == 4 && offsetof(tf_shard_attr, reduction) == 8,
              "tf_shard_attr offsets are ABI");
static_assert(sizeof(tf_communicator) == 72, "tf_communicator size is ABI (LP64)");
static_assert(offsetof(tf_communicator, struct_size) == 0, "struct_size must come first");
static_assert(offsetof(tf_communicator, num_axes) == 4, "num_axes offset is ABI");
static_assert(offsetof(tf_communicator, axis_size) == 8 && offsetof(tf_communicator, axis_coord) == 16,
              "axis arrays' offsets are ABI");
static_assert(offsetof(tf_communicator, ctx) == 24, "ctx offset is ABI");
static_assert(offsetof(tf_communicator, all_reduce) == 32 && offsetof(tf_communicator, all_gather) == 40 &&
                  offsetof(tf_communicator, reduce_scatter) == 48 && offsetof(tf_communicator, all_to_all) == 56,
              "collective offsets are ABI");
static_assert(offsetof(tf_communicator, flags) == 64 && TF_COMM_TRUSTED_CALLS == 1u, "flags are ABI");
static_assert(std::is_trivial<tf_communicator>::value, "C layout");
static_assert(TF_REDUCTION_SUM == 0 && TF_REDUCTION_MAX == 1 && TF_REDUCTION_MIN == 2, "reduction codes are ABI");
static_assert(TF_SHARD_BROADCAST == 0 && TF_SHARD_SPLIT == 1 && TF_SHARD_PARTIAL == 2, "shard kinds are ABI");
static_assert(sizeof(tf_status) == sizeof(int), "tf_status is an int-sized enum");
static_assert(TF_OK == 0 && TF_ERR_PARSE == 1 && TF_ERR_TYPE == 2 && TF_ERR_VERIFY == 3 &&
                  TF_ERR_NOT_FOUND == 4 && TF_ERR_INVALID_ARGUMENT == 5 &&
                  TF_ERR_UNSUPPORTED == 6 && TF_ERR_RUNTIME == 7 && TF_ERR_OUT_OF_MEMORY == 8 &&
                  TF_ERR_INTERNAL == 9 && TF_ERR_INVALID_HANDLE == 10,
              "status values are ABI");
static_assert(TF_BACKEND_NATIVE == 0 && TF_BACKEND_EVALUATOR == 1, "backend values are ABI");
static_assert(TF_MAX_NDIM >= 8, "TF_MAX_NDIM is at least 8 (docs/c-abi.md)");
static_assert(std::is_pointer<tf_module>::value && std::is_pointer<tf_kernel>::value,
              "opaque handles");

#if defined(TF_EXPECT_VERSION_MAJOR)
static_assert(TF_VERSION_MAJOR == TF_EXPECT_VERSION_MAJOR, "header major != CMake project version");
static_assert(TF_VERSION_MINOR == TF_EXPECT_VERSION_MINOR, "header minor != CMake project version");
static_assert(TF_VERSION_PATCH == TF_EXPECT_VERSION_PATCH, "header patch != CMake project version");
#endif

// The declarations have C linkage and the documented signatures.
static_assert(
    std::is_same<decltype(&tf_kernel_run),
                 tf_status (*)(tf_kernel, const DLTensor*, size_t, DLTensor*, size_t)>::value,
    "tf_kernel_run signature");
static_assert(std::is_same<decltype(&tf_kernel_run_versioned),
                           tf_status (*)(tf_kernel, const DLManagedTensorVersioned* const*, size_t,
                                         DLManagedTensorVersioned* const*, size_t)>::value,
              "tf_kernel_run_versioned signature");
static_assert(std::is_same<decltype(&tf_kernel_call_versioned),
                           tf_status (*)(tf_kernel, const DLTensor*, size_t,
                                         DLManagedTensorVersioned**, size_t)>::value,
              "tf_kernel_call_versioned signature");
static_assert(std::is_same<decltype(&tf_abi_version), uint32_t (*)()>::value,
              "tf_abi_version signature");
static_assert(std::is_same<decltype(&tf_kernel_input_axis),
                           tf_status (*)(tf_kernel, size_t, size_t, tf_input_axis*)>::value,
              "tf_kernel_input_axis signature");
static_assert(std::is_same<decltype(&tf_kernel_output_extent),
                           tf_status (*)(tf_kernel, size_t, size_t, int64_t*, size_t, size_t*)>::value,
              "tf_kernel_output_extent signature");

int main() {
  int failed = tf_abi_version() == static_cast<uint32_t>(TF_ABI_VERSION) ? 0 : 1;
  std::printf("%d passed, %d failed\n", 1 - failed, failed);
  return failed;
}
