#include "core/eval/evaluator.h"

#include <unordered_map>

#include "core/eval/kernel.h"
#include "core/eval/kernels/dispatch.h"
#include "core/ir/error.h"
#include "core/sema/bind.h"
#include "core/sema/dispatch.h"

namespace tf::eval {
namespace {

using ir::ErrorKind;
using runtime::NDArray;

// A runtime value: a tensor, or a tuple of values.
struct Value {
  NDArray tensor;
  std::vector<Value> fields;
  bool is_tuple = false;
};

Value call_function(const ir::Function& fn, const std::vector<Value>& args);
void flatten(const Value& v, std::vector<NDArray>* out);

// Interprets one function body under one set of DimVar bindings. Memoized on
// node identity: a shared node (an SSA value with several uses) is computed
// once. Recursion depth is the depth of the expression DAG. One loop
// iteration runs in a child interpreter: it sees every value its parents
// already computed, adds the induction variable (as a Var value and as a
// DimVar binding of the same name) and the carried phis, and memoizes its own
// nodes for that iteration only.
class Interpreter {
 public:
  explicit Interpreter(ir::DimBindings bindings, const Interpreter* parent = nullptr)
      : bindings_(std::move(bindings)), parent_(parent) {}

  void bind_param(const ir::Var* v, Value value) { memo_[v] = std::move(value); }

  const Value& eval(const ir::ExprPtr& e) {
    for (const Interpreter* in = this; in; in = in->parent_) {
      auto it = in->memo_.find(e.get());
      if (it != in->memo_.end()) return it->second;
    }
    Value v = compute(e);
    return memo_.emplace(e.get(), std::move(v)).first->second;
  }

 private:
  Value compute(const ir::ExprPtr& e) {
    switch (e->kind()) {
      case ir::ExprKind::kVar:
        ir::fail(ErrorKind::kInternal, "internal: Var '" + ir::expr_as<ir::Var>(e)->name() +
                                           "' is not a parameter of the evaluated function");
      case ir::ExprKind::kConstant: return tensor(constant_array(*ir::expr_as<ir::Constant>(e)));
      case ir::ExprKind::kCall: return call(*ir::expr_as<ir::Call>(e));
      case ir::ExprKind::kTuple: {
        Value v;
        v.is_tuple = true;
        for (const ir::ExprPtr& f : ir::expr_as<ir::Tuple>(e)->fields()) v.fields.push_back(eval(f));
        return v;
      }
      case ir::ExprKind::kTupleGetItem: {
        const auto* g = ir::expr_as<ir::TupleGetItem>(e);
        const Value& t = eval(g->tuple());
        TF_CHECK(t.is_tuple && g->index() >= 0 && static_cast<size_t>(g->index()) < t.fields.size(),
                 "TupleGetItem index within its tuple");
        return t.fields[static_cast<size_t>(g->index())];
      }
      case ir::ExprKind::kFunction:
        ir::fail(ErrorKind::kUnsupported, "the evaluator cannot produce a Function as a value");
      case ir::ExprKind::kGridRegion: return loop(*ir::expr_as<ir::GridRegionExpr>(e));
    }
    TF_CHECK(false, "unknown Expr kind");
  }

  static Value tensor(NDArray a) {
    Value v;
    v.tensor = std::move(a);
    return v;
  }

  Value call(const ir::Call& c) {
    std::vector<Value> args;
    for (const ir::ExprPtr& a : c.args()) args.push_back(eval(a));
    if (c.callee()) return call_function(*c.callee(), args);
    const std::string name(c.op()->name());
    Kernel k = kernel_table().find(name);
    TupleKernel tk = kernel_table().find_tuple(name);
    if (!k && !tk) ir::fail(ErrorKind::kUnsupported, "the evaluator has no kernel for op '" + name + "'");
    // A Tuple operand (concat's inputs) is passed flattened (kernel.h).
    std::vector<NDArray> inputs;
    for (const Value& v : args) flatten(v, &inputs);
    KernelArgs ka{c, inputs, bindings_};
    if (tk) {
      Value v;
      v.is_tuple = true;
      for (NDArray& a : tk(ka)) v.fields.push_back(tensor(std::move(a)));
      return v;
    }
    NDArray out = k(ka);
    TF_CHECK(out.dtype() == ka.out_dtype() && out.shape() == ka.out_shape(),
             "kernel '" + name + "' result matches the Call's type");
    return tensor(std::move(out));
  }

