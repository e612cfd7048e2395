// Fuzzes the evaluator on generated programs: the input bytes choose a
// straight-line kernel over two parameters (x: (M, 4) f32, w: (4,) f32) from
// op templates (unary, binary with broadcasting, reductions, softmax,
// rms_norm, matmul, transpose, slice, reshape, casts incl. to i32 so that
// integer division happens), then M and the input values.
// Invariants: no crash or sanitizer report; no status is TF_ERR_INTERNAL; a
// program that parses round-trips through the printer; when a run succeeds,
// tf_kernel_call succeeds too and gives the same bytes.
#include <fuzzer/FuzzedDataProvider.h>
#include <tilefoundry/tilefoundry.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

std::string g_src;  // the program under test, printed with any failure

void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz_evaluator: %s: %s\nprogram:\n%s\n", what, tf_last_error(),
               g_src.c_str());
  std::abort();
}

const char* kUnary[] = {"exp", "neg", "abs", "sqrt", "rsqrt", "log", "relu", "square",
                        "silu", "gelu", "sin", "floor"};
const char* kBinary[] = {"+", "-", "*", "/"};
const char* kCasts[] = {"f16", "bf16", "i32", "f32", "f64", "i8"};

std::string pick(FuzzedDataProvider& in, const std::vector<std::string>& vars) {
  return vars[in.ConsumeIntegralInRange<size_t>(0, vars.size() - 1)];
}

// One statement "vN = <expr>" over the existing variables.
std::string statement(FuzzedDataProvider& in, const std::vector<std::string>& v) {
  std::string a = pick(in, v), b = pick(in, v);
  switch (in.ConsumeIntegralInRange(0, 12)) {
    case 0: return std::string(kUnary[in.ConsumeIntegralInRange(0, 11)]) + "(" + a + ")";
    case 1: return a + " " + kBinary[in.ConsumeIntegralInRange(0, 3)] + " " + b;
    case 2: return a + " * " + std::to_string(in.ConsumeIntegralInRange(-3, 3)) + ".5";
    case 3: return std::string(in.ConsumeBool() ? "sum" : "amax") + "(" + a + ", axes=-1, keepdim=" +
                   (in.ConsumeBool() ? "True" : "False") + ")";
    case 4: return "mean(" + a + ", axes=0)";
    case 5: return "softmax(" + a + ", axis=-1)";
    case 6: return "rms_norm(" + a + ", w, eps=1e-6)";
    case 7: return "matmul(" + a + ", " + b + ")";
    case 8: return "transpose(" + a + ", (1, 0))";
    case 9: return a + "[:, 1:3]";
    case 10: return "reshape(" + a + ", (M * 4,))";
    case 11: return "cast(" + a + ", " + kCasts[in.ConsumeIntegralInRange(0, 5)] + ")";
    default: return "maximum(" + a + ", " + b + ")";
  }
}

// The program's source with the return annotation left as "@RET@".
std::string program(FuzzedDataProvider& in) {
  std::string src =
      "from tilefoundry.dsl import *\n"
      "M = DimVar(\"M\", 0, 8)\n"
      "@func\n"
      "def f(x: Tensor[(M, 4), f32], w: Tensor[(4,), f32]) -> @RET@:\n";
  std::vector<std::string> vars = {"x", "w"};
  int n = in.ConsumeIntegralInRange(1, 6);
  for (int i = 0; i < n; ++i) {
    std::string name = "v" + std::to_string(i);
    src += "    " + name + " = " + statement(in, vars) + "\n";
    vars.push_back(name);
  }
  src += "    return " + vars.back() + "\n";
  return src;
}

std::string with_return_type(std::string src, const std::string& type) {
  return src.replace(src.find("@RET@"), 5, type);
}

std::string print(tf_module m) {
  char* text = nullptr;
  require(tf_module_print(m, &text) == TF_OK, "print");
  std::string s(text);
  tf_string_free(text);
  return s;
}

