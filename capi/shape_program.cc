// tf_kernel_output_type, tf_kernel_input_axis, tf_kernel_input_extent and
// tf_kernel_output_extent: a kernel's shape rules as data
// (core/sema/shape_program.h) in the header's encoding — tf_axis_rule values
// and dim programs of TF_DIM_OP_* words.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "capi/checks.h"
#include "capi/error.h"
#include "capi/handles.h"
#include "capi/kernel.h"
#include "core/ir/error.h"
#include "core/runtime/ndarray.h"
#include "core/sema/shape_program.h"

namespace tf::capi {
namespace {

constexpr size_t kMinAxisSize = offsetof(tf_input_axis, value);

// No default case: a new DimKind fails the build here (-Wswitch) until it
// has an opcode of its own.
int64_t opcode(ir::DimKind k) {
  switch (k) {
    case ir::DimKind::kConst: return TF_DIM_OP_PUSH_CONST;
    case ir::DimKind::kVar: return TF_DIM_OP_PUSH_INPUT_EXTENT;
    case ir::DimKind::kAdd: return TF_DIM_OP_ADD;
    case ir::DimKind::kSub: return TF_DIM_OP_SUB;
    case ir::DimKind::kMul: return TF_DIM_OP_MUL;
    case ir::DimKind::kFloorDiv: return TF_DIM_OP_FLOORDIV;
    case ir::DimKind::kMod: return TF_DIM_OP_MOD;
    case ir::DimKind::kMin: return TF_DIM_OP_MIN;
    case ir::DimKind::kMax: return TF_DIM_OP_MAX;
  }
  TF_CHECK(false, "a DimKind without an opcode");
}

int32_t axis_rule(sema::AxisRule r) {
  switch (r) {
    case sema::AxisRule::kStatic: return TF_AXIS_STATIC;
    case sema::AxisRule::kBindsDimVar: return TF_AXIS_BINDS_DIMVAR;
    case sema::AxisRule::kEqualsDimVar: return TF_AXIS_EQUALS_DIMVAR;
    case sema::AxisRule::kExpr: return TF_AXIS_EXPR;
  }
  TF_CHECK(false, "an AxisRule without a tf_axis_rule");
}

std::vector<int64_t> encode(const sema::DimProgram& p) {
  std::vector<int64_t> words;
  for (const sema::DimInstr& in : p) {
    words.push_back(opcode(in.kind));
    if (in.kind == ir::DimKind::kConst) words.push_back(in.a);
    if (in.kind == ir::DimKind::kVar) words.insert(words.end(), {in.a, in.b});
  }
  return words;
}

// Like checked_tensor, and the tensor must have `axis`.
const ir::TensorType& checked_axis(const char* fn, const Kernel& k, Side side, size_t i,
                                   size_t axis) {
  const ir::TensorType& t = checked_tensor(fn, k, side, i);
  if (axis >= t.rank())
    fail(TF_ERR_INVALID_ARGUMENT,
         std::string(fn) + ": axis " + std::to_string(axis) + " out of range (" + side_name(side) +
             " #" + std::to_string(i) + " has rank " + std::to_string(t.rank()) + ")");
  return t;
}

// The dim program of an axis that checked_axis accepted, in the header's
// words. A core error names "tf_kernel_input_extent: 'f' input #0 (x) axis 1".
std::vector<int64_t> extent_words(const char* fn, const Kernel& k, Side side, size_t i, size_t axis,
                                  const ir::TensorType& t) {
  std::string what =
      std::string(fn) + ": '" + k.name() + "' " + side_name(side) + " #" + std::to_string(i);
  if (side == Side::kInput) what += " (" + k.input_name(i) + ")";
  what += " axis " + std::to_string(axis);
  return encode(sema::dim_program(t.shape()[axis], sema::dimvar_sites(k.function()), what));
}

// The caller-provided buffer protocol of the dim-program entry points.
void check_buffer(const char* fn, const int64_t* program, size_t capacity, const size_t* length) {
  require_non_null(length, fn, "length");
  if (capacity != 0) require_non_null(program, fn, "program");
}

void hand_out(const char* fn, const std::vector<int64_t>& words, int64_t* program, size_t capacity,
              size_t* length) {
  if (capacity != 0 && capacity < words.size())
    fail(TF_ERR_INVALID_ARGUMENT, std::string(fn) + ": capacity " + std::to_string(capacity) +
                                      " is below the program's " + std::to_string(words.size()) +
                                      " words (capacity 0 asks for the length)");
  if (capacity != 0) std::copy(words.begin(), words.end(), program);
  *length = words.size();
}

// tf_kernel_input_extent / tf_kernel_output_extent: the handle, the buffer,
// the index and the axis are checked in that order, then the program of that
// axis is handed out.
void extent_entry(const char* fn, tf_kernel k, Side side, size_t i, size_t axis, int64_t* program,
                  size_t capacity, size_t* length) {
  auto kernel = kernel_of(k);
  check_buffer(fn, program, capacity, length);
  const ir::TensorType& t = checked_axis(fn, *kernel, side, i, axis);
  hand_out(fn, extent_words(fn, *kernel, side, i, axis, t), program, capacity, length);
}

}  // namespace
}  // namespace tf::capi

