#include "core/spmd/executor.h"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "core/eval/evaluator.h"
#include "core/eval/kernel.h"
#include "core/eval/kernels/dispatch.h"
#include "core/ir/error.h"
#include "core/ops/registry.h"
#include "core/ops/sharding/shard_rules.h"
#include "core/ops/sharding/shard_util.h"
#include "core/sema/bind.h"
#include "core/sema/dispatch.h"
#include "core/spmd/blocks.h"
#include "core/spmd/segments.h"

namespace tf::spmd {
namespace {

using runtime::NDArray;
using ir::ErrorKind;

struct Value {
  NDArray t;
  std::vector<Value> fields;
  bool is_tuple = false;
};

Value tensor(NDArray a) { return Value{std::move(a), {}, false}; }

// A Tuple operand (Conv2D's absent bias, Concat's inputs) is passed
// flattened, as the plain evaluator does (eval/kernel.h).
void flatten(const Value& v, std::vector<NDArray>* out) {
  if (!v.is_tuple) {
    out->push_back(v.t);
    return;
  }
  for (const Value& f : v.fields) flatten(f, out);
}

// Every rank's `mine` (a 1-D contiguous array, the same size on every rank)
// on every rank, in row-major rank order: all-gathers over each mesh axis,
// the last first.
NDArray gather_every_rank(NDArray mine, Communicator& comm) {
  const auto& shape = comm.mesh_shape();
  for (size_t m = shape.size(); m-- > 0;) {
    if (shape[m] == 1) continue;
    NDArray out = NDArray::empty(mine.dtype(), {mine.numel() * shape[m]});
    comm.all_gather(m, mine, out);
    mine = out;
  }
  return mine;
}

// x with tensor axis d moved to the front, as a contiguous array: a block of
// d's extent is then contiguous, which is what collectives move.
NDArray to_front(const NDArray& x, size_t d) {
  std::vector<int64_t> shape{x.shape()[d]}, strides{x.strides()[d]};
  for (size_t k = 0; k < x.ndim(); ++k)
    if (k != d) {
      shape.push_back(x.shape()[k]);
      strides.push_back(x.strides()[k]);
    }
  return eval::contiguous_copy(NDArray::view(x, shape, strides, 0));
}

// The inverse of to_front for a contiguous y (axis d at the front), as a view.
NDArray from_front(const NDArray& y, size_t d) {
  const std::vector<int64_t> s = ir::c_order_strides(y.shape());
  std::vector<int64_t> shape(y.shape().begin() + 1, y.shape().end()), strides(s.begin() + 1, s.end());
  shape.insert(shape.begin() + static_cast<std::ptrdiff_t>(d), y.shape()[0]);
  strides.insert(strides.begin() + static_cast<std::ptrdiff_t>(d), s[0]);
  return NDArray::view(y, shape, strides, 0);
}

const ir::TensorType& operand_type(const ir::Call& c, size_t i) {
  const ir::TensorType* t = ir::as_tensor(c.args()[i]->type());
  if (!t) unsupported("a tuple operand of '" + std::string(c.op() ? c.op()->name() : "call") + "'");
  return *t;
}

int64_t gather_axis(const ir::Call& c) {
  const int64_t axis = std::get<int64_t>(c.op()->attrs()[0].value);
  return axis < 0 ? axis + static_cast<int64_t>(operand_type(c, 0).rank()) : axis;
}

std::vector<int64_t> reduced_axes(const ir::Call& c) {
  std::vector<int64_t> axes;
  for (const auto& a : c.op()->attrs())
    if (a.name == "axes")
      for (int64_t k : std::get<std::vector<int64_t>>(a.value))
        axes.push_back(k < 0 ? k + static_cast<int64_t>(operand_type(c, 0).rank()) : k);
  return axes;
}

bool is_op(const ir::Call& c, std::string_view name) { return c.op() && c.op()->name() == name; }

bool reduces_split_axis(const ir::Call& c) {
  return is_op(c, "Reduce") && splits_axis(operand_type(c, 0), reduced_axes(c));
}

bool gathers_split_axis(const ir::Call& c) {
  return is_op(c, "Gather") && splits_axis(operand_type(c, 0), {gather_axis(c)});
}

// Operand i is replicated (unsharded, or Broadcast on every mesh axis), the
// result splits an axis the operand spans, and the op aligns replicated
// operands with its result: the rank reads its block of the operand.
// Returns the type under which that block is the operand's block (its
// shape, Split where the result splits an aligned axis of the same extent),
// or null.
ir::TypePtr replicated_operand_view(const ir::Call& c, size_t i) {
  const ir::TensorType* rt = ir::as_tensor(c.type());
  const ir::TensorType* at = ir::as_tensor(c.args()[i]->type());
  const ir::ShardLayout* rl = rt ? ir::as_shard_layout(rt->layout()) : nullptr;
  if (!rl || !at || at->rank() > rt->rank()) return nullptr;
  if (const ir::ShardLayout* al = ir::as_shard_layout(at->layout()); al && !ops::shard::all_broadcast(*al))
    return nullptr;
  const ops::OpInfo* info = c.op() ? ops::find_op(c.op()->name()) : nullptr;
  if (!info || !ops::aligns_replicated_operands(info->shard)) return nullptr;
  auto result_attrs = ops::shard::to_block_logical(rt->shape(), *rl);
  if (!result_attrs) return nullptr;
  const int64_t lead = static_cast<int64_t>(rt->rank() - at->rank());
  std::vector<ir::ShardAttr> attrs(result_attrs->size(), ir::ShardAttr::broadcast());
  bool any = false;
  for (size_t m = 0; m < attrs.size(); ++m) {
    const ir::ShardAttr& r = (*result_attrs)[m];
    const int64_t j = r.pos - lead;
    if (!r.is_split() || j < 0 || !at->shape()[j].structural_equal(rt->shape()[r.pos])) continue;
    attrs[m] = ir::ShardAttr::split(j);
    any = true;
  }
  if (!any) return nullptr;
  return ir::TensorType::make(at->shape(), at->dtype(), ops::shard::canonical_layout(rl->mesh(), attrs, at->shape()));
}

}  // namespace

bool crosses_ranks(const ir::Call& c) {
  if (c.callee() || is_op(c, "Local") || is_op(c, "Reshard") || reduces_split_axis(c) || gathers_split_axis(c))
    return true;
  for (size_t i = 0; i < c.args().size(); ++i)
    if (replicated_operand_view(c, i)) return true;
  return false;
}

namespace {

struct Rank {
  Grid grid;
  size_t index = 0;
  Communicator& comm;
};

class RankInterpreter {
 public:
  RankInterpreter(const Rank& rank, ir::DimBindings bindings, const RankInterpreter* parent = nullptr)
      : rank_(rank), bindings_(std::move(bindings)), parent_(parent) {}

