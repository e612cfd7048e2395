// Differential testing on random well-typed programs. A generator builds DAGs
// over the DimVar shapes (N, D), (N, 1) and (D,) of one float dtype (f32 or
// f64) from:
//   - elementwise ops: Binary arithmetic (broadcasting), Unary, Silu, Gelu,
//     comparisons cast back to float, a round trip through the other float
//     type, and a round trip through i32 / i64 with integer arithmetic
//     (floor division included) on values known to be small integers;
//   - row ops RMSNorm, LayerNorm and SoftMax, also in the row-op producer
//     pattern: the row op's elementwise input is also an output or is read
//     again, so the compiler computes it in the row stage (fusable_producer);
//   - last-axis Reduce read back along its row (the normalization pattern,
//     fused into the reader's stage), also a second one of the first's
//     result (two passes);
//   - first-axis Reduce, Transpose round trips and MatMul by (D, D) weights;
//   - Concat of two values along either axis and a Slice back to (N, D),
//     Stack and a Reduce or Slice + Reshape back down, Reshape round trips
//     through (N*D,), (N, D, 1) and (D, N);
//   - Gather along axis 0 or 1 (also batched, take_along_axis style) with
//     indices that are always in range: an integer parameter idx<k>_<DimVar>
//     that make_input fills from [0, DimVar), or indices the program computes;
//   - exp / silu / gelu chains of values up to +-100, so exp's overflow and
//     underflow are compared. Those chains are outputs; only comparisons of
//     them join the pool, so an inf never meets a sum whose order differs
//     between the backends.
// Programs are compiled in batches of 100 into one library (the AOT path),
// two batches at a time, so a few hundred cost a few compiler runs; every one
// must compile natively and run without an error.
// TF_RANDOM_PROGRAMS sets the count (default 300; `make test-long` runs 5000),
// TF_RANDOM_SEED the seed.
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <future>
#include <memory>

#include "compiler_helpers.h"
#include "core/compiler/codegen.h"
#include "core/compiler/library.h"
#include "core/frontend/printer.h"
#include "core/ir/error.h"
#include "core/ops/math/math.h"
#include "core/ops/nn/nn.h"
#include "core/ops/tensor/tensor.h"
#include "core/sema/typeinfer.h"
#include "core/sema/verify.h"

namespace tf::comptest {
namespace {

using ops::BinaryKind;
using ops::ReduceKind;
using ops::UnaryKind;

int64_t env_int(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoll(v) : fallback;
}

template <typename OpT, typename... A>
ir::ExprPtr call(std::vector<ir::ExprPtr> args, A&&... op_args) {
  return sema::make_op_call(std::make_shared<OpT>(std::forward<A>(op_args)...), std::move(args));
}

ir::ExprPtr binary(ir::ExprPtr a, ir::ExprPtr b, BinaryKind k) { return call<ops::Binary>({a, b}, k); }
ir::ExprPtr unary(ir::ExprPtr x, UnaryKind k) { return call<ops::Unary>({x}, k); }
ir::ExprPtr cast(ir::ExprPtr x, DType d) { return call<ops::Cast>({x}, d); }

constexpr ReduceKind kReduceKinds[] = {ReduceKind::kSum, ReduceKind::kMean, ReduceKind::kMax,
                                       ReduceKind::kAbsMax};

const ir::TensorType& ttype(const ir::ExprPtr& e) { return static_cast<const ir::TensorType&>(*e->type()); }

// The prefix of an index parameter's name; the DimVar it indexes follows the
// last '_' (make_input fills it from [0, that DimVar)).
constexpr const char* kIndexPrefix = "idx";

// Builds one random function over N x D values of one float dtype.
class ProgramGenerator {
 public:
  ProgramGenerator(std::mt19937& rng, DType dt) : rng_(rng), dt_(dt) {}

