#include "core/compiler/codegen.h"

#include <deque>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "core/compiler/cpu/cpp_printer.h"
#include "core/compiler/emit_util.h"
#include "core/compiler/inline.h"
#include "core/compiler/lower_loop_nest.h"
#include "core/compiler/scalar_lowering.h"
#include "core/compiler/stage_lowering.h"
#include "core/ir/error.h"
#include "core/ops/math/math.h"
#include "core/ops/nn/nn.h"
#include "core/ops/shape/shape.h"
#include "core/ops/sharding/sharding.h"
#include "core/ops/tensor/tensor.h"
#include "core/tir/printer.h"
#include "core/tir/transform.h"
#include "core/tir/verifier.h"

namespace tf::compiler {

namespace {

// Rewrites each `#pragma omp parallel for ... if (COND)` loop of generated
// source into `if (COND) { <parallel loop> } else { <same loop, serial> }`.
// Rationale: libgomp builds a team even when the if clause is false, which
// costs more than a small kernel's whole work (per-call overhead of a
// 1-element op); the plain branch skips the runtime entirely. The generated
// loops open their body on the `for` line and contain no braces in strings.
std::string serial_below_threshold(const std::string& src) {
  std::istringstream in(src);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  std::ostringstream out;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    size_t pragma = l.find("#pragma omp parallel for");
    size_t cond = l.rfind(" if (");
    if (pragma == std::string::npos || cond == std::string::npos || i + 1 >= lines.size()) {
      out << l << "\n";
      continue;
    }
    // The loop: from the `for` line (which opens its body) until its braces balance.
    size_t end = i + 1;
    int depth = 0;
    for (; end < lines.size(); ++end) {
      for (char c : lines[end]) depth += c == '{' ? 1 : c == '}' ? -1 : 0;
      if (depth <= 0) break;
    }
    if (end >= lines.size() || end == i + 1) {  // not a shape we recognize: leave it alone
      out << l << "\n";
      continue;
    }
    const std::string indent = l.substr(0, pragma);
    const std::string condition = l.substr(cond + 4);  // "(COND)"
    out << indent << "if " << condition << " {\n" << l.substr(0, cond) << "\n";
    for (size_t k = i + 1; k <= end; ++k) out << lines[k] << "\n";
    out << indent << "} else {\n";
    for (size_t k = i + 1; k <= end; ++k) out << lines[k] << "\n";
    out << indent << "}\n";
    i = end;
  }
  return out.str();
}

}  // namespace
namespace {

using ir::DType;
using ir::Expr;
using ir::ExprPtr;
using ops::BinaryKind;
using ops::UnaryKind;

// One loop nest under construction: its iteration rank and the slots it reads.
struct Stage {
  size_t rank = 0;
  const ir::TensorType* iter = nullptr;  // iteration shape
  std::vector<size_t> leaves;             // slots read, first use first
  std::set<size_t> inner_zero;            // leaves broadcast along the last axis statically
  int transcendentals = 0;                // exp-like calls per element of the inlined value
  // Calls expr() hands to a prelude routine that computes a whole chunk
  // (tf_gelu_tanh_n; tf_rf16_n for an f16 op's rounding): `fn` over `arg`,
  // in order, read back as tb<i>[j - c0].
  // Only emit_store_loop's chunked loops run them, so only stages that set
  // stage_calls before building their value get any.
  struct Staged {
    std::string fn, arg;
  };
  bool stage_calls = false;
  std::vector<Staged> staged;
};

class Generator {
 public:
  explicit Generator(const ir::Function* fn, const std::vector<ExprPtr>* inputs = nullptr,
                     const std::vector<ExprPtr>* outputs = nullptr)
      : fn_(fn), seg_inputs_(inputs), seg_outputs_(outputs) {}

  Program run() {
    if (fn_) {
      if (!fn_->body() || fn_->is_prototype()) unsupported("a dispatch prototype");
      for (size_t i = 0; i < fn_->params().size(); ++i) add_input(i, fn_->params()[i]);
      collect_outputs(split_tuple_calls(inline_calls(fn_->body())));
    } else {
      for (size_t i = 0; i < seg_inputs_->size(); ++i) add_input(i, (*seg_inputs_)[i]);
      for (const ExprPtr& o : *seg_outputs_) collect_outputs(o);
    }
    for (const ExprPtr& o : outputs_) count_uses(o);
    decide_fusion();
    std::vector<std::pair<size_t, ExprPtr>> copies;
    for (size_t i = 0; i < outputs_.size(); ++i) {
      const ExprPtr& o = outputs_[i];
      size_t s = add_slot(Slot::kOutput, i, o);
      const bool computed = o->kind() == ir::ExprKind::kCall || o->kind() == ir::ExprKind::kTupleGetItem;
      if (computed && !slot_of_.count(o.get())) slot_of_[o.get()] = s;
      else copies.emplace_back(s, o);
    }
    for (const ExprPtr& o : outputs_) plan(o);
    for (auto& [s, e] : copies) emit_elementwise(s, e, "copy");
    return Program{slots_, assemble(), may_fail_, scalars_, tir_.str()};
  }

 private:
  void add_input(size_t i, const ExprPtr& e) {
    add_slot(Slot::kInput, i, e);
    slot_of_[e.get()] = i;
    inputs_.insert(e.get());
  }

  size_t add_slot(Slot::Kind k, size_t index, const ExprPtr& e) {
    tensor_type(*e);
    return add_slot(k, index, std::static_pointer_cast<const ir::TensorType>(e->type()));
  }
  size_t add_slot(Slot::Kind k, size_t index, ir::TensorTypePtr t) {
    ctype(t->dtype());
    slots_.push_back(Slot{k, index, std::move(t)});
    if (k == Slot::kTemp) ++num_temps_;
    return slots_.size() - 1;
  }

  void collect_outputs(const ExprPtr& e) {
    if (auto* t = ir::expr_as<ir::Tuple>(e)) {
      for (const ExprPtr& f : t->fields()) collect_outputs(f);
      return;
    }
    if (auto* g = ir::expr_as<ir::TupleGetItem>(e)) {
      if (auto* t = ir::expr_as<ir::Tuple>(g->tuple())) return collect_outputs(t->fields().at(g->index()));
    }
    outputs_.push_back(e);
  }

  // Counts uses, checks that every reachable node is compiled, and marks the
  // operands that must live in memory (MatMul reads whole matrices).
  void count_uses(const ExprPtr& e) {
    if (++uses_[e.get()] > 1 || inputs_.count(e.get())) return;
    switch (e->kind()) {
      case ir::ExprKind::kVar:
        if (!slot_of_.count(e.get())) unsupported("a free variable");
        return;
      case ir::ExprKind::kConstant: ctype(tensor_type(*e).dtype()); return;
      case ir::ExprKind::kCall: break;
      case ir::ExprKind::kTupleGetItem: {
        // A canonical projection (split_tuple_calls) of a multi-output op.
        const ExprPtr& t = static_cast<const ir::TupleGetItem&>(*e).tuple();
        if (t->kind() != ir::ExprKind::kCall) unsupported("TupleGetItem of a computed tuple");
        projections_[{t.get(), static_cast<const ir::TupleGetItem&>(*e).index()}] = e.get();
        count_uses(t);
        return;
      }
      case ir::ExprKind::kGridRegion: unsupported("a GridRegionExpr loop");
      default: unsupported("a tuple value inside the body");
    }
    const auto& c = static_cast<const ir::Call&>(*e);
    if (!c.op()) unsupported("a call of function '" + c.callee()->name() + "'");
    // Every reader of a value is recorded (decide_fusion asks who reads a
    // reduction), whichever kind of stage it is.
    auto read_operands = [&](const std::vector<ExprPtr>& ops) {
      for (const ExprPtr& a : ops) {
        users_[a.get()].push_back(&c);
        count_uses(a);
      }
    };
    if (is_insert(*c.op())) {
      check_insert(c);
      return read_operands(operands(c));
    }
    if (dynamic_cast<const ops::RoPE*>(c.op().get())) {
      check_rope(c);
      return read_operands(c.args());
    }
    if (is_data_op(*c.op())) {
      check_data(c);
      return read_operands(operands(c));
    }
    check_op(c);
    read_operands(c.args());
    if (is_row_op(*c.op()))
      for (const ExprPtr& a : c.args()) force_registered_scalar_ops(a);
    if (is_row_op(*c.op())) row_reader_[c.args()[0].get()] = e;
    if (dynamic_cast<const ops::MatMul*>(c.op().get())) {
      for (const ExprPtr& a : c.args()) {
        if (a->kind() == ir::ExprKind::kConstant) unsupported("MatMul of a constant");
        force_.insert(a.get());
      }
    }
  }

