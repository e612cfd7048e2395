// In-place results (@func(inplace=...)) and CacheScatter: which results
// native code writes straight into their parameter's buffer
// (compiler/in_place.h), that such a run writes only the updated rows (the
// rest of the buffer is read-only memory here), window checks of parameters
// run before anything is written (a precheck), and CacheScatter agrees with
// the evaluator, errors included.
#include <dirent.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "compiler_helpers.h"
#include "core/compiler/in_place.h"
#include "core/frontend/parser.h"
#include "core/ir/error.h"

namespace tf::comptest {
namespace {

const char* kSource = R"(from tilefoundry.dsl import *

B = DimVar("B", 1, 64)
L = DimVar("L", 1, 1 << 16)
S = DimVar("S", 1, 64)
N = DimVar("N", 1, 1 << 12)
W = DimVar("W", 1, 1 << 12)

@func(inplace="cache")
def scatter(cache: Tensor[(B, L, 2, 1024), f32], new: Tensor[(B, S, 2, 1024), f32], pos: Tensor[(B,), i32]) -> Tensor[(B, L, 2, 1024), f32]:
    return cache_scatter(cache, new, pos)

@func
def scatter_fresh(cache: Tensor[(B, L, 3), bf16], new: Tensor[(B, S, 3), bf16], pos: Tensor[(B,), i64]) -> Tensor[(B, L, 3), bf16]:
    return cache_scatter(cache, new * 2.0, pos)

@func
def scatter_computed_pos(cache: Tensor[(B, L), i32], new: Tensor[(B, S), i32], pos: Tensor[(B,), i32]) -> Tensor[(B, L), i32]:
    return cache_scatter(cache, new, pos + 1)

@func(inplace=("k", "v"))
def both(k: Tensor[(B, L, 2, 1024), f32], v: Tensor[(B, L, 2, 1024), f32], nk: Tensor[(B, S, 2, 1024), f32],
         nv: Tensor[(B, S, 2, 1024), f32], p: Tensor[(), i32], s: Tensor[(), i32]
         ) -> tuple[Tensor[(B, L, 2, 1024), f32], Tensor[(B, L, 2, 1024), f32]]:
    return cache_update(k, p, s, nk), cache_update(v, p, s, nv)

@func(inplace=("d", None))
def chain(d: Tensor[(N, 8), f32], u: Tensor[(1, 8), f32], o: Tensor[(), i32]) -> tuple[Tensor[(N, 8), f32], Tensor[(N, 1), f32]]:
    y = insert_slice(insert_slice(d, u, (o, 0)), u * 2.0, (0, 0))
    return y, sum(y, axes=1)

@func(inplace="x")
def scaled(x: Tensor[(N, 8), f32]) -> Tensor[(N, 8), f32]:
    return x * 2.0

@func(inplace=("x", None))
def scaled_and_read(x: Tensor[(N, 8), f32]) -> tuple[Tensor[(N, 8), f32], Tensor[(N, 8), f32]]:
    return x * 2.0, x + 1.0

@func(inplace="x")
def centered(x: Tensor[(N, 8), f32]) -> Tensor[(N, 8), f32]:
    return x - mean(x, axes=1)

@func(inplace="x")
def decayed(x: Tensor[(N, 8), f32], u: Tensor[(N, 8), f32], g: Tensor[(1, 8), f32]) -> Tensor[(N, 8), f32]:
    t = x * g
    return where(t > 0.0, t * t, t) + u * 0.5 + x

@func(inplace="x")
def gelu_update(x: Tensor[(N, W), f32]) -> Tensor[(N, W), f32]:
    return gelu(x, approximate="tanh")

@func(inplace="d")
def reads_twice(d: Tensor[(N, 8), f32], o: Tensor[(), i32]) -> Tensor[(N, 8), f32]:
    return insert_slice(d, d[0:1, :], (o, 0))

@func
def offset_computed(d: Tensor[(N, 8), f32], u: Tensor[(1, 8), f32], o: Tensor[(), i32]) -> Tensor[(N, 8), f32]:
    return insert_slice(d, u, (o + 1, 0))
)";

class InPlace : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { module_ = frontend::parse_module(kSource, "in_place.tf"); }
  static ir::ModulePtr module_;
  const ir::Function& fn(const std::string& name) { return *module_->lookup(name); }
};
ir::ModulePtr InPlace::module_;

