#include "core/compiler/stage_lowering.h"

#include "core/compiler/decompose.h"
#include "core/compiler/emit_util.h"
#include "core/compiler/lower_stages.h"
#include "core/compiler/scalar_lowering.h"
#include "core/ops/part_table.h"

namespace tf::compiler {

namespace {

template <typename T>
const T& op_of(const StageCall& c) {
  return static_cast<const T&>(*c.call.op());
}

// ---- what each stage needs of its call ------------------------------------------

std::string name_of(const ir::Call& c) { return std::string(c.op()->name()); }

// Every operand read from memory: none may be a literal.
StageNeeds all_in_memory(const ir::Call& c, const std::vector<ir::ExprPtr>& operands) {
  StageNeeds n;
  for (const ir::ExprPtr& a : operands) {
    if (a->kind() == ir::ExprKind::kConstant) unsupported(name_of(c) + " of a constant");
    n.in_memory.push_back(true);
  }
  return n;
}
// 8-bit floats are converted and moved, not computed on (emit_util.h).
void no_fp8(const ir::Call& c, const std::vector<ir::ExprPtr>& operands) {
  bool fp8 = c.type()->kind() == ir::TypeKind::kTensor && is_fp8(tensor_type(c).dtype());
  for (const ir::ExprPtr& a : operands) fp8 = fp8 || is_fp8(tensor_type(*a).dtype());
  if (fp8) unsupported("fp8 " + name_of(c));
}
// Literals allowed: integer scalars (offsets, positions, dims) are values.
StageNeeds memory_but_literals(const std::vector<ir::ExprPtr>& operands) {
  StageNeeds n;
  for (const ir::ExprPtr& a : operands) n.in_memory.push_back(a->kind() != ir::ExprKind::kConstant);
  return n;
}

// A Reduce is fused into its readers or a stage of its own; which, the
// fusion decision says (when not fused, the operand is in memory or
// computed by the stage: StageCall::inlined).
StageNeeds reduce_needs(const ir::Call& c, const std::vector<ir::ExprPtr>& operands) {
  const auto& r = static_cast<const ops::Reduce&>(*c.op());
  const ir::DType x = tensor_type(*operands[0]).dtype();
  no_fp8(c, operands);
  // bool max (the one bool reduction typeinfer accepts) is any(x) in the
  // evaluator; the reduce stage's max over bool computes the same.
  if (x == ir::DType::kBool && r.kind != ops::ReduceKind::kMax) unsupported("Reduce of bool");
  if (r.kind == ops::ReduceKind::kMean && !ir::is_float(x)) unsupported("integer mean");
  if (operands[0]->kind() == ir::ExprKind::kConstant) unsupported("Reduce of a constant");
  StageNeeds n;
  n.in_memory = {false};
  return n;
}
// Whole matrices, from memory, through the shared GEMM. A transposed
// operand (a linear layer's `x @ w.T`) is read in place: the GEMM takes a
// column-major matrix as it is, and batch axes at any strides.
StageNeeds matmul_needs(const ir::Call& c, const std::vector<ir::ExprPtr>& operands) {
  no_fp8(c, operands);
  if (!ir::is_float(tensor_type(c).dtype())) unsupported("a non-float MatMul");
  if (tensor_type(*operands[0]).rank() < 2 || tensor_type(*operands[1]).rank() < 2) unsupported("MatMul of a vector");
  StageNeeds n = all_in_memory(c, operands);
  for (size_t i = 0; i < operands.size(); ++i) {
    const bool in_place = transpose_read_in_place(operands[i]) != nullptr;
    n.transposed_in_place.push_back(in_place);
    if (in_place) n.in_memory[i] = false;
  }
  return n;
}
// InsertSlice (dst, update, offsets...) / CacheUpdate (cache, cur_pos, s,
// new) / CacheScatter (cache, new, pos): the tensors from memory, the integer
// scalars as values. The window / position checks can fail; whether after
// other stages wrote, the lowering says (a check of parameters is a
// precheck).
StageNeeds insert_needs(const ir::Call& c, const std::vector<ir::ExprPtr>& operands) {
  if (tensor_type(c).rank() > 16) unsupported("an InsertSlice / CacheUpdate / CacheScatter of rank > 16");
  const std::string_view op = c.op()->name();
  for (size_t i = 0; i < operands.size(); ++i) {
    const bool tensor = op == "CacheUpdate" ? (i == 0 || i == 3) : op == "CacheScatter" || i < 2;
    if (tensor && operands[i]->kind() == ir::ExprKind::kConstant) unsupported(name_of(c) + " of a constant tensor");
  }
  return memory_but_literals(operands);
}
// ShapeCompose's dims may be literals.
StageNeeds shape_compose_needs(const ir::Call&, const std::vector<ir::ExprPtr>& operands) {
  return memory_but_literals(operands);
}
// Conv2D computes in float / double.
StageNeeds conv2d_needs(const ir::Call& c, const std::vector<ir::ExprPtr>& operands) {
  for (const ir::ExprPtr& a : operands) {
    const ir::DType d = tensor_type(*a).dtype();
    if (!ir::is_float(d) || is_fp8(d)) unsupported("Conv2D of dtype " + std::string(ir::dtype_name(d)));
  }
  return all_in_memory(c, operands);
}
// RoPE, Gather, TopK, Stack, Reshard, the shape queries, and views a fused
// stage could not read in place (copies of any dtype).
StageNeeds in_memory_needs(const ir::Call& c, const std::vector<ir::ExprPtr>& operands) {
  return all_in_memory(c, operands);
}

LoweredStage reduce(const EntryVars& e, const StageCall& c) {
  if (c.inlined) return lower_reduce(e, c.results[0], *c.inlined, op_of<ops::Reduce>(c));
  return lower_reduce(e, c.results[0], c.slots[0], c.axes[0], op_of<ops::Reduce>(c));
}
LoweredStage matmul(const EntryVars& e, const StageCall& c) {
  return lower_matmul(e, c.results[0], c.slots[0], c.axes[0], c.slots[1], c.axes[1]);
}
// y = a @ b is the GEMM itself.
GemmStages matmul_as_gemm(const EntryVars&, const StageCall& c, const std::function<size_t(ir::TensorTypePtr)>&) {
  return GemmStages{{}, GemmCall{c.results[0], c.slots[0], c.slots[1]}, {}};
}
LoweredStage reshape(const EntryVars& e, const StageCall& c) { return lower_reshape(e, c.results[0], c.slots[0]); }
LoweredStage transpose(const EntryVars& e, const StageCall& c) {
  return lower_transpose(e, c.results[0], c.slots[0], op_of<ops::Transpose>(c));
}
LoweredStage slice(const EntryVars& e, const StageCall& c) {
  return lower_slice(e, c.results[0], c.slots[0], op_of<ops::Slice>(c));
}

// Whether operands [first, last) are literals or parameters: checks of them
// alone can be a precheck.
bool reads_only_inputs(const EntryVars& e, const StageCall& c, size_t first, size_t last) {
  size_t slot = 0;
  for (size_t i = 0; i < c.operands.size(); ++i) {
    if (c.operands[i]->kind() == ir::ExprKind::kConstant) continue;
    if (i >= first && i < last && !e.is_input(c.slots.at(slot))) return false;
    ++slot;
  }
  return true;
}

// dst, update, then one offset per axis: a literal of the op's (typed
// literal offsets) or an operand.
LoweredStage insert_slice(const EntryVars& e, const StageCall& c) {
  const auto& lit = op_of<ops::InsertSlice>(c).literal;
  const size_t rank = tensor_type(c.call).rank();
  std::vector<tir::ExprPtr> offsets;
  for (size_t a = 0; a < rank; ++a) {
    if (!lit.empty() && lit[a]) offsets.push_back(tir::i64(*lit[a]));
    else if (2 + a < c.operands.size()) offsets.push_back(c.int_value(c.operands[2 + a]));
    else unsupported("InsertSlice offsets of this form");
  }
  return lower_insert_slice(e, c.results[0], c.slots.at(0), c.slots.at(1), offsets,
                            reads_only_inputs(e, c, 2, c.operands.size()));
}
// cache, cur_pos, s, new: cur_pos and s may be literals (no slot).
LoweredStage cache_update(const EntryVars& e, const StageCall& c) {
  return lower_cache_update(e, c.results[0], c.slots.at(0), c.slots.back(), c.int_value(c.operands[1]),
                            c.int_value(c.operands[2]), reads_only_inputs(e, c, 1, 3));
}
LoweredStage cache_scatter(const EntryVars& e, const StageCall& c) {
  return lower_cache_scatter(e, c.results[0], c.slots.at(0), c.slots.at(1), c.slots.at(2));
}
LoweredStage rope(const EntryVars& e, const StageCall& c) {
  return lower_rope(e, {c.slots[0], c.slots[1], c.slots[2], c.slots[3], c.slots[4]}, {c.results[0], c.results[1]});
}
LoweredStage gather(const EntryVars& e, const StageCall& c) {
  return lower_gather(e, c.results[0], c.slots[0], c.slots[1], op_of<ops::Gather>(c));
}
LoweredStage topk(const EntryVars& e, const StageCall& c) {
  return lower_topk(e, c.results[0], c.results[1], c.slots[0], op_of<ops::TopK>(c));
}
LoweredStage concat(const EntryVars& e, const StageCall& c) {
  return lower_concat(e, c.results[0], c.slots, op_of<ops::Concat>(c));
}
LoweredStage stack(const EntryVars& e, const StageCall& c) {
  return lower_stack(e, c.results[0], c.slots, op_of<ops::Stack>(c));
}
LoweredStage reshard(const EntryVars& e, const StageCall& c) {
  return lower_copy(e, c.results[0], c.slots[0], "reshard");
}
LoweredStage bitcast(const EntryVars& e, const StageCall& c) { return lower_bitcast(e, c.results[0], c.slots[0]); }
LoweredStage arange(const EntryVars& e, const StageCall& c) {
  return lower_arange(e, c.results[0], op_of<ops::Arange>(c));
}
LoweredStage shape_of(const EntryVars& e, const StageCall& c) { return lower_shape_of(e, c.results[0], c.slots[0]); }
LoweredStage rank(const EntryVars& e, const StageCall& c) { return lower_rank(e, c.results[0], c.slots[0]); }
LoweredStage shape_extract(const EntryVars& e, const StageCall& c) {
  return lower_shape_extract(e, c.results[0], c.slots[0], op_of<ops::ShapeExtract>(c));
}
LoweredStage shape_compose(const EntryVars& e, const StageCall& c) {
  std::vector<tir::ExprPtr> dims;
  for (const ir::ExprPtr& a : c.operands) dims.push_back(c.int_value(a));
  return lower_shape_compose(e, c.results[0], dims);
}
LoweredStage conv2d(const EntryVars& e, const StageCall& c) {
  return lower_conv2d(e, c.results[0], c.slots[0], c.slots[1],
                      c.slots.size() > 2 ? std::optional<size_t>(c.slots[2]) : std::nullopt, op_of<ops::Conv2D>(c));
}
GemmStages conv2d_as_gemm(const EntryVars& e, const StageCall& c,
                          const std::function<size_t(ir::TensorTypePtr)>& scratch) {
  return lower_conv2d_as_gemm(e, c.results[0], c.slots[0], c.slots[1],
                              c.slots.size() > 2 ? std::optional<size_t>(c.slots[2]) : std::nullopt,
                              op_of<ops::Conv2D>(c), scratch);
}

// local(x) is one mesh instance's view: no single-device kernel has it (the
// evaluator says the same and runs it per instance on a virtual mesh).
[[noreturn]] void no_single_device_local() {
  unsupported("Local, the view of one mesh instance (evaluate the function with mesh=\"virtual\"),");
}
LoweredStage local(const EntryVars&, const StageCall&) { no_single_device_local(); }
StageNeeds local_needs(const ir::Call&, const std::vector<ir::ExprPtr>&) { no_single_device_local(); }

// The ops layer's per-op part table, filled with the built-in lowerings on
// first use.
ops::OpPartTable<StageLowering>& table() {
  static ops::OpPartTable<StageLowering>* t = [] {
    auto* p = new ops::OpPartTable<StageLowering>("a stage lowering");
    p->add("Reduce", {reduce, reduce_needs});
    p->add("MatMul", {matmul, matmul_needs, /*in_place=*/false, matmul_as_gemm});
    p->add("Reshape", {reshape, in_memory_needs});
    p->add("Transpose", {transpose, in_memory_needs});
    p->add("Slice", {slice, in_memory_needs});
    p->add("InsertSlice", {insert_slice, insert_needs, /*in_place=*/true});
    p->add("CacheUpdate", {cache_update, insert_needs, /*in_place=*/true});
    p->add("CacheScatter", {cache_scatter, insert_needs, /*in_place=*/true});
    p->add("RoPE", {rope, in_memory_needs});
    p->add("Gather", {gather, in_memory_needs});
    p->add("TopK", {topk, in_memory_needs});
    p->add("Concat", {concat, in_memory_needs});
    p->add("Stack", {stack, in_memory_needs});
    p->add("Reshard", {reshard, in_memory_needs});
    p->add("Bitcast", {bitcast, in_memory_needs});
    p->add("Arange", {arange, in_memory_needs});
    p->add("ShapeOf", {shape_of, in_memory_needs});
    p->add("Rank", {rank, in_memory_needs});
    p->add("ShapeExtract", {shape_extract, in_memory_needs});
    p->add("ShapeCompose", {shape_compose, shape_compose_needs});
    p->add("Conv2D", {conv2d, conv2d_needs, /*in_place=*/false, conv2d_as_gemm});
    p->add("Local", {local, local_needs});
    return p;
  }();
  return *t;
}

}  // namespace

const StageLowering* find_stage_lowering(std::string_view op_name) { return table().find(op_name); }

const ir::Call* transpose_read_in_place(const ir::ExprPtr& operand) {
  const auto* t = ir::expr_as<ir::Call>(operand);
  const bool in_place = t && t->op() && t->op()->name() == "Transpose" &&
                        t->args().at(0)->kind() != ir::ExprKind::kConstant;
  return in_place ? t : nullptr;
}

void register_stage_lowering(std::string op_name, StageLowering l) { table().add(std::move(op_name), l); }

ops::OpPart stage_lowering_part() { return table().part(); }

ops::OpPart native_lowering_part() {
  const std::vector<ops::OpPart> parts{scalar_lowering_part(), stage_lowering_part(), decomposition_part()};
  return ops::OpPart{"a native lowering",
                     [parts](const ops::OpInfo& op) {
                       for (const ops::OpPart& p : parts)
                         if (p.has(op)) return true;
                       return false;
                     },
                     [parts] {
                       std::vector<std::string> keys;
                       for (const ops::OpPart& p : parts)
                         for (std::string& k : p.keys()) keys.push_back(std::move(k));
                       return keys;
                     }};
}

}  // namespace tf::compiler