  void check_op(const ir::Call& c) {
    const ir::Op* op = c.op().get();
    DType out = tensor_type(c).dtype();
    ctype(out);
    bool half = is_half(out);
    bool fp8 = is_fp8(out);
    for (const ExprPtr& a : c.args()) {
      half = is_half(tensor_type(*a).dtype()) || half;
      fp8 = is_fp8(tensor_type(*a).dtype()) || fp8;
    }
    // 8-bit floats are converted and moved, not computed on (emit_util.h).
    if (fp8 && !dynamic_cast<const ops::Cast*>(op) && !is_layout(*op)) unsupported("fp8 " + std::string(op->name()));
    const bool elementwise = is_scalar_op(*op);
    const bool row = dynamic_cast<const ops::RMSNorm*>(op) || dynamic_cast<const ops::SoftMax*>(op) ||
                     dynamic_cast<const ops::LayerNorm*>(op) || dynamic_cast<const ops::Reduce*>(op) ||
                     is_layout(*op);
    if (half && !elementwise && !row && !dynamic_cast<const ops::MatMul*>(op)) unsupported("f16/bf16 " + std::string(op->name()));
    if (auto* b = dynamic_cast<const ops::Binary*>(op)) {
      if (b->kind == BinaryKind::kDiv && !ir::is_float(tensor_type(*c.args()[0]).dtype())) {
        if (tensor_type(*c.args()[0]).dtype() == DType::kBool) unsupported("div of bool");
        may_fail_ = true;  // a zero divisor is a run-time error
      }
      return;
    }
    if (is_scalar_op(*op)) return;  // its stage's lowering reports whether it can fail
    if (dynamic_cast<const ops::LayerNorm*>(op)) {
      if (!ir::is_float(out) || tensor_type(c).rank() < 1) unsupported("LayerNorm of this type");
      return;
    }
    if (dynamic_cast<const ops::RMSNorm*>(op) || dynamic_cast<const ops::MatMul*>(op)) {
      if (!ir::is_float(out)) unsupported("a non-float " + std::string(op->name()));
      if (tensor_type(c).rank() < (dynamic_cast<const ops::MatMul*>(op) ? 2u : 1u) ||
          tensor_type(*c.args()[0]).rank() < 1 || tensor_type(*c.args()[1]).rank() < 1)
        unsupported(std::string(op->name()) + " of this rank");
      if (dynamic_cast<const ops::MatMul*>(op) &&
          (tensor_type(*c.args()[0]).rank() < 2 || tensor_type(*c.args()[1]).rank() < 2))
        unsupported("MatMul of a vector");
      return;
    }
    if (dynamic_cast<const ops::Zeros*>(op)) return;
    if (auto* r = dynamic_cast<const ops::Reduce*>(op)) {
      // bool max (the one bool reduction typeinfer accepts) is any(x) in the
      // evaluator; emit_reduce's max over bool computes the same.
      if (tensor_type(*c.args()[0]).dtype() == DType::kBool && r->kind == ops::ReduceKind::kMax &&
          c.args()[0]->kind() != ir::ExprKind::kConstant) {
        force_.insert(c.args()[0].get());
        return;
      }
      return check_reduce(c, *r);
    }
    if (is_layout(*op)) {
      if (c.args()[0]->kind() == ir::ExprKind::kConstant) unsupported(std::string(op->name()) + " of a constant");
      force_.insert(c.args()[0].get());
      return;
    }
    if (auto* s = dynamic_cast<const ops::SoftMax*>(op)) {
      int64_t r = static_cast<int64_t>(tensor_type(c).rank());
      if (r == 0 || (s->axis != -1 && s->axis != r - 1)) unsupported("SoftMax over a non-last axis");
      return;
    }
    unsupported("op " + std::string(op->name()));
  }

  // Ops with a scalar form (scalar_lowering.h): inlined into the loop nest
  // of the stage that reads them, whichever op it is.
  static bool is_scalar_op(const ir::Op& op) { return find_scalar_lowering(op.name()) != nullptr; }

  // The built-in row ops' emitter (emit_row) writes its operands' inlined
  // values as text and knows only the built-in elementwise ops (below): any
  // other op with a scalar form under a row op's operand is computed by a
  // stage of its own and read from memory.
  void force_registered_scalar_ops(const ExprPtr& e) {
    auto* c = ir::expr_as<ir::Call>(e);
    if (!c || !c->op() || inputs_.count(e.get()) || !is_scalar_op(*c->op())) return;
    if (!is_elementwise(*c->op()) && !dynamic_cast<const ops::Zeros*>(c->op().get())) {
      force_.insert(e.get());
      return;
    }
    for (const ExprPtr& a : c->args()) force_registered_scalar_ops(a);
  }

  // The built-in ops the text emitters compute value by value (op_value),
  // inlined into the loop of the stage that reads them (Zeros too, but it
  // reads nothing).
  static bool is_elementwise(const ir::Op& op) {
    return dynamic_cast<const ops::Binary*>(&op) || dynamic_cast<const ops::Unary*>(&op) ||
           dynamic_cast<const ops::Cast*>(&op) || dynamic_cast<const ops::Silu*>(&op) ||
           dynamic_cast<const ops::Gelu*>(&op) || dynamic_cast<const ops::ReLU*>(&op) ||
           dynamic_cast<const ops::Sigmoid*>(&op) || dynamic_cast<const ops::Tanh*>(&op);
  }

  static bool is_insert(const ir::Op& op) {
    return dynamic_cast<const ops::InsertSlice*>(&op) || dynamic_cast<const ops::CacheUpdate*>(&op);
  }

  // A call's operands with InsertSlice's offsets tuple flattened.
  static std::vector<ExprPtr> operands(const ir::Call& c) {
    std::vector<ExprPtr> out;
    for (const ExprPtr& a : c.args()) {
      if (auto* t = ir::expr_as<ir::Tuple>(a)) out.insert(out.end(), t->fields().begin(), t->fields().end());
      else out.push_back(a);
    }
    return out;
  }

  // InsertSlice / CacheUpdate read whole tensors from memory (dst / cache
  // and update / new) and their integer scalars as values (a Constant is a
  // literal); every element dtype is copied as stored.
  void check_insert(const ir::Call& c) {
    const std::vector<ExprPtr> ops = operands(c);
    ctype(tensor_type(c).dtype());
    if (tensor_type(c).rank() > 16) unsupported("an InsertSlice / CacheUpdate of rank > 16");
    const bool cache = dynamic_cast<const ops::CacheUpdate*>(c.op().get()) != nullptr;
    for (size_t i = 0; i < ops.size(); ++i) {
      const ExprPtr& a = ops[i];
      const bool data = cache ? (i == 0 || i == 3) : i < 2;
      if (a->kind() == ir::ExprKind::kTuple) unsupported("a nested tuple operand");
      ctype(tensor_type(*a).dtype());
      if (a->kind() == ir::ExprKind::kConstant) {
        if (data) unsupported(std::string(c.op()->name()) + " of a constant tensor");
        continue;
      }
      force_.insert(a.get());
    }
    may_fail_ = true;  // the window / cur_pos / s checks
  }

  // RoPE reads its operands from memory (q / k rows are read at two
  // offsets): one loop nest computes both rotated outputs.
  void check_rope(const ir::Call& c) {
    for (const ExprPtr& a : c.args()) {
      const ir::TensorType& t = tensor_type(*a);
      ctype(t.dtype());
      if (a->kind() == ir::ExprKind::kConstant) unsupported("RoPE of a constant");
      force_.insert(a.get());
    }
    // A position out of the caches' range: may_fail_ is set by emit_rope
    // unless the check runs before any stage.
  }

  // Reshape / Transpose / Slice: a strided copy of a materialized operand.
  static bool is_layout(const ir::Op& op) {
    return dynamic_cast<const ops::Reshape*>(&op) || dynamic_cast<const ops::Transpose*>(&op) ||
           dynamic_cast<const ops::Slice*>(&op);
  }

  // Reduce over any axes: one task per kept element of its (materialized)
  // operand, which loops over the reduced axes (the last one innermost).
  void check_reduce(const ir::Call& c, const ops::Reduce& r) {
    const ir::TensorType& x = tensor_type(*c.args()[0]);
    if (x.dtype() == DType::kBool) unsupported("Reduce of bool");
    if (r.kind == ops::ReduceKind::kMean && !ir::is_float(x.dtype())) unsupported("integer mean");
    if (c.args()[0]->kind() == ir::ExprKind::kConstant) unsupported("Reduce of a constant");
    reduces_.push_back(&c);  // its operand is forced to memory unless decide_fusion fuses it
  }

  // Ops with their own stage emitter (emit_data.h, emit_conv.h): every tensor
  // operand is read from memory, Tuple operands flattened (operands()).
  static bool is_data_op(const ir::Op& op) {
    return dynamic_cast<const ops::Gather*>(&op) || dynamic_cast<const ops::TopK*>(&op) ||
           dynamic_cast<const ops::Concat*>(&op) || dynamic_cast<const ops::Stack*>(&op) ||
           dynamic_cast<const ops::Reshard*>(&op) || dynamic_cast<const ops::ShapeOf*>(&op) ||
           dynamic_cast<const ops::Rank*>(&op) || dynamic_cast<const ops::ShapeExtract*>(&op) ||
           dynamic_cast<const ops::ShapeCompose*>(&op) || dynamic_cast<const ops::Conv2D*>(&op);
  }