NDArray positions(DType d, const std::vector<int64_t>& v) {
  NDArray a = NDArray::empty(d, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) {
    if (d == DType::kI32) static_cast<int32_t*>(a.data())[i] = static_cast<int32_t>(v[i]);
    else static_cast<int64_t*>(a.data())[i] = v[i];
  }
  return a;
}

NDArray scalar(int32_t v) {
  NDArray a = NDArray::empty(DType::kI32, {});
  *static_cast<int32_t*>(a.data()) = v;
  return a;
}

TEST_F(InPlace, OnlyWindowWriteChainsOfAParameterNothingElseReadsQualify) {
  EXPECT_TRUE(compiler::writes_in_place(fn("scatter"), 0, 0));
  EXPECT_TRUE(compiler::writes_all_in_place(fn("both")));
  EXPECT_TRUE(compiler::writes_in_place(fn("both"), 1, 1));
  EXPECT_FALSE(compiler::writes_in_place(fn("both"), 0, 1)) << "k's result is not v's chain";
  // A chain of two inserts, the result also read by a sum: the inner insert
  // is read once (by the outer), the parameter once.
  EXPECT_FALSE(compiler::writes_in_place(fn("chain"), 0, 0)) << "y is read by the sum as well as returned";
  // Elementwise updates, each element read at its own index before it is written.
  EXPECT_TRUE(compiler::writes_in_place(fn("scaled"), 0, 0));
  EXPECT_TRUE(compiler::writes_in_place(fn("decayed"), 0, 0));
  EXPECT_TRUE(compiler::writes_in_place(fn("gelu_update"), 0, 0));
  // x is also read for the second result, which may run after the first wrote.
  EXPECT_FALSE(compiler::writes_in_place(fn("scaled_and_read"), 0, 0));
  // Every element of the row is read for the mean: not an elementwise update.
  EXPECT_FALSE(compiler::writes_in_place(fn("centered"), 0, 0));
  // d is read by its own update: writing it in place would read the window after writing it.
  EXPECT_FALSE(compiler::writes_in_place(fn("reads_twice"), 0, 0));
  EXPECT_TRUE(compiler::writes_all_in_place(fn("scatter_fresh"))) << "no in-place results at all";
}

TEST_F(InPlace, ChecksOfParametersRunBeforeAnyStageWrites) {
  EXPECT_FALSE(compiler::compile(fn("scatter"))->may_fail());
  EXPECT_FALSE(compiler::compile(fn("both"))->may_fail());
  EXPECT_FALSE(compiler::compile(fn("scaled"))->may_fail());
  // pos + 1 is computed by a stage before the check can run.
  EXPECT_TRUE(compiler::compile(fn("scatter_computed_pos"))->may_fail());
  EXPECT_TRUE(compiler::compile(fn("offset_computed"))->may_fail());
}

// The cache lives in memory whose every page but the written rows' is
// read-only: a run that copied the cache onto itself, or wrote outside the
// rows, would fault.
TEST_F(InPlace, AnInPlaceRunWritesOnlyTheUpdatedRows) {
  const ir::Function& f = fn("scatter");
  auto k = compiler::compile(f);
  const int64_t b = 2, l = 16, row = 2 * 1024;  // one position is 8 KiB: two pages
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t bytes = static_cast<size_t>(b * l * row) * sizeof(float);
  ASSERT_EQ((row * sizeof(float)) % page, 0u);
  void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mem, MAP_FAILED);
  float* c = static_cast<float*>(mem);
  for (int64_t i = 0; i < b * l * row; ++i) c[i] = static_cast<float>(i % 977);
  std::vector<int64_t> shape{b, l, 2, 1024}, strides{l * row, row, 1024, 1};
  DLTensor t{};
  t.data = mem;
  t.device = {kDLCPU, 0};
  t.ndim = 4;
  t.dtype = runtime::dtype_to_dl(DType::kF32);
  t.shape = shape.data();
  t.strides = strides.data();
  NDArray cache = NDArray::from_dlpack(t);
  std::mt19937 rng(7);
  NDArray nw = random_array(DType::kF32, {b, 1, 2, 1024}, rng);
  NDArray pos = positions(DType::kI32, {5, 11});
  std::vector<NDArray> in{cache, nw, pos};
  std::vector<NDArray> want = eval::evaluate(*module_, f, in);
  ASSERT_EQ(mprotect(mem, bytes, PROT_READ), 0);
  for (int64_t r : {int64_t{5}, l + 11})
    ASSERT_EQ(mprotect(c + r * row, static_cast<size_t>(row) * sizeof(float), PROT_READ | PROT_WRITE), 0);
  std::vector<sema::ArgDesc> descs;
  for (const NDArray& a : in) descs.push_back({a.dtype(), a.shape()});
  k->run(in, {cache}, sema::bind_arguments(f, descs));
  ASSERT_EQ(mprotect(mem, bytes, PROT_READ | PROT_WRITE), 0);
  EXPECT_EQ(compare(cache, want[0], tolerance(DType::kF32)), "");
  munmap(mem, bytes);
}

