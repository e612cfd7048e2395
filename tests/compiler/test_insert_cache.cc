// Compiled vs evaluator for InsertSlice and CacheUpdate: straight-line code
// and a loop carry, the window written in place (a dst computed only for the
// insert is computed into the result; a self-updating carry reuses its
// buffer: loop_plan.h), and a failing run-time check is the evaluator's
// error with the caller's buffers untouched.
#include <unistd.h>

#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <functional>
#include <sstream>

#include "compiler_helpers.h"
#include "core/compiler/loop_plan.h"
#include "core/frontend/parser.h"
#include "core/ir/error.h"

namespace tf::comptest {
namespace {

const char* kSource = R"(from tilefoundry.dsl import *

N = DimVar("N", 1, 1 << 12)
D = DimVar("D", 1, 1 << 12)
U = DimVar("U", 1, 64)
L = DimVar("L", 1, 256)
S = DimVar("S", 1, 64)

@func
def ins(d: Tensor[(N, D), f32], u: Tensor[(U, 3), f32], o: Tensor[(), i32]) -> Tensor[(N, D), f32]:
    return insert_slice(d, u, (o, 2))

@func
def ins_fresh(d: Tensor[(N, D), f64], u: Tensor[(U, D), f64], o: Tensor[(), i64]) -> Tensor[(N, D), f64]:
    return insert_slice(d * 2.0, u, (o, 0))

@func
def ins1(d: Tensor[(N,), i32], u: Tensor[(3,), i32]) -> Tensor[(N,), i32]:
    return insert_slice(d, u, 1)

@func
def cu(c: Tensor[(2, L, 3, 4), f32], p: Tensor[(), i32], s: Tensor[(), i32], n: Tensor[(2, S, 3, 4), f32]) -> Tensor[(2, L, 3, 4), f32]:
    return cache_update(c, p, s, n) + 1.0

@func
def cu_half(c: Tensor[(1, L, 2, 8), bf16], p: Tensor[(), i32], s: Tensor[(), i32], n: Tensor[(1, S, 2, 8), bf16]) -> Tensor[(1, L, 2, 8), bf16]:
    return cache_update(c, p, s, n)

@func
def ins_loop(d: Tensor[(N, D), f32], u: Tensor[(1, D), f32], o: Tensor[(), i32]) -> Tensor[(N, D), f32]:
    y = d
    for i in range(N):
        y = insert_slice(y, u * 0.5, (o, 0))
    return y

@func
def cu_loop(c: Tensor[(2, L, 3, 4), f32], p: Tensor[(), i32], s: Tensor[(), i32], n: Tensor[(2, S, 3, 4), f32]) -> Tensor[(2, L, 3, 4), f32]:
    y = c
    for i in range(3):
        y = cache_update(y, p, s, n + 1.0)
    return y
)";

class InsertCache : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { module_ = frontend::parse_module(kSource, "insert_cache.tf"); }
  static ir::ModulePtr module_;
  const ir::Function& fn(const std::string& name) { return *module_->lookup(name); }
};
ir::ModulePtr InsertCache::module_;

NDArray scalar(DType d, int64_t v) {
  NDArray a = NDArray::empty(d, {});
  if (d == DType::kI32) *static_cast<int32_t*>(a.data()) = static_cast<int32_t>(v);
  else *static_cast<int64_t*>(a.data()) = v;
  return a;
}

std::string bytes(const NDArray& a) {
  return std::string(static_cast<const char*>(a.data()), static_cast<size_t>(a.numel() * ir::dtype_bytes(a.dtype())));
}