  ir::FunctionPtr make(const std::string& name) {
    const ir::ShapeDim n = ir::ShapeDim::var("N", 1, 64), d = ir::ShapeDim::var("D", 1, 256);
    n_ = n;
    d_ = d;
    const int nparams = 1 + pick(3);
    for (int i = 0; i < nparams; ++i) {
      ir::Shape s = pick(4) == 0 ? ir::Shape{d} : (pick(5) == 0 ? ir::Shape{n, 1} : ir::Shape{n, d});
      auto v = ir::Var::make("p" + std::to_string(i), ir::TensorType::make(s, dt_));
      params_.push_back(v);
      pool_.push_back(v);
    }
    const int nops = 1 + pick(8);
    for (int i = 0; i < nops; ++i) pool_.push_back(random_op());
    std::vector<ir::ExprPtr> outs{pool_.back()};
    outs.insert(outs.end(), extra_outs_.begin(), extra_outs_.end());
    if (pick(3) == 0) outs.push_back(any());
    ir::Function::Fields f;
    f.name = name;
    f.params = params_;
    f.body = outs.size() == 1 ? outs[0] : ir::Tuple::make(outs);
    f.return_type = f.body->type();
    return ir::Function::make(std::move(f));
  }

 private:
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  double uniform(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng_); }
  ir::ExprPtr any() { return pool_[static_cast<size_t>(pick(static_cast<int>(pool_.size())))]; }
  bool is_nd(const ir::ExprPtr& e) const {
    const ir::TensorType& t = ttype(e);
    return t.rank() == 2 && t.shape()[0] == n_ && t.shape()[1] == d_;
  }
  ir::VarPtr new_param(const std::string& prefix, ir::Shape s, DType dt, bool pooled) {
    auto v = ir::Var::make(prefix + std::to_string(params_.size()), ir::TensorType::make(std::move(s), dt));
    params_.push_back(v);
    if (pooled) pool_.push_back(v);
    return v;
  }
  // A value of shape (., D) (possibly (1, D)), broadcasting one up when needed.
  ir::ExprPtr full() {
    ir::ExprPtr v = any();
    if (ttype(v).rank() == 2 && ttype(v).shape()[1] == d_) return v;
    for (const ir::ExprPtr& p : pool_)
      if (ttype(p).rank() == 2 && ttype(p).shape()[1] == d_) return binary(v, p, BinaryKind::kAdd);
    return binary(v, new_param("full", {n_, d_}, dt_, true), BinaryKind::kMul);
  }
  // A value of exactly (N, D): ops that index or join rows need N rows.
  ir::ExprPtr nd() {
    ir::ExprPtr v = any();
    if (is_nd(v)) return v;
    for (const ir::ExprPtr& p : pool_)
      if (is_nd(p)) return binary(v, p, BinaryKind::kAdd);
    return binary(v, new_param("full", {n_, d_}, dt_, true), BinaryKind::kMul);
  }
  // A float parameter of the pool: its values are the inputs, in [-2, 2].
  ir::ExprPtr float_param() {
    std::vector<ir::ExprPtr> ps;
    for (const ir::ExprPtr& p : pool_)
      if (ir::expr_as<ir::Var>(p)) ps.push_back(p);
    return ps[static_cast<size_t>(pick(static_cast<int>(ps.size())))];
  }
  ir::ExprPtr constant() { return ir::Constant::make_float(uniform(-2, 2), dt_); }
  // The comparison `a k (b + c)` for a pool value b and a constant c with
  // 0.25 <= |c| <= 2. Rationale: values the backends compute an ulp apart
  // (gelu's tanh and erf forms near 0; exp(gelu(x)) and 1 for large negative
  // x) would otherwise tie often, and a tie flips the comparison (see
  // GeluTanhOfLargeNegativeInput below).
  ir::ExprPtr compare(const ir::ExprPtr& a, BinaryKind k) {
    ir::ExprPtr shift = ir::Constant::make_float(uniform(0.25, 2) * (pick(2) ? 1 : -1), dt_);
    return binary(a, binary(any(), shift, BinaryKind::kAdd), k);
  }
  ir::ExprPtr any_vector() {
    for (const ir::ExprPtr& p : pool_)
      if (ttype(p).rank() == 1) return p;
    return new_param("v", {d_}, dt_, true);
  }
  // A (D,) weight or bias: shared, fresh, or (rarely) computed from x, which
  // keeps a row op from computing x in its own stage (fusable_producer).
  ir::ExprPtr row_weight(const ir::ExprPtr& x) {
    switch (pick(6)) {
      case 0: return new_param("v", {d_}, dt_, false);
      case 1: return call<ops::Reduce>({x}, std::vector<int64_t>{0}, false, ReduceKind::kMean);
      default: return any_vector();
    }
  }
  ir::ExprPtr row_op(const ir::ExprPtr& x) {
    switch (pick(3)) {
      case 0: return call<ops::RMSNorm>({x, row_weight(x)}, 1e-5);
      case 1: return call<ops::LayerNorm>({x, row_weight(x), row_weight(x)}, 1e-5);
      default: return call<ops::SoftMax>({x}, -1);
    }
  }

