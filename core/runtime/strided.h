// StridedCursor: walks a shape in row-major order while keeping, for each of
// several operands, the element offset given by that operand's strides
// (in elements; a stride of 0 broadcasts). The one loop primitive of the
// runtime and the evaluator's kernels.
#pragma once

#include <cstdint>
#include <vector>

namespace tf::runtime {

class StridedCursor {
 public:
  // strides[k] has one entry per axis of shape.
  StridedCursor(std::vector<int64_t> shape, std::vector<std::vector<int64_t>> strides)
      : shape_(std::move(shape)), strides_(std::move(strides)), index_(shape_.size(), 0),
        offsets_(strides_.size(), 0) {}

  int64_t offset(size_t operand) const { return offsets_[operand]; }

  // Moves to the next index in row-major order (wraps to all zeros at the end).
  void next() {
    for (size_t d = shape_.size(); d-- > 0;) {
      if (++index_[d] < shape_[d]) {
        for (size_t k = 0; k < offsets_.size(); ++k) offsets_[k] += strides_[k][d];
        return;
      }
      index_[d] = 0;
      for (size_t k = 0; k < offsets_.size(); ++k) offsets_[k] -= strides_[k][d] * (shape_[d] - 1);
    }
  }

 private:
  std::vector<int64_t> shape_;
  std::vector<std::vector<int64_t>> strides_;
  std::vector<int64_t> index_;
  std::vector<int64_t> offsets_;
};

// Compact row-major strides of shape, into *s (its storage reused).
inline void contiguous_strides_into(const std::vector<int64_t>& shape, std::vector<int64_t>* s) {
  s->assign(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) (*s)[d - 1] = (*s)[d] * shape[d];
}

inline std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s;
  contiguous_strides_into(shape, &s);
  return s;
}

inline int64_t shape_numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

}  // namespace tf::runtime
