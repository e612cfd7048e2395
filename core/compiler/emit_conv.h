// Stage emitter of Conv2D (NCHW x OIHW, torch.nn.functional.conv2d): per
// image and group, im2col into a compute-type buffer, one BLAS gemm through
// the runtime table (tf_rt's sgemm / dgemm), then bias and one rounding per
// output element, exactly as core/eval/kernels/conv_norm.cc (same gemm call,
// same operand layout, so f32 / f64 results agree bit for bit). f16 / bf16
// are widened to float and use sgemm, as the evaluator does.
#pragma once

#include <optional>
#include <ostream>
#include <vector>

#include "core/compiler/codegen.h"
#include "core/ops/nn/nn.h"

namespace tf::compiler {

// x, weight: materialized slots (any strides); bias: a rank-1 [O] slot or
// none; out: the contiguous result slot.
void emit_conv2d(std::ostream& o, const std::vector<Slot>& slots, size_t out, size_t x, size_t weight,
                 std::optional<size_t> bias, const ops::Conv2D& op);

}  // namespace tf::compiler
