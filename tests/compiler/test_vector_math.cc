// The transcendental functions kernels take from glibc's vector math library
// (libmvec, declared in the prelude): sin, cos, tanh, log, log2, exp2, pow
// and gelu's erf, in f32 and f64. Compiled against the evaluator (scalar
// libm) within 8 units in the last place, over special values (NaN, the
// infinities, signed zeros, subnormals, the largest finite values, sin's
// and cos's huge arguments, log's negative ones, pow's edge cases) and
// values across the whole exponent range, at lengths that run the 16-lane
// body, the shorter forms GCC uses for a loop's tail and the scalar calls.
// On x86-64 glibc the kernel library calls the vector forms.
#include <cmath>
#include <limits>
#include <random>

#include "compiler_helpers.h"
#include "core/compiler/codegen.h"
#include "core/compiler/toolchain.h"
#include "core/frontend/parser.h"

namespace tf::comptest {
namespace {

const char* kSource = R"(from tilefoundry.dsl import *

N = DimVar("N", 1, 1 << 20)

@func
def math32(x: Tensor[(N,), f32], y: Tensor[(N,), f32]) -> tuple[Tensor[(N,), f32], Tensor[(N,), f32], Tensor[(N,), f32], Tensor[(N,), f32], Tensor[(N,), f32], Tensor[(N,), f32], Tensor[(N,), f32]]:
    return sin(x), cos(x), tanh(x), log(x), log2(x), exp2(x), pow(x, y)

@func
def math64(x: Tensor[(N,), f64], y: Tensor[(N,), f64]) -> tuple[Tensor[(N,), f64], Tensor[(N,), f64], Tensor[(N,), f64], Tensor[(N,), f64], Tensor[(N,), f64], Tensor[(N,), f64], Tensor[(N,), f64]]:
    return sin(x), cos(x), tanh(x), log(x), log2(x), exp2(x), pow(x, y)

@func
def gelu_erf(x: Tensor[(N,), f32], y: Tensor[(N,), f64]) -> tuple[Tensor[(N,), f32], Tensor[(N,), f64]]:
    return gelu(x, approximate="none"), gelu(y, approximate="none")
)";

const char* const kNames[] = {"sin", "cos", "tanh", "log", "log2", "exp2", "pow"};

class VectorMath : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { module_ = frontend::parse_module(kSource, "vector_math.tf"); }
  static const ir::Function& fn(const std::string& name) { return *module_->lookup(name); }
  static ir::ModulePtr module_;
};
ir::ModulePtr VectorMath::module_;

// Special values, then `spread` values of random sign and mantissa whose
// exponents cover T's range (x), and exponents for pow (y: small integers,
// halves, zeros, infinities, NaN and random values in [-4, 4]).
template <typename T>
std::pair<std::vector<T>, std::vector<T>> inputs(size_t spread, std::mt19937& rng) {
  using L = std::numeric_limits<T>;
  std::vector<T> x = {L::quiet_NaN(), -L::quiet_NaN(), L::infinity(), -L::infinity(), T(0), -T(0),
                      L::denorm_min(), -L::denorm_min(), L::min(), L::min() / T(3), L::max(), L::lowest(),
                      T(1), T(-1), T(0.5), T(2), T(1e-30), T(-1e-30), T(1e30), T(-1e30), T(1e6), T(12345.678),
                      T(3.14159265), T(-3.14159265), T(88.5), T(-103), T(128), T(-150), T(9.5), T(-9.5)};
  const std::vector<T> powers = {T(2), T(0.5), T(0), -T(0), T(-1), T(3), L::infinity(), -L::infinity(),
                                 L::quiet_NaN(), T(-2), T(1), T(0.25), T(-0.5), T(4), T(1e-3)};
  std::vector<T> y;
  for (size_t i = 0; i < x.size(); ++i) y.push_back(powers[i % powers.size()]);
  std::uniform_real_distribution<double> unit(0.5, 1.0), pw(-4.0, 4.0);
  const int emin = L::min_exponent - L::digits, emax = L::max_exponent;
  std::uniform_int_distribution<int> ex(emin, emax);
  for (size_t i = 0; i < spread; ++i) {
    const T v = static_cast<T>(std::ldexp(unit(rng), ex(rng)));
    x.push_back(rng() % 2 ? -v : v);
    y.push_back(static_cast<T>(pw(rng)));
  }
  return {x, y};
}