using tf::capi::Kernel;
using tf::capi::kernel_of;
using tf::capi::require_non_null;
using tf::capi::Side;

extern "C" {

tf_status tf_kernel_output_type(tf_kernel k, size_t i, DLDataType* dtype, int32_t* ndim) {
  TF_C_API_BEGIN
  const char* fn = "tf_kernel_output_type";
  auto kernel = kernel_of(k);
  require_non_null(dtype, fn, "dtype");
  require_non_null(ndim, fn, "ndim");
  const tf::ir::TensorType& t = tf::capi::checked_tensor(fn, *kernel, Side::kOutput, i);
  DLDataType dl = tf::runtime::dtype_to_dl(t.dtype());
  *dtype = dl;
  *ndim = static_cast<int32_t>(t.rank());
  TF_C_API_END
}

tf_status tf_kernel_input_axis(tf_kernel k, size_t i, size_t axis, tf_input_axis* out) {
  TF_C_API_BEGIN
  const char* fn = "tf_kernel_input_axis";
  auto kernel = kernel_of(k);
  require_non_null(out, fn, "out");
  if (out->struct_size < tf::capi::kMinAxisSize)
    tf::capi::fail(TF_ERR_INVALID_ARGUMENT, std::string(fn) + ": out->struct_size " +
                                                std::to_string(out->struct_size) +
                                                " is too small; set it to sizeof(tf_input_axis)");
  tf::capi::checked_axis(fn, *kernel, Side::kInput, i, axis);
  const tf::ir::Function& f = kernel->function();
  tf::sema::AxisRequirement r =
      tf::sema::input_axis_requirement(f, tf::sema::dimvar_sites(f), i, axis);
  tf_input_axis full{};
  full.struct_size = static_cast<uint32_t>(std::min<size_t>(out->struct_size, sizeof full));
  full.rule = tf::capi::axis_rule(r.rule);
  full.dimvar_input = full.dimvar_axis = -1;
  if (r.rule == tf::sema::AxisRule::kStatic) full.value = r.dim.value();
  if (r.rule == tf::sema::AxisRule::kBindsDimVar || r.rule == tf::sema::AxisRule::kEqualsDimVar) {
    full.lo = r.dim.var_lo();
    full.hi = r.dim.var_hi();
    full.dimvar_input = static_cast<int64_t>(r.site.input);
    full.dimvar_axis = static_cast<int64_t>(r.site.axis);
  }
  // An older caller's struct is filled as far as it goes; a newer one's tail
  // is left alone, and struct_size says how far this library filled it.
  std::memcpy(out, &full, full.struct_size);
  TF_C_API_END
}

tf_status tf_kernel_input_extent(tf_kernel k, size_t i, size_t axis, int64_t* program,
                                 size_t capacity, size_t* length) {
  TF_C_API_BEGIN
  tf::capi::extent_entry("tf_kernel_input_extent", k, Side::kInput, i, axis, program, capacity, length);
  TF_C_API_END
}

tf_status tf_kernel_output_extent(tf_kernel k, size_t i, size_t axis, int64_t* program,
                                  size_t capacity, size_t* length) {
  TF_C_API_BEGIN
  tf::capi::extent_entry("tf_kernel_output_extent", k, Side::kOutput, i, axis, program, capacity,
                         length);
  TF_C_API_END
}

}  // extern "C"
