// Fuzzes tf_kernel_run / tf_kernel_call / tf_kernel_output_desc with
// arbitrary DLTensor descriptors: tensor counts, ndim, shape (NULL, negative,
// huge), strides (NULL, zero, negative, huge), byte_offset, dtype code / bits
// / lanes, device, NULL data and NULL arrays. Buffer contents are fuzzed too
// (so integer division meets zero and INT_MIN / -1).
//
// Honesty rule: this harness never lies about memory. A tensor gets a real
// buffer only when its descriptor's reach fits in that buffer; otherwise its
// data is NULL. So any sanitizer report here is a library bug.
// Invariants: no crash, no sanitizer report, never TF_ERR_INTERNAL.
#include <fuzzer/FuzzedDataProvider.h>
#include <tilefoundry/tilefoundry.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

const char* kSrc =
    "from tilefoundry.dsl import *\n"
    "M = DimVar(\"M\", 0, 16)\n"
    "K = DimVar(\"K\", 1, 8)\n"
    "@func\n"
    "def add(a: Tensor[(M, 4), f32], b: Tensor[(M, 4), f32]) -> Tensor[(M, 4), f32]:\n"
    "    return a + b\n"
    "@func\n"
    "def mm(a: Tensor[(M, K), f32], b: Tensor[(K, 3), f32]) -> Tensor[(M, 3), f32]:\n"
    "    return a @ b\n"
    "@func\n"
    "def norm(x: Tensor[(M, 4), f16], w: Tensor[(4,), f16]) -> Tensor[(M, 4), f16]:\n"
    "    return rms_norm(x, w, eps=1e-6)\n"
    "@func\n"
    "def idiv(a: Tensor[(4,), i32], b: Tensor[(4,), i32]) -> tuple[Tensor[(4,), i32], Tensor[(), i32]]:\n"
    "    q = a / b\n"
    "    return q, sum(q, axes=0, keepdim=False)\n"
    "@func\n"
    "def sm(x: Tensor[(M, K), bf16]) -> Tensor[(K, M), f32]:\n"
    "    return transpose(cast(softmax(x, axis=-1), f32), (1, 0))\n";

const char* kNames[] = {"add", "mm", "norm", "idiv", "sm"};
constexpr int kNumKernels = sizeof(kNames) / sizeof(kNames[0]);

void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz_kernel_run: %s: %s\n", what, tf_last_error());
  std::abort();
}

struct Kernels {
  tf_kernel k[kNumKernels] = {};
  Kernels() {
    tf_module m = nullptr;
    require(tf_module_parse(kSrc, std::strlen(kSrc), "fuzz.tf", &m) == TF_OK, "module");
    for (int i = 0; i < kNumKernels; ++i)
      require(tf_kernel_compile(m, kNames[i], nullptr, &k[i]) == TF_OK, "compile");
    tf_module_release(m);
  }
};

// One fuzzed tensor and the memory its descriptor may point into.
struct Tensor {
  DLTensor t{};
  std::vector<int64_t> shape, strides;
  std::vector<uint8_t> buf;
};

int64_t pick_extent(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange(0, 7)) {
    case 0: return in.ConsumeIntegral<int64_t>();
    case 1: return in.ConsumeIntegralInRange<int64_t>(-3, 0);
    default: return in.ConsumeIntegralInRange<int64_t>(0, 9);
  }
}

int64_t pick_stride(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange(0, 7)) {
    case 0: return in.ConsumeIntegral<int64_t>();
    default: return in.ConsumeIntegralInRange<int64_t>(-12, 12);
  }
}

DLDataType pick_dtype(FuzzedDataProvider& in) {
  static const DLDataType kCommon[] = {{kDLFloat, 32, 1}, {kDLFloat, 16, 1}, {kDLBfloat, 16, 1},
                                       {kDLInt, 32, 1},   {kDLFloat, 64, 1}, {kDLUInt, 8, 1}};
  if (in.ConsumeIntegralInRange(0, 7) != 0)
    return kCommon[in.ConsumeIntegralInRange<size_t>(0, 5)];
  DLDataType d;
  d.code = in.ConsumeIntegral<uint8_t>();
  d.bits = in.ConsumeIntegral<uint8_t>();
  d.lanes = in.ConsumeIntegral<uint16_t>();
  return d;
}

// [lo, hi] element offsets the descriptor reaches, or false when the
// arithmetic overflows or the tensor is too large to back with memory.
bool reach(const Tensor& x, int64_t* lo, int64_t* hi) {
  *lo = *hi = 0;
  for (size_t a = 0; a < x.shape.size(); ++a) {
    int64_t r = 0;
    if (__builtin_mul_overflow(x.shape[a] - 1, x.strides[a], &r)) return false;
    if (__builtin_add_overflow(r < 0 ? *lo : *hi, r, r < 0 ? lo : hi)) return false;
  }
  int64_t span = 0;
  return !__builtin_sub_overflow(*hi, *lo, &span) && span < (1 << 16) && *lo > -(1 << 16);
}