  void bind(const ir::Var* v, Value x) { memo_[v] = std::move(x); }
  // This body's ops run as these compiled segments (null: on the
  // evaluator's kernels).
  void use(const SegmentPlan* plan) { plan_ = plan; }

  const Value& eval(const ir::ExprPtr& e) {
    for (const RankInterpreter* in = this; in; in = in->parent_) {
      auto it = in->memo_.find(e.get());
      if (it != in->memo_.end()) return it->second;
    }
    if (const int64_t s = plan_ ? plan_->owner(e.get()) : -1; s >= 0) {
      run_segment(plan_->segments()[static_cast<size_t>(s)]);
      return memo_.at(e.get());
    }
    Value v = compute(e);
    return memo_.emplace(e.get(), std::move(v)).first->second;
  }

 private:
  // Computes every value a segment returns, its inputs first (which may run
  // collectives and earlier segments).
  void run_segment(const Segment& seg) {
    std::vector<NDArray> in, out;
    for (const auto& x : seg.inputs) in.push_back(eval(x).t);
    for (const auto& t : ir::flatten_tensor_types(seg.local->return_type()))
      out.push_back(NDArray::pooled(t->dtype(), concrete_shape(t->shape(), bindings_)));
    seg.code->run(in, out, bindings_);
    for (size_t j = 0; j < seg.outputs.size(); ++j) memo_[seg.outputs[j].get()] = tensor(out[j]);
  }

