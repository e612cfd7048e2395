#include "core/eval/virtual_mesh.h"

#include <limits>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "core/eval/evaluator.h"
#include "core/eval/kernel.h"
#include "core/eval/kernels/dispatch.h"
#include "core/ir/error.h"
#include "core/ir/shard.h"
#include "core/ops/sharding/shard_util.h"
#include "core/sema/bind.h"

namespace tf::eval {
namespace {

using runtime::NDArray;
using ir::ErrorKind;

struct Value {
  NDArray t;
  std::vector<Value> fields;
  bool is_tuple = false;
};

[[noreturn]] void unsupported(const std::string& what) {
  ir::fail(ErrorKind::kUnsupported, "virtual mesh: " + what);
}

std::vector<int64_t> static_shape(const ir::Shape& s) {
  std::vector<int64_t> out;
  for (const auto& d : s) {
    if (!d.is_static()) unsupported("needs static shapes, but got " + ir::shape_to_string(s));
    out.push_back(d.value());
  }
  return out;
}

// The instance grid of one mesh, row-major over its axes.
struct Grid {
  ir::MeshPtr mesh;
  size_t size() const { return mesh ? static_cast<size_t>(mesh->size()) : 1; }
  std::vector<int64_t> coords(size_t inst) const {
    std::vector<int64_t> c(mesh ? mesh->shape.size() : 0);
    for (size_t m = c.size(); m-- > 0;) {
      c[m] = static_cast<int64_t>(inst) % mesh->shape[m];
      inst /= static_cast<size_t>(mesh->shape[m]);
    }
    return c;
  }
};

// Where an instance's shard of a tensor lies: per-axis offset and extent.
struct Block {
  std::vector<int64_t> offset, extent;
};

Block block_of(const ir::TensorType& t, const Grid& g, size_t inst) {
  Block b{std::vector<int64_t>(t.rank(), 0), static_shape(t.shape())};
  const ir::ShardLayout* l = ir::as_shard_layout(t.layout());
  if (!l) return b;
  auto logical = ops::shard::to_block_logical(t.shape(), *l);
  if (!logical) unsupported("a composed ShardLayout " + l->to_string());
  auto c = g.coords(inst);
  for (size_t k = 0; k < t.rank(); ++k) {
    int64_t index = 0, parts = 1;
    for (size_t m = 0; m < logical->size(); ++m)
      if ((*logical)[m].is_split() && (*logical)[m].pos == static_cast<int64_t>(k)) {
        index = index * l->mesh()->shape[m] + c[m];
        parts *= l->mesh()->shape[m];
      }
    b.extent[k] /= parts;
    b.offset[k] = index * b.extent[k];
  }
  return b;
}

NDArray view_of(const NDArray& a, const Block& b) {
  int64_t off = 0;
  for (size_t k = 0; k < b.offset.size(); ++k) off += b.offset[k] * a.strides()[k];
  return NDArray::view(a, b.extent, a.strides(), off);
}

NDArray copy_of(const NDArray& a) {
  NDArray out = NDArray::empty(a.dtype(), a.shape());
  a.copy_to(out);
  return out;
}

void fill_identity(const NDArray& a, ir::Reduction r) {
  dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_arithmetic_v<T>) {
      T v = r == ir::Reduction::kMax ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
      if constexpr (std::is_floating_point_v<T>)
        v = r == ir::Reduction::kMax ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
      if (r == ir::Reduction::kSum) v = T(0);
      T* p = mutable_data_of<T>(a);
      for (int64_t i = 0; i < a.numel(); ++i) p[i] = v;
    } else {
      unsupported("Partial of dtype " + std::string(ir::dtype_name(a.dtype())));
    }
  });
}

// acc = acc (r) x, both contiguous with equal shapes.
void combine(const NDArray& acc, const NDArray& x, ir::Reduction r) {
  dispatch_dtype(acc.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
      T* a = mutable_data_of<T>(acc);
      const T* b = data_of<T>(x);
      for (int64_t i = 0; i < acc.numel(); ++i)
        a[i] = r == ir::Reduction::kSum ? a[i] + b[i] : r == ir::Reduction::kMax ? std::max(a[i], b[i]) : std::min(a[i], b[i]);
    } else {
      unsupported("Partial of dtype " + std::string(ir::dtype_name(acc.dtype())));
    }
  });
}