  // Forces every tensor operand of a data op to memory. Only ShapeCompose's
  // dims may be constants (literals); Conv2D computes in float / double.
  void check_data(const ir::Call& c) {
    const ir::Op* op = c.op().get();
    const bool conv = dynamic_cast<const ops::Conv2D*>(op) != nullptr;
    if (!dynamic_cast<const ops::TopK*>(op)) ctype(tensor_type(c).dtype());  // TopK: a (values, indices) tuple
    for (const ExprPtr& a : operands(c)) {
      if (a->kind() == ir::ExprKind::kTuple) unsupported("a nested tuple operand");
      const DType d = tensor_type(*a).dtype();
      ctype(d);
      if (conv && (!ir::is_float(d) || is_fp8(d))) unsupported("Conv2D of dtype " + std::string(ir::dtype_name(d)));
      if (a->kind() == ir::ExprKind::kConstant) {
        if (dynamic_cast<const ops::ShapeCompose*>(op)) continue;
        unsupported(std::string(op->name()) + " of a constant");
      }
      force_.insert(a.get());
    }
  }

  // A stage lowered by the part its op registered (stage_lowering.h) into
  // `results`: the call's slot, or one per projection of a tuple value.
  void emit_stage(const StageLowering& l, const ir::Call& c, std::vector<size_t> results) {
    StageCall call{c, operands(c), {}, std::move(results), [this](const ExprPtr& a) { return int_operand(a); }};
    for (const ExprPtr& a : call.operands)
      if (a->kind() != ir::ExprKind::kConstant) call.slots.push_back(slot_of_.at(a.get()));
    emit_lowered(l.lower(entry_vars(), call));
  }

  // A tuple-valued op (RoPE, TopK): its stage writes every projection.
  void emit_tuple_stage(const ExprPtr& e, const ir::Call& c, size_t fields) {
    const StageLowering* l = find_stage_lowering(c.op()->name());
    if (!l) unsupported("op " + std::string(c.op()->name()) + " with a tuple value");
    std::vector<size_t> results;
    for (size_t i = 0; i < fields; ++i) results.push_back(projection_slot(e, static_cast<int64_t>(i)));
    emit_stage(*l, c, std::move(results));
  }

  bool is_row_or_gemm(const ir::Call& c) const {
    const ir::Op* op = c.op().get();
    return is_row_op(*op) || dynamic_cast<const ops::MatMul*>(op) || dynamic_cast<const ops::Reduce*>(op) ||
           is_layout(*op) || is_data_op(*op);
  }

  bool materialized(const ir::Call& c) const {
    if (slot_of_.count(&c) || force_.count(&c)) return true;
    if (fused_.count(&c)) return false;
    auto it = uses_.find(&c);
    return is_row_or_gemm(c) || (it != uses_.end() && it->second > 1 && !recomputed_.count(&c));
  }

  // ---- fusion decisions --------------------------------------------------------
  //
  // Row reductions (lower_loop_nest.h) are computed inside the stages that
  // read them when every reader is an elementwise value of the reduction's
  // operand shape whose own readers stay in that shape until something
  // stores it (so the reduction's rows are the stage's rows). An elementwise
  // value read more than once is recomputed by each reader rather than
  // stored and read back when that is cheap (a few arithmetic ops, no
  // exp-like call) or when a fused reduction reads it (softmax's exp(x - m),
  // read by its sum and by the division). Whatever does not qualify is
  // materialized as before, and a reduction that is not fused reads its
  // operand from memory.
  void decide_fusion() {
    std::unordered_set<const Expr*> is_output;
    for (const ExprPtr& o : outputs_) is_output.insert(o.get());
    for (const ir::Call* r : reduces_)
      if (is_row_reduce(*r) && !is_output.count(r) && !force_.count(r)) fused_.insert(r);
    for (bool changed = true; changed;) {
      changed = false;
      choose_recomputed(is_output);
      for (auto it = fused_.begin(); it != fused_.end();) {
        const ir::TensorType& shape = tensor_type(*static_cast<const ir::Call*>(*it)->args()[0]);
        bool ok = true;
        for (const ir::Call* u : users_[*it]) ok = ok && row_closed(*u, shape);
        if (ok) {
          ++it;
        } else {
          it = fused_.erase(it);
          changed = true;
        }
      }
    }
    choose_recomputed(is_output);
    for (const ir::Call* r : reduces_) {
      if (fused_.count(r)) continue;  // its stage checks empty rows first (a precheck)
      force_.insert(r->args()[0].get());
      // A reduce stage records a mean over an empty axis where it runs.
      if (static_cast<const ops::Reduce&>(*r->op()).kind == ops::ReduceKind::kMean) may_fail_ = true;
    }
  }

  bool is_elementwise_call(const ir::Call& c) const {
    return c.op() && find_scalar_lowering(c.op()->name()) != nullptr;
  }

  // Whether value u of a row stage keeps the rows of `shape` until stored:
  // u has that shape (and may be stored: its stage iterates over those
  // rows), or is a scalar of the row (the shape with its last extent 1, as
  // mean(x) + eps) that is only read inline.
  bool row_closed(const ir::Call& u, const ir::TensorType& shape) const {
    if (!is_elementwise_call(u)) return false;
    const ir::TensorType& t = tensor_type(u);
    const bool full = t.shape() == shape.shape();
    bool scalar = t.rank() == shape.rank() && is_static_one(t.shape().back());
    for (size_t a = 0; scalar && a + 1 < t.rank(); ++a) scalar = t.shape()[a] == shape.shape()[a];
    if (!full && !scalar) return false;
    if (materialized(u)) return full;
    auto it = users_.find(&u);
    if (it == users_.end()) return true;
    for (const ir::Call* v : it->second)
      if (!fused_.count(v) && !row_closed(*v, shape)) return false;
    return true;
  }

  void choose_recomputed(const std::unordered_set<const Expr*>& is_output) {
    recomputed_.clear();
    for (const auto& [e, n] : uses_) {
      auto* c = e->kind() == ir::ExprKind::kCall ? static_cast<const ir::Call*>(e) : nullptr;
      if (n < 2 || !c || !is_elementwise_call(*c) || is_output.count(e) || force_.count(e)) continue;
      bool read_by_fused = false;
      if (auto it = users_.find(e); it != users_.end())
        for (const ir::Call* u : it->second) read_by_fused = read_by_fused || fused_.count(u);
      if (read_by_fused || cheap(*c)) recomputed_.insert(e);
    }
  }

  // A few arithmetic ops over materialized values: no exp-like call, at
  // most 8 nodes inlined.
  bool cheap(const ir::Call& c) const {
    int budget = 8;
    std::function<bool(const ExprPtr&)> walk = [&](const ExprPtr& e) {
      auto* k = ir::expr_as<ir::Call>(e);
      if (!k || inputs_.count(e.get()) || fused_.count(k)) return true;
      if (!is_elementwise_call(*k) || --budget < 0) return false;
      if (find_scalar_lowering(k->op()->name())->transcendental(*k->op())) return false;
      for (const ExprPtr& a : k->args())
        if (!walk(a)) return false;
      return true;
    };
    auto* self = &c;
    for (const ExprPtr& a : self->args())
      if (!walk(a)) return false;
    return find_scalar_lowering(c.op()->name())->transcendental(*c.op()) == false;
  }

  // Post-order: every materialized value is computed before its readers.
  void plan(const ExprPtr& e) {
    // A value a row stage can produce (fusable_producer) is planned with it.
    if (auto r = row_reader_.find(e.get()); r != row_reader_.end() && !planned_.count(e.get()) &&
        !planned_.count(r->second.get()) && fusable_producer(static_cast<const ir::Call&>(*r->second)))
      return plan(r->second);
    if (!planned_.insert(e.get()).second || inputs_.count(e.get())) return;
    if (auto* g = ir::expr_as<ir::TupleGetItem>(e)) return plan(g->tuple());
    auto* c = ir::expr_as<ir::Call>(e);
    if (!c) return;
    if (is_insert(*c->op())) return plan_insert(e, *c);
    if (fusable_producer(*c)) plan_producer(c->args()[0]);
    for (const ExprPtr& a : operands(*c)) plan(a);
    if (auto* tt = dynamic_cast<const ir::TupleType*>(e->type().get()))
      return emit_tuple_stage(e, *c, tt->fields().size());
    if (!materialized(*c)) return;
    size_t s;
    if (auto it = slot_of_.find(c); it != slot_of_.end()) {
      s = it->second;
    } else {
      s = add_slot(Slot::kTemp, num_temps_, e);
      slot_of_[c] = s;
    }
    const ir::Op* op = c->op().get();
    if (auto* n = dynamic_cast<const ops::RMSNorm*>(op)) emit_row(s, *c, "rmsnorm", n->eps);
    else if (dynamic_cast<const ops::SoftMax*>(op)) emit_row(s, *c, "softmax", 0);
    else if (auto* n = dynamic_cast<const ops::LayerNorm*>(op)) emit_row(s, *c, "layernorm", n->eps);
    else if (const StageLowering* l = find_stage_lowering(op->name())) emit_stage(*l, *c, {s});
    else emit_elementwise(s, e, std::string(op->name()), /*root_inline=*/true);
  }