void fill(FuzzedDataProvider& in, Tensor& x, bool want_data) {
  DLTensor& t = x.t;
  int ndim = in.ConsumeIntegralInRange(-1, 9);
  t.ndim = ndim;
  t.dtype = pick_dtype(in);
  t.device.device_type = in.ConsumeIntegralInRange(0, 15) == 0 ? kDLCUDA : kDLCPU;
  if (ndim > 0) {
    for (int a = 0; a < ndim; ++a) x.shape.push_back(pick_extent(in));
    if (!in.ConsumeBool()) t.shape = x.shape.data();  // else NULL
    if (in.ConsumeBool()) {
      for (int a = 0; a < ndim; ++a) x.strides.push_back(pick_stride(in));
      t.strides = x.strides.data();
    }
  }
  uint64_t extra = in.ConsumeIntegralInRange<uint64_t>(0, 9);
  if (in.ConsumeIntegralInRange(0, 15) == 0) extra = in.ConsumeIntegral<uint64_t>();
  t.byte_offset = extra;
  // Back the tensor with memory only when the descriptor is sane enough to
  // describe a real buffer (otherwise data stays NULL).
  bool sane = want_data && ndim >= 0 && ndim <= 8 && t.shape != nullptr && extra < 64;
  int64_t numel = 1;
  for (size_t a = 0; sane && a < x.shape.size(); ++a)
    sane = x.shape[a] >= 0 && !__builtin_mul_overflow(numel, x.shape[a], &numel) && numel < 4096;
  if (!sane) return;
  if (ndim > 0 && t.strides == nullptr) {  // compact row-major; t.strides stays NULL
    x.strides.assign(ndim, 1);
    for (int a = ndim - 1; a > 0; --a)  // an extent 0 elsewhere lets the others be huge
      if (__builtin_mul_overflow(x.strides[a], x.shape[a], &x.strides[a - 1])) return;
  }
  int64_t lo = 0, hi = 0;
  if (ndim > 0 && !reach(x, &lo, &hi)) return;
  size_t elem = (t.dtype.bits * size_t(t.dtype.lanes) + 7) / 8;
  if (elem == 0 || elem > 16) return;
  t.byte_offset = extra + uint64_t(-lo) * elem;
  x.buf.resize(t.byte_offset + (hi + 1) * elem + 16);
  std::vector<uint8_t> bytes = in.ConsumeBytes<uint8_t>(x.buf.size());
  if (!bytes.empty()) std::memcpy(x.buf.data(), bytes.data(), bytes.size());
  if (numel != 0 || in.ConsumeBool()) t.data = x.buf.data();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Kernels kernels;
  FuzzedDataProvider in(data, size);
  tf_kernel k = kernels.k[in.ConsumeIntegralInRange(0, kNumKernels - 1)];
  size_t n_in = in.ConsumeIntegralInRange<size_t>(0, 3), n_out = in.ConsumeIntegralInRange<size_t>(0, 3);
  std::vector<Tensor> ins(n_in), outs(n_out);
  for (auto& x : ins) fill(in, x, true);
  for (auto& x : outs) fill(in, x, true);
  std::vector<DLTensor> in_t, out_t;
  for (auto& x : ins) in_t.push_back(x.t);
  for (auto& x : outs) out_t.push_back(x.t);
  const DLTensor* in_p = in.ConsumeIntegralInRange(0, 15) == 0 ? nullptr : in_t.data();
  DLTensor* out_p = in.ConsumeIntegralInRange(0, 15) == 0 ? nullptr : out_t.data();

  tf_status s = tf_kernel_run(k, in_p, n_in, out_p, n_out);
  require(s != TF_ERR_INTERNAL, "tf_kernel_run reported an internal error");

  DLDataType dt;
  int32_t ndim = 0;
  int64_t shape[TF_MAX_NDIM];
  s = tf_kernel_output_desc(k, in_p, n_in, in.ConsumeIntegralInRange<size_t>(0, 2), &dt, &ndim,
                            shape);
  require(s != TF_ERR_INTERNAL, "tf_kernel_output_desc reported an internal error");

  std::vector<DLManagedTensor*> res(n_out, nullptr);
  s = tf_kernel_call(k, in_p, n_in, res.data(), n_out);
  require(s != TF_ERR_INTERNAL, "tf_kernel_call reported an internal error");
  for (DLManagedTensor* r : res) {
    require(s == TF_OK || r == nullptr, "a failed tf_kernel_call wrote an output");
    if (r != nullptr) r->deleter(r);
  }
  return 0;
}
