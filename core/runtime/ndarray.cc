#include "core/runtime/ndarray.h"

#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#include "core/ir/error.h"
#include "core/runtime/buffer_pool.h"
#include "core/runtime/strided.h"

namespace tf::runtime {
namespace {

using ir::ErrorKind;
using ir::fail;

constexpr size_t kAlignment = 64;

// DLPack 0.6 has no kDLBool; newer DLPack spells it 6.
constexpr uint8_t kDLBoolCode = 6;
// DLPack >= 1.1 type codes for the 8-bit floats (0.6 has none).
constexpr uint8_t kDLFloat8E4M3FnCode = 10;
constexpr uint8_t kDLFloat8E8M0FnuCode = 14;

std::string device_name(const DLDevice& d) {
  std::string type;
  switch (d.device_type) {
    case kDLCPU: type = "cpu"; break;
    case kDLCUDA: type = "cuda"; break;
    case kDLCUDAHost: type = "cuda_host"; break;
    case kDLOpenCL: type = "opencl"; break;
    case kDLVulkan: type = "vulkan"; break;
    case kDLMetal: type = "metal"; break;
    case kDLVPI: type = "vpi"; break;
    case kDLROCM: type = "rocm"; break;
    default: type = "device_type " + std::to_string(static_cast<int>(d.device_type)); break;
  }
  return type + ":" + std::to_string(d.device_id);
}

std::string dl_dtype_string(DLDataType t) {
  return "(code=" + std::to_string(t.code) + ", bits=" + std::to_string(t.bits) +
         ", lanes=" + std::to_string(t.lanes) + ")";
}

}  // namespace

ir::DType dtype_from_dl(DLDataType t) {
  if (t.lanes != 1)
    fail(ErrorKind::kUnsupported, "unsupported DLPack dtype " + dl_dtype_string(t) +
                                      ": vector lanes must be 1");
  switch (t.code) {
    case kDLFloat:
      if (t.bits == 16) return ir::DType::kF16;
      if (t.bits == 32) return ir::DType::kF32;
      if (t.bits == 64) return ir::DType::kF64;
      break;
    case kDLBfloat:
      if (t.bits == 16) return ir::DType::kBF16;
      break;
    case kDLInt:
      if (t.bits == 8) return ir::DType::kI8;
      if (t.bits == 32) return ir::DType::kI32;
      if (t.bits == 64) return ir::DType::kI64;
      break;
    case kDLFloat8E4M3FnCode:
      if (t.bits == 8) return ir::DType::kFP8E4M3;
      break;
    case kDLFloat8E8M0FnuCode:
      if (t.bits == 8) return ir::DType::kF8E8M0;
      break;
    case kDLUInt:
      if (t.bits == 8) return ir::DType::kU8;
      break;
    case kDLBoolCode:
      if (t.bits == 8) return ir::DType::kBool;
      break;
    default:
      break;
  }
  fail(ErrorKind::kUnsupported, "unsupported DLPack dtype " + dl_dtype_string(t));
}

DLDataType dtype_to_dl(ir::DType d) {
  auto dl = [](uint8_t code, uint8_t bits) { return DLDataType{code, bits, 1}; };
  switch (d) {
    case ir::DType::kBool: return dl(kDLBoolCode, 8);
    case ir::DType::kU8: return dl(kDLUInt, 8);
    case ir::DType::kI8: return dl(kDLInt, 8);
    case ir::DType::kI32: return dl(kDLInt, 32);
    case ir::DType::kI64: return dl(kDLInt, 64);
    case ir::DType::kF16: return dl(kDLFloat, 16);
    case ir::DType::kBF16: return dl(kDLBfloat, 16);
    case ir::DType::kF32: return dl(kDLFloat, 32);
    case ir::DType::kF64: return dl(kDLFloat, 64);
    case ir::DType::kFP8E4M3: return dl(kDLFloat8E4M3FnCode, 8);
    case ir::DType::kF8E8M0: return dl(kDLFloat8E8M0FnuCode, 8);
    default: break;
  }
  fail(ErrorKind::kUnsupported,
       "unsupported dtype " + std::string(ir::dtype_name(d)) + " has no DLPack encoding");
}

namespace {

// The byte size of a compact array, rounded up to kAlignment (at least one
// block, so that data() is never null). Throws on a negative extent or
// overflow.
size_t compact_bytes(ir::DType dtype, const std::vector<int64_t>& shape, const char* who) {
  const size_t elem = static_cast<size_t>(ir::dtype_bytes(dtype));
  size_t count = 1;
  for (int64_t d : shape) {
    if (d < 0) fail(ErrorKind::kInvalidArgument, std::string(who) + ": negative extent " + std::to_string(d));
    if (d != 0 && count > std::numeric_limits<size_t>::max() / static_cast<size_t>(d))
      fail(ErrorKind::kOutOfMemory, std::string(who) + ": element count overflows");
    count *= static_cast<size_t>(d);
  }
  if (count > (std::numeric_limits<size_t>::max() - kAlignment) / elem)
    fail(ErrorKind::kOutOfMemory, std::string(who) + ": byte size overflows");
  const size_t bytes = (count * elem + kAlignment - 1) / kAlignment * kAlignment;
  return bytes == 0 ? kAlignment : bytes;
}

}  // namespace

NDArray NDArray::empty(ir::DType dtype, std::vector<int64_t> shape) {
  // aligned_alloc needs a size that is a multiple of the alignment.
  const size_t bytes = compact_bytes(dtype, shape, "NDArray::empty");
  void* p = std::aligned_alloc(kAlignment, bytes);
  if (!p)
    fail(ErrorKind::kOutOfMemory,
         "NDArray::empty: cannot allocate " + std::to_string(bytes) + " bytes");
  std::memset(p, 0, bytes);
  NDArray a;
  a.dtype_ = dtype;
  a.strides_ = contiguous_strides(shape);
  a.shape_ = std::move(shape);
  a.data_ = p;
  a.holder_ = std::shared_ptr<void>(p, std::free);
  return a;
}

NDArray NDArray::pooled(ir::DType dtype, std::vector<int64_t> shape) {
  const size_t bytes = compact_bytes(dtype, shape, "NDArray::pooled");
  void* p = nullptr;
  Buffer* b = buffer_allocate(bytes, &p);
  NDArray a;
  a.dtype_ = dtype;
  a.strides_ = contiguous_strides(shape);
  a.shape_ = std::move(shape);
  a.data_ = p;
  a.holder_ = std::shared_ptr<void>(p, [b](void*) { buffer_release(b); });
  return a;
}

NDArray NDArray::from_dlpack(const DLTensor& t) {
  NDArray a;
  a.assign_dlpack(t);
  return a;
}

void NDArray::assign_dlpack(const DLTensor& t) {
  holder_.reset();
  data_ = nullptr;
  shape_.clear();
  strides_.clear();
  if (t.device.device_type != kDLCPU)
    fail(ErrorKind::kUnsupported,
         "unsupported device " + device_name(t.device) + ": the evaluator reads CPU tensors only");
  if (t.ndim < 0)
    fail(ErrorKind::kInvalidArgument, "DLTensor ndim must be >= 0, but got " + std::to_string(t.ndim));
  dtype_ = dtype_from_dl(t.dtype);
  if (t.ndim > 0 && !t.shape) fail(ErrorKind::kInvalidArgument, "DLTensor shape is NULL");
  shape_.assign(t.shape, t.shape + t.ndim);
  for (int64_t d : shape_)
    if (d < 0) fail(ErrorKind::kInvalidArgument, "DLTensor has a negative extent " + std::to_string(d));
  if (t.strides) {
    strides_.assign(t.strides, t.strides + t.ndim);
  } else {
    contiguous_strides_into(shape_, &strides_);
  }
  if (!t.data && numel() != 0)
    fail(ErrorKind::kInvalidArgument, "DLTensor data is NULL for a non-empty tensor");
  data_ = t.data ? static_cast<char*>(t.data) + t.byte_offset : nullptr;
}

NDArray NDArray::borrow(ir::DType dtype, void* data, std::vector<int64_t> shape, std::vector<int64_t> strides) {
  TF_CHECK(shape.size() == strides.size(), "borrowed shape and strides differ in rank");
  NDArray a;
  a.dtype_ = dtype;
  a.shape_ = std::move(shape);
  a.strides_ = std::move(strides);
  a.data_ = data;
  return a;
}

NDArray NDArray::view(const NDArray& base, std::vector<int64_t> shape, std::vector<int64_t> strides,
                      int64_t offset) {
  TF_CHECK(shape.size() == strides.size(), "view shape and strides differ in rank");
  NDArray a;
  a.dtype_ = base.dtype_;
  a.shape_ = std::move(shape);
  a.strides_ = std::move(strides);
  a.data_ = base.data_ ? static_cast<char*>(base.data_) + offset * ir::dtype_bytes(base.dtype_)
                       : nullptr;
  a.holder_ = base.holder_;
  return a;
}

int64_t NDArray::numel() const { return shape_numel(shape_); }

bool NDArray::is_contiguous() const {
  if (numel() == 0) return true;
  int64_t expected = 1;
  for (size_t d = shape_.size(); d-- > 0;) {
    if (shape_[d] == 1) continue;  // the stride of a size-1 axis is never used
    if (strides_[d] != expected) return false;
    expected *= shape_[d];
  }
  return true;
}

DLTensor NDArray::to_dltensor() const {
  DLTensor t{};
  t.data = data_;
  t.device = DLDevice{kDLCPU, 0};
  t.ndim = static_cast<int32_t>(shape_.size());
  t.dtype = dtype_to_dl(dtype_);
  t.shape = const_cast<int64_t*>(shape_.data());
  t.strides = const_cast<int64_t*>(strides_.data());
  t.byte_offset = 0;
  return t;
}

void NDArray::copy_to(const NDArray& dst) const {
  if (dst.dtype_ != dtype_ || dst.shape_ != shape_)
    fail(ErrorKind::kInvalidArgument, "NDArray::copy_to: destination dtype or shape differs");
  const int64_t n = numel();
  if (n == 0) return;
  const size_t elem = static_cast<size_t>(ir::dtype_bytes(dtype_));
  if (is_contiguous() && dst.is_contiguous()) {
    std::memmove(dst.data_, data_, static_cast<size_t>(n) * elem);
    return;
  }
  const char* src = static_cast<const char*>(data_);
  char* out = static_cast<char*>(dst.data_);
  StridedCursor c(shape_, {strides_, dst.strides_});
  for (int64_t i = 0; i < n; ++i, c.next())
    std::memcpy(out + c.offset(1) * static_cast<int64_t>(elem), src + c.offset(0) * static_cast<int64_t>(elem), elem);
}

}  // namespace tf::runtime