  // A row op (RMSNorm, LayerNorm, SoftMax) whose input is an elementwise
  // value that must also live in memory (an output, like residual+RMSNorm's
  // sum, or a value read again later) and has the row op's shape: the row
  // stage computes that value in its first pass and stores it, instead of a
  // stage of its own writing it and the row stage reading it back from
  // memory. One loop nest, one read of the operands.
  static bool is_row_op(const ir::Op& op) {
    return dynamic_cast<const ops::RMSNorm*>(&op) || dynamic_cast<const ops::LayerNorm*>(&op) ||
           dynamic_cast<const ops::SoftMax*>(&op);
  }

  bool fusable_producer(const ir::Call& c) const {
    if (!is_row_op(*c.op())) return false;
    const ExprPtr& x = c.args()[0];
    auto* xc = ir::expr_as<ir::Call>(x);
    if (!xc || !xc->op() || !is_elementwise(*xc->op()) || inputs_.count(x.get()) || planned_.count(x.get()) ||
        !materialized(*xc))
      return false;
    const ir::TensorType &xt = tensor_type(*x), &ct = tensor_type(c);
    if (xt.dtype() != ct.dtype() || xt.rank() != ct.rank() || xt.rank() == 0 || !(xt.shape() == ct.shape()))
      return false;
    // The row op's text emitter cannot compute a fused reduction: such a
    // producer is a stage of its own (a row stage) that the row op reads.
    std::unordered_set<const Expr*> searched;
    for (const ExprPtr& a : xc->args())
      if (reaches_fused(a, searched)) return false;
    // The weight / bias must not read x: their stages run before this one.
    std::unordered_set<const Expr*> seen;
    for (size_t i = 1; i < c.args().size(); ++i)
      if (reads(c.args()[i], x.get(), seen)) return false;
    return true;
  }

  // Whether e's inlined tree (through elementwise ops) has a fused
  // reduction (seen: nodes already searched, so a shared DAG is walked once).
  bool reaches_fused(const ExprPtr& e, std::unordered_set<const Expr*>& seen) const {
    auto* c = ir::expr_as<ir::Call>(e);
    if (!c || !c->op() || inputs_.count(e.get()) || !seen.insert(c).second) return false;
    if (fused_.count(c)) return true;
    if (!is_scalar_op(*c->op()) || slot_of_.count(c)) return false;
    for (const ExprPtr& a : c->args())
      if (reaches_fused(a, seen)) return true;
    return false;
  }

  // Whether e's value depends on `target` (seen: nodes already searched).
  static bool reads(const ExprPtr& e, const Expr* target, std::unordered_set<const Expr*>& seen) {
    if (e.get() == target) return true;
    if (!seen.insert(e.get()).second) return false;
    if (auto* c = ir::expr_as<ir::Call>(e)) {
      for (const ExprPtr& a : c->args())
        if (reads(a, target, seen)) return true;
    } else if (auto* t = ir::expr_as<ir::Tuple>(e)) {
      for (const ExprPtr& f : t->fields())
        if (reads(f, target, seen)) return true;
    } else if (auto* g = ir::expr_as<ir::TupleGetItem>(e)) {
      return reads(g->tuple(), target, seen);
    }
    return false;
  }

  // Gives the producer its slot and plans what it reads; emit_row computes it.
  void plan_producer(const ExprPtr& x) {
    planned_.insert(x.get());
    if (!slot_of_.count(x.get())) slot_of_[x.get()] = add_slot(Slot::kTemp, num_temps_, x);
    for (const ExprPtr& a : operands(static_cast<const ir::Call&>(*x))) plan(a);
    produced_.insert(x.get());
  }

  // The result gets its slot first; a dst / cache computed here and read by
  // nothing else is then computed straight into that slot, so the insert
  // writes its window in place (no copy). A dst given as an input (the
  // caller's, or a loop carry) is copied unless the host passes the result
  // buffer itself (loop_plan.h: an in-place carry), which the stage checks.
  void plan_insert(const ExprPtr& e, const ir::Call& c) {
    size_t s;
    if (auto it = slot_of_.find(&c); it != slot_of_.end()) {
      s = it->second;
    } else {
      s = add_slot(Slot::kTemp, num_temps_, e);
      slot_of_[&c] = s;
    }
    const ExprPtr& dst = c.args()[0];
    auto* dc = ir::expr_as<ir::Call>(dst);
    if (dc && dc->op() && !inputs_.count(dst.get()) && !slot_of_.count(dst.get()) && !planned_.count(dst.get()) &&
        uses_[dst.get()] == 1 && !dynamic_cast<const ops::RoPE*>(dc->op().get()))
      slot_of_[dst.get()] = s;
    for (const ExprPtr& a : operands(c)) plan(a);
    emit_stage(*find_stage_lowering(c.op()->name()), c, {s});
  }

  // An integer scalar operand (an insert's offset, a composed dim) as an
  // i64 value: a Constant is a literal.
  tir::ExprPtr int_operand(const ExprPtr& a) {
    if (auto* k = ir::expr_as<ir::Constant>(a)) return tir::i64(k->int_value());
    return scalar_value(slot_vars(slot_of_.at(a.get())));
  }

  // ---- expressions ----------------------------------------------------------

  std::string leaf(size_t s, Stage& st) {
    if (std::find(st.leaves.begin(), st.leaves.end(), s) == st.leaves.end()) {
      st.leaves.push_back(s);
      const ir::TensorType& t = *slots_[s].type;
      if (t.rank() == 0 || (st.rank > 0 && is_static_one(t.shape().back()) &&
                            !is_static_one(st.iter->shape().back())))
        st.inner_zero.insert(s);
    }
    return "tf_widen(x" + std::to_string(s) + "[j * is" + std::to_string(s) + "])";
  }

  std::string expr(const ExprPtr& e, Stage& st, bool root_inline = false) {
    if (!root_inline) {
      if (auto it = slot_of_.find(e.get()); it != slot_of_.end()) return leaf(it->second, st);
    }
    if (auto* k = ir::expr_as<ir::Constant>(e)) {
      DType d = k->dtype();
      return ir::is_float(d) ? float_literal(k->value(), d) : int_literal(k->int_value(), d);
    }
    auto* c = ir::expr_as<ir::Call>(e);
    TF_CHECK(c, "codegen: an unplanned non-call value");
    std::vector<std::string> a;
    for (const ExprPtr& x : c->args()) a.push_back(expr(x, st));
    const ir::Op* op = c->op().get();
    DType out = tensor_type(*c).dtype();
    st.transcendentals += is_transcendental(*op);
    std::string value = op_value(*c, op, out, a);
    if (auto* g = dynamic_cast<const ops::Gelu*>(op); g && st.stage_calls && g->approximate == "tanh" && ctc(out) == "float")
      value = staged(st, "tf_gelu_tanh_n", a[0]);
    // An f16 result's rounding (tf_rf16, 11 vector operations per 16
    // values) as F16C's round trip over the chunk (2).
    if (st.stage_calls && out == DType::kF16) return staged(st, "tf_rf16_n", value);
    return rnd(out, value);
  }
  static std::string staged(Stage& st, const std::string& fn, const std::string& arg) {
    st.staged.push_back({fn, arg});
    return "tb" + S(st.staged.size() - 1) + "[j - c0]";
  }
  // A stored value need not be rounded to its f16 type first: the store
  // rounds (and rounding twice gives the same bits).
  static std::string unstage_root(Stage& st, const std::string& value) {
    if (st.staged.empty() || st.staged.back().fn != "tf_rf16_n" || value != "tb" + S(st.staged.size() - 1) + "[j - c0]")
      return value;
    std::string arg = st.staged.back().arg;
    st.staged.pop_back();
    return arg;
  }

  std::string op_value(const ir::Call& c, const ir::Op* op, DType out, const std::vector<std::string>& a) {
    const std::string T = ctc(out);
    if (dynamic_cast<const ops::Zeros*>(op)) return ir::is_float(out) ? float_literal(0.0, out) : int_literal(0, out);
    if (auto* b = dynamic_cast<const ops::Binary*>(op)) return binary(b->kind, tensor_type(*c.args()[0]).dtype(), a);
    if (auto* u = dynamic_cast<const ops::Unary*>(op)) return unary(u->kind, out, a[0]);
    if (dynamic_cast<const ops::Cast*>(op)) return cast(tensor_type(*c.args()[0]).dtype(), out, a[0]);
    if (dynamic_cast<const ops::Silu*>(op)) return "tf_silu<" + T + ">(" + a[0] + ")";
    if (auto* g = dynamic_cast<const ops::Gelu*>(op))
      return (g->approximate == "tanh" ? "tf_gelu_tanh<" : "tf_gelu_erf<") + T + ">(" + a[0] + ")";
    // The nn activations, as core/eval/kernels/conv_norm.cc (the sigmoid
    // through the compiled exp, tanh through libm: the exp form of tanh
    // cancels near 0).
    if (dynamic_cast<const ops::ReLU*>(op)) return "tf_relu<" + T + ">(" + a[0] + ")";
    if (dynamic_cast<const ops::Sigmoid*>(op)) return "(" + T + "(1) / (" + T + "(1) + tf_exp(-(" + a[0] + "))))";
    if (dynamic_cast<const ops::Tanh*>(op)) return "((" + T + ")std::tanh(" + a[0] + "))";
    TF_CHECK(false, "codegen: op reached expr() without a check");
  }