  Value compute(const ir::ExprPtr& e) {
    switch (e->kind()) {
      case ir::ExprKind::kConstant: return tensor(eval::constant_array(*ir::expr_as<ir::Constant>(e)));
      case ir::ExprKind::kCall: return call(*ir::expr_as<ir::Call>(e));
      case ir::ExprKind::kTuple: {
        Value v;
        v.is_tuple = true;
        for (const auto& f : ir::expr_as<ir::Tuple>(e)->fields()) v.fields.push_back(eval(f));
        return v;
      }
      case ir::ExprKind::kTupleGetItem: {
        const auto* gi = ir::expr_as<ir::TupleGetItem>(e);
        return eval(gi->tuple()).fields.at(static_cast<size_t>(gi->index()));
      }
      case ir::ExprKind::kGridRegion: return loop(*ir::expr_as<ir::GridRegionExpr>(e));
      case ir::ExprKind::kVar:
        ir::fail(ErrorKind::kInternal, "internal: Var '" + ir::expr_as<ir::Var>(e)->name() + "' is unbound");
      case ir::ExprKind::kFunction: unsupported("a Function as a value");
    }
    TF_CHECK(false, "unknown Expr kind");
  }

  // As the evaluator's loop: every rank runs every iteration, in order.
  Value loop(const ir::GridRegionExpr& g) {
    const auto& f = g.fields();
    const int64_t start = eval::resolve_loop_bound(g, f.start, bindings_, "start", false);
    const int64_t stop = eval::resolve_loop_bound(g, f.extent, bindings_, "extent", false);
    const int64_t step = eval::resolve_loop_bound(g, f.step, bindings_, "step", true);
    std::vector<Value> carry;
    for (const auto& init : f.init_args) carry.push_back(eval(init));
    // The values the body reads from this one: once, here, not per
    // iteration (collectives included).
    const SegmentPlan* body = plan_ ? plan_->nested(&g) : nullptr;
    if (start < stop)
      for (const auto& c : body ? body->captures() : loop_captures(g)) eval(c);
    for (int64_t i = start; i < stop; i += step) {
      ir::DimBindings b = bindings_;
      b[f.induction_var->name()] = i;
      RankInterpreter iter(rank_, std::move(b), this);
      iter.use(body);
      NDArray iv = NDArray::empty(ir::DType::kI64, {});
      *static_cast<int64_t*>(iv.data()) = i;
      iter.bind(f.induction_var.get(), tensor(std::move(iv)));
      for (size_t k = 0; k < carry.size(); ++k) iter.bind(f.carried_args[k].get(), carry[k]);
      std::vector<Value> next;
      for (const auto& y : f.yield_values) next.push_back(iter.eval(y));
      carry = std::move(next);
    }
    if (carry.size() == 1) return carry[0];
    Value v;
    v.is_tuple = true;
    v.fields = std::move(carry);
    return v;
  }

  // The callee's body on this rank, its DimVars bound from the logical
  // shapes of the call's operands.
  Value call_function(const ir::Call& c, const std::vector<const Value*>& args) {
    std::vector<sema::ArgDesc> descs;
    for (size_t i = 0; i < c.args().size(); ++i) descs.push_back({operand_type(c, i).dtype(), concrete_shape(operand_type(c, i).shape(), bindings_)});
    ir::DimBindings b = sema::bind_arguments(*c.callee(), descs);
    const ir::Function& target = c.callee()->is_prototype() ? sema::select_variant(*c.callee(), b) : *c.callee();
    TF_CHECK(target.body(), "a called function has a body");
    RankInterpreter in(rank_, std::move(b));
    in.use(plan_ ? plan_->nested(&target) : nullptr);
    for (size_t i = 0; i < args.size(); ++i) in.bind(target.params()[i].get(), *args[i]);
    return in.eval(target.body());
  }

  Value call(const ir::Call& c) {
    std::vector<const Value*> args;
    for (const auto& a : c.args()) args.push_back(&eval(a));
    if (c.callee()) return call_function(c, args);
    if (is_op(c, "Local")) return *args[0];  // the rank's share is its local view
    if (is_op(c, "Reshard")) return reshard(c, args[0]->t);
    if (reduces_split_axis(c)) {
      if (auto v = reduce_split(c, args[0]->t)) return std::move(*v);
      return global_then_localize(c, args);
    }
    const bool gather_split = gathers_split_axis(c);
    ir::CallPtr local = ir::Call::make_op(c.op(), c.args(), gather_split ? c.type() : local_type(c.type()));
    std::vector<NDArray> in;
    for (size_t i = 0; i < args.size(); ++i) {
      const NDArray& a = args[i]->t;
      if (gather_split && i == 0) {  // own rows in place, zero rows elsewhere
        const ir::TensorType& at = operand_type(c, 0);
        NDArray full = NDArray::empty(a.dtype(), concrete_shape(at.shape(), bindings_));
        a.copy_to(view_of(full, block_of(at, rank_.grid, rank_.index, bindings_)));
        in.push_back(full);
      } else if (ir::TypePtr view = replicated_operand_view(c, i)) {
        in.push_back(copy_of(view_of(a, block_of(*ir::as_tensor(view), rank_.grid, rank_.index, bindings_))));
      } else {
        flatten(*args[i], &in);
      }
    }
    return run_kernel(*local, std::move(in));
  }