// Both backends throw kRuntime with the same message containing `words`,
// and the inputs keep their bytes.
void expect_same_error(const compiler::CompiledFunction& k, const ir::Module& m, const ir::Function& f,
                       const std::vector<NDArray>& in, const std::string& words) {
  std::vector<std::string> before;
  for (const NDArray& a : in) before.push_back(bytes(a));
  std::string msgs[2];
  for (int i = 0; i < 2; ++i) {
    try {
      if (i == 0) run_native(k, f, in);
      else eval::evaluate(m, f, in);
      ADD_FAILURE() << (i == 0 ? "native" : "evaluator") << " did not throw: " << words;
    } catch (const ir::Error& e) {
      EXPECT_EQ(e.kind(), ir::ErrorKind::kRuntime) << e.what();
      msgs[i] = e.what();
    }
  }
  EXPECT_EQ(msgs[0], msgs[1]);
  EXPECT_NE(msgs[0].find(words), std::string::npos) << msgs[0];
  for (size_t i = 0; i < in.size(); ++i) EXPECT_EQ(bytes(in[i]), before[i]) << "input #" << i << " was written";
}

TEST_F(InsertCache, InsertSliceAgreesAndLeavesTheCallersDst) {
  const ir::Function& f = fn("ins");
  auto k = compiler::compile(f);
  const int64_t before = compiler::compiler_invocations();
  std::mt19937 rng(1);
  for (auto [n, d, u, o] : {std::array<int64_t, 4>{4, 5, 2, 1}, {9, 7, 9, 0}, {3, 300, 1, 2}}) {
    NDArray dst = random_array(DType::kF32, {n, d}, rng);
    const std::string kept = bytes(dst);
    expect_agree(*k, *module_, f, {dst, random_array(DType::kF32, {u, 3}, rng), scalar(DType::kI32, o)}, "ins");
    EXPECT_EQ(bytes(dst), kept) << "the parameter dst was written";
  }
  EXPECT_EQ(compiler::compiler_invocations(), before) << "recompiled for new extents";
  std::mt19937 r2(5);
  expect_agree(*compiler::compile(fn("ins1")), *module_, fn("ins1"),
               {random_array(DType::kI32, {6}, r2), random_array(DType::kI32, {3}, r2)}, "ins1");
}

TEST_F(InsertCache, InsertSliceOfAFreshValueWritesInPlace) {
  char dir[] = "/tmp/tf_dump_insXXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  setenv("TF_DUMP_DIR", dir, 1);
  auto k = compiler::compile(fn("ins_fresh"));
  unsetenv("TF_DUMP_DIR");
  std::string source;
  DIR* dd = opendir(dir);
  ASSERT_NE(dd, nullptr);
  while (dirent* e = readdir(dd)) {
    const std::string name = e->d_name;  // the C++, not the TIR beside it
    if (name.find("ins_fresh") == std::string::npos || name.size() < 3 || name.substr(name.size() - 3) != ".cc") continue;
    std::ifstream in(std::string(dir) + "/" + e->d_name);
    std::stringstream ss;
    ss << in.rdbuf();
    source = ss.str();
  }
  closedir(dd);
  // d * 2.0 is computed straight into the result, which then takes the
  // window: no temporary and no copy of dst.
  EXPECT_NE(source.find("stage: InsertSlice in place"), std::string::npos) << source;
  EXPECT_EQ(source.find("tf_copy_nd<double>(y, "), std::string::npos) << source;
  EXPECT_EQ(source.find("] = std::malloc("), std::string::npos) << source;
  std::mt19937 rng(2);
  for (auto [n, d, u, o] : {std::array<int64_t, 4>{4, 5, 2, 1}, {8, 33, 8, 0}})
    expect_agree(*k, *module_, fn("ins_fresh"),
                 {random_array(DType::kF64, {n, d}, rng), random_array(DType::kF64, {u, d}, rng), scalar(DType::kI64, o)},
                 "ins_fresh");
}

TEST_F(InsertCache, CacheUpdateAgrees) {
  std::mt19937 rng(3);
  auto k = compiler::compile(fn("cu"));
  for (auto [l, s, p, c] : {std::array<int64_t, 4>{8, 3, 2, 3}, {16, 4, 0, 1}, {5, 5, 0, 5}})
    expect_agree(*k, *module_, fn("cu"),
                 {random_array(DType::kF32, {2, l, 3, 4}, rng), scalar(DType::kI32, p), scalar(DType::kI32, c),
                  random_array(DType::kF32, {2, s, 3, 4}, rng)},
                 "cu");
  auto kh = compiler::compile(fn("cu_half"));
  expect_agree(*kh, *module_, fn("cu_half"),
               {random_array(DType::kBF16, {1, 6, 2, 8}, rng), scalar(DType::kI32, 3), scalar(DType::kI32, 2),
                random_array(DType::kBF16, {1, 4, 2, 8}, rng)},
               "cu_half");
}

