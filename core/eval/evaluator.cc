#include "core/eval/evaluator.h"

#include <unordered_map>

#include "core/eval/kernel.h"
#include "core/eval/kernels/dispatch.h"
#include "core/ir/error.h"
#include "core/sema/bind.h"

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

// Interprets one function body under one set of DimVar bindings. Memoized on
// node identity: a shared node (an SSA value with several uses) is computed
// once. Recursion depth is the depth of the expression DAG.
class Interpreter {
 public:
  explicit Interpreter(ir::DimBindings bindings) : bindings_(std::move(bindings)) {}

  void bind_param(const ir::Var* v, Value value) { memo_[v] = std::move(value); }

  const Value& eval(const ir::ExprPtr& e) {
    auto it = memo_.find(e.get());
    if (it != memo_.end()) return it->second;
    Value v = compute(e);
    return memo_.emplace(e.get(), std::move(v)).first->second;
  }

 private:
  Value compute(const ir::ExprPtr& e) {
    switch (e->kind()) {
      case ir::ExprKind::kVar:
        ir::fail(ErrorKind::kInternal, "internal: Var '" + ir::expr_as<ir::Var>(e)->name() +
                                           "' is not a parameter of the evaluated function");
      case ir::ExprKind::kConstant: return tensor(constant(*ir::expr_as<ir::Constant>(e)));
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
      case ir::ExprKind::kGridRegion:
        ir::fail(ErrorKind::kUnsupported,
                 e->span().to_string() + (e->span().line ? ": " : "") +
                     "the evaluator does not evaluate GridRegionExpr (tile / range loops) yet");
    }
    TF_CHECK(false, "unknown Expr kind");
  }

  static Value tensor(NDArray a) {
    Value v;
    v.tensor = std::move(a);
    return v;
  }

  // A rank-0 array holding the literal (floats round once to the dtype).
  static NDArray constant(const ir::Constant& c) {
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

  Value call(const ir::Call& c) {
    std::vector<Value> args;
    for (const ir::ExprPtr& a : c.args()) args.push_back(eval(a));
    if (c.callee()) return call_function(*c.callee(), args);
    const std::string name(c.op()->name());
    Kernel k = kernel_table().find(name);
    if (!k) ir::fail(ErrorKind::kUnsupported, "the evaluator has no kernel for op '" + name + "'");
    std::vector<NDArray> inputs;
    for (const Value& v : args) {
      TF_CHECK(!v.is_tuple, "op operands are tensors");
      inputs.push_back(v.tensor);
    }
    KernelArgs ka{c, inputs, bindings_};
    NDArray out = k(ka);
    TF_CHECK(out.dtype() == ka.out_dtype() && out.shape() == ka.out_shape(),
             "kernel '" + name + "' result matches the Call's type");
    return tensor(std::move(out));
  }

  ir::DimBindings bindings_;
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

// Dispatch resolution (spec §1.1): the variant whose DimVarRangePat holds.
const ir::Function& select_variant(const ir::Function& proto, const ir::DimBindings& bindings) {
  for (const ir::FunctionPtr& v : proto.variants()) {
    bool match = true;
    for (const ir::DimVarRangePat& p : v->specializations()) {
      auto it = bindings.find(p.dim_var);
      match = match && it != bindings.end() && it->second >= p.lo && it->second < p.hi;
    }
    if (match) return *v;
  }
  ir::fail(ErrorKind::kRuntime, "'" + proto.name() + "': no variant matches the argument shapes");
}

Value call_function(const ir::Function& fn, const std::vector<Value>& args) {
  ir::DimBindings bindings = sema::bind_arguments(fn, describe(args));
  const ir::Function& target = fn.is_prototype() ? select_variant(fn, bindings) : fn;
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