  Value run_kernel(const ir::Call& c, std::vector<NDArray> inputs) {
    const std::string name(c.op()->name());
    eval::KernelArgs ka{c, inputs, bindings_};
    if (eval::TupleKernel tk = eval::kernel_table().find_tuple(name)) {
      Value v;
      v.is_tuple = true;
      for (NDArray& a : tk(ka)) v.fields.push_back(tensor(std::move(a)));
      return v;
    }
    eval::Kernel k = eval::kernel_table().find(name);
    if (!k) unsupported("no evaluator kernel for op '" + name + "'");
    return tensor(k(ka));
  }

  // ---- values that cross ranks

  // The logical tensor of a share, on every rank: every rank's share, then
  // the blocks placed and Partial shares reduced.
  NDArray gather_global(const NDArray& share, const ir::TensorType& t) {
    if (!ir::as_shard_layout(t.layout())) return share;
    const int64_t n = share.numel();
    NDArray cur = gather_every_rank(NDArray::view(eval::contiguous_copy(share), {n}, {1}, 0), rank_.comm);
    std::vector<NDArray> shares;
    std::vector<const NDArray*> ptrs;
    for (size_t r = 0; r < rank_.grid.size(); ++r)
      shares.push_back(NDArray::view(cur, share.shape(), ir::c_order_strides(share.shape()), static_cast<int64_t>(r) * n));
    for (const NDArray& s : shares) ptrs.push_back(&s);
    return assemble(ptrs, t, rank_.grid, bindings_);
  }

  // A Reduce over split axes as the rank's block reduced, then an all-reduce
  // over each mesh axis that splits a reduced axis: the result's bytes move,
  // not the operand's. sum / max / abs_max combine by sum / max; a float
  // mean is the mean of the equal blocks' means. nullopt for the rest.
  std::optional<Value> reduce_split(const ir::Call& c, const NDArray& x) {
    const ir::TensorType& xt = operand_type(c, 0);
    std::string kind;
    for (const auto& a : c.op()->attrs())
      if (a.name == "kind") kind = std::get<std::string>(a.value);
    const bool mean = kind == "mean";
    if (mean && xt.dtype() != ir::DType::kF32 && xt.dtype() != ir::DType::kF64) return std::nullopt;
    if (kind != "sum" && kind != "max" && kind != "abs_max" && !mean) return std::nullopt;
    const ir::Reduction red = kind == "sum" || mean ? ir::Reduction::kSum : ir::Reduction::kMax;
    const std::vector<ir::ShardAttr> attrs = *block_attrs(xt, bindings_);
    const std::vector<int64_t> axes = reduced_axes(c);
    std::vector<size_t> groups;
    int64_t parts = 1;
    for (size_t m = 0; m < attrs.size(); ++m)
      if (attrs[m].is_split() && std::find(axes.begin(), axes.end(), attrs[m].pos) != axes.end()) {
        groups.push_back(m);
        parts *= rank_.comm.mesh_shape()[m];
      }
    ir::CallPtr local = ir::Call::make_op(c.op(), c.args(), local_type(c.type()));
    NDArray y = eval::contiguous_copy(run_kernel(*local, {x}).t);
    for (size_t m : groups) rank_.comm.all_reduce(m, y, red);
    if (mean)
      eval::dispatch_dtype(y.dtype(), [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_floating_point_v<T>)
          for (int64_t i = 0; i < y.numel(); ++i) eval::mutable_data_of<T>(y)[i] /= static_cast<T>(parts);
      });
    return tensor(std::move(y));
  }

  Value global_then_localize(const ir::Call& c, const std::vector<const Value*>& args) {
    std::vector<NDArray> in;
    for (size_t i = 0; i < args.size(); ++i) in.push_back(gather_global(args[i]->t, operand_type(c, i)));
    NDArray global = run_kernel(c, std::move(in)).t;
    return tensor(localize(global, *ir::as_tensor(c.type()), rank_.grid, rank_.index, bindings_));
  }

