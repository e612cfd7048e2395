// Shape values (core/ops/shape): a shape is a rank-1 i64 tensor, a dim a
// rank-0 i64 tensor. ShapeOf and Rank read their operand's shape only;
// ShapeExtract's index is checked against the shape's length before any
// stage runs (it depends on shapes alone), as core/eval reports it.
#include "core/compiler/codegen.h"
#include "core/compiler/lower_stages.h"

namespace tf::compiler {

using ir::DType;
using namespace tir;

namespace {

// y[i] = values[i], converted to y's dtype.
StmtPtr store_all(const SlotVars& y, const std::vector<ExprPtr>& values) {
  std::vector<StmtPtr> out;
  for (size_t i = 0; i < values.size(); ++i)
    out.push_back(Store::make(y.data, i64(static_cast<int64_t>(i)), cast(y.type->dtype(), values[i])));
  return Seq::make(std::move(out));
}

}  // namespace

LoweredStage lower_shape_of(const EntryVars& e, size_t out, size_t xs) {
  const SlotVars& x = e.slot(xs);
  std::vector<ExprPtr> dims;
  for (size_t d = 0; d < x.type->rank(); ++d) dims.push_back(extent(x, d));
  return LoweredStage{Seq::make({stage_comment("shape_of", out), store_all(e.slot(out), dims)}), nullptr, false};
}

LoweredStage lower_rank(const EntryVars& e, size_t out, size_t xs) {
  const ExprPtr rank = i64(static_cast<int64_t>(e.slot(xs).type->rank()));
  return LoweredStage{Seq::make({stage_comment("rank", out), store_all(e.slot(out), {rank})}), nullptr, false};
}

LoweredStage lower_shape_extract(const EntryVars& e, size_t out, size_t shape, const ops::ShapeExtract& op) {
  const SlotVars& x = e.slot(shape);
  // The index counts from the end when negative.
  auto normalized = [&](Lets& lets, VarPtr* length) {
    const VarPtr n = lets.bind("n", extent(x, 0));
    if (length) *length = n;
    return lets.bind("i", op.index < 0 ? add(i64(op.index), n) : i64(op.index));
  };
  Lets check;
  VarPtr n;
  const VarPtr i = normalized(check, &n);
  const StmtPtr bad = Seq::make({store_info(e, {i64(op.index), n}), Return::make(i32(kErrShapeIndex))});
  const StmtPtr precheck = Seq::make({Comment::make("precheck: shape_extract index"),
                                      check.wrap(IfThenElse::make(lor(lt(i, i64(0)), ge(i, n)), bad))});
  Lets read;
  const VarPtr at = normalized(read, nullptr);
  const StmtPtr stage = read.wrap(store_all(e.slot(out), {load(x.data, mul(at, stride(x, 0)))}));
  return LoweredStage{Seq::make({stage_comment("shape_extract", out), stage}), precheck, false};
}

LoweredStage lower_shape_compose(const EntryVars& e, size_t out, const std::vector<ExprPtr>& dims) {
  return LoweredStage{Seq::make({stage_comment("shape_compose", out), store_all(e.slot(out), dims)}), nullptr, false};
}

}  // namespace tf::compiler