  static std::string binary(BinaryKind k, DType in, const std::vector<std::string>& a) {
    const std::string T = ctc(in), x = a[0], y = a[1];
    const bool fl = ir::is_float(in);
    switch (k) {
      case BinaryKind::kAdd: return fl ? "((" + T + ")(" + x + " + " + y + "))" : "tf_wadd<" + T + ">(" + x + ", " + y + ")";
      case BinaryKind::kSub: return fl ? "((" + T + ")(" + x + " - " + y + "))" : "tf_wsub<" + T + ">(" + x + ", " + y + ")";
      case BinaryKind::kMul: return fl ? "((" + T + ")(" + x + " * " + y + "))" : "tf_wmul<" + T + ">(" + x + ", " + y + ")";
      case BinaryKind::kDiv:
        return fl ? "((" + T + ")(" + x + " / " + y + "))" : "tf_floordiv<" + T + ">(" + x + ", " + y + ", err)";
      case BinaryKind::kMinimum: return "tf_min<" + T + ">(" + x + ", " + y + ")";
      case BinaryKind::kMaximum: return "tf_max<" + T + ">(" + x + ", " + y + ")";
      case BinaryKind::kEq: return "(" + x + " == " + y + ")";
      case BinaryKind::kNe: return "(" + x + " != " + y + ")";
      case BinaryKind::kLt: return "(" + x + " < " + y + ")";
      case BinaryKind::kLe: return "(" + x + " <= " + y + ")";
      case BinaryKind::kGt: return "(" + x + " > " + y + ")";
      case BinaryKind::kGe: return "(" + x + " >= " + y + ")";
      case BinaryKind::kLogicalAnd: return "((" + x + ") != 0 && (" + y + ") != 0)";
      case BinaryKind::kLogicalOr: return "((" + x + ") != 0 || (" + y + ") != 0)";
      case BinaryKind::kLogicalXor: return "(((" + x + ") != 0) != ((" + y + ") != 0))";
    }
    TF_CHECK(false, "codegen: unknown Binary kind");
  }

  static std::string unary(UnaryKind k, DType d, const std::string& x) {
    const std::string T = ctc(d);
    auto call = [&](const std::string& f) { return "((" + T + ")" + f + "(" + x + "))"; };
    const bool fl = ir::is_float(d);
    switch (k) {
      case UnaryKind::kNeg: return call("tf_neg<" + T + ">");
      case UnaryKind::kAbs: return call("tf_abs<" + T + ">");
      case UnaryKind::kLogicalNot: return "((" + x + ") == 0)";
      case UnaryKind::kRsqrt: return "((" + T + ")(" + T + "(1) / std::sqrt((" + T + ")(" + x + "))))";
      case UnaryKind::kSqrt: return call("std::sqrt");
      case UnaryKind::kExp: return call("tf_exp");
      case UnaryKind::kLog: return call("std::log");
      case UnaryKind::kExp2: return call("std::exp2");
      case UnaryKind::kLog2: return call("std::log2");
      case UnaryKind::kCeil: return fl ? call("std::ceil") : x;
      case UnaryKind::kFloor: return fl ? call("std::floor") : x;
      case UnaryKind::kRound: return fl ? call("std::nearbyint") : x;
      case UnaryKind::kSquare: return call("tf_square<" + T + ">");
      case UnaryKind::kRelu: return call("tf_relu<" + T + ">");
      case UnaryKind::kSin: return call("std::sin");
      case UnaryKind::kCos: return call("std::cos");
    }
    TF_CHECK(false, "codegen: unknown Unary kind");
  }

  static std::string cast(DType from, DType to, const std::string& x) {
    const std::string D = ctc(to);
    if (to == DType::kBool) return "((" + x + ") != 0)";
    if (ir::is_int(to) && ir::is_float(from)) return "tf_f2i<" + D + ">(" + x + ")";
    return "((" + D + ")(" + x + "))";
  }

  // ---- stages ---------------------------------------------------------------

  // Declares bs<k>[] (broadcast strides of each leaf against the iteration
  // shape of slot `it`, rank r) and the fast-path test.
  void emit_leaf_strides(const Stage& st, size_t it, std::ostringstream& o) {
    const size_t r = st.rank;
    for (size_t k : st.leaves) {
      const size_t rl = slots_[k].type->rank();
      o << "  int64_t bs" << k << "[" << (r ? r : 1) << "] = {0};\n";
      for (size_t a = 0; a < r; ++a) {
        if (a + rl < r) continue;
        size_t la = a + rl - r;
        o << "  bs" << k << "[" << a << "] = sh" << k << "[" << la << "] == 1 ? 0 : st" << k << "[" << la
          << "];\n";
      }
    }
    o << "  const bool fast = true";
    for (size_t k : st.leaves)
      if (!st.inner_zero.count(k) && r > 0) o << " && (bs" << k << "[" << r - 1 << "] == 1 || sh" << it << "[" << r - 1 << "] == 1)";
    o << ";\n";
  }

  // Offsets of every leaf for outer (row) index `row`.
  void emit_offsets(const Stage& st, size_t it, const std::string& row, std::ostringstream& o) {
    for (size_t k : st.leaves) o << "    int64_t off" << k << " = 0;\n";
    if (st.rank >= 2) {
      o << "    { int64_t rem = " << row << ";\n";
      o << "      for (int a = " << st.rank - 2 << "; a >= 0; --a) { const int64_t i = rem % sh" << it
        << "[a]; rem /= sh" << it << "[a];";
      for (size_t k : st.leaves) o << " off" << k << " += i * bs" << k << "[a];";
      o << " } }\n";
    }
    for (size_t k : st.leaves) {
      std::string T = ctype(slots_[k].type->dtype());
      o << "    const " << T << "* __restrict x" << k << " = static_cast<const " << T << "*>(B[" << k
        << "]) + off" << k << ";\n";
    }
  }

  // The same loop body twice: unit inner strides as constants (vectorizes)
  // or the run-time strides.
  void emit_two_paths(const Stage& st, std::ostringstream& o, const std::function<void()>& body) {
    o << "    if (fast) {\n";
    for (size_t k : st.leaves)
      o << "      constexpr int64_t is" << k << " = " << (st.inner_zero.count(k) || st.rank == 0 ? 0 : 1) << ";\n";
    body();
    o << "    } else {\n";
    for (size_t k : st.leaves)
      o << "      const int64_t is" << k << " = " << (st.rank ? "bs" + S(k) + "[" + S(st.rank - 1) + "]" : "0") << ";\n";
    body();
    o << "    }\n";
  }

  static bool is_transcendental(const ir::Op& op) {
    if (dynamic_cast<const ops::Silu*>(&op) || dynamic_cast<const ops::Gelu*>(&op) ||
        dynamic_cast<const ops::Sigmoid*>(&op) || dynamic_cast<const ops::Tanh*>(&op))
      return true;
    auto* u = dynamic_cast<const ops::Unary*>(&op);
    if (!u) return false;
    switch (u->kind) {
      case UnaryKind::kExp: case UnaryKind::kLog: case UnaryKind::kExp2: case UnaryKind::kLog2:
      case UnaryKind::kSin: case UnaryKind::kCos: return true;
      default: return false;
    }
  }

  // Whether a stage may stream its output (tf_stream in the prelude): 4- and
  // 8-byte values, and memory-bound work: fewer than one exp-like call per
  // two tensors the stage moves. Staging an inline exp-like call's loop
  // through L1 costs a compute-bound loop more than the saved line reads
  // (measured on one core at 4096x4096 f32: silu(a) * b, 1 call per 3
  // tensors, 5.9 -> 4.5 ms streamed; gelu and softmax, 1 per 2, 10% slower
  // streamed); calls computed a chunk at a time (st.staged, SoftMax's
  // tf_exp_sum_n) are in L1 buffers already and do not count (gelu and
  // softmax at 4096x4096 f32, memory-bound on a loaded machine: 13.0 -> 12.3
  // and 12.1 -> 11.8 ms streamed, rmsnorm 11.2). The stage then declares
  // `nt`, true when the output is large enough to have left the cache
  // before anyone reads it.
  static bool can_stream(DType d, const Stage& st) {
    const int tensors = static_cast<int>(st.leaves.size()) + 1;
    const int inline_calls = st.transcendentals - static_cast<int>(st.staged.size());
    return !is_half(d) && (ir::dtype_bits(d) == 32 || ir::dtype_bits(d) == 64) && 2 * inline_calls < tensors;
  }
  static void emit_stream_flag(std::ostringstream& o, const std::string& T) {
    o << "  const bool nt = outer * inner * static_cast<int64_t>(sizeof(" << T << ")) >= kStreamMinBytes;\n";
  }