// The instance's local value of a logical tensor (virtual_mesh.h). With
// `split`, a Partial parameter (#param) is split into shares by it instead.
NDArray localize(const NDArray& global, const ir::TensorType& t, const Grid& g, size_t inst,
                 const PartialShareFn* split = nullptr, size_t param = 0) {
  const ir::ShardLayout* l = ir::as_shard_layout(t.layout());
  NDArray local = copy_of(view_of(global, block_of(t, g, inst)));
  if (!l || !l->has_partial()) return local;
  auto c = g.coords(inst);
  size_t share = 0, shares = 1;
  ir::Reduction red = ir::Reduction::kSum;
  for (size_t m = 0; m < l->attrs().size(); ++m)
    if (l->attrs()[m].is_partial()) {
      share = share * static_cast<size_t>(l->mesh()->shape[m]) + static_cast<size_t>(c[m]);
      shares *= static_cast<size_t>(l->mesh()->shape[m]);
      red = l->attrs()[m].reduction;
    }
  if (split && *split) (*split)(param, share, shares, red, local);
  else if (share != 0) fill_identity(local, red);
  return local;
}

// A Tuple operand (Conv2D's absent bias, Concat's inputs) is passed
// flattened, as the plain evaluator does (kernel.h).
void flatten(const Value& v, std::vector<NDArray>* out) {
  if (!v.is_tuple) {
    out->push_back(v.t);
    return;
  }
  for (const Value& f : v.fields) flatten(f, out);
}

// The logical tensor from every instance's local value.
NDArray assemble(const std::vector<const NDArray*>& locals, const ir::TensorType& t, const Grid& g) {
  NDArray global = NDArray::empty(t.dtype(), static_shape(t.shape()));
  const ir::ShardLayout* l = ir::as_shard_layout(t.layout());
  if (!l) {
    locals[0]->copy_to(global);
    return global;
  }
  std::optional<ir::Reduction> red;
  for (const auto& a : l->attrs())
    if (a.is_partial()) {
      if (red && *red != a.reduction) unsupported("Partial states with different reductions");
      red = a.reduction;
    }
  if (red) fill_identity(global, *red);
  for (size_t inst = 0; inst < g.size(); ++inst) {
    auto c = g.coords(inst);
    bool representative = true;  // coordinate 0 on every Broadcast axis
    for (size_t m = 0; m < l->attrs().size(); ++m)
      if (l->attrs()[m].kind == ir::ShardAttr::Kind::kBroadcast && c[m] != 0) representative = false;
    if (!representative) continue;
    NDArray dst = view_of(global, block_of(t, g, inst));
    if (!red) {
      locals[inst]->copy_to(dst);
      continue;
    }
    NDArray acc = copy_of(dst);
    combine(acc, *locals[inst], *red);
    acc.copy_to(dst);
  }
  return global;
}

ir::TypePtr local_type(const ir::TypePtr& t) {
  if (const ir::TensorType* tt = ir::as_tensor(t)) {
    const ir::ShardLayout* l = ir::as_shard_layout(tt->layout());
    return ir::TensorType::make(l ? ops::shard::local_shape(tt->shape(), *l) : tt->shape(), tt->dtype(), nullptr,
                                tt->storage());
  }
  if (const ir::TupleType* tu = ir::as_tuple(t)) {
    std::vector<ir::TypePtr> f;
    for (const auto& x : tu->fields()) f.push_back(local_type(x));
    return ir::TupleType::make(std::move(f));
  }
  return t;
}

bool splits_axis(const ir::TensorType& t, const std::set<int64_t>& axes) {
  const ir::ShardLayout* l = ir::as_shard_layout(t.layout());
  if (!l) return false;
  auto logical = ops::shard::to_block_logical(t.shape(), *l);
  if (!logical) return false;
  for (const auto& a : *logical)
    if (a.is_split() && axes.count(a.pos)) return true;
  return false;
}

class MeshInterpreter {
 public:
  MeshInterpreter(const ir::Function& fn, Grid g, const PartialShareFn* split)
      : fn_(fn), g_(std::move(g)), split_(split) {}

  std::vector<NDArray> run(const std::vector<NDArray>& inputs) {
    for (size_t i = 0; i < fn_.params().size(); ++i) {
      const ir::TensorType* t = ir::as_tensor(fn_.params()[i]->type());
      if (!t) unsupported("a non-tensor parameter");
      auto& vals = memo_[fn_.params()[i].get()];
      for (size_t inst = 0; inst < g_.size(); ++inst) vals.push_back(Value{localize(inputs[i], *t, g_, inst, split_, i), {}, false});
    }
    const auto& out = eval(fn_.body());
    std::vector<NDArray> results;
    collect(fn_.body()->type(), out, {}, &results);
    return results;
  }

