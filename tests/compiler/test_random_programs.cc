// Differential testing on random well-typed programs: a generator builds
// DAGs of elementwise, broadcast, row (RMSNorm, SoftMax), first-axis Reduce,
// Transpose and MatMul ops over
// DimVar shapes; each is compiled and compared with the evaluator on random
// bindings. Programs are compiled in batches into one library (the AOT path)
// so a few hundred cost a few compiler runs. TF_RANDOM_PROGRAMS sets the
// count (default 300; `make test-long` runs 5000), TF_RANDOM_SEED the seed.
#include <cstdlib>
#include <memory>

#include "compiler_helpers.h"
#include "core/compiler/library.h"
#include "core/ir/error.h"
#include "core/ops/math/math.h"
#include "core/ops/nn/nn.h"
#include "core/ops/tensor/tensor.h"
#include "core/sema/typeinfer.h"
#include "core/sema/verify.h"

namespace tf::comptest {
namespace {

using ops::BinaryKind;
using ops::UnaryKind;

int64_t env_int(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoll(v) : fallback;
}

template <typename OpT, typename... A>
ir::ExprPtr call(std::vector<ir::ExprPtr> args, A&&... op_args) {
  return sema::make_op_call(std::make_shared<OpT>(std::forward<A>(op_args)...), std::move(args));
}

const ir::TensorType& ttype(const ir::ExprPtr& e) { return static_cast<const ir::TensorType&>(*e->type()); }

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
    if (pick(3) == 0) outs.push_back(pool_[static_cast<size_t>(pick(static_cast<int>(pool_.size())))]);
    ir::Function::Fields f;
    f.name = name;
    f.params = params_;
    f.body = outs.size() == 1 ? outs[0] : ir::Tuple::make(outs);
    f.return_type = f.body->type();
    return ir::Function::make(std::move(f));
  }

 private:
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  ir::ExprPtr any() { return pool_[static_cast<size_t>(pick(static_cast<int>(pool_.size())))]; }
  // A value of shape (N, D), broadcasting one up when needed.
  ir::ExprPtr full() {
    ir::ExprPtr v = any();
    if (ttype(v).rank() == 2 && ttype(v).shape()[1] == d_) return v;
    for (const ir::ExprPtr& p : pool_)
      if (ttype(p).rank() == 2 && ttype(p).shape()[1] == d_) return call<ops::Binary>({v, p}, BinaryKind::kAdd);
    auto z = ir::Var::make("full", ir::TensorType::make({n_, d_}, dt_));
    params_.push_back(z);
    pool_.push_back(z);
    return call<ops::Binary>({v, z}, BinaryKind::kMul);
  }
  ir::ExprPtr constant() {
    double c = std::uniform_real_distribution<double>(-2, 2)(rng_);
    return ir::Constant::make_float(c, dt_);
  }

