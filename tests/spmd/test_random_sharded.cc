// Differential testing of the SPMD executor on random well-typed sharded
// programs. A generator grows a function over a 1-D (4 ranks) or 2-D (2x2)
// device mesh from parameters x0.. of shape (N, D) — static, or DimVars
// bound at call time — with random Split / Broadcast shardings, one
// statement at a time: elementwise ops (tanh, silu, exp, scaling, negation,
// adds and products of two values), a matmul by a fresh (D, D) weight
// parameter sharded so that the product types (Split rows, Split columns,
// Partial("sum") from a split contraction), rms_norm and softmax along rows,
// sums along either axis broadcast back over the value, a loop carrying a
// value through a matmul and a reshard back to its layout, and a reshard to
// a random layout. Each candidate statement is kept only when the whole
// program still types (the parser runs the sharding rules), so the
// programs are what a user could write; the result is the sum of every
// value defined, each resharded to Broadcast.
//
// Every program then runs three ways and must agree: the plain evaluator on
// the logical tensors (the meaning), every rank on the evaluator's kernels,
// and every rank as native segments (which must also make the same
// collectives). TF_RANDOM_SHARDED sets the count (default 24),
// TF_RANDOM_SEED the seed; TF_RANDOM_SHOW=1 prints each program checked.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "core/eval/evaluator.h"
#include "core/frontend/parser.h"
#include "core/ops/sharding/shard_util.h"
#include "spmd/mesh_run.h"

namespace tf {
namespace {
using runtime::NDArray;
using namespace testing_spmd;

int64_t env_int(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoll(v, nullptr, 10) : fallback;
}

struct Value {
  std::string name;
  std::vector<ir::ShardAttr> attrs;  // logical: Split(pos=k) names tensor axis k
};

std::string attr_text(const ir::ShardAttr& a) {
  if (a.is_split()) return "Split(axis=" + std::to_string(a.pos) + ")";
  if (a.is_partial()) return "Partial(\"sum\")";
  return "Broadcast()";
}

class ShardedProgram {
 public:
  ShardedProgram(std::mt19937& rng, bool two_d, bool symbolic)
      : rng_(rng), mesh_(two_d ? "d22" : "d4"), axes_(two_d ? 2 : 1), symbolic_(symbolic) {}

  // Grows the program to about `statements` statements; false when too few
  // candidates typed.
  bool grow(int statements) {
    const int inputs = 1 + pick(2);
    for (int i = 0; i < inputs; ++i) {
      std::vector<ir::ShardAttr> attrs;
      for (int m = 0; m < axes_; ++m) attrs.push_back(random_attr(false));
      params_.push_back("x" + std::to_string(i) + ": Tensor[(" + dims() + "), f32, " + layout(attrs) + "]");
      pool_.push_back({"x" + std::to_string(i), attrs});
      kinds_.push_back('x');
    }
    int tries = 0;
    while (static_cast<int>(body_.size()) < statements && tries++ < 40 * statements) propose();
    return body_.size() >= 2;
  }

  std::string source() const { return text(body_, params_); }
  // Parameter kinds in order: 'x' an (N, D) value, 'w' a (D, D) weight, 'g' a (D,) gain.
  const std::string& kinds() const { return kinds_; }

 private:
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }

  ir::ShardAttr random_attr(bool partial) {
    switch (pick(partial ? 4 : 3)) {
      case 0: return ir::ShardAttr::split(0);
      case 1: return ir::ShardAttr::split(1);
      case 2: return ir::ShardAttr::broadcast();
      default: return ir::ShardAttr::partial(ir::Reduction::kSum);
    }
  }

  std::string dims() const { return symbolic_ ? "N, D" : "8, 12"; }
  std::string d() const { return symbolic_ ? "D" : "12"; }

  std::string layout(const std::vector<ir::ShardAttr>& attrs) const {
    std::string s = "ShardLayout(" + mesh_ + ", (";
    for (const auto& a : attrs) s += attr_text(a) + ", ";
    return s + "))";
  }

  std::vector<ir::ShardAttr> all_broadcast() const {
    return std::vector<ir::ShardAttr>(static_cast<size_t>(axes_), ir::ShardAttr::broadcast());
  }