 private:
  // Assembles the logical leaves of a value; `path` indexes into tuple fields.
  void collect(const ir::TypePtr& t, const std::vector<Value>& per_inst, std::vector<size_t> path,
               std::vector<NDArray>* out) {
    if (const ir::TupleType* tu = ir::as_tuple(t)) {
      for (size_t f = 0; f < tu->fields().size(); ++f) {
        auto p = path;
        p.push_back(f);
        collect(tu->fields()[f], per_inst, p, out);
      }
      return;
    }
    std::vector<const NDArray*> locals;
    for (const Value& v : per_inst) {
      const Value* cur = &v;
      for (size_t f : path) cur = &cur->fields[f];
      locals.push_back(&cur->t);
    }
    out->push_back(assemble(locals, *ir::as_tensor(t), g_));
  }

  const std::vector<Value>& eval(const ir::ExprPtr& e) {
    auto it = memo_.find(e.get());
    if (it != memo_.end()) return it->second;
    std::vector<Value> v = compute(e);
    return memo_.emplace(e.get(), std::move(v)).first->second;
  }

  std::vector<Value> compute(const ir::ExprPtr& e) {
    switch (e->kind()) {
      case ir::ExprKind::kConstant: {
        const auto* c = ir::expr_as<ir::Constant>(e);
        NDArray a = NDArray::empty(c->dtype(), {});
        dispatch_dtype(c->dtype(), [&](auto tag) {
          using T = decltype(tag);
          T* p = mutable_data_of<T>(a);
          if constexpr (std::is_same_v<T, bool>) *p = c->int_value() != 0;
          else if constexpr (is_int_v<T>) *p = static_cast<T>(c->int_value());
          else if constexpr (is_half_v<T>) *p = T::from_float(static_cast<float>(c->value()));
          else *p = static_cast<T>(c->value());
        });
        return std::vector<Value>(g_.size(), Value{a, {}, false});
      }
      case ir::ExprKind::kCall: return call(*ir::expr_as<ir::Call>(e));
      case ir::ExprKind::kTuple: {
        std::vector<Value> out(g_.size());
        for (auto& v : out) v.is_tuple = true;
        for (const auto& f : ir::expr_as<ir::Tuple>(e)->fields()) {
          const auto& fv = eval(f);
          for (size_t i = 0; i < g_.size(); ++i) out[i].fields.push_back(fv[i]);
        }
        return out;
      }
      case ir::ExprKind::kTupleGetItem: {
        const auto* gi = ir::expr_as<ir::TupleGetItem>(e);
        const auto& tv = eval(gi->tuple());
        std::vector<Value> out;
        for (const auto& v : tv) out.push_back(v.fields.at(static_cast<size_t>(gi->index())));
        return out;
      }
      default: unsupported("only Call DAGs run per instance (no loops, no nested functions)");
    }
  }

  Value run_kernel(const ir::Call& c, std::vector<NDArray> inputs) {
    const std::string name(c.op()->name());
    KernelArgs ka{c, inputs, bindings_};
    if (TupleKernel tk = kernel_table().find_tuple(name)) {
      Value v;
      v.is_tuple = true;
      for (NDArray& a : tk(ka)) v.fields.push_back(Value{std::move(a), {}, false});
      return v;
    }
    Kernel k = kernel_table().find(name);
    if (!k) unsupported("no kernel for op '" + name + "'");
    return Value{k(ka), {}, false};
  }

  const ir::TensorType& arg_type(const ir::Call& c, size_t i) {
    const ir::TensorType* t = ir::as_tensor(c.args()[i]->type());
    if (!t) unsupported("a tuple operand");
    return *t;
  }