  ir::ExprPtr random_op() {
    static const BinaryKind kBin[] = {BinaryKind::kAdd, BinaryKind::kSub, BinaryKind::kMul,
                                      BinaryKind::kMinimum, BinaryKind::kMaximum, BinaryKind::kDiv};
    static const UnaryKind kUn[] = {UnaryKind::kNeg, UnaryKind::kAbs, UnaryKind::kRelu, UnaryKind::kSquare,
                                    UnaryKind::kSin, UnaryKind::kCos, UnaryKind::kFloor, UnaryKind::kExp};
    switch (pick(13)) {
      case 0: case 1: case 2: {
        BinaryKind k = kBin[pick(6)];
        ir::ExprPtr b = pick(4) == 0 ? constant() : any();
        if (k == BinaryKind::kDiv) b = call<ops::Binary>({call<ops::Unary>({b}, UnaryKind::kAbs), ir::Constant::make_float(0.5, dt_)}, BinaryKind::kAdd);
        return call<ops::Binary>({any(), b}, k);
      }
      case 3: {
        UnaryKind k = kUn[pick(8)];
        ir::ExprPtr x = any();
        // exp only of bounded values: sin keeps the chain finite.
        if (k == UnaryKind::kExp) x = call<ops::Unary>({x}, UnaryKind::kSin);
        return call<ops::Unary>({x}, k);
      }
      case 4: return call<ops::Silu>({any()});
      case 5: return call<ops::Gelu>({any()}, pick(2) ? "tanh" : "none");
      case 6: return call<ops::RMSNorm>({full(), any_vector()}, 1e-5);
      case 7: return call<ops::SoftMax>({full()}, -1);
      case 8: {  // compare, then back to float
        ir::ExprPtr c = call<ops::Binary>({any(), any()}, pick(2) ? BinaryKind::kLt : BinaryKind::kGe);
        return call<ops::Cast>({c}, dt_);
      }
      case 9: {  // round trip through the other float type
        DType other = dt_ == DType::kF32 ? DType::kF64 : DType::kF32;
        return call<ops::Cast>({call<ops::Cast>({any()}, other)}, dt_);
      }
      case 11: {  // Reduce over the first axis, keepdim: (1, D) broadcasts back
        static const ops::ReduceKind kRed[] = {ops::ReduceKind::kSum, ops::ReduceKind::kMean, ops::ReduceKind::kMax,
                                               ops::ReduceKind::kAbsMax};
        return call<ops::Reduce>({full()}, std::vector<int64_t>{0}, true, kRed[pick(4)]);
      }
      case 12: {  // a transpose round trip, through an elementwise op
        ir::ExprPtr t = call<ops::Transpose>({full()}, std::vector<int64_t>{1, 0});
        return call<ops::Transpose>({call<ops::Unary>({t}, UnaryKind::kRelu)}, std::vector<int64_t>{-1, 0});
      }
      default: {  // (N, D) @ (D, D)-shaped weight
        auto w = ir::Var::make("w" + std::to_string(params_.size()), ir::TensorType::make({d_, d_}, dt_));
        params_.push_back(w);
        return call<ops::MatMul>({full(), w});
      }
    }
  }
  ir::ExprPtr any_vector() {
    for (const ir::ExprPtr& p : pool_)
      if (ttype(p).rank() == 1) return p;
    auto w = ir::Var::make("v" + std::to_string(params_.size()), ir::TensorType::make({d_}, dt_));
    params_.push_back(w);
    pool_.push_back(w);
    return w;
  }

  std::mt19937& rng_;
  DType dt_;
  ir::ShapeDim n_, d_;
  std::vector<ir::VarPtr> params_;
  std::vector<ir::ExprPtr> pool_;
};

std::vector<int64_t> concrete(const ir::TensorType& t, const ir::DimBindings& b) {
  std::vector<int64_t> s;
  for (const ir::ShapeDim& d : t.shape()) s.push_back(d.evaluate(b));
  return s;
}

TEST(RandomPrograms, CompiledAgreesWithEvaluator) {
  const int64_t total = env_int("TF_RANDOM_PROGRAMS", 300);
  const int64_t batch = 100;
  std::mt19937 rng(static_cast<uint32_t>(env_int("TF_RANDOM_SEED", 12345)));
  const std::string dir = ::testing::TempDir();
  int64_t checked = 0;
  for (int64_t start = 0; start < total; start += batch) {
    std::vector<ir::FunctionPtr> fns;
    for (int64_t i = start; i < std::min(total, start + batch); ++i) {
      ProgramGenerator g(rng, i % 4 == 3 ? DType::kF64 : DType::kF32);
      fns.push_back(g.make("r" + std::to_string(i)));
    }
    ir::ModulePtr m = sema::seal(ir::Target::default_cpu(), fns);
    std::vector<ir::FunctionPtr> sealed;
    for (const ir::FunctionPtr& f : fns) sealed.push_back(m->lookup(f->name()));
    const std::string path = dir + "/tf_random_" + std::to_string(::getpid()) + "_" + std::to_string(start) + ".so";
    std::vector<std::string> compiled = compiler::export_library(sealed, "", path);
    ASSERT_EQ(compiled.size(), sealed.size()) << "a generated program was not compilable";
    std::string text;
    auto lib = compiler::open_library(path, &text);
    for (const ir::FunctionPtr& fn : sealed) {
      auto k = compiler::bind_library_function(lib, *fn);
      ASSERT_TRUE(k) << fn->name();
      for (int trial = 0; trial < 2; ++trial) {
        ir::DimBindings b{{"N", 1 + static_cast<int64_t>(rng() % 20)}, {"D", 1 + static_cast<int64_t>(rng() % 70)}};
        std::vector<NDArray> in;
        for (const ir::VarPtr& p : fn->params())
          in.push_back(random_array(ttype(p).dtype(), concrete(ttype(p), b), rng));
        expect_agree(*k, *m, *fn, in, fn->name() + " N=" + std::to_string(b["N"]) + " D=" + std::to_string(b["D"]));
        if (::testing::Test::HasFailure()) return;
      }
      ++checked;
    }
    std::remove(path.c_str());
  }
  EXPECT_EQ(checked, total);
}

}  // namespace
}  // namespace tf::comptest