// Two caches updated in place by one call, each output its parameter's buffer.
TEST_F(InPlace, TwoResultsWrittenInPlaceOfTwoParameters) {
  const ir::Function& f = fn("both");
  auto k = compiler::compile(f);
  std::mt19937 rng(10);
  NDArray kc = random_array(DType::kF32, {2, 5, 2, 1024}, rng), vc = random_array(DType::kF32, {2, 5, 2, 1024}, rng);
  std::vector<NDArray> in{kc, vc, random_array(DType::kF32, {2, 3, 2, 1024}, rng),
                          random_array(DType::kF32, {2, 3, 2, 1024}, rng), scalar(2), scalar(3)};
  std::vector<NDArray> want = eval::evaluate(*module_, f, in);
  std::vector<sema::ArgDesc> descs;
  for (const NDArray& a : in) descs.push_back({a.dtype(), a.shape()});
  k->run(in, {kc, vc}, sema::bind_arguments(f, descs));
  EXPECT_EQ(compare(kc, want[0], tolerance(DType::kF32)), "");
  EXPECT_EQ(compare(vc, want[1], tolerance(DType::kF32)), "");
}

// The caller's buffer as both the parameter and the result: the stage
// reads each element before writing it (its output is not __restrict).
TEST_F(InPlace, ElementwiseUpdatesRunInTheirParametersBuffer) {
  // The generated stage declares no pointer __restrict: its output and the
  // parameter it reads may be one buffer.
  char dir[] = "/tmp/tf_dump_inplaceXXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  setenv("TF_DUMP_DIR", dir, 1);
  compiler::compile(fn("scaled"));
  unsetenv("TF_DUMP_DIR");
  std::string source;
  DIR* dd = opendir(dir);
  ASSERT_NE(dd, nullptr);
  while (dirent* e = readdir(dd)) {
    const std::string name = e->d_name;
    if (name.rfind("scaled.", 0) != 0 || name.substr(name.size() - 3) != ".cc") continue;
    std::ifstream in(std::string(dir) + "/" + name);
    std::stringstream ss;
    ss << in.rdbuf();
    source = ss.str();
  }
  closedir(dd);
  const size_t stage = source.find("// stage: ");
  ASSERT_NE(stage, std::string::npos) << source;
  EXPECT_EQ(source.find("__restrict", stage), std::string::npos) << source.substr(stage);
  std::mt19937 rng(11);
  for (const char* name : {"scaled", "decayed"}) {
    const ir::Function& f = fn(name);
    auto k = compiler::compile(f);
    for (int64_t n : {int64_t{3}, int64_t{700}}) {
      std::vector<NDArray> in{random_array(DType::kF32, {n, 8}, rng)};
      if (f.params().size() == 3) {
        in.push_back(random_array(DType::kF32, {n, 8}, rng));
        in.push_back(random_array(DType::kF32, {1, 8}, rng));
      }
      std::vector<NDArray> want = eval::evaluate(*module_, f, in);
      std::vector<sema::ArgDesc> descs;
      for (const NDArray& a : in) descs.push_back({a.dtype(), a.shape()});
      k->run(in, {in[0]}, sema::bind_arguments(f, descs));
      EXPECT_EQ(compare(in[0], want[0], tolerance(DType::kF32)), "") << name << " n=" << n;
    }
  }
}