  Value reshard(const ir::Call& c, const NDArray& x) {
    const ir::TensorType& src = operand_type(c, 0);
    const ir::TensorType& dst = *ir::as_tensor(c.type());
    if (auto moved = reshard_by_steps(src, dst, x)) return tensor(std::move(*moved));
    const Value v = tensor(x);
    return global_then_localize(c, {&v});
  }

  // One mesh axis's move of a Reshard.
  struct Step {
    size_t axis;
    ir::ShardAttr from, to;
  };

  // Whether a mesh axis after m splits tensor axis k in attrs.
  static bool split_after(const std::vector<ir::ShardAttr>& attrs, size_t m, int64_t k) {
    for (size_t o = m + 1; o < attrs.size(); ++o)
      if (attrs[o].is_split() && attrs[o].pos == k) return true;
    return false;
  }

  // Whether changing cur[m] to `to` is one of the moves apply_step makes.
  // A Split on m is a block of the blocks of the mesh axes before m that
  // split the same tensor axis (row-major in mesh order), so gathering or
  // slicing it on m keeps every rank's share one block only when no mesh
  // axis after m splits that tensor axis too.
  static bool step_is_direct(const std::vector<ir::ShardAttr>& cur, size_t m, const ir::ShardAttr& to) {
    const ir::ShardAttr& from = cur[m];
    std::vector<ir::ShardAttr> next = cur;
    next[m] = to;
    if (from.is_split() && split_after(cur, m, from.pos)) return false;
    if (to.is_split() && split_after(next, m, to.pos)) return false;
    if (from.is_partial()) return !to.is_partial();
    if (from.is_split()) return !to.is_partial();  // to Broadcast (all-gather) or another Split (all-to-all)
    return true;                                   // from Broadcast: a slice, or a Partial share
  }

  // The moves from src's attrs to dst's, one mesh axis at a time: the one
  // differing axis directly when it can; otherwise first every differing
  // axis to Broadcast, innermost first, then from Broadcast to the target,
  // outermost first. nullopt when some move is not direct (the caller then
  // gathers the logical value).
  static std::optional<std::vector<Step>> plan(const std::vector<ir::ShardAttr>& src,
                                               const std::vector<ir::ShardAttr>& dst) {
    std::vector<size_t> differ;
    for (size_t m = 0; m < src.size(); ++m)
      if (!(src[m] == dst[m])) differ.push_back(m);
    if (differ.size() == 1 && step_is_direct(src, differ[0], dst[differ[0]]))
      return std::vector<Step>{{differ[0], src[differ[0]], dst[differ[0]]}};
    std::vector<Step> steps;
    std::vector<ir::ShardAttr> cur = src;
    auto take = [&](size_t m, const ir::ShardAttr& to) {
      if (!step_is_direct(cur, m, to)) return false;
      steps.push_back({m, cur[m], to});
      cur[m] = to;
      return true;
    };
    for (auto it = differ.rbegin(); it != differ.rend(); ++it)
      if (cur[*it].kind != ir::ShardAttr::Kind::kBroadcast && !take(*it, ir::ShardAttr::broadcast())) return std::nullopt;
    for (size_t m : differ)
      if (dst[m].kind != ir::ShardAttr::Kind::kBroadcast && !take(m, dst[m])) return std::nullopt;
    return steps;
  }

  std::optional<NDArray> reshard_by_steps(const ir::TensorType& src, const ir::TensorType& dst, const NDArray& x) {
    const ir::ShardLayout* sl = ir::as_shard_layout(src.layout());
    const ir::ShardLayout* dl = ir::as_shard_layout(dst.layout());
    if (!sl || !dl || !sl->mesh()->structural_equal(*dl->mesh())) return std::nullopt;
    auto steps = plan(*block_attrs(src, bindings_), *block_attrs(dst, bindings_));
    if (!steps) return std::nullopt;
    NDArray cur = copy_of(x);  // also the whole answer when the layouts are equal
    for (const Step& s : *steps) cur = apply_step(cur, s);
    return cur;
  }

