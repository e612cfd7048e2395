// Slice, Transpose, Reshape and Concat are index maps: the stage that reads
// them loads their operands where they lie instead of a copy being made
// first, so rotate-half RoPE written with slices, neg and concat is one loop
// nest per output. Views a stage cannot read in place (a reshape merging
// axes, a concat across rows or beside a row reduction) are copied, and the
// result still agrees with the evaluator.
#include "compiler_helpers.h"
#include "core/compiler/codegen.h"
#include "core/frontend/parser.h"

namespace tf::comptest {
namespace {

const char* kSource = R"(from tilefoundry.dsl import *

B = DimVar("B", 1, 64)
S = DimVar("S", 1, 4096)
H = DimVar("H", 1, 64)
D = DimVar("D", 2, 1024)
N = DimVar("N", 1, 1 << 20)
M = DimVar("M", 1, 1 << 16)
K = DimVar("K", 0, 1 << 16)

@func
def rope_composed(q: Tensor[(B, S, H, D), f32], c: Tensor[(B, S, D), f32], s: Tensor[(B, S, D), f32]) -> Tensor[(B, S, H, D), f32]:
    rot = concat((-q[:, :, :, D // 2:], q[:, :, :, :D // 2]), axis=-1)
    return q * reshape(c, (B, S, 1, D)) + rot * reshape(s, (B, S, 1, D))

@func
def rope_bf16(q: Tensor[(S, H, 64), bf16], c: Tensor[(S, 1, 64), bf16], s: Tensor[(S, 1, 64), bf16]) -> Tensor[(S, H, 64), bf16]:
    rot = concat((-q[:, :, 32:], q[:, :, :32]), axis=-1)
    return q * c + rot * s

@func
def slice_of_sum(a: Tensor[(N, M), f32], b: Tensor[(N, M), f32]) -> Tensor[(N, 3), f32]:
    t = a + b
    return exp(t[:, 1:7:2])

@func
def transpose_times(x: Tensor[(M, N), f32], y: Tensor[(N, M), f32]) -> Tensor[(N, M), f32]:
    return transpose(x * 2.0, axes=(1, 0)) * y

@func
def transpose_bf16(x: Tensor[(B, M, N), bf16]) -> Tensor[(B, N, M), bf16]:
    return transpose(x, axes=(0, 2, 1))

@func
def split_heads(x: Tensor[(N, 64), f32], w: Tensor[(4, 16), f32]) -> Tensor[(N, 4, 16), f32]:
    return reshape(x, (N, 4, 16)) * w

@func
def merge_axes(x: Tensor[(N, M), f32]) -> Tensor[(N * M,), f32]:
    return reshape(x + 1.0, (N * M,)) * 3.0

@func
def three_pieces(a: Tensor[(N, 3), f32], b: Tensor[(N, K), f32], c: Tensor[(N, 5), i32]) -> Tensor[(N, K + 8), f32]:
    return concat((a, b * 2.0, cast(c, f32)), axis=1) + 1.0

@func
def concat_rows(a: Tensor[(N, M), f32], b: Tensor[(2, M), f32]) -> Tensor[(N + 2, M), f32]:
    return concat((a, b), axis=0) * 2.0

@func
def concat_normalized(a: Tensor[(N, M), f32], b: Tensor[(N, M), f32]) -> Tensor[(N, M * 2), f32]:
    x = concat((a, b), axis=-1)
    return x - mean(x, axes=-1)

@func
def slice_output(x: Tensor[(N, M), f64]) -> Tensor[(N, 2), f64]:
    return x[:, 1:3]
)";

class Views : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { module_ = frontend::parse_module(kSource, "views.py"); }
  static ir::ModulePtr module_;

  const ir::Function& fn(const std::string& name) { return *module_->lookup(name); }

  // The stages of the generated entry, by what they compute.
  std::vector<std::string> stages(const std::string& name) {
    const std::string body = compiler::generate(fn(name)).body;
    std::vector<std::string> out;
    for (size_t p = body.find("// stage: "); p != std::string::npos; p = body.find("// stage: ", p + 1))
      out.push_back(body.substr(p + 10, body.find(' ', p + 10) - p - 10));
    return out;
  }

  void agree(const std::string& name, const std::vector<NDArray>& in) {
    expect_agree(*compiler::compile(fn(name)), *module_, fn(name), in, name);
  }
  void agree(const std::string& name, const std::vector<std::vector<int64_t>>& shapes) {
    std::mt19937 rng(7);
    std::vector<NDArray> in;
    for (size_t i = 0; i < shapes.size(); ++i) in.push_back(random_array(param_dtype(i, name), shapes[i], rng));
    agree(name, in);
  }
  DType param_dtype(size_t i, const std::string& name) {
    return std::static_pointer_cast<const ir::TensorType>(fn(name).params()[i]->type())->dtype();
  }
};
ir::ModulePtr Views::module_;

TEST_F(Views, RotateHalfRopeIsOneLoopNest) {
  EXPECT_EQ(stages("rope_composed"), std::vector<std::string>{"Binary"});
  EXPECT_EQ(stages("rope_bf16"), std::vector<std::string>{"Binary"});
  for (int64_t d : {2, 8, 64, 128, 7}) agree("rope_composed", {{2, 3, 4, d}, {2, 3, d}, {2, 3, d}});
  agree("rope_bf16", {{5, 3, 64}, {5, 1, 64}, {5, 1, 64}});
}

TEST_F(Views, ShortRowsOfWholeCacheLinesStreamWithOneFencePerTask) {
  // A large output streams when its rows are long or each row is whole
  // 64-byte lines (a head dimension of 128 f32: 512 bytes); the task fences
  // once after its rows, not once per row or per piece of a concat.
  const std::string tir = compiler::generate(fn("rope_composed")).tir;
  EXPECT_NE(tir.find("let nt: bool = ((((outer * inner) * 8) >= @tf_stream_min_bytes()) && "
                     "((inner >= 2048) || (((inner * 4) % 64) == 0)))"),
            std::string::npos)
      << tir;
  // Two pieces per row, each streamed a line at a time, in four copies of
  // the row loop (unit strides or not, parallel or the one-thread twin);
  // one fence after the row loop in each task loop that streams (the
  // twin's is not unswitched).
  EXPECT_EQ(count(tir, "@tf_stream_line("), 8) << tir;
  EXPECT_EQ(count(tir, "@tf_stream("), 0) << tir;
  EXPECT_EQ(count(tir, "@tf_stream_fence()"), 3) << tir;
  // q is read at three offsets along the row (itself and its two halves):
  // prefetched on any core, unlike an input read as one ascending run.
  EXPECT_NE(tir.find("let pf: bool = (((outer * inner) * 8) >= @tf_prefetch_min_bytes())\n"), std::string::npos) << tir;
  EXPECT_EQ(tir.find("tf_prefetch_streams"), std::string::npos) << tir;
  // Streamed (rows of 128, 32 MiB moved), and rows of 100 floats, which are not
  // whole lines, stored.
  agree("rope_composed", {{1, 1024, 32, 128}, {1, 1024, 128}, {1, 1024, 128}});
  agree("rope_composed", {{1, 1024, 42, 100}, {1, 1024, 100}, {1, 1024, 100}});
}

TEST_F(Views, RopeReadsStridedAndOffsetOperands) {
  // q as a [B, H, S, D] buffer seen as [B, S, H, D], and a cos table read at
  // an offset inside a larger buffer.
  std::mt19937 rng(3);
  const int64_t b = 2, s = 5, h = 3, d = 16;
  NDArray qb = random_array(DType::kF32, {b, h, s, d}, rng);
  NDArray q = NDArray::view(qb, {b, s, h, d}, {h * s * d, d, s * d, 1});
  NDArray cb = random_array(DType::kF32, {b, s, 2 * d}, rng);
  NDArray c = NDArray::view(cb, {b, s, d}, {s * 2 * d, 2 * d, 1}, d);
  NDArray sn = random_array(DType::kF32, {b, s, d}, rng);
  agree("rope_composed", {q, c, sn});
}

TEST_F(Views, SlicesTransposesAndSplitsFuseIntoTheirReader) {
  EXPECT_EQ(stages("slice_of_sum"), std::vector<std::string>{"Unary"});
  EXPECT_EQ(stages("transpose_times"), std::vector<std::string>{"Binary"});
  EXPECT_EQ(stages("split_heads"), std::vector<std::string>{"Binary"});
  agree("slice_of_sum", {{4, 9}, {4, 9}});
  agree("slice_of_sum", {{1, 7}, {1, 7}});
  agree("transpose_times", {{33, 17}, {17, 33}});
  agree("split_heads", {{9, 64}, {4, 16}});
  std::mt19937 rng(9);
  NDArray big = random_array(DType::kF32, {40, 30}, rng);
  agree("transpose_times", {NDArray::view(big, {10, 12}, {60, 2}), random_array(DType::kF32, {12, 10}, rng)});
}

// A large stage reading an operand a line or more apart per element along
// the row (a transpose) runs in tiles of rows by a few columns (the
// `tiled` test of the stage); the tiles' edges (rows past a multiple of
// kTileRows, columns past kTileCols), the streamed and plain stores and
// several threads agree with the evaluator, as do small and short-stride
// stages, which keep whole rows.
TEST_F(Views, TransposedReadsRunInTiles) {
  const std::string t = compiler::generate(fn("transpose_times")).tir;
  EXPECT_GT(count(t, "let tiled: bool = (((bs0_1 >= 16) || (bs1_1 >= 16)) && ((outer * inner) >= 65536))"), 0) << t;
  EXPECT_GT(count(t, "let blk: i64 = select(tiled, 16, 16384)"), 0) << t;
  EXPECT_GT(count(t, "let tr: i64 = select(tiled, min(sh2[0], 256), "), 0) << t;
  std::mt19937 rng(11);
  for (auto [m, n] : {std::pair<int64_t, int64_t>{300, 700}, {1000, 517}, {40, 2000}, {2048, 1030}})
    agree("transpose_times", {random_array(DType::kF32, {m, n}, rng), random_array(DType::kF32, {n, m}, rng)});
  agree("transpose_times", {{17, 33}, {33, 17}});  // small: whole rows
  NDArray big = random_array(DType::kF32, {600, 1000}, rng);  // every other column: a stride of 2, whole rows
  agree("transpose_times", {NDArray::view(big, {300, 500}, {2000, 2}), random_array(DType::kF32, {500, 300}, rng)});
  agree("transpose_bf16", {{3, 700, 129}});
}

TEST_F(Views, AConcatAlongTheRowSplitsTheLoop) {
  EXPECT_EQ(stages("three_pieces"), std::vector<std::string>{"Binary"});
  for (int64_t m : {0, 1, 40, 20000}) agree("three_pieces", {{6, 3}, {6, m}, {6, 5}});
}

TEST_F(Views, ViewsAStageCannotReadInPlaceAreCopied) {
  // Merging axes, a concat across rows, a concat beside a row reduction:
  // a copy, then the reader.
  EXPECT_EQ(stages("merge_axes").size(), 3u);  // x + 1, the reshape's copy, * 3
  EXPECT_EQ(stages("concat_rows").size(), 2u);
  EXPECT_EQ(stages("concat_normalized").size(), 2u);
  agree("merge_axes", {{7, 9}});
  agree("concat_rows", {{3, 50}, {2, 50}});
  agree("concat_normalized", {{4, 33}, {4, 33}});
}

TEST_F(Views, AViewThatIsAnOutputIsOneStridedCopy) {
  EXPECT_EQ(stages("slice_output"), std::vector<std::string>{"Slice"});
  std::mt19937 rng(4);
  NDArray big = random_array(DType::kF64, {8, 12}, rng);
  agree("slice_output", {NDArray::view(big, {8, 4}, {12, 3})});
  agree("slice_output", {{5, 3}});
}

}  // namespace
}  // namespace tf::comptest