  Value loop(const ir::GridRegionExpr& g) {
    const auto& f = g.fields();
    int64_t start = resolve_loop_bound(g, f.start, bindings_, "start", false);
    int64_t stop = resolve_loop_bound(g, f.extent, bindings_, "extent", false);
    int64_t step = resolve_loop_bound(g, f.step, bindings_, "step", true);
    std::vector<Value> carry;
    for (const auto& init : f.init_args) carry.push_back(eval(init));
    for (int64_t i = start; i < stop; i += step) {
      ir::DimBindings b = bindings_;
      b[f.induction_var->name()] = i;
      Interpreter iter(std::move(b), this);
      NDArray iv = NDArray::empty(ir::DType::kI64, {});
      *mutable_data_of<int64_t>(iv) = i;
      iter.bind_param(f.induction_var.get(), tensor(std::move(iv)));
      for (size_t k = 0; k < carry.size(); ++k) iter.bind_param(f.carried_args[k].get(), carry[k]);
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

  ir::DimBindings bindings_;
  const Interpreter* parent_;
  std::unordered_map<const ir::Expr*, Value> memo_;
};


std::vector<sema::ArgDesc> describe(const std::vector<Value>& args) {
  std::vector<sema::ArgDesc> descs;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].is_tuple)
      ir::fail(ErrorKind::kUnsupported, "argument #" + std::to_string(i) + " is a tuple; the evaluator passes tensors only");
    descs.push_back({args[i].tensor.dtype(), args[i].tensor.shape()});
  }
  return descs;
}

Value call_function(const ir::Function& fn, const std::vector<Value>& args) {
  ir::DimBindings bindings = sema::bind_arguments(fn, describe(args));
  const ir::Function& target = fn.is_prototype() ? sema::select_variant(fn, bindings) : fn;
  TF_CHECK(target.body(), "an evaluated function has a body");
  Interpreter in(std::move(bindings));
  for (size_t i = 0; i < args.size(); ++i) in.bind_param(target.params()[i].get(), args[i]);
  return in.eval(target.body());
}

void flatten(const Value& v, std::vector<NDArray>* out) {
  if (!v.is_tuple) {
    out->push_back(v.tensor);
    return;
  }
  for (const Value& f : v.fields) flatten(f, out);
}

}  // namespace

NDArray constant_array(const ir::Constant& c) {
  NDArray a = NDArray::empty(c.dtype(), {});
  dispatch_dtype(c.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* p = mutable_data_of<T>(a);
    if constexpr (std::is_same_v<T, bool>) *p = c.int_value() != 0;
    else if constexpr (is_int_v<T>) *p = static_cast<T>(c.int_value());
    else if constexpr (is_half_v<T>) *p = T::from_float(static_cast<float>(c.value()));
    else *p = static_cast<T>(c.value());
  });
  return a;
}

int64_t resolve_loop_bound(const ir::GridRegionExpr& g, const ir::ShapeDim& d, const ir::DimBindings& bindings,
                           const char* what, bool positive) {
  std::string at = g.span().to_string();
  at += at.empty() ? "" : ": ";
  int64_t n = 0;
  try {
    n = d.evaluate(bindings);
  } catch (const ir::Error& err) {
    ir::fail(ErrorKind::kRuntime, at + "loop " + what + " " + d.to_string() + " cannot be resolved: " + err.what());
  }
  if (positive ? n <= 0 : n < 0)
    ir::fail(ErrorKind::kRuntime, at + "loop " + what + " " + d.to_string() + " resolves to " + std::to_string(n) +
                                      (positive ? ", but it must be positive" : ", but it must be non-negative"));
  return n;
}

std::vector<NDArray> evaluate(const ir::Module& m, const ir::Function& fn,
                              const std::vector<NDArray>& inputs) {
  (void)m;  // callees are reached through Call nodes; the module is the scope
  std::vector<Value> args;
  for (const NDArray& a : inputs) {
    Value v;
    v.tensor = a;
    args.push_back(std::move(v));
  }
  std::vector<NDArray> leaves;
  flatten(call_function(fn, args), &leaves);
  // Every output is a fresh contiguous copy: a leaf may be an input, a view of
  // one, or appear twice, and outputs must never alias.
  std::vector<NDArray> outputs;
  for (const NDArray& leaf : leaves) outputs.push_back(contiguous_copy(leaf));
  return outputs;
}

}  // namespace tf::eval