  // The function: params, body, and the sum of every value the body
  // defines, each resharded to Broadcast (so no statement is dead).
  std::string text(const std::vector<std::string>& body, const std::vector<std::string>& params) const {
    std::string src;
    if (symbolic_) src += "N = DimVar(\"N\", 1, 1024)\nD = DimVar(\"D\", 1, 1024)\n";
    src += "\n@func\ndef f(";
    for (size_t i = 0; i < params.size(); ++i) src += (i ? ",\n      " : "") + params[i];
    src += ") -> Tensor[(" + dims() + "), f32, " + layout(all_broadcast()) + "]:\n";
    std::string result;
    for (const auto& line : body) {
      src += "    " + line + "\n";
      const std::string v = line.substr(0, line.find(' '));
      result += (result.empty() ? "" : " + ") + std::string("reshard(") + v + ", layout=" + layout(all_broadcast()) + ")";
    }
    return src + "    return " + result + "\n";
  }

  // One random statement, kept when the program with it types; its result's
  // sharding read back from the types.
  void propose() {
    const Value& a = pool_[static_cast<size_t>(pick(static_cast<int>(pool_.size())))];
    const Value& b = pool_[static_cast<size_t>(pick(static_cast<int>(pool_.size())))];
    const std::string v = "v" + std::to_string(body_.size());
    std::vector<std::string> params = params_;
    std::string kinds = kinds_;
    std::string rhs;
    switch (pick(11)) {
      case 0: rhs = "tanh(" + a.name + ")"; break;
      case 1: rhs = "silu(" + a.name + ") * 0.5"; break;
      case 2: rhs = "exp(" + a.name + " * 0.1) - " + a.name; break;
      case 3: rhs = "-" + a.name + " * 0.75"; break;
      case 4: rhs = a.name + (pick(2) ? " + " : " * ") + b.name; break;
      case 5: {  // a matmul by a fresh weight
        std::vector<ir::ShardAttr> w;
        for (int m = 0; m < axes_; ++m) w.push_back(random_attr(false));
        const std::string name = "w" + std::to_string(params.size());
        params.push_back(name + ": Tensor[(" + d() + ", " + d() + "), f32, " + layout(w) + "]");
        kinds += 'w';
        rhs = a.name + " @ " + name;
        break;
      }
      case 6: {
        const std::string g = "g" + std::to_string(params.size());
        params.push_back(g + ": Tensor[(" + d() + ",), f32, " + layout(all_broadcast()) + "]");
        kinds += 'g';
        rhs = "rms_norm(" + a.name + ", " + g + ", eps=1e-6)";
        break;
      }
      case 7: rhs = "softmax(" + a.name + ")"; break;
      case 8: rhs = a.name + " * sum(" + a.name + ", axes=(" + std::to_string(pick(2)) + ",)) * 0.05"; break;
      case 9: {  // a loop carrying a value through a matmul and a reshard back to its layout
        std::vector<ir::ShardAttr> w;
        for (int m = 0; m < axes_; ++m) w.push_back(random_attr(false));
        const std::string name = "w" + std::to_string(params.size());
        params.push_back(name + ": Tensor[(" + d() + ", " + d() + "), f32, " + layout(w) + "]");
        kinds += 'w';
        rhs = a.name + "\n    for i in range(2):\n        " + v + " = reshard(tanh(" + v + ") @ " + name +
              " + " + v + " * 0.5, layout=" + layout(a.attrs) + ")";
        break;
      }
      default: {
        std::vector<ir::ShardAttr> to;
        for (int m = 0; m < axes_; ++m) to.push_back(random_attr(false));
        rhs = "reshard(" + a.name + ", layout=" + layout(to) + ")";
      }
    }
    std::vector<std::string> body = body_;
    body.push_back(v + " = " + rhs);
    ir::ModulePtr m;
    try {
      m = frontend::parse_module(header() + text(body, params), "random.tf");
    } catch (const ir::Error&) {
      return;  // does not type: try another statement
    }
    // The new value's sharding: the operand of the last reshard in the sum.
    const ir::ExprPtr& sum = m->lookup("f")->body();
    const auto* last = ir::expr_as<ir::Call>(body.size() == 1 ? sum : ir::expr_as<ir::Call>(sum)->args()[1]);
    const ir::TensorType& t = *ir::as_tensor(last->args()[0]->type());
    auto attrs = ops::shard::to_logical(t.shape(), *ir::as_shard_layout(t.layout()));
    if (!attrs) return;
    body_ = std::move(body);
    params_ = std::move(params);
    kinds_ = std::move(kinds);
    pool_.push_back({v, *attrs});
  }