  // How a loop body reads leaf k along the row (leaf() writes it so).
  static std::string leaf_read(size_t k) { return "x" + S(k) + "[j * is" + S(k) + "]"; }
  static std::string replace_all(std::string s, const std::string& from, const std::string& to) {
    for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) s.replace(p, from.size(), to);
    return s;
  }
  // The f16 leaves `text` reads along the row. Chunked loops widen them into
  // xw<k> with tf_widen_n (F16C) and read those: GCC vectorizes the scalar
  // conversion into ~13 operations per 16 values, against one.
  std::vector<size_t> widened_leaves(const Stage& st, const std::string& text) const {
    std::vector<size_t> wide;
    for (size_t k : st.leaves)
      if (slots_[k].type->dtype() == DType::kF16 && !st.inner_zero.count(k) &&
          text.find(leaf_read(k)) != std::string::npos)
        wide.push_back(k);
    return wide;
  }
  // Per chunk starting at `c0`: declares and fills xw<k> for `wide`; returns
  // a function that rewrites a loop body to read them.
  std::function<std::string(const std::string&)> emit_widened(std::ostringstream& o, const std::vector<size_t>& wide,
                                                              const std::string& c0, const std::string& c1) const {
    for (size_t k : wide) {
      o << "        alignas(64) float xw" << k << "[kChunk];\n";
      o << "        tf_widen_n(xw" << k << ", x" << k << " + " << c0 << " * is" << k << ", is" << k << ", " << c1 << " - "
        << c0 << ");\n";
    }
    return [wide, c0](const std::string& text) {
      std::string t = text;
      for (size_t k : wide) t = replace_all(t, leaf_read(k), "xw" + S(k) + "[j - " + c0 + "]");
      return t;
    };
  }

  // `value` without rnd()'s rounding to dt (f16 / bf16) around all of it: a
  // store rounds to dt itself, and rounding twice gives the same bits.
  static std::string unrounded(DType dt, const std::string& value) {
    if (!is_half(dt)) return value;
    const std::string round = rnd(dt, "");
    const std::string head = round.substr(0, round.size() - 1);
    if (value.compare(0, head.size(), head) != 0 || value.back() != ')') return value;
    int depth = 0;
    for (size_t i = head.size() - 1; i + 1 < value.size(); ++i) {
      depth += value[i] == '(' ? 1 : value[i] == ')' ? -1 : 0;
      if (depth == 0) return value;  // the head's parenthesis closes before the end
    }
    return value.substr(head.size(), value.size() - head.size() - 1);
  }

  // `for (j in [lo, hi)) { prefix y[j] = tf_narrow<T>(value); }` under
  // `#pragma omp simd` (prefix: statements the value reads; value in the
  // compute type of dt, the stored one). The loop runs in chunks of kChunk
  // through L1 buffers when the stage needs any: f16 leaves widened by
  // F16C, calls staged by expr() (st.staged, into tb<i>), a f16 / bf16
  // output narrowed by tf_narrow_n; with `stream`, a stage that set `nt`
  // computes its chunks into a buffer and streams them to y (tf_stream).
  // (`rounded`: the value, possibly with rnd()'s rounding around it.)
  void emit_store_loop(const Stage& st, std::ostringstream& o, DType dt, bool stream, const std::string& lo,
                       const std::string& hi, const std::string& prefix, const std::string& rounded) const {
    const std::string T = ctype(dt), C = ctc(dt), value = unrounded(dt, rounded);
    std::string reads = prefix + value;
    for (const Stage::Staged& c : st.staged) reads += c.arg;
    const std::vector<size_t> wide = widened_leaves(st, reads);
    const bool half = is_half(dt);
    auto chunks = [&](bool nt) {
      o << "      for (int64_t c0 = " << lo << "; c0 < " << hi << "; c0 += kChunk) {\n";
      o << "        const int64_t c1 = c0 + kChunk < " << hi << " ? c0 + kChunk : " << hi << ";\n";
      auto rw = emit_widened(o, wide, "c0", "c1");
      for (size_t i = 0; i < st.staged.size(); ++i) {
        o << "        alignas(64) float tb" << i << "[kChunk];\n";
        o << "        #pragma omp simd\n";
        o << "        for (int64_t j = c0; j < c1; ++j) tb" << i << "[j - c0] = " << rw(st.staged[i].arg) << ";\n";
        o << "        " << st.staged[i].fn << "(tb" << i << ", c1 - c0);\n";
      }
      if (nt || half) {
        o << "        alignas(64) " << C << " buf[kChunk];\n";
        o << "        #pragma omp simd\n";
        o << "        for (int64_t j = c0; j < c1; ++j) { " << rw(prefix) << "buf[j - c0] = " << rw(value) << "; }\n";
        o << "        " << (nt ? "tf_stream(y + c0, buf, c1 - c0);" : "tf_narrow_n(y + c0, 1, buf, c1 - c0);") << "\n";
      } else {
        o << "        #pragma omp simd\n";
        o << "        for (int64_t j = c0; j < c1; ++j) { " << rw(prefix) << "y[j] = tf_narrow<" << T << ">(" << rw(value)
          << "); }\n";
      }
      o << "      }\n";
      if (nt) o << "      tf_stream_fence();\n";
    };
    if (stream) {
      o << "      if (nt) {\n";
      chunks(true);
      o << "      } else {\n";
    }
    if (half || !wide.empty() || !st.staged.empty()) {
      chunks(false);
    } else {
      o << "      #pragma omp simd\n";
      o << "      for (int64_t j = " << lo << "; j < " << hi << "; ++j) { " << prefix << "y[j] = tf_narrow<" << T << ">("
        << value << "); }\n";
    }
    if (stream) o << "      }\n";
  }

  // Lowered through TIR (lower_loop_nest.h), printed by the CPU printer.
  void emit_elementwise(size_t s, const ExprPtr& e, const std::string& what, bool root_inline = false) {
    StageEnv env{[this](const Expr* x) -> long {
                   auto it = slot_of_.find(x);
                   return it == slot_of_.end() ? -1 : static_cast<long>(it->second);
                 },
                 [this](size_t k) -> const SlotVars& { return slot_vars(k); },
                 [this](const ir::Call& c) { return fused_.count(&c) > 0; }, err_var()};
    LoweredStage l;
    l.stage = tir::hoist_loop_invariants(lower_stage(env, s, e, what, root_inline, &l.may_fail, &l.precheck));
    emit_lowered(l);
  }

  // Verifies a lowered stage, records its TIR and prints it: its precheck
  // among the entry's checks that run before any stage, the stage itself in
  // order. Parallel loops get their serial twin below the threshold here.
  void emit_lowered(const LoweredStage& l) {
    const tir::StmtPtr stage = tir::split_parallel_threshold(l.stage);
    may_fail_ = may_fail_ || l.may_fail;
    err_var();
    std::vector<tir::VarPtr> entry;
    for (const auto& [v, name] : entry_names_) entry.push_back(v);
    tir::verify(tir::Function{"stage", entry, stage});
    if (l.precheck) {
      tir::verify(tir::Function{"precheck", entry, l.precheck});
      tir_ << tir::to_string(l.precheck);
      prechecks_ << "  {\n" << printer().stmt(l.precheck, 1) << "  }\n";
    }
    tir_ << tir::to_string(stage);
    stages_ << "  {\n" << printer().stmt(stage, 1) << "  }\n";
  }

  // What a stage lowering sees of the entry (entry_vars.h).
  EntryVars entry_vars() {
    err_var();
    return EntryVars{[this](size_t k) -> const SlotVars& { return slot_vars(k); },
                     [this](size_t k) { return slots_[k].kind == Slot::kInput; },
                     err_,
                     info_,
                     rt_,
                     rs_,
                     [this](const RuntimeScalar& r) {
                       scalars_.push_back(r);
                       return scalars_.size() - 1;
                     }};
  }

  // The entry's slot k as TIR variables: data as B[k] typed, shape and
  // strides as the entry's sh<k> / st<k>.
  const SlotVars& slot_vars(size_t k) {
    while (slot_vars_.size() < slots_.size()) {
      const size_t n = slot_vars_.size();
      const ir::DType d = slots_[n].type->dtype();
      SlotVars v{tir::Var::make("B" + S(n), tir::Type::pointer(d)),
                 tir::Var::make("sh" + S(n), tir::Type::pointer(DType::kI64)),
                 tir::Var::make("st" + S(n), tir::Type::pointer(DType::kI64)), slots_[n].type.get()};
      entry_names_.emplace_back(v.data, "static_cast<" + ctype(d) + "*>(B[" + S(n) + "])");
      entry_names_.emplace_back(v.shape, "sh" + S(n));
      entry_names_.emplace_back(v.strides, "st" + S(n));
      slot_vars_.push_back(std::move(v));
    }
    return slot_vars_.at(k);
  }
  // The entry's error flag; also declares the entry's other variables a
  // stage may read: the runtime table, its rt->info and the run-time
  // scalars RS.
  const tir::VarPtr& err_var() {
    if (!err_) {
      err_ = tir::Var::make("err", tir::Type::pointer(DType::kI32));
      entry_names_.emplace_back(err_, "err");
      rt_ = tir::Var::make("rt", tir::Type::opaque_handle());
      entry_names_.emplace_back(rt_, "rt");
      info_ = tir::Var::make("info", tir::Type::pointer(DType::kI64));
      entry_names_.emplace_back(info_, "rt->info");
      rs_ = tir::Var::make("RS", tir::Type::pointer(DType::kI64));
      entry_names_.emplace_back(rs_, "RS");
      // The entry's own locals: no stage variable may take their names.
      for (const char* n : {"B", "P", "SH", "ST", "err_"})
        entry_names_.emplace_back(tir::Var::make(n, tir::Type::scalar(DType::kI64)), n);
    }
    return err_;
  }
  // A printer per stage: it names variables by node, and a stage's nodes
  // die with it.
  cpu::CppPrinter printer() {
    err_var();
    cpu::CppPrinter p;
    for (const auto& [v, name] : entry_names_) p.predeclare(v, name);
    return p;
  }

