// NDArray: a typed, strided view over memory, the evaluator's value type.
// It either borrows (from a DLTensor the caller owns) or owns its buffer
// through a shared holder. Strides are in elements, like DLPack.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <dlpack/dlpack.h>

#include "core/ir/dtype.h"

namespace tf::runtime {

class NDArray {
 public:
  NDArray() = default;
  // Fresh, zero-filled, C-contiguous. Throws Error(kOutOfMemory) on failure.
  static NDArray empty(ir::DType dtype, std::vector<int64_t> shape);
  // Fresh, uninitialized, C-contiguous, from the output pool
  // (buffer_pool.h): what a kernel writes every element of.
  static NDArray pooled(ir::DType dtype, std::vector<int64_t> shape);
  // A borrowed view of t (byte_offset applied; NULL strides = compact
  // row-major). Validates device (CPU), dtype and lanes; throws
  // Error(kInvalidArgument / kUnsupported) otherwise. Never copies.
  static NDArray from_dlpack(const DLTensor& t);
  // from_dlpack into this array, reusing its shape / strides storage (the
  // hot path of a call allocates nothing once warm). Same checks; on a throw
  // this array is left empty.
  void assign_dlpack(const DLTensor& t);
  // A borrowed view of memory this process may not be able to read (a
  // device's): nothing is checked or touched; strides in elements.
  static NDArray borrow(ir::DType dtype, void* data, std::vector<int64_t> shape, std::vector<int64_t> strides);
  // A view into base's memory that shares base's buffer (or borrows what base
  // borrows): shape and strides in elements, element (0, ..., 0) at
  // base.data() + offset elements. The caller keeps the view inside base.
  static NDArray view(const NDArray& base, std::vector<int64_t> shape,
                      std::vector<int64_t> strides, int64_t offset = 0);

  ir::DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  const std::vector<int64_t>& strides() const { return strides_; }
  size_t ndim() const { return shape_.size(); }
  int64_t numel() const;
  // Address of element (0, ..., 0).
  void* data() const { return data_; }
  bool is_contiguous() const;

  // A DLTensor describing this view (strides point into this object).
  DLTensor to_dltensor() const;
  // Copies this array's elements into dst (same dtype and shape, any strides).
  void copy_to(const NDArray& dst) const;

 private:
  ir::DType dtype_ = ir::DType::kF32;
  std::vector<int64_t> shape_, strides_;
  void* data_ = nullptr;
  std::shared_ptr<void> holder_;  // null when borrowed
};

// DLPack <-> DType. bool is kDLBool (code 6: DLPack >= 0.8 names it, 0.6 has
// no name for it) and {kDLUInt, 8} is u8, as DLPack defines them. torch 1.13
// exports bool as {kDLUInt, 8}; its callers here (the torch extension, the
// Python package) know the torch dtype and say bool.
ir::DType dtype_from_dl(DLDataType t);  // throws Error(kUnsupported)
DLDataType dtype_to_dl(ir::DType d);

}  // namespace tf::runtime