  ir::ExprPtr random_op() {
    switch (pick(21)) {
      case 0: case 1: case 2: return random_binary();
      case 3: return random_unary();
      case 4: return call<ops::Silu>({any()});
      case 5: return call<ops::Gelu>({any()}, pick(2) ? "tanh" : "none");
      case 6: return call<ops::RMSNorm>({full(), any_vector()}, 1e-5);
      case 7: return call<ops::SoftMax>({full()}, -1);
      case 8: {  // compare, then back to float
        return cast(compare(any(), pick(2) ? BinaryKind::kLt : BinaryKind::kGe), dt_);
      }
      case 9: {  // round trip through the other float type
        DType other = dt_ == DType::kF32 ? DType::kF64 : DType::kF32;
        return cast(cast(any(), other), dt_);
      }
      case 10: {  // a reduction over the last axis read back along its row
        // (computed inside the reader's stage; two passes when a second
        // reduction reads the first's result, as in LayerNorm's variance)
        ir::ExprPtr x = full();
        ir::ExprPtr r = call<ops::Reduce>({x}, std::vector<int64_t>{-1}, true, kReduceKinds[pick(4)]);
        ir::ExprPtr d = binary(x, r, BinaryKind::kSub);
        if (pick(2) == 0) return d;
        ir::ExprPtr v = call<ops::Reduce>({binary(d, d, BinaryKind::kMul)}, std::vector<int64_t>{-1}, true,
                                          ReduceKind::kMean);
        return binary(d, v, BinaryKind::kMul);
      }
      case 11: {  // Reduce over the first axis, keepdim: (1, D) broadcasts back
        return call<ops::Reduce>({full()}, std::vector<int64_t>{0}, true, kReduceKinds[pick(4)]);
      }
      case 12: {  // a transpose round trip, through an elementwise op
        ir::ExprPtr t = call<ops::Transpose>({full()}, std::vector<int64_t>{1, 0});
        return call<ops::Transpose>({unary(t, UnaryKind::kRelu)}, std::vector<int64_t>{-1, 0});
      }
      case 13: {
        ir::ExprPtr x = nd();
        return call<ops::LayerNorm>({x, row_weight(x), row_weight(x)}, 1e-5);
      }
      case 14: return concat_slice();
      case 15: return stack_down();
      case 16: return pick(3) ? gather_by_param() : gather_computed();
      case 17: return reshape_round_trip();
      case 18: return int_round_trip();
      case 19: return row_producer();
      case 20: return large_chain();
      default: {  // (N, D) @ (D, D)-shaped weight
        return call<ops::MatMul>({full(), new_param("w", {d_, d_}, dt_, false)});
      }
    }
  }

