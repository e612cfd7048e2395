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

LoweredStage reduce(const EntryVars& e, const StageCall& c) {
  return lower_reduce(e, c.results[0], c.slots[0], op_of<ops::Reduce>(c));
}
LoweredStage matmul(const EntryVars& e, const StageCall& c) {
  return lower_matmul(e, c.results[0], c.slots[0], c.slots[1]);
}
LoweredStage reshape(const EntryVars& e, const StageCall& c) { return lower_reshape(e, c.results[0], c.slots[0]); }
LoweredStage transpose(const EntryVars& e, const StageCall& c) {
  return lower_transpose(e, c.results[0], c.slots[0], op_of<ops::Transpose>(c));
}
LoweredStage slice(const EntryVars& e, const StageCall& c) {
  return lower_slice(e, c.results[0], c.slots[0], op_of<ops::Slice>(c));
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
  return lower_insert_slice(e, c.results[0], c.slots.at(0), c.slots.at(1), offsets);
}
// cache, cur_pos, s, new: cur_pos and s may be literals (no slot).
LoweredStage cache_update(const EntryVars& e, const StageCall& c) {
  return lower_cache_update(e, c.results[0], c.slots.at(0), c.slots.back(), c.int_value(c.operands[1]),
                            c.int_value(c.operands[2]));
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

// local(x) is one mesh instance's view: no single-device kernel has it (the
// evaluator says the same and runs it per instance on a virtual mesh).
LoweredStage local(const EntryVars&, const StageCall&) {
  ir::fail(ir::ErrorKind::kUnsupported,
           "local(x) is the view of one mesh instance; evaluate the function with mesh=\"virtual\"");
}

// The ops layer's per-op part table, filled with the built-in lowerings on
// first use.
ops::OpPartTable<StageLowering>& table() {
  static ops::OpPartTable<StageLowering>* t = [] {
    auto* p = new ops::OpPartTable<StageLowering>("a stage lowering");
    p->add("Reduce", {reduce});
    p->add("MatMul", {matmul});
    p->add("Reshape", {reshape});
    p->add("Transpose", {transpose});
    p->add("Slice", {slice});
    p->add("InsertSlice", {insert_slice});
    p->add("CacheUpdate", {cache_update});
    p->add("RoPE", {rope});
    p->add("Gather", {gather});
    p->add("TopK", {topk});
    p->add("Concat", {concat});
    p->add("Stack", {stack});
    p->add("Reshard", {reshard});
    p->add("ShapeOf", {shape_of});
    p->add("Rank", {rank});
    p->add("ShapeExtract", {shape_extract});
    p->add("ShapeCompose", {shape_compose});
    p->add("Conv2D", {conv2d});
    p->add("Local", {local});
    return p;
  }();
  return *t;
}

}  // namespace

const StageLowering* find_stage_lowering(std::string_view op_name) { return table().find(op_name); }

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
