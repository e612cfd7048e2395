// MatMul: one GEMM per batch through the prelude's tf_gemm (the runtime
// table's sgemm / dgemm, the evaluator's GEMM, so products agree bit for
// bit) or, for f16 / bf16, tf_gemm_widened (operands widened to float, one
// sgemm, each result rounded once, as the evaluator). Batch axes broadcast:
// an operand's missing or extent-1 batch axis reads stride 0. A transposed
// operand is read in place, through the Transpose's axes.
#include "core/compiler/emit_util.h"
#include "core/compiler/lower_stages.h"

namespace tf::compiler {

using ir::DType;
using namespace tir;

namespace {

// An operand's stride along result batch axis i (rank r result): 0 where
// the operand lacks the axis or has extent 1 there.
ExprPtr batch_stride(const SlotView& x, size_t i, size_t r) {
  const size_t rx = x.rank();
  if (i + rx < r) return i64(0);
  const size_t a = i + rx - r;
  return select(eq(x.extent_at(a), i64(1)), i64(0), x.stride_at(a));
}

}  // namespace

LoweredStage lower_matmul(const EntryVars& e, size_t out, size_t as, const std::vector<int64_t>& a_axes, size_t bs,
                          const std::vector<int64_t>& b_axes) {
  const SlotView a{e.slot(as), a_axes}, b{e.slot(bs), b_axes};
  const SlotVars& y = e.slot(out);
  const size_t r = y.type->rank(), ra = a.rank(), rb = b.rank();
  const DType d = y.type->dtype();
  Lets frame;
  const VarPtr M = frame.bind("M", extent(y, r - 2)), N = frame.bind("N", extent(y, r - 1));
  const VarPtr K = frame.bind("K", a.extent_at(ra - 1));
  const VarPtr batches = frame.bind("batches", extents_product(y, 0, r - 2));
  std::vector<ExprPtr> batch_n;
  std::vector<std::vector<ExprPtr>> batch_s(2);
  for (size_t i = 0; i + 2 < r; ++i) {
    batch_n.push_back(extent(y, i));
    batch_s[0].push_back(frame.bind("bsa" + std::to_string(i), batch_stride(a, i, r)));
    batch_s[1].push_back(frame.bind("bsb" + std::to_string(i), batch_stride(b, i, r)));
  }
  const VarPtr bt = Var::make("bt", Type::scalar(DType::kI64));
  Lets batch;
  const std::vector<ExprPtr> off = row_major_offsets(bt, batch_n, batch_s, batch, "q");
  const ExprPtr gemm = extern_call(is_half(d) ? "tf_gemm_widened" : "tf_gemm",
                                   {e.rt, M, N, K, address(a.slot.data, off[0]), a.stride_at(ra - 2),
                                    a.stride_at(ra - 1), address(b.slot.data, off[1]), b.stride_at(rb - 2),
                                    b.stride_at(rb - 1), address(y.data, mul(mul(bt, M), N))},
                                   {Type::scalar(d)});
  const StmtPtr loop = For::make(bt, i64(0), batches, ForKind::kSerial, batch.wrap(Evaluate::make(gemm)));
  return LoweredStage{Seq::make({stage_comment("matmul", out), frame.wrap(loop)}), nullptr, false};
}

}  // namespace tf::compiler