  ir::ExprPtr random_binary() {
    static const BinaryKind kBin[] = {BinaryKind::kAdd,     BinaryKind::kSub,     BinaryKind::kMul,
                                      BinaryKind::kMinimum, BinaryKind::kMaximum, BinaryKind::kDiv};
    BinaryKind k = kBin[pick(6)];
    ir::ExprPtr b = pick(4) == 0 ? constant() : any();
    if (k == BinaryKind::kDiv)
      b = binary(unary(b, UnaryKind::kAbs), ir::Constant::make_float(0.5, dt_), BinaryKind::kAdd);
    return binary(any(), b, k);
  }
  ir::ExprPtr random_unary() {
    static const UnaryKind kUn[] = {UnaryKind::kNeg, UnaryKind::kAbs, UnaryKind::kRelu, UnaryKind::kSquare,
                                    UnaryKind::kSin, UnaryKind::kCos, UnaryKind::kFloor, UnaryKind::kExp};
    UnaryKind k = kUn[pick(8)];
    ir::ExprPtr x = any();
    // exp only of bounded values here: sin keeps the pool finite (large_chain
    // covers overflow).
    if (k == UnaryKind::kExp) x = unary(x, UnaryKind::kSin);
    return unary(x, k);
  }

  // Concat of two values and a Slice back to (N, D): rows (2N, D) -> either
  // half; columns (N, 2D) -> either half, or (N, D + 1) with a reduced column
  // on either side -> [1, D + 1) or [0, -1) (a static negative end).
  ir::ExprPtr concat_slice() {
    ir::ExprPtr a = nd();
    const ir::ShapeDim zero(0), one(1);
    const std::vector<int64_t> unit{1, 1};
    switch (pick(3)) {
      case 0: {
        ir::ExprPtr cat = call<ops::Concat>({ir::Tuple::make({a, nd()})}, pick(2) ? 0 : -2);
        const bool second = pick(2);
        return call<ops::Slice>({cat}, ir::Shape{second ? n_ : zero, zero},
                                ir::Shape{second ? n_ * 2 : n_, d_}, unit);
      }
      case 1: {
        ir::ExprPtr cat = call<ops::Concat>({ir::Tuple::make({a, nd()})}, pick(2) ? 1 : -1);
        const bool second = pick(2);
        return call<ops::Slice>({cat}, ir::Shape{zero, second ? d_ : zero},
                                ir::Shape{n_, second ? d_ * 2 : d_}, unit);
      }
      default: {
        ir::ExprPtr col = call<ops::Reduce>({nd()}, std::vector<int64_t>{1}, true, kReduceKinds[pick(4)]);
        if (pick(2)) {
          ir::ExprPtr cat = call<ops::Concat>({ir::Tuple::make({col, a})}, 1);
          return call<ops::Slice>({cat}, ir::Shape{zero, one}, ir::Shape{n_, d_ + 1}, unit);
        }
        ir::ExprPtr cat = call<ops::Concat>({ir::Tuple::make({a, col})}, 1);
        return call<ops::Slice>({cat}, ir::Shape{zero, zero}, ir::Shape{n_, -1}, unit);
      }
    }
  }

  // Stack of 2 or 3 (N, D) values along a new axis, then back to (N, D): a
  // Reduce over that axis; one entry sliced out ([k, k + 1), or [-1, 100),
  // which the static extent clamps) and reshaped; or every other entry
  // (stride 2) sliced out and reduced.
  ir::ExprPtr stack_down() {
    const int count = 2 + pick(2);
    std::vector<ir::ExprPtr> xs;
    for (int i = 0; i < count; ++i) xs.push_back(nd());
    const int64_t axis = pick(3);
    ir::ExprPtr s = call<ops::Stack>({ir::Tuple::make(xs)}, pick(2) ? axis : axis - 3);
    const ReduceKind red = kReduceKinds[pick(4)];
    if (pick(3) == 0) return call<ops::Reduce>({s}, std::vector<int64_t>{axis}, false, red);
    ir::Shape begin{0, 0}, end{n_, d_};
    std::vector<int64_t> strides{1, 1, 1};
    const int how = pick(3);
    const int64_t k = pick(count);
    const int64_t first = how == 0 ? k : how == 1 ? -1 : 0;
    begin.insert(begin.begin() + axis, first);
    end.insert(end.begin() + axis, how == 0 ? ir::ShapeDim(k + 1) : ir::ShapeDim(100));
    strides[static_cast<size_t>(axis)] = how == 2 ? 2 : 1;
    ir::ExprPtr sl = call<ops::Slice>({s}, begin, end, strides);
    if (how == 2) return call<ops::Reduce>({sl}, std::vector<int64_t>{axis}, false, red);
    return call<ops::Reshape>({sl}, ir::Shape{n_, d_});
  }