TEST_F(InsertCache, LoopCarriesAreWrittenInPlace) {
  std::mt19937 rng(4);
  struct Case {
    const char* name;
    std::vector<NDArray> in;
    int64_t iterations;
  };
  std::vector<Case> cases;
  cases.push_back({"ins_loop", {random_array(DType::kF32, {5, 7}, rng), random_array(DType::kF32, {1, 7}, rng), scalar(DType::kI32, 2)}, 5});
  cases.push_back({"cu_loop",
                   {random_array(DType::kF32, {2, 9, 3, 4}, rng), scalar(DType::kI32, 4), scalar(DType::kI32, 3),
                    random_array(DType::kF32, {2, 5, 3, 4}, rng)},
                   3});
  for (const Case& c : cases) {
    auto k = compiler::compile(fn(c.name));
    std::vector<std::string> kept;
    for (const NDArray& a : c.in) kept.push_back(bytes(a));
    const int64_t before = compiler::loop_carry_in_place_runs();
    expect_agree(*k, *module_, fn(c.name), c.in, c.name);
    // Every iteration after the first read and wrote the same carry buffer.
    EXPECT_EQ(compiler::loop_carry_in_place_runs() - before, c.iterations - 1) << c.name;
    for (size_t i = 0; i < c.in.size(); ++i) EXPECT_EQ(bytes(c.in[i]), kept[i]) << c.name << " input #" << i;
  }
}

TEST_F(InsertCache, FailingChecksAreTheEvaluatorsErrors) {
  std::mt19937 rng(6);
  auto ki = compiler::compile(fn("ins"));
  NDArray d = random_array(DType::kF32, {4, 5}, rng), u = random_array(DType::kF32, {2, 3}, rng);
  expect_same_error(*ki, *module_, fn("ins"), {d, u, scalar(DType::kI32, 3)}, "window [3, 5) on axis 0");
  expect_same_error(*ki, *module_, fn("ins"), {d, u, scalar(DType::kI32, -1)}, "out of bounds for dst extent 4");
  NDArray w = random_array(DType::kF32, {4, 3}, rng);
  expect_same_error(*ki, *module_, fn("ins"), {random_array(DType::kF32, {4, 4}, rng), w, scalar(DType::kI32, 0)},
                    "on axis 1");
  auto kc = compiler::compile(fn("cu"));
  NDArray c = random_array(DType::kF32, {2, 6, 3, 4}, rng), n = random_array(DType::kF32, {2, 3, 3, 4}, rng);
  expect_same_error(*kc, *module_, fn("cu"), {c, scalar(DType::kI32, -2), scalar(DType::kI32, 1), n},
                    "cur_pos must be >= 0, but is -2");
  expect_same_error(*kc, *module_, fn("cu"), {c, scalar(DType::kI32, 0), scalar(DType::kI32, 4), n},
                    "s must be in [1, new.len = 3], but is 4");
  expect_same_error(*kc, *module_, fn("cu"), {c, scalar(DType::kI32, 0), scalar(DType::kI32, 0), n}, "but is 0");
  expect_same_error(*kc, *module_, fn("cu"), {c, scalar(DType::kI32, 4), scalar(DType::kI32, 3), n},
                    "cur_pos + s (4 + 3) must not exceed cache.len (6)");
  // In a loop: the carry's init is the caller's cache.
  auto kl = compiler::compile(fn("cu_loop"));
  expect_same_error(*kl, *module_, fn("cu_loop"), {c, scalar(DType::kI32, 5), scalar(DType::kI32, 2), n},
                    "must not exceed cache.len (6)");
}

}  // namespace
}  // namespace tf::comptest