template <typename T>
NDArray array(const std::vector<T>& v, size_t n) {
  NDArray a = NDArray::empty(std::is_same_v<T, float> ? DType::kF32 : DType::kF64, {static_cast<int64_t>(n)});
  std::memcpy(a.data(), v.data(), n * sizeof(T));
  return a;
}

// Each element of got within `ulps` units in the last place of want's
// (T's) value; a NaN where want is NaN, the same infinity where it is one.
template <typename T>
std::string within_ulps(const NDArray& got, const NDArray& want, double ulps) {
  const T* g = static_cast<const T*>(got.data());
  const T* w = static_cast<const T*>(want.data());
  for (int64_t i = 0; i < want.numel(); ++i) {
    bool ok;
    if (std::isnan(w[i])) {
      ok = std::isnan(g[i]);
    } else if (std::isinf(w[i])) {
      ok = g[i] == w[i];
    } else {
      const T a = std::fabs(w[i]);
      const T ulp = a == std::numeric_limits<T>::max() ? a - std::nextafter(a, T(0))
                                                        : std::nextafter(a, std::numeric_limits<T>::infinity()) - a;
      ok = std::fabs(static_cast<double>(g[i]) - static_cast<double>(w[i])) <= ulps * static_cast<double>(ulp);
    }
    if (!ok) {
      std::ostringstream s;
      s.precision(std::numeric_limits<T>::max_digits10);
      s << "element " << i << ": native " << g[i] << " vs evaluator " << w[i];
      return s.str();
    }
  }
  return "";
}

template <typename T>
void check_math(const ir::Module& m, const ir::Function& f, std::mt19937& rng) {
  auto k = compiler::compile(f);
  const auto [x, y] = inputs<T>(3000, rng);
  for (size_t n : {x.size(), size_t{1000}, size_t{23}, size_t{7}, size_t{1}}) {
    const std::vector<NDArray> in = {array(x, n), array(y, n)};
    const std::vector<NDArray> got = run_native(*k, f, in), want = eval::evaluate(m, f, in);
    ASSERT_EQ(got.size(), std::size(kNames));
    for (size_t o = 0; o < got.size(); ++o)
      EXPECT_EQ(within_ulps<T>(got[o], want[o], 8), "") << kNames[o] << " " << f.name() << " n=" << n;
  }
}

TEST_F(VectorMath, F32WithinEightUlpsOfTheEvaluator) {
  std::mt19937 rng(5);
  check_math<float>(*module_, fn("math32"), rng);
}
TEST_F(VectorMath, F64WithinEightUlpsOfTheEvaluator) {
  std::mt19937 rng(6);
  check_math<double>(*module_, fn("math64"), rng);
}

// gelu's erf form cancels where erf nears -1 (x below about -3), so its
// relative error there grows with erf's absolute one: the usual
// differential tolerance, over the same inputs.
TEST_F(VectorMath, GeluErfAgreesWithTheEvaluator) {
  std::mt19937 rng(7);
  const auto x32 = inputs<float>(3000, rng).first;
  const auto x64 = inputs<double>(x32.size() - 30, rng).first;
  const ir::Function& f = fn("gelu_erf");
  auto k = compiler::compile(f);
  for (size_t n : {x32.size(), size_t{23}})
    expect_agree(*k, *module_, f, {array(x32, n), array(x64, n)}, "gelu erf n=" + std::to_string(n));
}

#if defined(__x86_64__) && defined(__GLIBC__)
// The kernel library calls libmvec's vector forms (their names follow the
// x86 vector function ABI: _ZGV<isa><N><args>_<name>).
TEST_F(VectorMath, KernelsCallGlibcsVectorForms) {
  auto k = compiler::compile(fn("math32"));
  std::string bytes;
  ASSERT_TRUE(compiler::read_file(compiler::cache_dir() + "/" + k->key() + ".so", &bytes));
  std::vector<std::string> vector_names;  // the dynamic symbols' strings that start so
  for (size_t at = bytes.find("_ZGV"); at != std::string::npos; at = bytes.find("_ZGV", at + 1))
    vector_names.push_back(bytes.substr(at, bytes.find('\0', at) - at));
  for (const std::string tail : {"v_sinf", "v_cosf", "v_tanhf", "v_logf", "v_log2f", "v_exp2f", "vv_powf"}) {
    bool found = false;
    for (const std::string& s : vector_names)
      found = found || (s.size() > tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0);
    EXPECT_TRUE(found) << tail;
  }
}
#endif

}  // namespace
}  // namespace tf::comptest