  // One direct move on one mesh axis (executor.h's table).
  NDArray apply_step(const NDArray& x, const Step& s) {
    const size_t m = s.axis;
    const ir::ShardAttr &from = s.from, &to = s.to;
    const int64_t group = rank_.comm.mesh_shape()[m];
    Communicator& comm = rank_.comm;
    if (from.is_partial() && to.kind == ir::ShardAttr::Kind::kBroadcast) {
      NDArray out = copy_of(x);
      comm.all_reduce(m, out, from.reduction);
      return out;
    }
    if (from.is_split() && to.kind == ir::ShardAttr::Kind::kBroadcast) {
      const size_t d = static_cast<size_t>(from.pos);
      NDArray xf = to_front(x, d);
      std::vector<int64_t> shape = xf.shape();
      shape[0] *= group;
      NDArray out = NDArray::empty(x.dtype(), shape);
      comm.all_gather(m, xf, out);
      return eval::contiguous_copy(from_front(out, d));
    }
    if (from.kind == ir::ShardAttr::Kind::kBroadcast && to.is_split()) {
      Block blk{std::vector<int64_t>(x.ndim(), 0), x.shape()};
      const size_t d = static_cast<size_t>(to.pos);
      blk.extent[d] /= group;
      blk.offset[d] = rank_.comm.coords()[m] * blk.extent[d];
      return copy_of(view_of(x, blk));
    }
    if (from.kind == ir::ShardAttr::Kind::kBroadcast && to.is_partial()) {
      // The value on coordinate 0, the reduction's identity elsewhere.
      NDArray out = copy_of(x);
      if (rank_.comm.coords()[m] != 0) fill_identity(out, to.reduction);
      return out;
    }
    if (from.is_partial() && to.is_split()) {
      const size_t d = static_cast<size_t>(to.pos);
      NDArray xf = to_front(x, d);
      std::vector<int64_t> shape = xf.shape();
      shape[0] /= group;
      NDArray out = NDArray::empty(x.dtype(), shape);
      comm.reduce_scatter(m, xf, out, from.reduction);
      return eval::contiguous_copy(from_front(out, d));
    }
    TF_CHECK(from.is_split() && to.is_split(), "a planned Reshard step is one of the direct moves");
    return all_to_all(x, static_cast<size_t>(from.pos), static_cast<size_t>(to.pos), m, group);
  }

  // Split(a) -> Split(b) over mesh axis m: slice j of b goes to the rank
  // with coordinate j; the a-blocks that come back are placed side by side.
  NDArray all_to_all(const NDArray& x, size_t a, size_t b, size_t m, int64_t group) {
    NDArray xf = to_front(x, b);
    NDArray got = NDArray::empty(x.dtype(), xf.shape());
    rank_.comm.all_to_all(m, xf, got);
    std::vector<int64_t> piece_shape = xf.shape();
    piece_shape[0] /= group;
    std::vector<int64_t> out_shape = x.shape();
    out_shape[a] *= group;
    out_shape[b] /= group;
    NDArray out = NDArray::empty(x.dtype(), out_shape);
    int64_t piece = 1;
    for (int64_t e : piece_shape) piece *= e;
    for (int64_t i = 0; i < group; ++i) {
      NDArray p = NDArray::view(got, piece_shape, ir::c_order_strides(piece_shape), i * piece);
      Block blk{std::vector<int64_t>(out.ndim(), 0), out_shape};
      blk.extent[a] = x.shape()[a];
      blk.offset[a] = i * x.shape()[a];
      eval::contiguous_copy(from_front(p, b)).copy_to(view_of(out, blk));
    }
    return out;
  }

