// Generated kernels and the evaluator share one copy of the scalar numerics:
// the prelude starts with the text of core/runtime/scalar_numerics.h as the
// build embedded it, and defines none of its functions again.
// The chunk routines the code generator calls are checked against the
// scalar operations they stand for.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/compiler/library.h"
#include "core/compiler/prelude.h"
#include "core/compiler/toolchain.h"

namespace {

// Located from this file's path: <repo>/tests/compiler/... -> <repo>/core/...
std::string read_source(const std::string& name) {
  const std::string here = __FILE__;
  std::ifstream in(here.substr(0, here.rfind("/tests/")) + "/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(PreludeNumerics, EmbedsTheSharedHeaderAsBuilt) {
  const std::string header = read_source("core/runtime/scalar_numerics.h");
  ASSERT_FALSE(header.empty());
  EXPECT_EQ(std::string(tf::compiler::scalar_numerics_source()), header)
      << "the embedded text is stale: rebuild (cmake/embed_text.cmake)";
  EXPECT_NE(std::string(tf::compiler::prelude_source()).find(header), std::string::npos);
}

TEST(PreludeNumerics, DefinesNoSharedFunctionAgain) {
  const std::string prelude = tf::compiler::prelude_source();
  for (const char* definition :
       {"tf_f16 tf_to_f16(float", "tf_bf16 tf_to_bf16(float", "tf_fp8e4m3 tf_to_fp8e4m3(float",
        "tf_f8e8m0 tf_to_f8e8m0(float", "float tf_widen(tf_f16", "float tf_rf16(float", "float tf_rbf16(float",
        "T tf_narrow(C", "C tf_min(C", "C tf_max(C", "T tf_wadd(T", "T tf_wsub(T", "T tf_wmul(T", "C tf_relu(C",
        "T tf_floordiv(T", "D tf_f2i(F", "bool tf_topk_greater(C", "C tf_gelu_erf(C", "struct tf_f16 {",
        "struct tf_fp8e4m3 {", "void tf_fail(int*"})
    EXPECT_EQ(count(prelude, definition), 1u) << definition;
}

// The prelude's chunk routines, compiled as a kernel is, against the
// scalar operations they stand for.
namespace routines {

using DivN = void (*)(float*, int64_t, float);
using ExpSumN = float (*)(float*, int64_t);
using Exp = float (*)(float);

class PreludeRoutines : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string source = std::string(tf::compiler::prelude_source()) +
                               "extern \"C\" void probe_div(float* v, int64_t n, float b) { tf_div_n(v, n, b); }\n"
                               "extern \"C\" void probe_div_by_sum(float* v, int64_t n, float b) { tf_div_by_sum_n(v, n, b); }\n"
                               "extern \"C\" float probe_exp_sum(float* v, int64_t n) { return tf_exp_sum_n(v, n); }\n"
                               "extern \"C\" float probe_exp(float x) { return tf_exp(x); }\n"
                               "extern \"C\" void probe_stream_f32(float* d, const float* s, int64_t n) {\n"
                               "  tf_stream(d, s, n); tf_stream_fence(); }\n"
                               "extern \"C\" void probe_stream_f64(double* d, const double* s, int64_t n) {\n"
                               "  tf_stream(d, s, n); tf_stream_fence(); }\n"
                               "extern \"C\" int64_t probe_line_head_f32(const float* p, int64_t n) { return tf_line_head(p, n); }\n"
                               "extern \"C\" int64_t probe_line_head_f64(const double* p, int64_t n) { return tf_line_head(p, n); }\n"
                               "extern \"C\" void probe_stream_line_f32(float* d, const float* s) {\n"
                               "  tf_stream_line(d, s); tf_stream_fence(); }\n"
                               "extern \"C\" void probe_stream_line_f64(double* d, const double* s) {\n"
                               "  tf_stream_line(d, s); tf_stream_fence(); }\n"
                               "extern \"C\" float probe_exp_sum_drain(float* v, const float* x, int64_t n, float* d) {\n"
                               "  const float s = tf_exp_sum_drain_n(v, x, n, d); tf_stream_fence(); return s; }\n"
                               "extern \"C\" void probe_gelu(float* v, int64_t n) { tf_gelu_tanh_n(v, n); }\n"
                               "extern \"C\" float probe_gelu_scalar(float x) { return tf_gelu_tanh<float>(x); }\n"
                               "extern \"C\" double probe_lanes_add_f64(const double* l, int64_t n) { return tf_lanes_add(l, n); }\n"
                               "extern \"C\" float probe_lanes_add_f32(const float* l, int64_t n) { return tf_lanes_add(l, n); }\n"
                               "extern \"C\" int32_t probe_lanes_add_i32(const int32_t* l, int64_t n) { return tf_lanes_add(l, n); }\n"
                               "extern \"C\" float probe_lanes_max_f32(const float* l, int64_t n) { return tf_lanes_max(l, n); }\n"
                               "extern \"C\" void probe_gelu_stream(float* y, const float* x, int64_t sx, int64_t n) {\n"
                               "  tf_gelu_tanh_stream_n(y, x, sx, n); tf_stream_fence(); }\n"
                               "extern \"C\" void probe_gelu_from(float* y, const float* x, int64_t sx, int64_t n) {\n"
                               "  tf_gelu_tanh_from_n(y, x, sx, n); }\n" +
                               kCacheProbes;
    lib_ = load(source, "routines");
  }
  static constexpr const char* kCacheProbes =
      "extern \"C\" int64_t probe_llc() { return tf_llc_bytes(); }\n"
      "extern \"C\" int64_t probe_stream_min() { return tf_stream_min_bytes(); }\n"
      "extern \"C\" int64_t probe_prefetch_min() { return tf_prefetch_min_bytes(); }\n"
      "extern \"C\" int64_t probe_threads() { return tf_threads(); }\n"
      "extern \"C\" int64_t probe_sysfs_llc(const char* dir) { return tf_sysfs_llc_bytes(dir); }\n"
      "extern \"C\" bool probe_amd_core() { return tf_amd_core(); }\n"
      "extern \"C\" bool probe_prefetch_streams_for(const char* s, bool amd) {\n"
      "  return tf_prefetch_streams_for(s, amd); }\n"
      "extern \"C\" bool probe_prefetch_streams() { return tf_prefetch_streams(); }\n";
  static tf::compiler::Library* load(const std::string& source, const std::string& what) {
    const std::string path = ::testing::TempDir() + "/tf_prelude_" + what + "_" + std::to_string(::getpid()) + ".so";
    tf::compiler::compile_shared(source, path);
    auto* lib = new tf::compiler::Library(path);
    std::remove(path.c_str());
    return lib;
  }
  static void TearDownTestSuite() { delete lib_; }
  template <typename F>
  static F fn(const char* name) {
    void* p = lib_->symbol(name);
    EXPECT_NE(p, nullptr) << name;
    return reinterpret_cast<F>(p);
  }
  static tf::compiler::Library* lib_;
};
tf::compiler::Library* PreludeRoutines::lib_ = nullptr;

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
bool same_bits(float a, float b) { return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0; }

// How many of a[i] / b div(a, n, b) does not give the bits of (the first
// three are reported).
size_t wrong_quotients(DivN div, const std::vector<float>& a, float b) {
  std::vector<float> v = a;
  div(v.data(), static_cast<int64_t>(v.size()), b);
  size_t wrong = 0;
  for (size_t i = 0; i < a.size(); ++i)
    if (!same_bits(v[i], a[i] / b) && wrong++ < 3)
      ADD_FAILURE() << a[i] << " / " << b << ": got " << v[i] << ", want " << a[i] / b;
  return wrong;
}

// Every 211th f32 bit pattern (all exponents, both signs, subnormals, infs,
// NaNs) divided by divisors of every kind: the quotient's bits exactly.
TEST_F(PreludeRoutines, DivisionByOneValueIsTheQuotientItself) {
  const DivN div = fn<DivN>("probe_div");
  ASSERT_NE(div, nullptr);
  std::vector<float> a;
  for (uint64_t u = 0; u < (uint64_t{1} << 32); u += 211) a.push_back(from_bits(static_cast<uint32_t>(u)));
  for (float extra : {0.0f, -0.0f, 1e-45f, 0x1p-100f, 0x1.fffffep-101f, 0x1p100f, 3.4e38f, 1.0f})
    a.push_back(extra);
  const float divisors[] = {3.0f,    7.0f,     1.0001f,  4095.7f, 0.3f,   1e30f,   -2.5f,    1.0f,    0x1p-126f,
                            1e-40f,  0x1p127f, 3.4e38f,  0.0f,    -0.0f,  INFINITY, -INFINITY, NAN, 1234.567f,
                            // the range test's bounds clamped at 2^-100 and at the largest float
                            0x1p100f, -0x1.8p-100f, 3e-30f, 0x1p-27f};
  for (float b : divisors) EXPECT_EQ(wrong_quotients(div, a, b), 0u) << "divisor " << b;
}

// The division by a sum of its own terms (none NaN or above 2^99 |b| where
// b is normal): the quotient's bits, the dividends in pattern order (whole
// blocks of four vectors in or below the range) and shuffled (one low lane
// in most blocks).
TEST_F(PreludeRoutines, DivisionByASumOfItsTermsIsTheQuotientItself) {
  const DivN div = fn<DivN>("probe_div_by_sum");
  ASSERT_NE(div, nullptr);
  const float divisors[] = {1.0f,     4096.0f, 1.0001f,  3.0f,  0x1p-126f, 1e-40f, 0x1p100f, 3.4e38f,
                            0x1p-27f, 0.0f,    INFINITY, NAN,   1e30f,     0.75f,  -2.5f};
  std::mt19937 rng(5);
  for (float b : divisors) {
    std::vector<float> a;
    const bool normal = std::isnormal(b) && std::isnormal(1.0f / b);
    for (uint64_t u = 0; u < (uint64_t{1} << 32); u += 211) {
      const float x = from_bits(static_cast<uint32_t>(u));
      if (!normal || (!std::isnan(x) && static_cast<double>(x) <= 0x1p99 * std::fabs(static_cast<double>(b))))
        a.push_back(x);
    }
    for (bool shuffled : {false, true}) {
      if (shuffled) {  // every 13th, shuffled
        for (size_t i = 0; i * 13 < a.size(); ++i) a[i] = a[i * 13];
        a.resize((a.size() + 12) / 13);
        std::shuffle(a.begin(), a.end(), rng);
      }
      EXPECT_EQ(wrong_quotients(div, a, b), 0u) << "divisor " << b << (shuffled ? ", shuffled" : "");
    }
  }
}

// The exponentials are tf_exp's bits; their float sum over a chunk (the
// compiled row passes call it on at most kChunk = 256 values) is within
// n / 32 + 5 ulp of their exact sum: the terms are never negative, so
// nothing cancels. Row sums in double add these chunk sums. Nothing past
// the chunk is written (its last values go through masked vectors).
TEST_F(PreludeRoutines, ExpSumOfAChunkIsWithinItsBound) {
  const ExpSumN sum_n = fn<ExpSumN>("probe_exp_sum");
  const Exp exp1 = fn<Exp>("probe_exp");
  ASSERT_TRUE(sum_n && exp1);
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (int64_t n : {0, 1, 15, 16, 17, 31, 32, 33, 255, 256}) {
    for (int trial = 0; trial < 50; ++trial) {
      std::vector<float> x(static_cast<size_t>(n));
      for (float& v : x) v = trial == 0 ? -100.0f + 0.37f * static_cast<float>(&v - x.data()) : normal(rng);
      std::vector<float> v = x;
      v.resize(x.size() + 32, 7.0f);  // a vector past the end: never written
      const float got = sum_n(v.data(), n);
      for (size_t i = x.size(); i < v.size(); ++i) ASSERT_EQ(v[i], 7.0f) << "n = " << n << ", written at " << i;
      double want = 0;
      for (int64_t i = 0; i < n; ++i) {
        const float e = exp1(x[static_cast<size_t>(i)]);
        EXPECT_TRUE(same_bits(v[static_cast<size_t>(i)], e)) << "exp(" << x[static_cast<size_t>(i)] << ")";
        want += e;
      }
      const double ulps = static_cast<double>(n) / 32 + 5;
      EXPECT_LE(std::abs(got - want), ulps * 0x1p-24 * want) << "n = " << n << ", trial " << trial;
    }
  }
}

using Bytes = int64_t (*)();
using SysfsBytes = int64_t (*)(const char*);

// Writes a fake sysfs cache folder: one indexN/ per {level, type, size}.
static std::string fake_cache_folder(const std::string& name, const std::vector<std::array<std::string, 3>>& caches) {
  const std::string dir = ::testing::TempDir() + "/tf_cache_" + name + "_" + std::to_string(::getpid());
  for (size_t i = 0; i < caches.size(); ++i) {
    const std::string index = dir + "/index" + std::to_string(i);
    std::filesystem::create_directories(index);
    const char* files[] = {"level", "type", "size"};
    for (int f = 0; f < 3; ++f) std::ofstream(index + "/" + files[f]) << caches[i][static_cast<size_t>(f)] << "\n";
  }
  return dir;
}

// The last-level cache in sysfs is the highest level's data or unified
// cache, in the K / M / G units sysfs writes; a folder that lists none is 0.
// A reduction's lane partials fold pairwise, partial i with i + n / 2,
// then i with i + n / 4, ...: with 32 partials on an AVX-512 core the
// vector path, with 16 the loop every other core runs; both give the bits
// of that order (terms spanning 2^60 make another order round apart).
template <typename T>
T pairwise(std::vector<T> v, T (*f)(T, T)) {
  for (size_t w = v.size() / 2; w >= 1; w /= 2)
    for (size_t i = 0; i < w; ++i) v[i] = f(v[i], v[i + w]);
  return v[0];
}
TEST_F(PreludeRoutines, LanePartialsFoldPairwise) {
  using AddF64 = double (*)(const double*, int64_t);
  using AddF32 = float (*)(const float*, int64_t);
  using AddI32 = int32_t (*)(const int32_t*, int64_t);
  const auto add64 = fn<AddF64>("probe_lanes_add_f64");
  const auto add32 = fn<AddF32>("probe_lanes_add_f32");
  const auto addi = fn<AddI32>("probe_lanes_add_i32");
  const auto max32 = fn<AddF32>("probe_lanes_max_f32");
  ASSERT_TRUE(add64 && add32 && addi && max32);
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
  std::uniform_int_distribution<int> exponent(-30, 30);
  for (int64_t n : {16, 32}) {
    for (int trial = 0; trial < 200; ++trial) {
      alignas(64) double d[32];
      alignas(64) float f[32];
      alignas(64) int32_t k[32];
      for (int64_t i = 0; i < n; ++i) {
        d[i] = std::ldexp(mantissa(rng), exponent(rng));
        f[i] = static_cast<float>(d[i]);
        k[i] = static_cast<int32_t>(rng() % 1000);
      }
      const double want64 = pairwise<double>({d, d + n}, [](double a, double b) { return a + b; });
      const float want32 = pairwise<float>({f, f + n}, [](float a, float b) { return a + b; });
      const float want_max = pairwise<float>({f, f + n}, [](float a, float b) { return b > a ? b : a; });
      const int32_t want_i = pairwise<int32_t>({k, k + n}, [](int32_t a, int32_t b) { return a + b; });
      EXPECT_EQ(add64(d, n), want64) << n;
      EXPECT_TRUE(same_bits(add32(f, n), want32)) << n << ": " << add32(f, n) << " vs " << want32;
      EXPECT_EQ(max32(f, n), want_max) << n;
      EXPECT_EQ(addi(k, n), want_i) << n;
    }
  }
}

TEST_F(PreludeRoutines, TheLastLevelCacheIsTheHighestLevelSysfsLists) {
  const auto llc = fn<SysfsBytes>("probe_sysfs_llc");
  const std::string epyc = fake_cache_folder(
      "epyc", {{"1", "Data", "48K"}, {"1", "Instruction", "32K"}, {"2", "Unified", "1024K"}, {"3", "Unified", "32768K"}});
  EXPECT_EQ(llc(epyc.c_str()), int64_t{32} << 20);
  const std::string two_levels = fake_cache_folder("l2", {{"1", "Data", "32K"}, {"2", "Unified", "2M"}, {"3", "Instruction", "1G"}});
  EXPECT_EQ(llc(two_levels.c_str()), int64_t{2} << 20);
  const std::string bytes = fake_cache_folder("bytes", {{"3", "Unified", "1000"}});
  EXPECT_EQ(llc(bytes.c_str()), 1000);
  const std::string unreadable = fake_cache_folder("bad", {{"2", "Unified", "1024K"}, {"3", "Unified", "lots"}});
  EXPECT_EQ(llc(unreadable.c_str()), int64_t{1} << 20);
  EXPECT_EQ(llc((::testing::TempDir() + "/tf_no_such_cache_folder").c_str()), 0);
  for (const std::string& d : {epyc, two_levels, bytes, unreadable}) std::filesystem::remove_all(d);
}

// Streaming and prefetching start where a stage moves three quarters of
// the last-level cache: TF_LLC_BYTES where set (these tests pin 32 MiB),
// else the system's.
TEST_F(PreludeRoutines, StreamingThresholdsAreFractionsOfTheLastLevelCache) {
  ASSERT_NE(std::getenv("TF_LLC_BYTES"), nullptr);
  const int64_t pinned_bytes = std::atoll(std::getenv("TF_LLC_BYTES"));  // 32 MiB unless a user set it
  ASSERT_GT(pinned_bytes, 0);
  EXPECT_EQ(fn<Bytes>("probe_llc")(), pinned_bytes);
  EXPECT_EQ(fn<Bytes>("probe_stream_min")(), pinned_bytes / 4 * 3);
  EXPECT_EQ(fn<Bytes>("probe_prefetch_min")(), pinned_bytes / 4 * 3);
  // A library loaded without the variable reads the system's last-level
  // cache: sysfs's, else sysconf's L3, else 64 MiB.
  const std::string pinned = std::getenv("TF_LLC_BYTES");
  unsetenv("TF_LLC_BYTES");
  tf::compiler::Library* own = load(std::string(tf::compiler::prelude_source()) + kCacheProbes, "cache_size");
  const int64_t llc = reinterpret_cast<Bytes>(own->symbol("probe_llc"))();  // read on this first call
  setenv("TF_LLC_BYTES", pinned.c_str(), 1);
  const int64_t listed = fn<SysfsBytes>("probe_sysfs_llc")("/sys/devices/system/cpu/cpu0/cache");
  const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  const int64_t want = listed > 0 ? listed : l3 > 0 ? l3 : int64_t{64} << 20;
  EXPECT_EQ(llc, want);
  EXPECT_EQ(reinterpret_cast<Bytes>(own->symbol("probe_stream_min"))(), want / 4 * 3);
  delete own;
  // The first library read the variable once: it keeps its value.
  EXPECT_EQ(fn<Bytes>("probe_llc")(), pinned_bytes);
}

// A streamed elementwise stage prefetches inputs it reads as one ascending
// run except on AMD cores, unless TF_PREFETCH_STREAMS says otherwise; the
// core is AMD where /proc/cpuinfo lists AuthenticAMD.
TEST_F(PreludeRoutines, AscendingRunsArePrefetchedExceptOnAmdCores) {
  const auto streams_for = fn<bool (*)(const char*, bool)>("probe_prefetch_streams_for");
  EXPECT_FALSE(streams_for(nullptr, true));
  EXPECT_FALSE(streams_for("", true));  // set but empty: as unset
  EXPECT_TRUE(streams_for(nullptr, false));
  EXPECT_TRUE(streams_for("", false));
  EXPECT_TRUE(streams_for("1", true));
  EXPECT_FALSE(streams_for("0", false));
  const bool amd = fn<bool (*)()>("probe_amd_core")();
#if defined(__x86_64__)
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, listed;
  while (listed.empty() && std::getline(cpuinfo, line))
    if (line.rfind("vendor_id", 0) == 0) listed = line.substr(line.find(':') + 2);
  ASSERT_FALSE(listed.empty());
  EXPECT_EQ(amd, listed == "AuthenticAMD") << listed;
#endif
  EXPECT_EQ(fn<bool (*)()>("probe_prefetch_streams")(), streams_for(std::getenv("TF_PREFETCH_STREAMS"), amd));
}

// tf_stream copies exactly [dst, dst + n) from any alignment: a head of
// plain stores up to a line boundary, whole lines streamed, a plain tail.
template <typename T>
void check_stream(void (*stream)(T*, const T*, int64_t)) {
  constexpr int64_t kLine = 64 / sizeof(T);
  for (int64_t offset = 0; offset <= kLine; ++offset) {
    for (int64_t n = 0; n <= 5 * kLine + 3; ++n) {
      alignas(64) T dst[8 * 64 / sizeof(T)];
      std::vector<T> src(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) src[static_cast<size_t>(i)] = static_cast<T>(1000 * offset + i + 1);
      for (T& d : dst) d = T(-1);
      stream(dst + offset, src.data(), n);
      for (int64_t i = 0; i < static_cast<int64_t>(sizeof dst / sizeof(T)); ++i) {
        const bool inside = i >= offset && i < offset + n;
        const T want = inside ? src[static_cast<size_t>(i - offset)] : T(-1);
        ASSERT_EQ(dst[i], want) << "offset " << offset << ", n " << n << ", element " << i;
      }
    }
  }
}

TEST_F(PreludeRoutines, StreamingCopiesExactlyTheRangeFromAnyAlignment) {
  check_stream(fn<void (*)(float*, const float*, int64_t)>("probe_stream_f32"));
  check_stream(fn<void (*)(double*, const double*, int64_t)>("probe_stream_f64"));
}

// tf_line_head: the elements before the next 64-byte boundary, at most n,
// and all n where the pointer is not aligned to its element (no element
// then starts a line).
template <typename T>
void check_line_head(int64_t (*head)(const T*, int64_t)) {
  constexpr int64_t kLine = 64 / sizeof(T);
  alignas(64) T row[4 * kLine];
  for (int64_t offset = 0; offset <= 2 * kLine; ++offset)
    for (int64_t n : {int64_t{0}, int64_t{1}, kLine - 1, kLine, 3 * kLine})
      EXPECT_EQ(head(row + offset, n), std::min(n, (kLine - offset % kLine) % kLine)) << offset << " " << n;
  const T* odd = reinterpret_cast<const T*>(reinterpret_cast<const char*>(row) + 1);
  EXPECT_EQ(head(odd, 100), 100);
}

TEST_F(PreludeRoutines, LineHeadIsTheDistanceToTheNextLineBoundary) {
  check_line_head(fn<int64_t (*)(const float*, int64_t)>("probe_line_head_f32"));
  check_line_head(fn<int64_t (*)(const double*, int64_t)>("probe_line_head_f64"));
}

// tf_stream_line writes exactly the one line it is given.
template <typename T>
void check_stream_line(void (*line)(T*, const T*)) {
  constexpr int64_t kLine = 64 / sizeof(T);
  alignas(64) T dst[3 * kLine];
  alignas(64) T src[kLine];
  for (int64_t i = 0; i < kLine; ++i) src[i] = static_cast<T>(i + 1);
  for (T& d : dst) d = T(-1);
  line(dst + kLine, src);
  for (int64_t i = 0; i < 3 * kLine; ++i)
    EXPECT_EQ(dst[i], i >= kLine && i < 2 * kLine ? src[i - kLine] : T(-1)) << "element " << i;
}

TEST_F(PreludeRoutines, AStreamedLineIsExactlyItsSixtyFourBytes) {
  check_stream_line(fn<void (*)(float*, const float*)>("probe_stream_line_f32"));
  check_stream_line(fn<void (*)(double*, const double*)>("probe_stream_line_f64"));
}

// The chunk gelu (its own exponential, a power of two) against the scalar
// form elementwise stages fall back to: NaN where it is NaN, the same
// infinities, otherwise within 4 units of the scalar result's last place,
// or of |x| 2^-25 where 1 + tanh(u) cancels (both forms round that sum to a
// multiple of 2^-25, torch's grain). Inputs: random magnitudes from 2^-30
// to 24 (the cancellation sets in below -5), the ends of the clamp, huge
// values whose cube overflows, subnormals and the special values.
TEST_F(PreludeRoutines, ChunkGeluIsWithinFourUnitsOfTheScalarForm) {
  const auto gelu = fn<void (*)(float*, int64_t)>("probe_gelu");
  const auto scalar = fn<float (*)(float)>("probe_gelu_scalar");
  ASSERT_TRUE(gelu && scalar);
  std::mt19937 rng(23);
  std::uniform_real_distribution<float> dist(-24.0f, 24.0f);
  std::vector<float> x = {NAN, -NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 0x1p-149f, -0x1p-140f, FLT_MAX, -FLT_MAX,
                          1e13f, -1e13f, 5.1750915f, -5.1750915f, -6.0f, -9.0f, 9.0f, -11.0f, 11.0f};
  for (int i = 0; i < (1 << 20); ++i) x.push_back(std::ldexp(dist(rng), -static_cast<int>(rng() % 31)));
  std::vector<float> y = x;
  for (size_t c = 0; c < y.size(); c += 256) gelu(y.data() + c, static_cast<int64_t>(std::min<size_t>(256, y.size() - c)));
  for (size_t i = 0; i < x.size(); ++i) {
    const float want = scalar(x[i]);
    if (std::isnan(want) || std::isinf(want)) {
      ASSERT_TRUE(std::isnan(want) ? std::isnan(y[i]) : y[i] == want) << "x " << x[i] << ": " << y[i] << " vs " << want;
      continue;
    }
    const double unit = std::max({std::ldexp(1.0, std::ilogb(want == 0 ? 0x1p-149f : want) - 23),
                                  std::fabs(static_cast<double>(x[i])) * 0x1p-25, 0x1p-149});
    ASSERT_LE(std::fabs(static_cast<double>(y[i]) - want), 4 * unit) << "x " << x[i] << ": " << y[i] << " vs " << want;
  }
}

// The two-operand gelus (streamed or not) store the bits of the in-place
// routine over x[i * sx], at every length of a chunk, for a unit and a
// larger stride, every alignment of the destination (a streamed one that
// starts a line streams as it computes; otherwise computed, then
// streamed), and into x itself; nothing outside [y, y + n) is written and
// x is left as it was.
TEST_F(PreludeRoutines, TwoOperandGelusAreTheInPlaceGelu) {
  const auto gelu = fn<void (*)(float*, int64_t)>("probe_gelu");
  using TwoOperand = void (*)(float*, const float*, int64_t, int64_t);
  const TwoOperand forms[] = {fn<TwoOperand>("probe_gelu_stream"), fn<TwoOperand>("probe_gelu_from")};
  ASSERT_TRUE(gelu && forms[0] && forms[1]);
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-12.0f, 12.0f);
  constexpr int64_t kChunk = 256;
  for (const TwoOperand form : forms) {
    for (int64_t sx : {1, 3}) {
      for (int64_t offset : {0, 1, 5, 16}) {
        for (int64_t n = 1; n <= kChunk; n += n < 40 ? 1 : 37) {
          std::vector<float> x(static_cast<size_t>(n * sx));
          for (float& v : x) v = dist(rng);
          x[0] = NAN;
          if (n > 2) x[static_cast<size_t>(2 * sx)] = -INFINITY;
          std::vector<float> want(static_cast<size_t>(n));
          for (int64_t i = 0; i < n; ++i) want[static_cast<size_t>(i)] = x[static_cast<size_t>(i * sx)];
          gelu(want.data(), n);
          alignas(64) float y[kChunk + 32];
          for (float& v : y) v = 7.0f;
          const std::vector<float> before = x;
          form(y + offset, x.data(), sx, n);
          for (size_t i = 0; i < x.size(); ++i) ASSERT_TRUE(same_bits(x[i], before[i])) << "source element " << i;
          for (int64_t i = 0; i < kChunk + 32; ++i) {
            const bool inside = i >= offset && i < offset + n;
            if (inside) ASSERT_TRUE(same_bits(y[i], want[static_cast<size_t>(i - offset)])) << sx << " " << offset << " " << n << " " << i;
            else ASSERT_EQ(y[i], 7.0f) << "stride " << sx << ", offset " << offset << ", n " << n << ", element " << i;
          }
          if (sx != 1) continue;
          // In place: y is x (line-aligned where offset is 0).
          alignas(64) float z[kChunk + 32];
          std::copy(before.begin(), before.end(), z + offset);
          form(z + offset, z + offset, 1, n);
          for (int64_t i = 0; i < n; ++i)
            ASSERT_TRUE(same_bits(z[offset + i], want[static_cast<size_t>(i)])) << "in place " << offset << " " << n << " " << i;
        }
      }
    }
  }
}