  // A produced input a row operation computes in its first pass (see
  // emit_row): `value`, stored to `slot` there.
  struct Keep {
    size_t slot = SIZE_MAX;
    std::string value;
  };

  // `for (j in [0, inner)) { body }` under `#pragma omp simd <clauses>`
  // (body may read xv, the kept value), cut in chunks of kChunk (1 KiB of
  // f32); with `prefetch`, each chunk first prefetches the matching part of
  // the next row of every leaf read along the row (fast path only: is<k> ==
  // 1). A row operation's later passes work from cache, so this overlaps
  // the next row's memory reads with their arithmetic. Chunks also carry
  // f16 leaves widened by F16C and a f16 / bf16 kept value narrowed by
  // tf_narrow_n. `after` runs once per chunk, after its loop. `chunk` cuts
  // a reduction in chunks without prefetching: each chunk's reduction is a
  // chain of its own that the out-of-order core overlaps with the next
  // (one chain held SoftMax's max to a vector per 4 cycles; chunked, the
  // whole kernel took 8% less at 512x4096 f32).
  void emit_pass(const Stage& st, std::ostringstream& o, const std::string& clauses, const Keep& keep,
                 const std::string& body, bool prefetch = true, const std::string& after = "",
                 bool chunk = false) const {
    const std::vector<size_t> wide = widened_leaves(st, keep.value + body);
    const bool keeping = keep.slot != SIZE_MAX;
    const DType kd = keeping ? slots_[keep.slot].type->dtype() : DType::kF32;
    const std::string k = S(keep.slot), KT = ctype(kd);
    const bool half_keep = keeping && is_half(kd);
    const std::string pragma = "#pragma omp simd" + (clauses.empty() ? "" : " " + clauses);
    auto keep_text = [&](const std::function<std::string(const std::string&)>& rw) -> std::string {
      if (!keeping) return "";
      return "const " + ctc(kd) + " xv = " + rw(keep.value) + "; " +
             (half_keep ? "kb[j - j0] = xv; "
                        : "const_cast<" + KT + "*>(x" + k + ")[j * is" + k + "] = tf_narrow<" + KT + ">(xv); ");
    };
    if (!prefetch && !chunk && wide.empty() && !half_keep) {
      o << "      " << pragma << "\n";
      o << "      for (int64_t j = 0; j < inner; ++j) { " << keep_text([](const std::string& t) { return t; }) << body
        << " }\n";
      return;
    }
    o << "      for (int64_t j0 = 0; j0 < inner; j0 += kChunk) {\n";
    o << "        const int64_t j1 = j0 + kChunk < inner ? j0 + kChunk : inner;\n";
    if (prefetch && st.rank >= 2) {
      for (size_t l : st.leaves) {
        // A leaf broadcast along the rows (a weight) reads the same row again.
        if (st.inner_zero.count(l) || slots_[l].type->rank() < st.rank) continue;
        const std::string T = ctype(slots_[l].type->dtype()), next = "bs" + S(l) + "[" + S(st.rank - 2) + "]";
        o << "        if (is" << l << " == 1 && " << next << " != 0) for (int64_t pj = j0; pj < j1; pj += 64 / sizeof(" << T
          << ")) __builtin_prefetch(x" << l << " + " << next << " + pj, 0, 3);\n";
      }
    }
    auto rw = emit_widened(o, wide, "j0", "j1");
    if (half_keep) o << "        alignas(64) float kb[kChunk];\n";
    o << "        " << pragma << "\n";
    o << "        for (int64_t j = j0; j < j1; ++j) { " << keep_text(rw) << rw(body) << " }\n";
    if (half_keep)
      o << "        tf_narrow_n(const_cast<" << KT << "*>(x" << k << ") + j0 * is" << k << ", is" << k << ", kb, j1 - j0);\n";
    if (!after.empty()) o << "        " << after << "\n";
    o << "      }\n";
  }

  // A row operation over the last axis: one task per row, the row's input
  // expression re-evaluated per pass (it stays in cache between passes).
  void emit_row(size_t s, const ir::Call& c, const std::string& kind, double eps) {
    Stage st;
    st.iter = slots_[s].type.get();
    st.rank = st.iter->rank();
    const std::string x = expr(c.args()[0], st);
    const std::string w = kind != "softmax" ? expr(c.args()[1], st) : "";
    const std::string bias = kind == "layernorm" ? expr(c.args()[2], st) : "";
    const DType dt = st.iter->dtype();
    // T stores, C computes (float for f16 / bf16); rounding points as core/eval.
    const std::string T = ctype(dt), C = ctc(dt);
    // The first pass reads the input as x1. For a produced input
    // (fusable_producer) that is its value computed from its own operands
    // (keep.value), stored to its slot there; later passes read it back
    // through x, from cache.
    std::string x1 = x, xv = x;
    Keep keep;
    if (produced_.count(c.args()[0].get())) {
      keep.slot = slot_of_.at(c.args()[0].get());
      keep.value = xv = expr(c.args()[0], st, /*root_inline=*/true);
      x1 = "xv";
    }
    const size_t r = st.rank;
    std::ostringstream& o = stages_;
    o << "  { // stage: " << kind << " -> slot " << s << "\n";
    o << "  int64_t outer = 1;\n";
    for (size_t a = 0; a + 1 < r; ++a) o << "  outer *= sh" << s << "[" << a << "];\n";
    o << "  const int64_t inner = sh" << s << "[" << r - 1 << "];\n";
    o << "  if (outer * inner > 0) {\n";
    emit_leaf_strides(st, s, o);
    // SoftMax's own exp runs a chunk at a time (emit_softmax) but for f64.
    const bool stream = can_stream(dt, st) && !(kind == "softmax" && dt == DType::kF64);
    if (stream) emit_stream_flag(o, T);
    o << "  #pragma omp parallel for schedule(static) if (outer * inner >= 32768)\n";
    o << "  for (int64_t row = 0; row < outer; ++row) {\n";
    emit_offsets(st, s, "row", o);
    o << "    " << T << "* __restrict y = static_cast<" << T << "*>(B[" << s << "]) + row * inner;\n";
    emit_two_paths(st, o, [&] {
      if (kind == "rmsnorm") {
        // HF LlamaRMSNorm order, as core/eval: squares round to T, the sum
        // accumulates in double, h * r rounds to T before the weight product.
        o << "      double acc = 0;\n";
        emit_pass(st, o, "reduction(+:acc)", keep,
                  "const " + C + " h = " + x1 + "; acc += static_cast<double>(static_cast<" + C + ">(h * h));");
        o << "      const " << C << " var = static_cast<" << C << ">(acc) / static_cast<" << C << ">(inner);\n";
        o << "      const " << C << " rr = " << C << "(1) / std::sqrt(var + static_cast<" << C << ">("
          << float_literal(eps, DType::kF64) << "));\n";
        // An f16 h * r rounds a chunk at a time (see expr()).
        Stage last = st;
        const std::string hr = "static_cast<" + C + ">((" + x + ") * rr)";
        const std::string n = dt == DType::kF16 ? staged(last, "tf_rf16_n", hr) : rnd(dt, hr);
        emit_store_loop(last, o, dt, stream, "0", "inner", "const " + C + " n = " + n + "; ",
                        "static_cast<" + C + ">((" + w + ") * n)");
      } else if (kind == "layernorm" && dt == DType::kF64) {
        // core/eval's order: mean, then the biased variance, both in double.
        o << "      double mean = 0, var = 0;\n";
        emit_pass(st, o, "reduction(+:mean)", keep, "mean += " + x1 + ";", /*prefetch=*/false);
        o << "      mean /= static_cast<double>(inner);\n";
        emit_pass(st, o, "reduction(+:var)", {}, "const double d = " + x + " - mean; var += d * d;");
        o << "      var /= static_cast<double>(inner);\n";
        o << "      const double rstd = 1.0 / std::sqrt(var + " << float_literal(eps, DType::kF64) << ");\n";
        emit_store_loop(st, o, dt, stream, "0", "inner", "", "(" + x + " - mean) * rstd * (" + w + ") + (" + bias + ")");
      } else if (kind == "layernorm") {
        // f32 / f16 / bf16: one pass for the moments, in double, of the
        // row shifted by its first element (the shifted-data variance:
        // E[d^2] - E[d]^2 with d = x - x[0] does not cancel the way
        // E[x^2] - E[x]^2 does when the row's spread is tiny against its
        // mean). The normalization runs in C, a few float ulps from
        // core/eval's two-pass double computation rounded once.
        o << "      double k0; { const int64_t j = 0; k0 = static_cast<double>(" << xv << "); }\n";
        o << "      double mean = 0, sq = 0;\n";
        emit_pass(st, o, "reduction(+:mean, sq)", keep,
                  "const double v = static_cast<double>(" + x1 + ") - k0; mean += v; sq += v * v;");
        o << "      mean /= static_cast<double>(inner);\n";
        o << "      double var = sq / static_cast<double>(inner) - mean * mean;\n";
        o << "      var = var > 0 ? var : 0;\n";
        o << "      mean += k0;\n";
        // The mean as an unevaluated sum mc + ml of two C values: x - mc is
        // exact where x is near the mean (Sterbenz), so (x - mc) - ml keeps
        // the digits a rounded mean would lose when the spread is tiny.
        o << "      const " << C << " mc = static_cast<" << C << ">(mean), ml = static_cast<" << C
          << ">(mean - static_cast<double>(mc)), rc = static_cast<" << C << ">(1.0 / std::sqrt(var + "
          << float_literal(eps, DType::kF64) << "));\n";
        emit_store_loop(st, o, dt, stream, "0", "inner", "",
                        "((static_cast<" + C + ">(" + x + ") - mc) - ml) * rc * static_cast<" + C + ">(" + w +
                            ") + static_cast<" + C + ">(" + bias + ")");
      } else {
        emit_softmax(st, o, dt, stream, x, x1, keep);
      }
    });
    o << "  }\n  }\n  }\n";
  }