  const Rank& rank_;
  ir::DimBindings bindings_;
  const SegmentPlan* plan_ = nullptr;
  const RankInterpreter* parent_;
  std::unordered_map<const ir::Expr*, Value> memo_;
};

void collect(const Value& v, std::vector<NDArray>* out) {
  if (!v.is_tuple) {
    out->push_back(eval::contiguous_copy(v.t));
    return;
  }
  for (const Value& f : v.fields) collect(f, out);
}

// FNV-1a over the call's description (executor.h, Agreement).
int64_t call_fingerprint(const ir::Function& fn, const std::vector<NDArray>& inputs) {
  std::string text = fn.name();
  for (const auto& p : fn.params()) text += "|" + p->type()->to_string();
  text += "->" + fn.body()->type()->to_string();
  for (const NDArray& a : inputs) {
    text += "|" + std::string(ir::dtype_name(a.dtype()));
    for (int64_t e : a.shape()) text += "," + std::to_string(e);
  }
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return static_cast<int64_t>(h);
}

// Every rank's fingerprint on every rank (all-gathers over each mesh axis,
// the last first: row-major rank order, as gather_global), so that all ranks
// see the same disagreement and fail together, before any collective whose
// sizes could differ.
void check_ranks_agree(const ir::Function& fn, const std::vector<NDArray>& inputs, Communicator& comm,
                       const Grid& grid) {
  const int64_t mine = call_fingerprint(fn, inputs);
  NDArray own = NDArray::empty(ir::DType::kI64, {1});
  *static_cast<int64_t*>(own.data()) = mine;
  const NDArray cur = gather_every_rank(own, comm);
  std::string differ;
  for (size_t r = 0; r < grid.size(); ++r) {
    if (static_cast<const int64_t*>(cur.data())[r] == mine) continue;
    const auto c = grid.coords(r);
    differ += differ.empty() ? "" : ", ";
    differ += ir::shape_to_string(ir::Shape(c.begin(), c.end()));
  }
  if (!differ.empty())
    ir::fail(ErrorKind::kInvalidArgument,
             "spmd: the ranks do not make the same call: the rank(s) at mesh coordinates " + differ +
                 " run another function or other share shapes than the rank at " +
                 ir::shape_to_string(ir::Shape(comm.coords().begin(), comm.coords().end())) + " ('" + fn.name() +
                 "'); nothing ran");
}

// Input #i is not this rank's share of its parameter: say what the share is
// (its extents under `b`, symbolic where b does not resolve them).
[[noreturn]] void share_error(const ir::Function& fn, size_t i, const NDArray& a, const ir::DimBindings& b) {
  const ir::TensorType& t = *ir::as_tensor(fn.params()[i]->type());
  const ir::ShardLayout* l = ir::as_shard_layout(t.layout());
  ir::Shape want = l ? ops::shard::local_shape(t.shape(), *l) : t.shape();
  for (auto& d : want)
    if (!d.is_static()) {
      try {
        d = ir::ShapeDim(d.evaluate(b));
      } catch (const ir::Error&) {  // unbound: keep the expression
      }
    }
  ir::fail(ErrorKind::kInvalidArgument,
           "input #" + std::to_string(i) + " (" + fn.params()[i]->name() + ") is " +
               std::string(ir::dtype_name(a.dtype())) + " " + ir::shape_to_string(ir::Shape(a.shape().begin(), a.shape().end())) +
               ", but this rank's share of " + t.to_string() + " is " + std::string(ir::dtype_name(t.dtype())) + " " +
               ir::shape_to_string(want));
}

// How many shares each tensor axis of t is split into.
std::vector<int64_t> split_parts(const ir::TensorType& t) {
  std::vector<int64_t> parts(t.rank(), 1);
  const ir::ShardLayout* l = ir::as_shard_layout(t.layout());
  auto attrs = block_attrs(t);
  if (!attrs) return parts;
  for (size_t m = 0; m < attrs->size(); ++m)
    if ((*attrs)[m].is_split()) parts[static_cast<size_t>((*attrs)[m].pos)] *= l->mesh()->shape[m];
  return parts;
}

// The DimVars of fn's signature, bound from this rank's shares: the logical
// extent of a split axis is its share's extent times the axis's mesh extents.
// A DimVar that an unsplit axis binds must divide by the mesh extents of a
// split axis it is also the extent of.
ir::DimBindings bind_shares(const ir::Function& fn, const std::vector<NDArray>& inputs) {
  std::vector<sema::ArgDesc> logical;
  std::vector<std::vector<int64_t>> parts;
  ir::DimBindings whole;  // bound by unsplit axes
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::TensorType* t = ir::as_tensor(fn.params()[i]->type());
    if (!t) unsupported("a non-tensor parameter");
    if (inputs[i].dtype() != t->dtype() || inputs[i].ndim() != t->rank()) share_error(fn, i, inputs[i], {});
    parts.push_back(split_parts(*t));
    std::vector<int64_t> shape = inputs[i].shape();
    for (size_t k = 0; k < shape.size(); ++k) {
      shape[k] *= parts[i][k];
      if (t->shape()[k].is_static() && t->shape()[k].value() != shape[k]) share_error(fn, i, inputs[i], {});
      if (parts[i][k] == 1 && t->shape()[k].kind() == ir::DimKind::kVar) whole.emplace(t->shape()[k].var_name(), shape[k]);
    }
    logical.push_back({t->dtype(), std::move(shape)});
  }
  for (size_t i = 0; i < inputs.size(); ++i)
    for (size_t k = 0; k < parts[i].size(); ++k) {
      const ir::ShapeDim& d = ir::as_tensor(fn.params()[i]->type())->shape()[k];
      if (parts[i][k] == 1 || d.kind() != ir::DimKind::kVar || !whole.count(d.var_name())) continue;
      const int64_t e = whole.at(d.var_name());
      if (e % parts[i][k] != 0)
        ir::fail(ErrorKind::kInvalidArgument,
                 "input #" + std::to_string(i) + " (" + fn.params()[i]->name() + "): axis " + std::to_string(k) +
                     " has logical extent " + d.var_name() + " = " + std::to_string(e) +
                     ", which is not divisible by its " + std::to_string(parts[i][k]) + " shares");
    }
  try {
    return sema::bind_arguments(fn, logical);
  } catch (const ir::Error& e) {
    ir::fail(e.kind(), std::string("this rank's shares do not bind the signature (the logical extent of a split "
                                   "axis is its share's times its mesh extents): ") + e.what());
  }
}

}  // namespace