// The draining exp-sum: the previous contents of v go to dst exactly
// (nothing around it written), v gets tf_exp of x, and the sum is
// tf_exp_sum_n's bit for bit, for every alignment of dst and every length
// of a chunk.
TEST_F(PreludeRoutines, DrainingExpSumIsTheExpSumAfterAStream) {
  const auto drain = fn<float (*)(float*, const float*, int64_t, float*)>("probe_exp_sum_drain");
  const auto exp_sum = fn<ExpSumN>("probe_exp_sum");
  ASSERT_TRUE(drain && exp_sum);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-30.0f, 5.0f);
  constexpr int64_t kChunk = 256;
  for (int64_t offset : {0, 3, 16}) {
    for (int64_t n = 0; n <= kChunk; n += n < 70 ? 1 : 31) {
      std::vector<float> x(static_cast<size_t>(n)), old(static_cast<size_t>(n));
      for (float& v : x) v = dist(rng);
      for (float& v : old) v = dist(rng);
      std::vector<float> want = x;
      const float want_sum = exp_sum(want.data(), n);
      std::vector<float> v = old;
      alignas(64) float dst[kChunk + 32];
      for (float& d : dst) d = 7.0f;
      const float sum = drain(v.data(), x.data(), n, dst + offset);
      EXPECT_TRUE(same_bits(sum, want_sum)) << "offset " << offset << ", n " << n << ": " << sum << " vs " << want_sum;
      for (int64_t i = 0; i < n; ++i)
        ASSERT_TRUE(same_bits(v[static_cast<size_t>(i)], want[static_cast<size_t>(i)])) << offset << " " << n << " " << i;
      for (int64_t i = 0; i < kChunk + 32; ++i) {
        const bool inside = i >= offset && i < offset + n;
        ASSERT_EQ(dst[i], inside ? old[static_cast<size_t>(i - offset)] : 7.0f) << offset << " " << n << " " << i;
      }
    }
  }
}

// The team size a stage's fork test reads is the thread count the caller
// set for the call (the compiler sets it around every call), so one thread
// means the serial loop.
TEST_F(PreludeRoutines, ThreadsAreTheTeamTheCallerSet) {
  ASSERT_NE(lib_->omp_set_num_threads, nullptr);
  const int before = lib_->omp_get_max_threads();
  for (int n : {1, 3, 2}) {
    lib_->omp_set_num_threads(n);
    EXPECT_EQ(fn<Bytes>("probe_threads")(), n);
  }
  lib_->omp_set_num_threads(before);
}

}  // namespace routines

}  // namespace