  // Gather with an index parameter that make_input fills with in-range
  // values: rows by (N,) indices, columns by (D,) indices, or per row by
  // (N, D) indices with batch_dims 1.
  ir::ExprPtr gather_by_param() {
    const DType it = pick(2) ? DType::kI32 : DType::kI64;
    switch (pick(3)) {
      case 0: return call<ops::Gather>({nd(), index_param({n_}, "N", it)}, 0, 0);
      case 1: return call<ops::Gather>({full(), index_param({d_}, "D", it)}, pick(2) ? 1 : -1, 0);
      default: return call<ops::Gather>({nd(), index_param({n_, d_}, "D", it)}, 1, 1);
    }
  }
  ir::ExprPtr index_param(ir::Shape s, const std::string& dim, DType it) {
    auto v = ir::Var::make(kIndexPrefix + std::to_string(params_.size()) + "_" + dim,
                           ir::TensorType::make(std::move(s), it));
    params_.push_back(v);
    return v;
  }
  // Rows gathered by indices the program computes: per column, the count of
  // true comparisons minus their max lies in [0, N). The (D, D) result is a
  // MatMul weight.
  ir::ExprPtr gather_computed() {
    const DType it = pick(2) ? DType::kI32 : DType::kI64;
    ir::ExprPtr c = cast(compare(nd(), BinaryKind::kLt), it);
    ir::ExprPtr count = call<ops::Reduce>({c}, std::vector<int64_t>{0}, false, ReduceKind::kSum);
    ir::ExprPtr top = call<ops::Reduce>({c}, std::vector<int64_t>{0}, false, ReduceKind::kMax);
    ir::ExprPtr rows = call<ops::Gather>({nd(), binary(count, top, BinaryKind::kSub)}, 0, 0);
    return call<ops::MatMul>({full(), rows});
  }

  // (N, D) -> (N*D,) -> (N, D) through an elementwise op; -> (N, D, 1) and a
  // Reduce or Reshape back; or -> (N*D,) -> (D, N) and a Transpose.
  ir::ExprPtr reshape_round_trip() {
    ir::ExprPtr x = nd();
    switch (pick(3)) {
      case 0: {
        ir::ExprPtr flat = call<ops::Reshape>({x}, ir::Shape{n_ * d_});
        ir::ExprPtr y = unary(flat, pick(2) ? UnaryKind::kAbs : UnaryKind::kNeg);
        return call<ops::Reshape>({y}, ir::Shape{n_, d_});
      }
      case 1: {
        ir::ExprPtr col = call<ops::Reshape>({x}, ir::Shape{n_, d_, 1});
        if (pick(2)) return call<ops::Reduce>({col}, std::vector<int64_t>{2}, false, ReduceKind::kSum);
        return call<ops::Reshape>({binary(col, constant(), BinaryKind::kMul)}, ir::Shape{n_, d_});
      }
      default: {
        ir::ExprPtr flat = call<ops::Reshape>({x}, ir::Shape{n_ * d_});
        ir::ExprPtr dn = call<ops::Reshape>({flat}, ir::Shape{d_, n_});
        return call<ops::Transpose>({dn}, std::vector<int64_t>{1, 0});
      }
    }
  }