ir::MeshPtr function_mesh(const ir::Function& fn) {
  ir::MeshPtr found;
  auto see = [&](const ir::TypePtr& t) {
    for (const auto& leaf : ir::flatten_tensor_types(t))
      if (const ir::ShardLayout* l = ir::as_shard_layout(leaf->layout())) {
        if (found && !found->structural_equal(*l->mesh())) unsupported("more than one mesh in one function");
        found = l->mesh();
      }
  };
  for (const auto& p : fn.params()) see(p->type());
  std::unordered_set<const ir::Expr*> seen;
  std::vector<ir::ExprPtr> stack{fn.body()};
  while (!stack.empty()) {
    ir::ExprPtr e = stack.back();
    stack.pop_back();
    if (!e || !seen.insert(e.get()).second) continue;
    if (e->type()) see(e->type());
    if (e->kind() == ir::ExprKind::kCall)
      for (const auto& a : ir::expr_as<ir::Call>(e)->args()) stack.push_back(a);
    else if (e->kind() == ir::ExprKind::kTuple)
      for (const auto& a : ir::expr_as<ir::Tuple>(e)->fields()) stack.push_back(a);
    else if (e->kind() == ir::ExprKind::kTupleGetItem)
      stack.push_back(ir::expr_as<ir::TupleGetItem>(e)->tuple());
    else if (e->kind() == ir::ExprKind::kGridRegion) {
      const auto& f = ir::expr_as<ir::GridRegionExpr>(e)->fields();
      for (const auto& a : f.init_args) stack.push_back(a);
      for (const auto& a : f.yield_values) stack.push_back(a);
    }
  }
  return found;
}

std::vector<NDArray> run_rank(const ir::Module& m, const ir::Function& fn, const std::vector<NDArray>& inputs,
                              Communicator& comm, Agreement agreement, const SegmentPlan* segments) {
  (void)m;  // callees are reached through Call nodes; the module is the scope
  if (!fn.body()) ir::fail(ErrorKind::kUnsupported, "spmd: '" + fn.name() + "' has no body");
  Grid grid{function_mesh(fn)};
  const std::vector<int64_t> mesh_shape = grid.mesh ? grid.mesh->shape : std::vector<int64_t>{};
  if (comm.mesh_shape() != mesh_shape)
    ir::fail(ErrorKind::kInvalidArgument, "spmd: '" + fn.name() + "' runs on a mesh of shape " +
                                              ir::shape_to_string(ir::Shape(mesh_shape.begin(), mesh_shape.end())) +
                                              ", but the communicator's is " +
                                              ir::shape_to_string(ir::Shape(comm.mesh_shape().begin(), comm.mesh_shape().end())));
  if (inputs.size() != fn.params().size())
    ir::fail(ErrorKind::kInvalidArgument, "'" + fn.name() + "' takes " + std::to_string(fn.params().size()) +
                                              " input(s), but got " + std::to_string(inputs.size()));
  Rank rank{grid, grid.mesh ? grid.rank_of(comm.coords()) : 0, comm};
  const ir::DimBindings bindings = bind_shares(fn, inputs);
  RankInterpreter in(rank, bindings);
  in.use(segments);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::TensorType& t = *ir::as_tensor(fn.params()[i]->type());
    if (inputs[i].shape() != block_of(t, grid, rank.index, bindings).extent) share_error(fn, i, inputs[i], bindings);
    in.bind(fn.params()[i].get(), tensor(inputs[i]));
  }
  if (agreement == Agreement::kCheck && grid.mesh) check_ranks_agree(fn, inputs, comm, grid);
  std::vector<NDArray> out;
  collect(in.eval(fn.body()), &out);
  return out;
}

}  // namespace tf::spmd