void run(FuzzedDataProvider& in, tf_kernel k) {
  int64_t rows = in.ConsumeIntegralInRange<int64_t>(0, 7);
  int64_t xs[2] = {rows, 4}, ws[1] = {4};
  std::vector<float> x(rows * 4 + 1), w(4);
  for (float& f : x) f = in.ConsumeFloatingPoint<float>();
  for (float& f : w) f = in.ConsumeFloatingPoint<float>();
  DLTensor t[2] = {};
  for (DLTensor& d : t) {
    d.device.device_type = kDLCPU;
    d.dtype = DLDataType{kDLFloat, 32, 1};
  }
  t[0].data = x.data(), t[0].ndim = 2, t[0].shape = xs;
  t[1].data = w.data(), t[1].ndim = 1, t[1].shape = ws;

  size_t n_out = 0;
  require(tf_kernel_num_outputs(k, &n_out) == TF_OK, "num_outputs");
  DLManagedTensor* res[8] = {};
  if (n_out > 8) return;
  tf_status s = tf_kernel_call(k, t, 2, res, n_out);
  require(s != TF_ERR_INTERNAL, "tf_kernel_call reported an internal error");
  if (s != TF_OK) return;
  // tf_kernel_run into buffers shaped by tf_kernel_output_desc: same bytes.
  for (size_t i = 0; i < n_out; ++i) {
    DLDataType dt;
    int32_t ndim = 0;
    int64_t shape[TF_MAX_NDIM];
    require(tf_kernel_output_desc(k, t, 2, i, &dt, &ndim, shape) == TF_OK, "output_desc");
    const DLTensor& r = res[i]->dl_tensor;
    require(ndim == r.ndim && (ndim == 0 || std::memcmp(shape, r.shape, ndim * sizeof(int64_t)) == 0),
            "output_desc disagrees with tf_kernel_call's shape");
    size_t bytes = (dt.bits + 7) / 8;
    for (int a = 0; a < ndim; ++a) bytes *= shape[a];
    std::vector<uint8_t> y(bytes + 1);
    DLTensor out = r;
    out.data = y.data();
    out.strides = nullptr;
    out.byte_offset = 0;
    if (n_out == 1) {
      require(tf_kernel_run(k, t, 2, &out, 1) == TF_OK, "run failed where call succeeded");
      require(bytes == 0 || std::memcmp(y.data(), r.data, bytes) == 0, "run and call differ");
    }
  }
  for (size_t i = 0; i < n_out; ++i) res[i]->deleter(res[i]);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  std::string body = program(in);
  // Rationale: rather than re-implement type inference here, parse once with
  // a placeholder return type and take the inferred one from the diagnostic
  // ("'f' returns T, but its signature declares ...").
  std::string src = with_return_type(body, "Tensor[(), f32]");
  tf_module m = nullptr;
  g_src = src;
  tf_status s = tf_module_parse(src.data(), src.size(), "gen.tf", &m);
  require(s != TF_ERR_INTERNAL, "parse reported an internal error");
  if (s == TF_ERR_TYPE) {
    std::string msg = tf_last_error();
    size_t a = msg.find("' returns "), b = msg.find(", but its signature declares");
    if (a == std::string::npos || b == std::string::npos || b < a) return 0;
    g_src = src = with_return_type(body, msg.substr(a + 10, b - a - 10));
    s = tf_module_parse(src.data(), src.size(), "gen.tf", &m);
    require(s != TF_ERR_INTERNAL, "parse reported an internal error");
  }
  if (s != TF_OK) return 0;
  std::string printed = print(m);
  tf_module again = nullptr;
  require(tf_module_parse(printed.data(), printed.size(), "printed.tf", &again) == TF_OK,
          "the printed module must parse");
  require(print(again) == printed, "printing is not a fixed point");
  tf_module_release(again);
  tf_kernel k = nullptr;
  s = tf_kernel_compile(m, "f", nullptr, &k);
  require(s != TF_ERR_INTERNAL, "compile reported an internal error");
  if (s == TF_OK) run(in, k);
  tf_kernel_release(k);
  tf_module_release(m);
  return 0;
}