  // Through i32 / i64 and back: integer arithmetic on small integers (a
  // comparison, or floor(p * c) of a parameter p in [-2, 2], |c| <= 50), so
  // no float-to-int conversion is out of range.
  ir::ExprPtr int_round_trip() {
    static const BinaryKind kBin[] = {BinaryKind::kAdd,     BinaryKind::kSub,     BinaryKind::kMul,
                                      BinaryKind::kMinimum, BinaryKind::kMaximum, BinaryKind::kDiv};
    static const UnaryKind kUn[] = {UnaryKind::kNeg, UnaryKind::kAbs, UnaryKind::kSquare, UnaryKind::kRelu};
    const DType it = pick(2) ? DType::kI32 : DType::kI64;
    const BinaryKind k = kBin[pick(6)];
    ir::ExprPtr a = small_int(it), b = small_int(it);
    if (k == BinaryKind::kDiv)  // floor division by a positive or negative nonzero divisor
      b = binary(binary(unary(b, UnaryKind::kAbs), ir::Constant::make_int(1, it), BinaryKind::kAdd),
                 ir::Constant::make_int(pick(2) ? 1 : -1, it), BinaryKind::kMul);
    ir::ExprPtr r = binary(a, b, k);
    if (pick(2)) r = unary(r, kUn[pick(4)]);
    return cast(r, dt_);
  }
  ir::ExprPtr small_int(DType it) {
    if (pick(2)) return cast(compare(any(), pick(2) ? BinaryKind::kGt : BinaryKind::kLe), it);
    const double c = uniform(1, 50) * (pick(2) ? 1 : -1);
    ir::ExprPtr scaled = binary(float_param(), ir::Constant::make_float(c, dt_), BinaryKind::kMul);
    return cast(unary(scaled, UnaryKind::kFloor), it);
  }

  // The row-op producer pattern: an elementwise (N, D) value x that is both
  // the input of RMSNorm / LayerNorm / SoftMax and an output or read again.
  ir::ExprPtr row_producer() {
    ir::ExprPtr x;
    switch (pick(4)) {
      case 0: x = binary(nd(), any(), pick(2) ? BinaryKind::kAdd : BinaryKind::kMul); break;
      case 1: x = call<ops::Silu>({nd()}); break;
      case 2: x = unary(nd(), UnaryKind::kSquare); break;
      default: x = cast(compare(nd(), BinaryKind::kGt), dt_); break;
    }
    ir::ExprPtr row = row_op(x);
    pool_.push_back(x);
    if (pick(2)) {
      extra_outs_.push_back(x);
      return row;
    }
    return binary(x, row, pick(2) ? BinaryKind::kAdd : BinaryKind::kSub);
  }

  // exp / silu / gelu of p * c for a parameter p in [-2, 2] and 20 <= |c| <=
  // 50: values up to +-100 reach exp's overflow (inf) and underflow
  // (subnormal, 0). The chain is an output; the pool gets a comparison of it
  // with a threshold away from the values the chain saturates at (0, 1, inf):
  // compared with those, an ulp between the backends' forms flips the result
  // (see GeluTanhOfLargeNegativeInput below).
  ir::ExprPtr large_chain() {
    const double c = uniform(20, 50) * (pick(2) ? 1 : -1);
    ir::ExprPtr x = binary(float_param(), ir::Constant::make_float(c, dt_), BinaryKind::kMul);
    for (int steps = 1 + pick(3); steps > 0; --steps) {
      switch (pick(5)) {
        case 0: case 1: x = unary(x, UnaryKind::kExp); break;
        case 2: x = call<ops::Silu>({x}); break;
        case 3: x = call<ops::Gelu>({x}, pick(2) ? "tanh" : "none"); break;
        default: x = unary(x, UnaryKind::kNeg); break;
      }
    }
    extra_outs_.push_back(x);
    ir::ExprPtr threshold = ir::Constant::make_float(uniform(1.5, 50) * (pick(2) ? 1 : -1), dt_);
    return cast(binary(x, threshold, pick(2) ? BinaryKind::kLt : BinaryKind::kGe), dt_);
  }