// gelu's chunk routine reads its input row where it lies and writes the
// output row itself: in place, both are the parameter's buffer, plainly
// stored and (2048 x 2048 moves 32 MiB, with the cache pinned at 32 MiB)
// streamed; rows off a line boundary too.
TEST_F(InPlace, AGeluUpdateRunsInItsParametersBuffer) {
  const ir::Function& f = fn("gelu_update");
  auto k = compiler::compile(f);
  std::mt19937 rng(12);
  for (auto [n, w] : {std::array<int64_t, 2>{3, 300}, {5, 1000}, {2048, 2048}, {1030, 4095}}) {
    std::vector<NDArray> in{random_array(DType::kF32, {n, w}, rng, 8.0)};
    std::vector<NDArray> want = eval::evaluate(*module_, f, in);
    k->run(in, {in[0]}, sema::bind_arguments(f, {{DType::kF32, {n, w}}}));
    EXPECT_EQ(compare(in[0], want[0], tolerance(DType::kF32)), "") << n << " x " << w;
  }
}

TEST_F(InPlace, CacheScatterAgreesWithTheEvaluator) {
  std::mt19937 rng(8);
  auto k = compiler::compile(fn("scatter_fresh"));
  for (auto [b, l, s] : {std::array<int64_t, 3>{1, 4, 1}, {3, 9, 4}, {5, 7, 7}}) {
    std::vector<int64_t> p;
    for (int64_t i = 0; i < b; ++i) p.push_back(static_cast<int64_t>(rng() % static_cast<uint32_t>(l - s + 1)));
    expect_agree(*k, *module_, fn("scatter_fresh"),
                 {random_array(DType::kBF16, {b, l, 3}, rng), random_array(DType::kBF16, {b, s, 3}, rng),
                  positions(DType::kI64, p)},
                 "scatter_fresh");
  }
  auto kc = compiler::compile(fn("scatter_computed_pos"));
  expect_agree(*kc, *module_, fn("scatter_computed_pos"),
               {random_array(DType::kI32, {2, 6}, rng), random_array(DType::kI32, {2, 2}, rng),
                positions(DType::kI32, {3, 0})},
               "scatter_computed_pos");
}

TEST_F(InPlace, ABadPositionIsTheEvaluatorsError) {
  std::mt19937 rng(9);
  for (const char* name : {"scatter_fresh", "scatter_computed_pos"}) {
    const ir::Function& f = fn(name);
    auto k = compiler::compile(f);
    const bool bf = std::string(name) == "scatter_fresh";
    const DType d = bf ? DType::kBF16 : DType::kI32;
    const std::vector<int64_t> cs = bf ? std::vector<int64_t>{3, 6, 3} : std::vector<int64_t>{3, 6};
    std::vector<int64_t> ns = cs;
    ns[1] = 2;
    // Row 1 is the first out of range (row 2 too): pos 5 (+1 for the
    // computed form) puts [5, 7) past len 6.
    NDArray pos = positions(bf ? DType::kI64 : DType::kI32, {0, 5, -1});
    std::string msgs[2];
    for (int i = 0; i < 2; ++i) {
      try {
        std::vector<NDArray> in{random_array(d, cs, rng), random_array(d, ns, rng), pos};
        if (i == 0) run_native(*k, f, in);
        else eval::evaluate(*module_, f, in);
        ADD_FAILURE() << name << (i ? " evaluator" : " native") << " did not fail";
      } catch (const ir::Error& e) {
        EXPECT_EQ(e.kind(), ir::ErrorKind::kRuntime);
        msgs[i] = e.what();
      }
    }
    EXPECT_EQ(msgs[0], msgs[1]);
    EXPECT_NE(msgs[0].find("'cache_scatter': pos[1] = "), std::string::npos) << msgs[0];
    EXPECT_NE(msgs[0].find("outside the cache's len (6)"), std::string::npos) << msgs[0];
  }
}

}  // namespace
}  // namespace tf::comptest