  // SoftMax over one row: the max; the exponentials and their sum; the
  // scaled store. In float (f32, f16, bf16) the exponentials are computed a
  // chunk (kChunk) at a time by tf_exp_sum_n, in place in a float row the
  // loop fills (each chunk's line reads, and the prefetches of the next
  // row, overlap the previous chunk's arithmetic: filling the whole row
  // first, then computing, took 1.45 against 0.93 ms at 512x4096 and 16.5
  // against 11.9 ms at 4096x4096 on a memory-bound machine):
  // - f16 / bf16 rows, and f32 rows streamed to y (nt), up to kRowScratch
  //   long use a row in L1 / L2 (sb): the store pass reads sb, so y is
  //   written once (streamed, or narrowed a chunk at a time) and a f16 /
  //   bf16 row computes each exp once;
  // - other f32 rows use y itself and scale it in place.
  // Longer f16 / bf16 rows compute the exponentials twice (they stay in
  // float until the division, as core/eval keeps them in a float buffer);
  // f64 keeps the scalar loop. A product by 1 / sum replaces the per-element
  // division (within an ulp of it; the division was ~5% of the f32 kernel,
  // more of a f16 / bf16 one).
  void emit_softmax(const Stage& st, std::ostringstream& o, DType dt, bool stream, const std::string& x,
                    const std::string& x1, const Keep& keep) const {
    const std::string C = ctc(dt), diff = "static_cast<" + C + ">((" + x + ") - m)";
    const bool half = is_half(dt), scratch = half || (C == "float" && stream);
    o << "      " << C << " m = -std::numeric_limits<" << C << ">::infinity();\n";
    emit_pass(st, o, "reduction(max:m)", keep, "const " + C + " v = " + x1 + "; m = v > m ? v : m;", /*prefetch=*/false,
              "", /*chunk=*/true);
    o << "      " << C << " sum = 0;\n";
    if (C == "double") {
      emit_pass(st, o, "reduction(+:sum)", {}, "const double ev = tf_exp(" + diff + "); y[j] = ev; sum += ev;");
      o << "      const double inv = 1.0 / sum;\n";
      emit_store_loop(st, o, dt, false, "0", "inner", "", "y[j] * inv");
      return;
    }
    if (scratch) {
      o << "      if (" << (half ? "" : "nt && ") << "inner <= kRowScratch) {\n";
      o << "      alignas(64) float sb[kRowScratch];\n";
      emit_pass(st, o, "", {}, "sb[j] = " + x + ";", true, "sum += tf_exp_sum_n(sb + j0, j1 - j0, m);");
      o << "      const float inv = 1.0f / sum;\n";
      emit_store_loop(st, o, dt, stream, "0", "inner", "", "sb[j] * inv");
      o << "      } else {\n";
    }
    if (!half) {
      emit_pass(st, o, "", {}, "y[j] = " + x + ";", true, "sum += tf_exp_sum_n(y + j0, j1 - j0, m);");
      o << "      const float inv = 1.0f / sum;\n";
      emit_store_loop(st, o, dt, false, "0", "inner", "", "y[j] * inv");
    } else {
      o << "      #pragma omp simd reduction(+:sum)\n";
      o << "      for (int64_t j = 0; j < inner; ++j) sum += tf_exp(" << diff << ");\n";
      o << "      const float inv = 1.0f / sum;\n";
      emit_store_loop(st, o, dt, false, "0", "inner", "", "tf_exp(" + diff + ") * inv");
    }
    if (scratch) o << "      }\n";
  }

  // The buffer of projection #i of multi-output call e: its output slot,
  // or a temporary when it is not an output.
  size_t projection_slot(const ExprPtr& e, int64_t i) {
    auto p = projections_.find({e.get(), i});
    if (p != projections_.end())
      if (auto it = slot_of_.find(p->second); it != slot_of_.end()) return it->second;
    auto* tt = static_cast<const ir::TupleType*>(e->type().get());
    size_t s = add_slot(Slot::kTemp, num_temps_,
                        std::static_pointer_cast<const ir::TensorType>(tt->fields().at(static_cast<size_t>(i))));
    if (p != projections_.end()) slot_of_[p->second] = s;
    return s;
  }

  std::string assemble() const {
    std::ostringstream o;
    o << "extern \"C\" int TF_ENTRY(void* const* P, const int64_t* SH, const int64_t* ST, const tf_rt* rt) {\n";
    o << "  (void)rt;\n";
    o << "  int err_ = 0; int* const err = &err_; (void)err;\n";
    o << "  void* B[" << (slots_.empty() ? 1 : slots_.size()) << "];\n";
    size_t off = 0;
    for (size_t k = 0; k < slots_.size(); ++k) {
      const size_t rk = slots_[k].type->rank();
      o << "  const int64_t* sh" << k << " = SH + " << off << "; const int64_t* st" << k << " = ST + " << off
        << "; (void)sh" << k << "; (void)st" << k << ";\n";
      off += rk;
      o << "  B[" << k << "] = P[" << k << "];\n";  // temporaries too: the host allocates them
    }
    o << "  const int64_t* RS = SH + " << off << "; (void)RS;\n";
    o << prechecks_.str();  // may return: nothing is allocated or written yet
    o << serial_below_threshold(stages_.str());
    o << "  return __atomic_load_n(err, __ATOMIC_RELAXED);\n";
    o << "}\n";
    return o.str();
  }

  const ir::Function* fn_;  // null for a segment (generate_segment)
  const std::vector<ExprPtr>* seg_inputs_;
  const std::vector<ExprPtr>* seg_outputs_;
  std::unordered_set<const Expr*> inputs_;  // nodes given in input slots
  std::vector<Slot> slots_;
  size_t num_temps_ = 0;
  std::vector<ExprPtr> outputs_;
  std::unordered_map<const Expr*, int> uses_;
  std::unordered_map<const Expr*, size_t> slot_of_;
  std::unordered_set<const Expr*> force_;
  std::map<std::pair<const Expr*, int64_t>, const Expr*> projections_;  // (call, index) -> its TupleGetItem
  std::unordered_set<const Expr*> planned_;
  std::unordered_set<const Expr*> produced_;  // elementwise values computed inside a row stage
  std::unordered_map<const Expr*, ExprPtr> row_reader_;  // a value -> a row op reading it as its input
  std::ostringstream prechecks_;  // run before any allocation or stage; may return an error code
  std::ostringstream stages_;
  std::ostringstream tir_;  // the TIR of the stages lowered through it
  bool may_fail_ = false;
  std::vector<RuntimeScalar> scalars_;
  std::vector<const ir::Call*> reduces_;  // every Reduce, in first-use order
  std::unordered_map<const Expr*, std::vector<const ir::Call*>> users_;  // a value -> the calls reading it
  std::unordered_set<const Expr*> fused_;       // row reductions computed inside their readers' stages
  std::unordered_set<const Expr*> recomputed_;  // multi-use elementwise values each reader recomputes
  std::deque<SlotVars> slot_vars_;
  tir::VarPtr err_, rt_, info_, rs_;  // err_var()
  std::vector<std::pair<tir::VarPtr, std::string>> entry_names_;  // the entry's variables, as spelled there
};

}  // namespace

Program generate(const ir::Function& fn) { return Generator(&fn).run(); }

Program generate_segment(const std::vector<ExprPtr>& inputs, const std::vector<ExprPtr>& outputs) {
  return Generator(nullptr, &inputs, &outputs).run();
}

}  // namespace tf::compiler