  std::vector<Value> call(const ir::Call& c) {
    if (c.callee()) unsupported("a call to another function");
    const std::string name(c.op()->name());
    std::vector<const std::vector<Value>*> args;
    for (const auto& a : c.args()) args.push_back(&eval(a));
    if (name == "Local") return *args[0];  // the local view is what each instance holds
    if (name == "Reduce" && reduces_split_axis(c)) return global_then_localize(c, args);
    if (name == "Reshard") return global_then_localize(c, args);  // redistribution is its meaning
    const ir::TensorType* rt = ir::as_tensor(c.type());
    bool gather_split = name == "Gather" && splits_axis(arg_type(c, 0), {gather_axis(c)});
    ir::CallPtr local = ir::Call::make_op(c.op(), c.args(), gather_split ? c.type() : local_type(c.type()));
    std::vector<Value> out;
    for (size_t inst = 0; inst < g_.size(); ++inst) {
      std::vector<NDArray> in;
      for (size_t i = 0; i < args.size(); ++i) {
        const NDArray& a = (*args[i])[inst].t;
        const ir::TensorType* at = ir::as_tensor(c.args()[i]->type());
        if (gather_split && i == 0) {  // own rows in place, zero rows elsewhere
          NDArray full = NDArray::empty(a.dtype(), static_shape(at->shape()));
          a.copy_to(view_of(full, block_of(*at, g_, inst)));
          in.push_back(full);
        } else if (rt && at && !ir::as_shard_layout(at->layout()) && ir::as_shard_layout(rt->layout()) &&
                   ir::shape_equal(at->shape(), rt->shape())) {
          // A replicated operand meets a sharded result: take its block.
          ir::TypePtr as = ir::TensorType::make(at->shape(), at->dtype(), rt->layout());
          in.push_back(copy_of(view_of(a, block_of(*ir::as_tensor(as), g_, inst))));
        } else {
          flatten((*args[i])[inst], &in);
        }
      }
      out.push_back(run_kernel(*local, std::move(in)));
    }
    return out;
  }

  int64_t gather_axis(const ir::Call& c) {
    int64_t axis = std::get<int64_t>(c.op()->attrs()[0].value);
    return axis < 0 ? axis + static_cast<int64_t>(arg_type(c, 0).rank()) : axis;
  }

  bool reduces_split_axis(const ir::Call& c) {
    std::set<int64_t> axes;
    for (const auto& a : c.op()->attrs())
      if (a.name == "axes")
        for (int64_t k : std::get<std::vector<int64_t>>(a.value))
          axes.insert(k < 0 ? k + static_cast<int64_t>(arg_type(c, 0).rank()) : k);
    return splits_axis(arg_type(c, 0), axes);
  }

  // Reduce: a Split of a reduced axis collapses to Broadcast — the
  // lowering combines the instances; here: assemble, reduce, hand out.
  std::vector<Value> global_then_localize(const ir::Call& c, const std::vector<const std::vector<Value>*>& args) {
    std::vector<NDArray> in;
    for (size_t i = 0; i < args.size(); ++i) {
      std::vector<const NDArray*> locals;
      for (const auto& v : *args[i]) locals.push_back(&v.t);
      in.push_back(assemble(locals, arg_type(c, i), g_));
    }
    NDArray global = run_kernel(c, std::move(in)).t;
    std::vector<Value> out;
    for (size_t inst = 0; inst < g_.size(); ++inst)
      out.push_back(Value{localize(global, *ir::as_tensor(c.type()), g_, inst), {}, false});
    return out;
  }

  const ir::Function& fn_;
  Grid g_;
  const PartialShareFn* split_;
  ir::DimBindings bindings_;
  std::unordered_map<const ir::Expr*, std::vector<Value>> memo_;
};

// The one mesh of a function: from its parameters, return type and body.
ir::MeshPtr find_mesh(const ir::Function& fn) {
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
  }
  return found;
}

}  // namespace

std::vector<NDArray> evaluate_virtual_mesh(const ir::Module& m, const ir::Function& fn,
                                           const std::vector<NDArray>& inputs) {
  return evaluate_virtual_mesh(m, fn, inputs, PartialShareFn());
}

std::vector<NDArray> evaluate_virtual_mesh(const ir::Module& m, const ir::Function& fn,
                                           const std::vector<NDArray>& inputs, const PartialShareFn& split_partial) {
  if (!fn.body()) ir::fail(ErrorKind::kUnsupported, "virtual mesh: '" + fn.name() + "' has no body");
  ir::MeshPtr mesh = find_mesh(fn);
  if (!mesh) return evaluate(m, fn, inputs);
  if (inputs.size() != fn.params().size())
    ir::fail(ErrorKind::kInvalidArgument, "'" + fn.name() + "' takes " + std::to_string(fn.params().size()) +
                                              " input(s), but got " + std::to_string(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::TensorType* t = ir::as_tensor(fn.params()[i]->type());
    if (t && (inputs[i].dtype() != t->dtype() || inputs[i].shape() != static_shape(t->shape())))
      ir::fail(ErrorKind::kInvalidArgument, "input #" + std::to_string(i) + " does not match " + t->to_string());
  }
  return MeshInterpreter(fn, Grid{mesh}, &split_partial).run(inputs);
}

}  // namespace tf::eval
