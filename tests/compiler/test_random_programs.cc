// Differential testing on random well-typed programs. A generator builds DAGs
// over the DimVar shapes (N, D), (N, 1) and (D,) of one float dtype (f32 or
// f64) from:
//   - elementwise ops: Binary arithmetic (broadcasting), Unary, Silu, Gelu,
//     ReLU, Sigmoid, Tanh, comparisons cast back to float, a round trip
//     through the other float type, and a round trip through i32 / i64 with
//     integer arithmetic (floor division included) on values known to be
//     small integers; Zeros of a pool value's shape as an operand;
//   - row ops RMSNorm, LayerNorm and SoftMax (now and then two softmaxes
//     combined, one stage with two sets of exps and sums), also in the row-op producer
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
//     that make_input fills from [0, DimVar), or indices the program computes
//     (also TopK's);
//   - shape values: ShapeOf, Rank, ShapeExtract and ShapeCompose give N, D
//     and rank as rank-0 i64 values, which scale pool values and compute the
//     offsets and positions below (a shape value is also an output);
//   - InsertSlice of computed rows, columns and (N, D) values into computed,
//     parameter or Zeros destinations (also a rank-1 dst with a bare offset),
//     offsets literal or computed from shape values, always in range;
//     CacheUpdate of a computed (1, N, ., .) value into a cache of N or 2N
//     positions, (cur_pos, s) in range and read back as (N, D);
//   - RoPE of computed q / k with head dim 2D (positions an index parameter)
//     or 2 (positions a parameter or computed), caches cos / sin of
//     parameters, either output read back as (N, D);
//   - TopK of values both backends compute bit for bit (small integers,
//     parameters, neg / abs / relu / min / max), so that its indices, ties
//     included (lower index first), are comparable: along rows (k = D or 1),
//     columns (k = N) or of a concat (k = D); the indices are outputs, gather
//     indices, or cast back to float;
//   - Conv2D of one or two stacked (N, D) planes (groups 1 or 2, bias or
//     none): "same" convolutions read back as (N, D), strided / dilated ones
//     averaged to a scalar;
//   - Reshard, the identity (no layout, storage kept): the only Reshard a
//     single-device function can type;
//   - exp / silu / gelu / sigmoid / tanh / relu chains of values up to +-100,
//     so exp's overflow and underflow are compared. Those chains are outputs;
//     only comparisons of them join the pool, so an inf never meets a sum
//     whose order differs between the backends.
// Every op with a native lowering is emitted (GeneratorEmitsEveryLoweredOp
// checks it) except Local, which is compiled only per shard.
// Programs are compiled in batches of 50 into one library (the AOT path,
// through the kernel cache: a batch compiled before, by make test for the
// sanitizer builds, is not compiled again), two batches at a time, so a few
// hundred cost a few compiler runs; every one must compile natively and run
// without an error. The compiler's time grows with a batch's size alone,
// and smaller batches leave less of a last one compiling on its own core.
// TF_RANDOM_PROGRAMS sets the count (default 300; `make test-long` runs 5000),
// TF_RANDOM_SEED the seed. TF_RANDOM_FROM=k replays a failure at r<k> in
// minutes: the batches before k's are generated and draw their inputs from
// the same random stream, but are neither compiled nor checked.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <future>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "compiler_helpers.h"
#include "core/compiler/codegen.h"
#include "core/compiler/library.h"
#include "core/compiler/stage_lowering.h"
#include "core/frontend/printer.h"
#include "core/ir/error.h"
#include "core/ir/visitor.h"
#include "core/ops/math/math.h"
#include "core/ops/nn/nn.h"
#include "core/ops/shape/shape.h"
#include "core/ops/sharding/sharding.h"
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
// Every draw from the random stream is a statement or an initializer of its
// own, never one of two among a call's arguments or an operator's operands:
// their order is the compiler's to choose, and GCC and Clang chose
// differently, so the same seed made other programs in the sanitizer builds
// (a failure found in one build did not replay in the other).
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
  // A magnitude in [lo, hi) with a random sign, drawn after it.
  double signed_uniform(double lo, double hi) {
    const double magnitude = uniform(lo, hi);
    return pick(2) ? magnitude : -magnitude;
  }
  // The comparison `a k (b + c)` for a pool value b and a constant c with
  // 0.25 <= |c| <= 2. Rationale: values the backends compute an ulp apart
  // (gelu's tanh and erf forms near 0; exp(gelu(x)) and 1 for large negative
  // x) would otherwise tie often, and a tie flips the comparison (see
  // GeluTanhOfLargeNegativeInput below).
  ir::ExprPtr compare(const ir::ExprPtr& a, BinaryKind k) {
    ir::ExprPtr shift = ir::Constant::make_float(signed_uniform(0.25, 2), dt_);
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
    switch (pick(37)) {
      case 0: case 1: case 2: return random_binary();
      case 3: return random_unary();
      case 4: return call<ops::Silu>({any()});
      case 5: {
        const char* form = pick(2) ? "tanh" : "none";
        return call<ops::Gelu>({any()}, form);
      }
      case 6: return call<ops::RMSNorm>({full(), any_vector()}, 1e-5);
      case 7: {  // softmax; now and then two in one stage, each with its own exps and sums
        ir::ExprPtr s = call<ops::SoftMax>({full()}, -1);
        if (pick(3) != 0) return s;
        const BinaryKind k = pick(2) ? BinaryKind::kAdd : BinaryKind::kMul;
        return binary(s, call<ops::SoftMax>({full()}, -1), k);
      }
      case 8: {  // compare, then back to float
        const BinaryKind k = pick(2) ? BinaryKind::kLt : BinaryKind::kGe;
        return cast(compare(any(), k), dt_);
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
        // Sometimes also returned: an elementwise value of two of the row's
        // reductions, (N, 1), a stage over rows of its own.
        if (pick(4) == 0) {
          ir::ExprPtr q = call<ops::Reduce>({binary(x, x, BinaryKind::kMul)}, std::vector<int64_t>{-1}, true,
                                            kReduceKinds[pick(4)]);
          extra_outs_.push_back(binary(r, q, BinaryKind::kAdd));
        }
        if (pick(2) == 0) return d;
        ir::ExprPtr v = call<ops::Reduce>({binary(d, d, BinaryKind::kMul)}, std::vector<int64_t>{-1}, true,
                                          ReduceKind::kMean);
        return binary(d, v, BinaryKind::kMul);
      }
      case 11: {  // Reduce over the first axis, keepdim: (1, D) broadcasts back
        const ReduceKind k = kReduceKinds[pick(4)];
        return call<ops::Reduce>({full()}, std::vector<int64_t>{0}, true, k);
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
      case 21: {  // (N, D) @ (D, D)-shaped weight
        return call<ops::MatMul>({full(), new_param("w", {d_, d_}, dt_, false)});
      }
      case 22: return activation(any());
      case 23: return zeros_mix();
      case 24: return insert_slice();
      case 25: return cache_update();
      case 26: return rope();
      case 27: return topk();
      case 28: return conv2d();
      case 29: return shape_scaled();
      case 30: return reshard(any());
      case 31: {  // a mask's select, a literal on either side
        const BinaryKind k = pick(2) ? BinaryKind::kLt : BinaryKind::kGe;
        ir::ExprPtr c = compare(any(), k);
        ir::ExprPtr a = any(), b = pick(3) == 0 ? constant() : any();
        if (pick(2)) std::swap(a, b);
        return call<ops::Where>({c, a, b});
      }
      case 32: {  // clamp, one side open now and then
        const double inf = std::numeric_limits<double>::infinity();
        const double lo = pick(4) == 0 ? -inf : uniform(-1.5, 0.5), hi = pick(4) == 0 ? inf : uniform(-0.5, 1.5);
        return call<ops::Clamp>({any()}, lo, hi);
      }
      case 33: {  // pow of a positive base (|x| + 0.5), a bounded exponent
        ir::ExprPtr base = binary(unary(any(), UnaryKind::kAbs), ir::Constant::make_float(0.5, dt_), BinaryKind::kAdd);
        return binary(base, pick(2) ? constant() : any(), BinaryKind::kPow);
      }
      case 35: return cache_scatter();
      case 34: {  // the bits through the integer type of the same width and back
        const DType bits = dt_ == DType::kF32 ? DType::kI32 : DType::kI64;
        return call<ops::Bitcast>({call<ops::Bitcast>({any()}, bits)}, dt_);
      }
      default: {  // an arange along the row, in the float type or through i64
        const bool integral = pick(2) == 0;
        const double step = integral ? double(pick(3)) + 1 : uniform(-0.05, 0.05);
        const double start = integral ? double(pick(5)) - 2 : uniform(-1, 1);
        ir::ExprPtr r = call<ops::Arange>({}, d_, start, step, integral ? DType::kI64 : dt_);
        return binary(full(), integral ? cast(r, dt_) : r, BinaryKind::kAdd);
      }
    }
  }

  ir::ExprPtr random_binary() {
    static const BinaryKind kBin[] = {BinaryKind::kAdd,     BinaryKind::kSub,     BinaryKind::kMul,
                                      BinaryKind::kMinimum, BinaryKind::kMaximum, BinaryKind::kDiv};
    BinaryKind k = kBin[pick(6)];
    const bool literal = pick(4) == 0;
    ir::ExprPtr b = literal ? constant() : any();
    // A divisor is at least 0.5 in magnitude. A literal one is made so as it
    // is drawn: abs(literal) has no DSL spelling (a literal operand needs a
    // tensor beside it), which would leave a failure without its program.
    if (k == BinaryKind::kDiv && literal) b = ir::Constant::make_float(uniform(0.5, 2.5), dt_);
    else if (k == BinaryKind::kDiv)
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
        const int64_t axis = pick(2) ? 0 : -2;
        ir::ExprPtr cat = call<ops::Concat>({ir::Tuple::make({a, nd()})}, axis);
        const bool second = pick(2);
        return call<ops::Slice>({cat}, ir::Shape{second ? n_ : zero, zero},
                                ir::Shape{second ? n_ * 2 : n_, d_}, unit);
      }
      case 1: {
        const int64_t axis = pick(2) ? 1 : -1;
        ir::ExprPtr cat = call<ops::Concat>({ir::Tuple::make({a, nd()})}, axis);
        const bool second = pick(2);
        return call<ops::Slice>({cat}, ir::Shape{zero, second ? d_ : zero},
                                ir::Shape{n_, second ? d_ * 2 : d_}, unit);
      }
      default: {
        const ReduceKind k = kReduceKinds[pick(4)];
        ir::ExprPtr col = call<ops::Reduce>({nd()}, std::vector<int64_t>{1}, true, k);
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
      case 1: {
        const int64_t axis = pick(2) ? 1 : -1;
        return call<ops::Gather>({full(), index_param({d_}, "D", it)}, axis, 0);
      }
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
    if (pick(2)) {
      const BinaryKind k = pick(2) ? BinaryKind::kGt : BinaryKind::kLe;
      return cast(compare(any(), k), it);
    }
    const double c = signed_uniform(1, 50);
    ir::ExprPtr scaled = binary(float_param(), ir::Constant::make_float(c, dt_), BinaryKind::kMul);
    return cast(unary(scaled, UnaryKind::kFloor), it);
  }

  // The row-op producer pattern: an elementwise (N, D) value x that is both
  // the input of RMSNorm / LayerNorm / SoftMax and an output or read again.
  ir::ExprPtr row_producer() {
    ir::ExprPtr x;
    switch (pick(4)) {
      case 0: {
        const BinaryKind k = pick(2) ? BinaryKind::kAdd : BinaryKind::kMul;
        ir::ExprPtr b = any();
        x = binary(nd(), b, k);
        break;
      }
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

  // exp / silu / gelu / sigmoid / tanh / relu of p * c for a parameter p in
  // [-2, 2] and 20 <= |c| <= 50: values up to +-100 reach exp's overflow
  // (inf) and underflow (subnormal, 0) and saturate sigmoid and tanh. The
  // chain is an output; the pool gets a comparison of it with a threshold
  // (|t| >= 1.5) away from the values the chain saturates at (0, +-1, inf):
  // compared with those, an ulp between the backends' forms flips the result
  // (see GeluTanhOfLargeNegativeInput below).
  ir::ExprPtr large_chain() {
    const double c = signed_uniform(20, 50);
    ir::ExprPtr x = binary(float_param(), ir::Constant::make_float(c, dt_), BinaryKind::kMul);
    for (int steps = 1 + pick(3); steps > 0; --steps) {
      switch (pick(6)) {
        case 0: case 1: x = unary(x, UnaryKind::kExp); break;
        case 2: x = call<ops::Silu>({x}); break;
        case 3: x = call<ops::Gelu>({x}, pick(2) ? "tanh" : "none"); break;
        case 4: x = activation(x); break;
        default: x = unary(x, UnaryKind::kNeg); break;
      }
    }
    extra_outs_.push_back(x);
    ir::ExprPtr threshold = ir::Constant::make_float(signed_uniform(1.5, 50), dt_);
    return cast(binary(x, threshold, pick(2) ? BinaryKind::kLt : BinaryKind::kGe), dt_);
  }


  // ---- helpers of the ops below -------------------------------------------

  ir::ExprPtr reshape(const ir::ExprPtr& x, ir::Shape s) { return call<ops::Reshape>({x}, std::move(s)); }
  ir::ExprPtr reduce(const ir::ExprPtr& x, std::vector<int64_t> axes, bool keepdim, ReduceKind k) {
    return call<ops::Reduce>({x}, std::move(axes), keepdim, k);
  }
  // A reduction of a random kind over `axes` of a pool (N, D) value.
  ir::ExprPtr reduce_nd(std::vector<int64_t> axes, bool keepdim) {
    const ReduceKind k = kReduceKinds[pick(4)];
    return reduce(nd(), std::move(axes), keepdim, k);
  }
  ir::ExprPtr slice(const ir::ExprPtr& x, ir::Shape begin, ir::Shape end) {
    const std::vector<int64_t> unit(begin.size(), 1);
    return call<ops::Slice>({x}, std::move(begin), std::move(end), unit);
  }
  ir::ExprPtr concat(std::vector<ir::ExprPtr> xs, int64_t axis) {
    return call<ops::Concat>({ir::Tuple::make(std::move(xs))}, axis);
  }
  ir::ExprPtr stack(std::vector<ir::ExprPtr> xs, int64_t axis) {
    return call<ops::Stack>({ir::Tuple::make(std::move(xs))}, axis);
  }
  // Zeros of shape s, whose DimVars the caller makes sure a parameter binds.
  ir::ExprPtr zeros(ir::Shape s) { return call<ops::Zeros>({}, std::move(s), dt_, ir::StorageKind::kGmem); }
  ir::ExprPtr int_constant(int64_t v, DType it) { return ir::Constant::make_int(v, it); }
  DType index_dtype() { return pick(2) ? DType::kI32 : DType::kI64; }
  // Either half of an (N, 2D) value.
  ir::ExprPtr column_half(const ir::ExprPtr& x) {
    const bool right = pick(2);
    return slice(x, ir::Shape{0, right ? d_ : ir::ShapeDim(0)}, ir::Shape{n_, right ? d_ * 2 : d_});
  }
  // Either half of a (2N, D) value.
  ir::ExprPtr row_half(const ir::ExprPtr& x) {
    const bool lower = pick(2);
    return slice(x, ir::Shape{lower ? n_ : ir::ShapeDim(0), 0}, ir::Shape{lower ? n_ * 2 : n_, d_});
  }

  // ---- elementwise activations and zeros ------------------------------------

  ir::ExprPtr activation(const ir::ExprPtr& x) {
    switch (pick(3)) {
      case 0: return call<ops::ReLU>({x});
      case 1: return call<ops::Sigmoid>({x});
      default: return call<ops::Tanh>({x});
    }
  }
  // Zeros of a pool value's shape (so the parameters bind its DimVars) as
  // one operand of an elementwise op: y + 0, or max(y, 0), which is relu.
  ir::ExprPtr zeros_mix() {
    ir::ExprPtr z = zeros(ttype(any()).shape());
    const BinaryKind k = pick(2) ? BinaryKind::kAdd : BinaryKind::kMaximum;
    return binary(any(), z, k);
  }

  // ---- shape values -----------------------------------------------------------
  // ShapeOf / Rank / ShapeExtract / ShapeCompose: the run-time extents N and
  // D as rank-0 i64 values, which become offsets, cache positions and scale
  // factors (Reshape and Zeros take static shapes, so a shape value cannot
  // feed them).

  // extract(shape_of(x), index), or the same dim through a shape_compose
  // round trip (rank(x) and the dim composed, the dim extracted again).
  ir::ExprPtr dim_of(const ir::ExprPtr& x, int64_t index) {
    ir::ExprPtr s = call<ops::ShapeOf>({x});
    if (pick(3)) return call<ops::ShapeExtract>({s}, index);
    ir::ExprPtr d = call<ops::ShapeExtract>({s}, index);
    ir::ExprPtr composed = call<ops::ShapeCompose>({ir::Tuple::make({call<ops::Rank>({x}), d})});
    return call<ops::ShapeExtract>({composed}, pick(2) ? 1 : -1);
  }
  ir::ExprPtr dim_n() {
    const int64_t index = pick(2) ? 0 : -2;
    return dim_of(nd(), index);
  }
  ir::ExprPtr dim_d() {
    if (pick(2)) return dim_of(any_vector(), pick(2) ? 0 : -1);
    const int64_t index = pick(2) ? 1 : -1;
    return dim_of(full(), index);
  }
  ir::ExprPtr as_index(const ir::ExprPtr& i64_value, DType it) {
    return it == DType::kI64 ? i64_value : cast(i64_value, it);
  }
  // A literal offset 0, an i64 one: the DSL reads an int literal in an
  // offsets tuple as i64, so an i32 literal would leave the program without
  // a printed form (a failure's message shows it).
  ir::ExprPtr zero_offset() { return int_constant(0, DType::kI64); }
  // 0 or 1 computed as rank(x) - 2 or rank(x) - 1 for an (N, D) x, for an
  // i32 operand (cache_update's): the DSL has no i32 literal.
  ir::ExprPtr computed_small(int64_t v) {
    return binary(call<ops::Rank>({nd()}), int_constant(2 - v, DType::kI64), BinaryKind::kSub);
  }
  // An offset o with 0 <= o < dim for a run-time dim: 0 (a literal),
  // dim - 1, (dim - 1) // 2, or max(dim - rank(x), 0) for a rank-2 x.
  ir::ExprPtr offset_below(const ir::ExprPtr& dim, DType it) {
    const ir::ExprPtr one = int_constant(1, DType::kI64);
    switch (pick(4)) {
      case 0: return zero_offset();
      case 1: return as_index(binary(dim, one, BinaryKind::kSub), it);
      case 2:
        return as_index(binary(binary(dim, one, BinaryKind::kSub), int_constant(2, DType::kI64), BinaryKind::kDiv),
                        it);
      default: {
        ir::ExprPtr r = call<ops::Rank>({nd()});
        return as_index(binary(binary(dim, r, BinaryKind::kSub), int_constant(0, DType::kI64), BinaryKind::kMaximum),
                        it);
      }
    }
  }
  // x scaled by (or shifted by) N / 64, D / 64, rank / 64 or
  // ((N + D) // 2) / 64: exact in either float type, at most 4.
  ir::ExprPtr shape_scaled() {
    ir::ExprPtr x = any(), s;
    switch (pick(4)) {
      case 0: s = dim_n(); break;
      case 1: s = dim_d(); break;
      case 2: s = call<ops::Rank>({any()}); break;
      default: {
        ir::ExprPtr shape = call<ops::ShapeOf>({nd()});
        if (pick(3) == 0) extra_outs_.push_back(shape);  // a shape value as an output
        s = binary(reduce(shape, {0}, false, ReduceKind::kSum), int_constant(2, DType::kI64), BinaryKind::kDiv);
        break;
      }
    }
    ir::ExprPtr f = binary(cast(s, dt_), ir::Constant::make_float(1.0 / 64, dt_), BinaryKind::kMul);
    return binary(x, f, pick(2) ? BinaryKind::kMul : BinaryKind::kAdd);
  }

  // ---- writes into a window: InsertSlice and CacheUpdate ---------------------

  // A destination of shape (N, D): a pool value, one computed for the insert
  // alone (written in place), or zeros.
  ir::ExprPtr nd_destination() {
    ir::ExprPtr x = nd();
    switch (pick(3)) {
      case 0: return x;
      case 1: {
        const BinaryKind k = pick(2) ? BinaryKind::kAdd : BinaryKind::kMul;
        return binary(x, any(), k);
      }
      default: return zeros(ttype(x).shape());
    }
  }
  ir::ExprPtr insert(const ir::ExprPtr& dst, const ir::ExprPtr& update, const ir::ExprPtr& offsets) {
    return call<ops::InsertSlice>({dst, update, offsets}, ops::insert_slice_literals(offsets));
  }
  // insert_slice with in-range windows: a (1, D) row at row o < N; an (N, 1)
  // column at column o < D; an (N, D) value into either half of an (N, 2D)
  // concat or zeros, read back by half; a (1,) entry of a (D,) vector at a
  // bare offset o < D.
  ir::ExprPtr insert_slice() {
    const DType it = index_dtype();
    switch (pick(4)) {
      case 0: {
        ir::ExprPtr row = pick(2) ? reduce_nd({0}, true) : slice(nd(), ir::Shape{0, 0}, ir::Shape{1, d_});
        ir::ExprPtr offs = ir::Tuple::make({offset_below(dim_n(), it), zero_offset()});
        return insert(nd_destination(), row, offs);
      }
      case 1: {
        ir::ExprPtr col = reduce_nd({1}, true);
        ir::ExprPtr offs = ir::Tuple::make({zero_offset(), offset_below(dim_d(), it)});
        return insert(nd_destination(), col, offs);
      }
      case 2: {
        ir::ExprPtr a = nd();  // binds N and D, for the zeros
        ir::ExprPtr dst = pick(2) ? concat({a, nd()}, 1) : zeros({n_, d_ * 2});
        ir::ExprPtr at = pick(2) ? as_index(dim_d(), it) : zero_offset();
        return column_half(insert(dst, nd(), ir::Tuple::make({zero_offset(), at})));
      }
      default: {
        ir::ExprPtr v = any_vector();
        ir::ExprPtr entry = reduce_nd({0, 1}, false);
        ir::ExprPtr at = offset_below(dim_d(), it);
        ir::ExprPtr y = insert(binary(v, constant(), BinaryKind::kAdd), reshape(entry, ir::Shape{1}), at);
        return binary(any(), y, BinaryKind::kAdd);
      }
    }
  }
  // cache_update of a computed (1, N, ., .) value into a cache of N or 2N
  // positions (heads on axis 2 or head_dim on axis 3), read back as (N, D).
  // (cur_pos, s): s is N, 1 or (N + 1) // 2 (s >= 1), cur_pos 0, N - s or,
  // in a 2N cache, N or N // 2, so cur_pos + s never passes the cache; both
  // computed i64 values cast to i32.
  ir::ExprPtr cache_update() {
    const bool doubled = pick(2), heads = pick(2);
    const ir::ShapeDim len = doubled ? n_ * 2 : n_;
    auto as4 = [&](const ir::ExprPtr& x, const ir::ShapeDim& l) {
      return reshape(x, heads ? ir::Shape{1, l, d_, 1} : ir::Shape{1, l, 1, d_});
    };
    ir::ExprPtr cache = as4(doubled ? concat({nd(), nd()}, 0) : nd_destination(), len);
    ir::ExprPtr update = as4(pick(2) ? nd() : activation(nd()), n_);
    const ir::ExprPtr n = dim_n();
    // A fresh node per use: a shared literal has no printed form.
    auto literal = [this](int64_t v) { return int_constant(v, DType::kI64); };
    ir::ExprPtr s;
    switch (pick(3)) {
      case 0: s = n; break;
      case 1: s = computed_small(1); break;
      default: s = binary(binary(n, literal(1), BinaryKind::kAdd), literal(2), BinaryKind::kDiv);
    }
    ir::ExprPtr pos;
    switch (pick(3)) {
      case 0: pos = computed_small(0); break;
      case 1: pos = doubled ? n : binary(n, s, BinaryKind::kSub); break;
      default: pos = doubled ? binary(n, literal(2), BinaryKind::kDiv) : computed_small(0);
    }
    ir::ExprPtr y = reshape(call<ops::CacheUpdate>({cache, cast(pos, DType::kI32), cast(s, DType::kI32), update}),
                            ir::Shape{len, d_});
    return doubled ? row_half(y) : y;
  }

  // cache_scatter into an (N, D) value read as N rows of D positions: one
  // value per row (a row statistic, (N, 1)) at position min(i, D - 1) of row
  // i, or a (N, D) update at 0; positions i32 or i64.
  ir::ExprPtr cache_scatter() {
    const DType it = index_dtype();
    ir::ExprPtr cache = nd_destination();
    if (pick(2)) {
      ir::ExprPtr zero = binary(call<ops::Arange>({}, n_, 0.0, 1.0, DType::kI64), int_constant(0, DType::kI64),
                                BinaryKind::kMul);
      return call<ops::CacheScatter>({cache, nd(), as_index(zero, it)});
    }
    ir::ExprPtr update = reduce_nd({1}, true);
    ir::ExprPtr last = binary(dim_d(), int_constant(1, DType::kI64), BinaryKind::kSub);
    ir::ExprPtr pos = binary(call<ops::Arange>({}, n_, 0.0, 1.0, DType::kI64), last, BinaryKind::kMinimum);
    return call<ops::CacheScatter>({cache, update, as_index(pos, it)});
  }

  // ---- RoPE ---------------------------------------------------------------------
  // rope of computed q and k, read back as (N, D). Head dim 2D (one head,
  // q = an (N, 2D) concat; caches (N, 2D), positions < N from an index
  // parameter) or head dim 2 (D heads, q = a stack along a last axis of 2;
  // caches (D, 2) stacked from (D,) vectors, positions < D from a parameter
  // or computed). The caches are cos / sin of parameters, as a rotary
  // table's: of a computed value, say a MatMul's sum of tens, the backends'
  // different summation orders move the angle by 1e-5, and x * cos(angle)
  // for such an x differs beyond the tolerance.
  ir::ExprPtr rope() {
    const bool wide = pick(2);
    ir::ExprPtr q, k, cos, sin, pos;
    if (wide) {
      q = reshape(concat({nd(), nd()}, 1), ir::Shape{1, n_, 1, d_ * 2});
      k = reshape(concat({nd(), nd()}, 1), ir::Shape{1, n_, 1, d_ * 2});
      cos = unary(concat({nd_param(), nd_param()}, 1), UnaryKind::kCos);
      sin = unary(concat({nd_param(), nd_param()}, 1), UnaryKind::kSin);
      pos = index_param({1, n_}, "N", index_dtype());
    } else {
      q = reshape(stack({nd(), nd()}, 2), ir::Shape{1, n_, d_, 2});
      k = reshape(stack({nd(), nd()}, -1), ir::Shape{1, n_, d_, 2});
      cos = unary(stack({vector_param(), vector_param()}, 1), UnaryKind::kCos);
      sin = unary(stack({vector_param(), vector_param()}, 1), UnaryKind::kSin);
      pos = pick(2) ? index_param({1, n_}, "D", index_dtype()) : reshape(count_below_d(), ir::Shape{1, n_});
    }
    ir::ExprPtr t = call<ops::RoPE>({q, k, cos, sin, pos});
    ir::ExprPtr r = ir::TupleGetItem::make(t, pick(2));
    if (pick(3) == 0) r = binary(r, ir::TupleGetItem::make(t, 0), BinaryKind::kSub);
    if (wide) return column_half(reshape(r, ir::Shape{n_, d_ * 2}));
    return reduce(reshape(r, ir::Shape{n_, d_, 2}), {2}, false, pick(2) ? ReduceKind::kSum : ReduceKind::kMax);
  }
  // An (N, D) float parameter of the pool, or a new one.
  ir::ExprPtr nd_param() {
    for (const ir::VarPtr& p : params_)
      if (!ir::is_int(ttype(p).dtype()) && is_nd(p)) return p;
    return new_param("full", {n_, d_}, dt_, true);
  }
  // A (D,) float parameter of the pool, or a new one (not a Conv2D bias,
  // which is rank 1 too, of a static length).
  ir::ExprPtr vector_param() {
    for (const ir::ExprPtr& p : pool_) {
      const ir::TensorType& t = ttype(p);
      if (ir::expr_as<ir::Var>(p) && t.rank() == 1 && t.shape()[0] == d_) return p;
    }
    return new_param("v", {d_}, dt_, true);
  }
  // Per row, the count of true comparisons minus their max: (N,) i32 / i64
  // values in [0, D).
  ir::ExprPtr count_below_d() {
    const DType it = index_dtype();
    ir::ExprPtr c = cast(compare(nd(), BinaryKind::kLt), it);
    return binary(reduce(c, {1}, false, ReduceKind::kSum), reduce(c, {1}, false, ReduceKind::kMax),
                  BinaryKind::kSub);
  }

  // ---- TopK ---------------------------------------------------------------------
  // TopK orders by value and breaks ties by the lower index (the evaluator's
  // stable sort; the compiled partial sort compares indices on a tie), so
  // its indices are only comparable when both backends compute the values
  // bit for bit. Its input is such an exact value: small integers as floats
  // (floor(p * c), a comparison) and parameters, through neg / abs / relu /
  // min / max and sums of small integers. Small integers make ties common,
  // so the tie order is compared too.
  struct Exact {
    ir::ExprPtr value;
    bool integral;  // a small integer: sums of it stay exact
  };
  Exact exact_leaf() {
    switch (pick(3)) {
      case 0: return {float_param(), false};
      case 1: {
        const double c = signed_uniform(1, 20);
        ir::ExprPtr scaled = binary(float_param(), ir::Constant::make_float(c, dt_), BinaryKind::kMul);
        return {unary(scaled, UnaryKind::kFloor), true};
      }
      default: {
        ir::ExprPtr b = float_param();
        return {cast(binary(float_param(), b, BinaryKind::kGe), dt_), true};
      }
    }
  }
  Exact exact_step(Exact x) {
    switch (pick(6)) {
      case 0: return {unary(x.value, UnaryKind::kNeg), x.integral};
      case 1: return {unary(x.value, UnaryKind::kAbs), x.integral};
      case 2: return {pick(2) ? unary(x.value, UnaryKind::kRelu) : call<ops::ReLU>({x.value}), x.integral};
      case 3: {
        Exact y = exact_leaf();
        return {binary(x.value, y.value, pick(2) ? BinaryKind::kMinimum : BinaryKind::kMaximum),
                x.integral && y.integral};
      }
      default: {
        Exact y = exact_leaf();
        if (!x.integral || !y.integral) return {binary(x.value, y.value, BinaryKind::kMaximum), false};
        return {binary(x.value, y.value, pick(2) ? BinaryKind::kAdd : BinaryKind::kSub), true};
      }
    }
  }
  // An exact (N, D) value: a chain of exact steps, widened to (N, D) by the
  // max with an (N, D) parameter when it is narrower.
  ir::ExprPtr exact_nd() {
    Exact x = exact_leaf();
    for (int steps = pick(3); steps > 0; --steps) x = exact_step(x);
    if (is_nd(x.value)) return x.value;
    return binary(x.value, nd_param(), BinaryKind::kMaximum);
  }
  // (values, indices) of one TopK; largest and sorted at random.
  std::pair<ir::ExprPtr, ir::ExprPtr> top(const ir::ExprPtr& x, ir::ShapeDim k, int64_t axis) {
    const bool sorted = pick(2) == 0, largest = pick(2) == 0;
    ir::ExprPtr t = call<ops::TopK>({x}, std::move(k), axis, largest, sorted);
    return {ir::TupleGetItem::make(t, 0), ir::TupleGetItem::make(t, 1)};
  }
  // TopK along rows (k = D, a full sort, or k = 1), along columns (k = N) or
  // of an (N, 2D) concat (k = D). The values join the pool; the indices are
  // an output, gather indices (take_along_axis), or cast to float.
  ir::ExprPtr topk() {
    switch (pick(4)) {
      case 0: {
        const int64_t axis = pick(2) ? 1 : -1;
        auto [vals, idx] = top(exact_nd(), d_, axis);
        if (pick(2)) extra_outs_.push_back(idx);
        return pick(2) ? vals : call<ops::Gather>({nd(), idx}, 1, 1);
      }
      case 1: {
        auto [vals, idx] = top(exact_nd(), 1, -1);
        ir::ExprPtr picked = call<ops::Gather>({nd(), idx}, 1, 1);
        ir::ExprPtr other = any();
        return binary(pick(2) ? vals : picked, other, BinaryKind::kAdd);
      }
      case 2: {  // along columns; the indices gather along columns of a transpose
        auto [vals, idx] = top(exact_nd(), n_, 0);
        const std::vector<int64_t> swap{1, 0};
        ir::ExprPtr xt = call<ops::Transpose>({nd()}, swap), it = call<ops::Transpose>({idx}, swap);
        ir::ExprPtr g = call<ops::Gather>({xt, it}, 1, 1);
        return pick(2) ? vals : call<ops::Transpose>({g}, swap);
      }
      default: {
        auto [vals, idx] = top(concat({exact_nd(), exact_nd()}, 1), d_, 1);
        ir::ExprPtr scaled = binary(cast(idx, dt_), ir::Constant::make_float(1.0 / 128, dt_), BinaryKind::kMul);
        return binary(vals, scaled, BinaryKind::kAdd);
      }
    }
  }

  // ---- Conv2D ---------------------------------------------------------------------
  // conv2d of computed (N, D) planes: one channel, or two stacked (groups 1
  // or 2), batch 1; a "same" convolution (stride 1, padding (k - 1) / 2) read
  // back as (N, D), or a strided / dilated one averaged to a scalar that
  // scales a pool value. Weights (and the bias, when there is one) are
  // parameters.
  ir::ExprPtr conv2d() {
    const int64_t channels = 1 + pick(2);
    const int64_t groups = channels == 2 && pick(2) ? 2 : 1;
    const int64_t out = groups == 2 ? 2 : 1 + pick(2);
    const int64_t kh = pick(2) ? 3 : 1, kw = pick(2) ? 3 : 1;
    ir::ExprPtr x = channels == 1 ? reshape(nd(), ir::Shape{1, 1, n_, d_})
                                  : reshape(stack({nd(), nd()}, 0), ir::Shape{1, 2, n_, d_});
    ir::ExprPtr w = new_param("w", {out, channels / groups, kh, kw}, dt_, false);
    ir::ExprPtr bias = pick(2) ? ir::ExprPtr(new_param("b", {out}, dt_, false)) : ir::Tuple::make({});
    if (pick(3)) {
      ir::ExprPtr y = call<ops::Conv2D>({x, w, bias}, std::vector<int64_t>{1, 1},
                                        std::vector<int64_t>{kh / 2, kw / 2}, std::vector<int64_t>{1, 1}, groups);
      if (out == 2) y = reduce(y, {1}, false, ReduceKind::kMean);
      return reshape(y, ir::Shape{n_, d_});
    }
    const int64_t dil = 1 + pick(2);
    ir::ExprPtr y = call<ops::Conv2D>({x, w, bias}, std::vector<int64_t>{2, 1 + pick(2)},
                                      std::vector<int64_t>{dil * (kh / 2), dil * (kw / 2)},
                                      std::vector<int64_t>{dil, dil}, groups);
    ir::ExprPtr m = reduce(y, {0, 1, 2, 3}, false, ReduceKind::kMean);
    const BinaryKind k = pick(2) ? BinaryKind::kAdd : BinaryKind::kMul;
    return binary(any(), m, k);
  }

  // ---- Reshard ----------------------------------------------------------------------
  // A single-device function has no mesh, so the one Reshard it can type is
  // the identity: no layout, and the storage kept (left out or restated).
  ir::ExprPtr reshard(const ir::ExprPtr& x) {
    std::optional<ir::StorageKind> storage;
    if (pick(2)) storage = ttype(x).storage();
    return call<ops::Reshard>({x}, ir::ShardLayoutPtr(), storage);
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

// Every output is compared within 8 epsilons of its largest magnitude as
// well as the per-element tolerance. The backends may round a value
// differently by an ulp or two: the compiled variance of a row is its
// exact mean of squares rounded once, while the evaluator's literal form
// is up to 1.5 ulp off. A MatMul of such values sums terms as large as
// its largest outputs, and where the sum cancels, those terms' roundings
// exceed the small result's own tolerance. (Found by the random programs,
// seed 12345, r4653: t1 * mean(t1 * t1) of t1 = t0 - mean(t0), times a
// (D, D) weight: -4.281225 against -4.281836 in an output whose largest
// elements are thousands.)
constexpr double kOfLargestEpsilons = 8;

// One batch of generated programs sealed into one module, and the native
// compile of its library, running in the background.
struct Batch {
  bool replayed_only = false;  // before TF_RANDOM_FROM: inputs drawn, nothing compiled
  ir::ModulePtr module;
  std::vector<ir::FunctionPtr> fns;  // sealed
  std::string path;
  std::future<std::vector<std::string>> compiled;  // names export_library compiled
};

// Programs r<first> .. r<end - 1> of a run: every fourth one f64, the others f32.
std::vector<ir::FunctionPtr> generate_programs(int64_t first, int64_t end, std::mt19937& rng) {
  std::vector<ir::FunctionPtr> fns;
  for (int64_t i = first; i < end; ++i) {
    ProgramGenerator g(rng, i % 4 == 3 ? DType::kF64 : DType::kF32);
    fns.push_back(g.make("r" + std::to_string(i)));
  }
  return fns;
}

Batch start_batch(int64_t first, int64_t end, int64_t replay_from, std::mt19937& rng) {
  std::vector<ir::FunctionPtr> fns = generate_programs(first, end, rng);
  Batch b;
  b.module = sema::seal(ir::Target::default_cpu(), fns);
  for (const ir::FunctionPtr& f : fns) b.fns.push_back(b.module->lookup(f->name()));
  b.replayed_only = end <= replay_from;
  if (b.replayed_only) return b;
  b.path = ::testing::TempDir() + "/tf_random_" + std::to_string(::getpid()) + "_" + std::to_string(first) +
           ".so";
  b.compiled = std::async(std::launch::async, [fns = b.fns, path = b.path] {
    return compiler::export_library(fns, "", path);
  });
  return b;
}

// Two random bindings of (N, D) for fn and its inputs under each.
std::vector<std::pair<ir::DimBindings, std::vector<NDArray>>> draw_trials(const ir::Function& fn,
                                                                          std::mt19937& rng) {
  std::vector<std::pair<ir::DimBindings, std::vector<NDArray>>> trials;
  for (int trial = 0; trial < 2; ++trial) {
    ir::DimBindings bind{{"N", 1 + static_cast<int64_t>(rng() % 20)}, {"D", 1 + static_cast<int64_t>(rng() % 70)}};
    std::vector<NDArray> in;
    for (const ir::VarPtr& p : fn.params()) in.push_back(make_input(*p, bind, rng));
    trials.emplace_back(std::move(bind), std::move(in));
  }
  return trials;
}

// Every program of the batch compiled natively and agrees with the
// evaluator on two random bindings of (N, D); a replayed-only batch just
// draws them.
void check_batch(Batch& b, std::mt19937& rng, int64_t* checked) {
  if (b.replayed_only) {
    for (const ir::FunctionPtr& fn : b.fns) draw_trials(*fn, rng);
    *checked += static_cast<int64_t>(b.fns.size());
    return;
  }
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
    // Null when the kernel generates differently now than when compiled
    // (its entry key is a hash of the text): generation must be a function
    // of the program.
    ASSERT_TRUE(k) << fn->name() << " has no entry in its library\n" << program_text(fn);
    for (auto& [bind, in] : draw_trials(*fn, rng)) {
      const std::string what = fn->name() + " N=" + std::to_string(bind["N"]) + " D=" + std::to_string(bind["D"]);
      try {
        expect_agree(*k, *b.module, *fn, in, what, kOfLargestEpsilons);
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
  const int64_t batch = 50;
  // Rationale: one compiler run is single-threaded and dominates the time,
  // so two batches compile at once while the oldest one is checked.
  const size_t kInFlight = 2;
  const int64_t replay_from = env_int("TF_RANDOM_FROM", 0);
  std::mt19937 rng(static_cast<uint32_t>(env_int("TF_RANDOM_SEED", 12345)));
  std::deque<Batch> batches;
  int64_t next = 0, checked = 0;
  while (next < total || !batches.empty()) {
    for (; next < total && batches.size() < kInFlight; next += batch)
      batches.push_back(start_batch(next, std::min(total, next + batch), replay_from, rng));
    check_batch(batches.front(), rng, &checked);
    if (::testing::Test::HasFailure()) {
      for (Batch& b : batches) {
        if (b.compiled.valid()) b.compiled.wait();
        if (!b.replayed_only) std::remove(b.path.c_str());
      }
      return;
    }
    if (!batches.front().replayed_only) std::remove(batches.front().path.c_str());
    batches.pop_front();
  }
  EXPECT_EQ(checked, total);
}

// The names of the ops a body calls.
class OpNames : public ir::ExprVisitor {
 public:
  std::set<std::string> names;

 protected:
  void visit_call(const ir::Call& c) override {
    if (c.op()) names.insert(std::string(c.op()->name()));
  }
};

// Ops the compiler lowers that no generated program contains, each with why.
const std::map<std::string, std::string>& not_generated() {
  static const std::map<std::string, std::string> m = {
      {"Local", "one mesh instance's view: compiled per shard only, its single-device stage refuses it"},
  };
  return m;
}

// The lowered ops missing from `emitted`, less those not generated on purpose.
std::vector<std::string> ungenerated(const std::vector<std::string>& lowered, const std::set<std::string>& emitted) {
  std::vector<std::string> out;
  for (const std::string& name : lowered)
    if (!emitted.count(name) && !not_generated().count(name)) out.push_back(name);
  return out;
}

// The generator emits every op with a native lowering (a scalar lowering, a
// stage lowering or a decomposition) within the first 300 programs of the
// default seed, so an op that gets a lowering without a generator case
// fails here, by name.
TEST(RandomPrograms, GeneratorEmitsEveryLoweredOp) {
  std::mt19937 rng(12345);
  OpNames seen;
  for (const ir::FunctionPtr& fn : generate_programs(0, 300, rng)) seen.visit(fn->body());
  const std::vector<std::string> lowered = compiler::native_lowering_part().keys();
  EXPECT_EQ(ungenerated(lowered, seen.names), std::vector<std::string>{})
      << "ops the compiler lowers that ProgramGenerator never emitted: give it a case for each (or, when no "
         "single-device function can contain the op, list it in not_generated() with the reason)";
  for (const auto& [name, why] : not_generated()) {
    EXPECT_NE(std::find(lowered.begin(), lowered.end(), name), lowered.end())
        << name << " is excluded from the generator but has no native lowering: drop the exclusion";
    EXPECT_FALSE(seen.names.count(name)) << name << " was generated, yet it is excluded: " << why;
  }
}

// A failure shows the program as DSL source, so every generated program
// must have a printed form (the DSL cannot spell every HIR: an i32 literal
// operand, a literal without a tensor operand beside it, a shared literal).
TEST(RandomPrograms, EveryGeneratedProgramPrints) {
  std::mt19937 rng(12345);
  for (const ir::FunctionPtr& fn : generate_programs(0, 2000, rng)) {
    const std::string text = program_text(fn);
    EXPECT_EQ(text.rfind("(not printable", 0), std::string::npos) << fn->name() << ": " << text;
  }
}

TEST(RandomPrograms, AnOutputsLargestMagnitudeBoundsItsCancelledElements) {
  NDArray want = NDArray::empty(DType::kF32, {2}), got = NDArray::empty(DType::kF32, {2});
  float* w = static_cast<float*>(want.data());
  float* g = static_cast<float*>(got.data());
  w[0] = g[0] = 50000.0f;
  w[1] = -4.281836f;
  g[1] = -4.281225f;  // 6e-4 off: beyond 1e-5 + 1e-4 * 4.28, within 2^-20 * 50000
  Tolerance tol = tolerance(DType::kF32);
  EXPECT_NE(compare(got, want, tol), "");
  tol.of_largest = kOfLargestEpsilons * std::numeric_limits<float>::epsilon();
  EXPECT_EQ(compare(got, want, tol), "");
  g[1] = -4.2f;  // 0.08 off: beyond 2^-20 * 50000 too
  EXPECT_NE(compare(got, want, tol), "");
  w[0] = g[0] = INFINITY;  // an infinite element sets no scale
  EXPECT_NE(compare(got, want, tol), "");
}

TEST(RandomPrograms, CoverageCheckNamesTheOpsNeverEmitted) {
  EXPECT_EQ(ungenerated({"Binary", "Local", "NotEmittedAnywhere", "Zeros"}, {"Binary"}),
            (std::vector<std::string>{"NotEmittedAnywhere", "Zeros"}));
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