  std::mt19937& rng_;
  DType dt_;
  ir::ShapeDim n_, d_;
  std::vector<ir::VarPtr> params_;
  std::vector<ir::ExprPtr> pool_;
  std::vector<ir::ExprPtr> extra_outs_;  // outputs besides the last pool value
};

std::vector<int64_t> concrete(const ir::TensorType& t, const ir::DimBindings& b) {
  std::vector<int64_t> s;
  for (const ir::ShapeDim& d : t.shape()) s.push_back(d.evaluate(b));
  return s;
}

// An input for parameter p: floats uniform in [-2, 2]; an index parameter
// idx<k>_<DimVar> uniform in [0, DimVar), so every Gather is in range.
NDArray make_input(const ir::Var& p, const ir::DimBindings& b, std::mt19937& rng) {
  const ir::TensorType& t = static_cast<const ir::TensorType&>(*p.type());
  if (!ir::is_int(t.dtype())) return random_array(t.dtype(), concrete(t, b), rng);
  EXPECT_EQ(p.name().rfind(kIndexPrefix, 0), 0u) << "an integer parameter that is not an index: " << p.name();
  const int64_t extent = b.at(p.name().substr(p.name().rfind('_') + 1));
  NDArray a = NDArray::empty(t.dtype(), concrete(t, b));
  std::uniform_int_distribution<int64_t> u(0, extent - 1);
  for (int64_t i = 0; i < a.numel(); ++i) {
    if (t.dtype() == DType::kI32) static_cast<int32_t*>(a.data())[i] = static_cast<int32_t>(u(rng));
    else static_cast<int64_t*>(a.data())[i] = u(rng);
  }
  return a;
}

// fn as DSL source, for a failure message.
std::string program_text(const ir::FunctionPtr& fn) {
  try {
    return frontend::print_module(*sema::seal(ir::Target::default_cpu(), {fn}));
  } catch (const std::exception& e) {
    return std::string("(not printable: ") + e.what() + ")";
  }
}

// One batch of generated programs sealed into one module, and the native
// compile of its library, running in the background.
struct Batch {
  ir::ModulePtr module;
  std::vector<ir::FunctionPtr> fns;  // sealed
  std::string path;
  std::future<std::vector<std::string>> compiled;  // names export_library compiled
};

Batch start_batch(int64_t first, int64_t end, std::mt19937& rng) {
  std::vector<ir::FunctionPtr> fns;
  for (int64_t i = first; i < end; ++i) {
    ProgramGenerator g(rng, i % 4 == 3 ? DType::kF64 : DType::kF32);
    fns.push_back(g.make("r" + std::to_string(i)));
  }
  Batch b;
  b.module = sema::seal(ir::Target::default_cpu(), fns);
  for (const ir::FunctionPtr& f : fns) b.fns.push_back(b.module->lookup(f->name()));
  b.path = ::testing::TempDir() + "/tf_random_" + std::to_string(::getpid()) + "_" + std::to_string(first) +
           ".so";
  b.compiled = std::async(std::launch::async, [fns = b.fns, path = b.path] {
    return compiler::export_library(fns, "", path);
  });
  return b;
}

// Every program of the batch compiled natively and agrees with the
// evaluator on two random bindings of (N, D).
void check_batch(Batch& b, std::mt19937& rng, int64_t* checked) {
  std::vector<std::string> compiled;
  try {
    compiled = b.compiled.get();
  } catch (const std::exception& e) {
    // Name the program the code generator failed on.
    for (const ir::FunctionPtr& fn : b.fns) {
      try {
        compiler::generate(*fn);
      } catch (const std::exception& f) {
        FAIL() << fn->name() << ": " << f.what() << "\n" << program_text(fn);
      }
    }
    FAIL() << e.what();
  }
  ASSERT_EQ(compiled.size(), b.fns.size()) << "a generated program was not compilable";
  std::string text;
  auto lib = compiler::open_library(b.path, &text);
  for (const ir::FunctionPtr& fn : b.fns) {
    auto k = compiler::bind_library_function(lib, *fn);
    ASSERT_TRUE(k) << fn->name();
    for (int trial = 0; trial < 2; ++trial) {
      ir::DimBindings bind{{"N", 1 + static_cast<int64_t>(rng() % 20)},
                           {"D", 1 + static_cast<int64_t>(rng() % 70)}};
      std::vector<NDArray> in;
      for (const ir::VarPtr& p : fn->params()) in.push_back(make_input(*p, bind, rng));
      const std::string what = fn->name() + " N=" + std::to_string(bind["N"]) + " D=" + std::to_string(bind["D"]);
      try {
        expect_agree(*k, *b.module, *fn, in, what);
      } catch (const std::exception& e) {  // every generated program runs without an error
        ADD_FAILURE() << what << ": " << e.what();
      }
      if (::testing::Test::HasFailure()) {
        ADD_FAILURE() << "the program:\n" << program_text(fn);
        return;
      }
    }
    ++*checked;
  }
}

TEST(RandomPrograms, CompiledAgreesWithEvaluator) {
  const int64_t total = env_int("TF_RANDOM_PROGRAMS", 300);
  const int64_t batch = 100;
  // Rationale: one compiler run is single-threaded and dominates the time,
  // so two batches compile at once while the oldest one is checked.
  const size_t kInFlight = 2;
  std::mt19937 rng(static_cast<uint32_t>(env_int("TF_RANDOM_SEED", 12345)));
  std::deque<Batch> batches;
  int64_t next = 0, checked = 0;
  while (next < total || !batches.empty()) {
    for (; next < total && batches.size() < kInFlight; next += batch)
      batches.push_back(start_batch(next, std::min(total, next + batch), rng));
    check_batch(batches.front(), rng, &checked);
    if (::testing::Test::HasFailure()) {
      for (Batch& b : batches) {
        if (b.compiled.valid()) b.compiled.wait();
        std::remove(b.path.c_str());
      }
      return;
    }
    std::remove(batches.front().path.c_str());
    batches.pop_front();
  }
  EXPECT_EQ(checked, total);
}

// Found by the generator (TF_RANDOM_PROGRAMS=5000, seed 12345, r1126:
// t0 = exp(gelu(p2 * 45.714336828276004, "tanh")); cast(t0 >= cast(p2 >= p0))
// with p2 = -0.113205, p2 >= p0). For f32 x = -5.1750915 the evaluator's
// gelu is torch's 0.5 x (1 + tanh(u)), u = -9.07, where 1 + tanh(u) cancels
// to 0, so gelu(x) = -0 and exp(gelu(x)) = 1. The compiled form was then
// x / (1 + exp(-2u)), which gives the true -6.8e-8, so exp(gelu(x)) =
// 1 - 2^-24: both values within tolerance, but a comparison with 1 told
// them apart (evaluator 1, native 0). The compiled gelu now rounds in
// torch's order (core/compiler/prelude.cc).
TEST(RandomPrograms, GeluTanhOfLargeNegativeInput) {
  auto x = ir::Var::make("x", ir::TensorType::make({2}, DType::kF32));
  ir::ExprPtr t = unary(call<ops::Gelu>({x}, "tanh"), UnaryKind::kExp);
  ir::ExprPtr ge1 = cast(binary(t, ir::Constant::make_float(1.0, DType::kF32), BinaryKind::kGe), DType::kF32);
  ir::Function::Fields f;
  f.name = "gelu_exp_ge1";
  f.params = {x};
  f.body = ir::Tuple::make({t, ge1});
  f.return_type = f.body->type();
  ir::ModulePtr m = sema::seal(ir::Target::default_cpu(), {ir::Function::make(std::move(f))});
  const ir::FunctionPtr fn = m->lookup("gelu_exp_ge1");
  NDArray in = NDArray::empty(DType::kF32, {2});
  static_cast<float*>(in.data())[0] = -5.1750915f;
  static_cast<float*>(in.data())[1] = -6.0f;
  expect_agree(*compiler::compile(*fn), *m, *fn, {in}, "exp(gelu(x)) >= 1 for x = -5.1750915, -6");
}

}  // namespace
}  // namespace tf::comptest