 public:
  static std::string header() {
    return "from tilefoundry.dsl import *\n"
           "TARGET = Target(\"cpu\", topology=((\"device\", 4), (\"cta\", 1)))\n"
           "d4 = Mesh(topology=\"device\", shape=(4,), axes=(\"tp\",))\n"
           "d22 = Mesh(topology=\"device\", shape=(2, 2), axes=(\"dp\", \"tp\"))\n";
  }

 private:
  std::mt19937& rng_;
  std::string mesh_;
  int axes_;
  bool symbolic_;
  std::vector<std::string> params_, body_;
  std::string kinds_;
  std::vector<Value> pool_;
};

// |got - want| within 1e-4 of max(1, |want|), element by element.
void expect_near_rel(const NDArray& got, const NDArray& want, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const float w = static_cast<const float*>(want.data())[i], g = static_cast<const float*>(got.data())[i];
    ASSERT_NEAR(g, w, 1e-4f * std::max(1.0f, std::fabs(w))) << what << " at " << i;
  }
}

std::vector<std::vector<std::string>> sorted(std::vector<std::vector<std::string>> calls) {
  for (auto& c : calls) std::sort(c.begin(), c.end());
  return calls;
}

TEST(RandomShardedPrograms, RanksAndNativeSegmentsAgreeWithTheLogicalProgram) {
  const int64_t count = env_int("TF_RANDOM_SHARDED", 24);
  std::mt19937 rng(static_cast<uint32_t>(env_int("TF_RANDOM_SEED", 20261204)));
  int64_t checked = 0, native_segments = 0;
  for (int64_t n = 0; n < count; ++n) {
    ShardedProgram p(rng, n % 2 == 1, n % 3 == 0);
    if (!p.grow(6)) continue;
    const std::string src = p.source();
    SCOPED_TRACE("program #" + std::to_string(n) + ":\n" + src);
    ir::ModulePtr m = frontend::parse_module(ShardedProgram::header() + src, "random.tf");
    const ir::Function& fn = *m->lookup("f");
    std::vector<NDArray> in;
    for (char k : p.kinds()) {
      NDArray a = random_f32(k == 'x' ? std::vector<int64_t>{8, 12}
                             : k == 'w' ? std::vector<int64_t>{12, 12} : std::vector<int64_t>{12}, rng);
      if (k == 'w')  // small weights keep chains of products in range
        for (int64_t i = 0; i < a.numel(); ++i) static_cast<float*>(a.data())[i] *= 0.15f;
      in.push_back(a);
    }
    const NDArray want = eval::evaluate(*m, fn, in)[0];
    const MeshRun ranks = run_on_mesh_with(*m, fn, in, nullptr);
    if (HasFailure()) return;  // the first failing program, with its trace
    expect_near_rel(ranks.results[0], want, "ranks on the evaluator's kernels");
    auto plan = spmd::plan_segments(fn);
    EXPECT_EQ(plan->fallback_reason(), "");
    native_segments += static_cast<int64_t>(plan->segments().size());
    const MeshRun native = run_on_mesh_with(*m, fn, in, plan.get());
    if (HasFailure()) return;
    expect_near_rel(native.results[0], want, "native segments");
    // The same collectives; a segment evaluates its inputs first, so they
    // may come in another (on every rank the same) order.
    EXPECT_EQ(sorted(native.calls), sorted(ranks.calls));
    if (HasFailure()) return;
    if (std::getenv("TF_RANDOM_SHOW")) std::printf("%s\n", src.c_str());
    ++checked;
  }
  // Most programs grow (a candidate types about half the time); every
  // statement but a reshard is an op some segment compiles.
  EXPECT_GE(checked, count * 3 / 4);
  EXPECT_GE(native_segments, checked);
  std::printf("random sharded programs: %lld checked, %lld native segments\n", static_cast<long long>(checked),
              static_cast<long long>(native_segments));
}

}  // namespace
}  // namespace tf
