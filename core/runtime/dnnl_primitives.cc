#include "core/runtime/dnnl_primitives.h"

#include <oneapi/dnnl/dnnl.h>

#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "core/runtime/buffer_pool.h"
#include "core/runtime/threads.h"

// oneDNN's OpenMP runtime (libgomp), as in gemm.cc.
extern "C" int omp_get_max_threads();
extern "C" void omp_set_num_threads(int);

namespace tf::runtime {

namespace {

std::atomic<uint64_t> g_runs{0};

// The CPU engine, created once and never destroyed: cached primitives hold it.
dnnl_engine_t engine() {
  static const dnnl_engine_t e = [] {
    dnnl_engine_t made = nullptr;
    return dnnl_engine_create(&made, dnnl_cpu, 0) == dnnl_success ? made : nullptr;
  }();
  return e;
}

// One stream per thread: a stream is not meant to be shared across threads.
dnnl_stream_t stream() {
  struct Owned {
    dnnl_stream_t s = nullptr;
    ~Owned() {
      if (s != nullptr) dnnl_stream_destroy(s);
    }
  };
  thread_local Owned owned;
  if (owned.s == nullptr && engine() != nullptr) dnnl_stream_create(&owned.s, engine(), dnnl_stream_default_flags);
  return owned.s;
}

// A primitive and the scratch memory one execution of it needs.
struct Prim {
  dnnl_primitive_t p = nullptr;
  size_t scratch = 0;
  Prim() = default;
  Prim(const Prim&) = delete;
  Prim& operator=(const Prim&) = delete;
  ~Prim() {
    if (p != nullptr) dnnl_primitive_destroy(p);
  }
};

// User-managed scratch memory: each call brings its own, so one primitive
// can run on several threads at once.
struct UserScratchAttr {
  dnnl_primitive_attr_t a = nullptr;
  UserScratchAttr() {
    if (dnnl_primitive_attr_create(&a) != dnnl_success) {
      a = nullptr;
    } else if (dnnl_primitive_attr_set_scratchpad_mode(a, dnnl_scratchpad_mode_user) != dnnl_success) {
      dnnl_primitive_attr_destroy(a);  // a library-managed scratchpad is not safe to share: no attr, no primitive
      a = nullptr;
    }
  }
  UserScratchAttr(const UserScratchAttr&) = delete;
  UserScratchAttr& operator=(const UserScratchAttr&) = delete;
  ~UserScratchAttr() {
    if (a != nullptr) dnnl_primitive_attr_destroy(a);
  }
};

// The primitive of pd (destroyed here), or null. With `optimized`, null also
// when oneDNN fell back to its reference implementation ("ref:..."), a
// plain loop nest far slower than the caller's own path.
std::unique_ptr<Prim> make_prim(dnnl_primitive_desc_t pd, bool optimized) {
  const char* impl = nullptr;
  const bool reference = dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) != dnnl_success ||
                         impl == nullptr || std::strncmp(impl, "ref", 3) == 0;
  std::unique_ptr<Prim> prim;
  if (!(optimized && reference)) {
    prim = std::make_unique<Prim>();
    const dnnl_memory_desc_t* s = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    prim->scratch = s != nullptr ? dnnl_memory_desc_get_size(s) : 0;
    if (dnnl_primitive_create(&prim->p, pd) != dnnl_success) prim.reset();
  }
  dnnl_primitive_desc_destroy(pd);
  return prim;
}

// Plans by geometry, created on first use and kept up to kPlanCacheEntries
// (past that the least recently used goes). A geometry oneDNN refused is
// remembered too (a null plan), so it is not asked again on every call.
constexpr size_t kPlanCacheEntries = 256;

template <typename Plan>
class PlanCache {
 public:
  template <typename Make>
  std::shared_ptr<const Plan> get(const std::vector<int64_t>& key, Make make) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = plans_.find(key);
      if (it != plans_.end()) {
        it->second.used = ++clock_;
        return it->second.plan;
      }
    }
    std::shared_ptr<const Plan> plan = make();  // outside the lock: creation takes milliseconds
    std::lock_guard<std::mutex> lock(mu_);
    if (plans_.size() >= kPlanCacheEntries) evict_one();
    plans_[key] = Entry{plan, ++clock_};
    return plan;
  }

 private:
  struct Entry {
    std::shared_ptr<const Plan> plan;
    uint64_t used = 0;
  };
  void evict_one() {
    auto oldest = plans_.begin();
    for (auto it = plans_.begin(); it != plans_.end(); ++it)
      if (it->second.used < oldest->second.used) oldest = it;
    plans_.erase(oldest);
  }
  std::mutex mu_;
  std::map<std::vector<int64_t>, Entry> plans_;
  uint64_t clock_ = 0;
};

// A memory object over caller memory for one execution.
class Memory {
 public:
  Memory(const dnnl_memory_desc_t& md, const void* data) {
    if (dnnl_memory_create(&m_, &md, engine(), const_cast<void*>(data)) != dnnl_success) m_ = nullptr;
  }
  Memory(const Memory&) = delete;
  Memory& operator=(const Memory&) = delete;
  ~Memory() {
    if (m_ != nullptr) dnnl_memory_destroy(m_);
  }
  dnnl_memory_t get() const { return m_; }

 private:
  dnnl_memory_t m_ = nullptr;
};

// Pooled temporaries of one call (buffer_pool.h: warm pages, no fresh mmap).
class Temp {
 public:
  explicit Temp(size_t bytes) : b_(buffer_allocate(bytes, &data_)) {}
  Temp(const Temp&) = delete;
  Temp& operator=(const Temp&) = delete;
  ~Temp() { buffer_release(b_); }
  char* data() const { return static_cast<char*>(data_); }

 private:
  void* data_ = nullptr;
  Buffer* b_;
};

// Runs prim on (arg, memory) pairs plus its scratch at `scratch`; false on
// any oneDNN error.
bool execute(const Prim& prim, std::vector<std::pair<int, const Memory*>> args, const dnnl_memory_desc_t* scratch_md,
             void* scratch) {
  std::unique_ptr<Memory> s;
  if (prim.scratch > 0) {
    s = std::make_unique<Memory>(*scratch_md, scratch);
    args.emplace_back(DNNL_ARG_SCRATCHPAD, s.get());
  }
  std::vector<dnnl_exec_arg_t> list;
  for (const auto& [arg, m] : args) {
    if (m->get() == nullptr) return false;
    list.push_back(dnnl_exec_arg_t{arg, m->get()});
  }
  dnnl_stream_t st = stream();
  if (st == nullptr) return false;
  const OmpTeamScope team(omp_get_max_threads, omp_set_num_threads);
  return dnnl_primitive_execute(prim.p, st, static_cast<int>(list.size()), list.data()) == dnnl_success &&
         dnnl_stream_wait(st) == dnnl_success;
}

dnnl_memory_desc_t strided_md(std::vector<int64_t> dims, std::vector<int64_t> strides, dnnl_data_type_t t) {
  dnnl_memory_desc_t md;
  dnnl_dims_t d, s;
  for (size_t i = 0; i < dims.size(); ++i) {
    d[i] = dims[i];
    s[i] = strides[i];
  }
  if (dnnl_memory_desc_init_by_strides(&md, static_cast<int>(dims.size()), d, t, s) != dnnl_success)
    std::memset(&md, 0, sizeof(md));  // ndims 0: every descriptor built from it is refused
  return md;
}

dnnl_memory_desc_t any_md(std::vector<int64_t> dims, dnnl_data_type_t t) {
  dnnl_memory_desc_t md;
  dnnl_dims_t d;
  for (size_t i = 0; i < dims.size(); ++i) d[i] = dims[i];
  if (dnnl_memory_desc_init_by_tag(&md, static_cast<int>(dims.size()), d, t, dnnl_format_tag_any) != dnnl_success)
    std::memset(&md, 0, sizeof(md));
  return md;
}

const dnnl_memory_desc_t* scratch_md(const Prim& p, dnnl_memory_desc_t& md) {
  md = strided_md({static_cast<int64_t>(p.scratch)}, {1}, dnnl_u8);
  return &md;
}

// ---- MatMul --------------------------------------------------------------

// The row- or column-major strides of an r x c operand at (s0, s1) as
// oneDNN's {row stride, column stride}, or false for any other layout (what
// the prelude's tf_gemm hands a BLAS; the rest is packed).
bool matrix_strides(int64_t r, int64_t c, int64_t s0, int64_t s1, int64_t out[2]) {
  if (s1 == 1 && (r == 1 || s0 >= c)) {
    out[0] = r == 1 ? c : s0;
    out[1] = 1;
    return true;
  }
  if (s0 == 1 && (c == 1 || s1 >= r)) {
    out[0] = 1;
    out[1] = c == 1 ? r : s1;
    return true;
  }
  return false;
}

// The r x c matrix at (s0, s1) copied row-major into dst; returns dst.
const uint16_t* packed(int64_t r, int64_t c, const uint16_t* src, int64_t s0, int64_t s1, uint16_t* dst) {
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j) dst[i * c + j] = src[i * s0 + j * s1];
  return dst;
}

struct MatmulPlan {
  dnnl_memory_desc_t a, b, c;
  std::unique_ptr<Prim> prim;
};

std::shared_ptr<const MatmulPlan> matmul_plan(int64_t m, int64_t n, int64_t k, const int64_t sa[2],
                                              const int64_t sb[2]) {
  auto plan = std::make_shared<MatmulPlan>();
  plan->a = strided_md({m, k}, {sa[0], sa[1]}, dnnl_bf16);
  plan->b = strided_md({k, n}, {sb[0], sb[1]}, dnnl_bf16);
  plan->c = strided_md({m, n}, {n, 1}, dnnl_bf16);
  dnnl_matmul_desc_t desc;
  const UserScratchAttr attr;
  dnnl_primitive_desc_t pd = nullptr;
  if (engine() == nullptr || attr.a == nullptr ||
      dnnl_matmul_desc_init(&desc, &plan->a, &plan->b, nullptr, &plan->c) != dnnl_success ||
      dnnl_primitive_desc_create(&pd, &desc, attr.a, engine(), nullptr) != dnnl_success)
    return nullptr;
  plan->prim = make_prim(pd, true);
  return plan->prim ? plan : nullptr;
}

// Never destroyed (as the engine): nothing then runs oneDNN code at exit,
// after its own state may be gone.
PlanCache<MatmulPlan>& matmul_cache() {
  static auto* cache = new PlanCache<MatmulPlan>;
  return *cache;
}

// ---- Conv2D --------------------------------------------------------------

// The convolution on oneDNN's chosen (channel-blocked) layouts and the
// reorders between them and the caller's; a reorder is null where the
// layouts are the same.
struct ConvPlan {
  dnnl_memory_desc_t src_user, wei_user, bias, dst_user;
  dnnl_memory_desc_t src, wei, dst;
  std::unique_ptr<Prim> conv, src_in, wei_in, dst_out;
  bool has_bias = false;
};

// A reorder from `from` to `to` into *out (left null when they are equal);
// false when oneDNN has none.
bool reorder(const dnnl_memory_desc_t& from, const dnnl_memory_desc_t& to, std::unique_ptr<Prim>* out) {
  if (dnnl_memory_desc_equal(&from, &to)) return true;
  const UserScratchAttr attr;
  dnnl_primitive_desc_t pd = nullptr;
  if (attr.a == nullptr || dnnl_reorder_primitive_desc_create(&pd, &from, engine(), &to, engine(), attr.a) != dnnl_success)
    return false;
  *out = make_prim(pd, false);
  return *out != nullptr;
}

std::shared_ptr<const ConvPlan> conv_plan(const Conv2DGeometry& g, const int64_t xs[4], const int64_t ws[4],
                                          bool has_bias) {
  if (engine() == nullptr) return nullptr;
  auto plan = std::make_shared<ConvPlan>();
  const int64_t og = g.o / g.groups, cg = g.c / g.groups;
  const bool grouped = g.groups > 1;
  plan->src_user = strided_md({g.n, g.c, g.h, g.w}, {xs[0], xs[1], xs[2], xs[3]}, dnnl_f32);
  plan->wei_user = grouped ? strided_md({g.groups, og, cg, g.kh, g.kw}, {og * ws[0], ws[0], ws[1], ws[2], ws[3]}, dnnl_f32)
                           : strided_md({g.o, cg, g.kh, g.kw}, {ws[0], ws[1], ws[2], ws[3]}, dnnl_f32);
  plan->bias = strided_md({g.o}, {1}, dnnl_f32);
  plan->dst_user = strided_md({g.n, g.o, g.ho, g.wo}, {g.o * g.ho * g.wo, g.ho * g.wo, g.wo, 1}, dnnl_f32);
  plan->has_bias = has_bias;
  const dnnl_memory_desc_t src = any_md({g.n, g.c, g.h, g.w}, dnnl_f32);
  const dnnl_memory_desc_t wei =
      grouped ? any_md({g.groups, og, cg, g.kh, g.kw}, dnnl_f32) : any_md({g.o, cg, g.kh, g.kw}, dnnl_f32);
  const dnnl_memory_desc_t dst = any_md({g.n, g.o, g.ho, g.wo}, dnnl_f32);
  // oneDNN's dilation counts the gaps (torch's minus one); its right padding
  // is what makes the output extent torch's (possibly less than the left).
  dnnl_dims_t strides, dilates, pad_l, pad_r;
  const int64_t in[2] = {g.h, g.w}, out[2] = {g.ho, g.wo}, kernel[2] = {g.kh, g.kw};
  for (int i = 0; i < 2; ++i) {
    strides[i] = g.stride[i];
    dilates[i] = g.dilation[i] - 1;
    pad_l[i] = g.padding[i];
    pad_r[i] = (out[i] - 1) * g.stride[i] + (kernel[i] - 1) * g.dilation[i] + 1 - in[i] - g.padding[i];
  }
  dnnl_convolution_desc_t desc;
  const UserScratchAttr attr;
  dnnl_primitive_desc_t pd = nullptr;
  if (attr.a == nullptr ||
      dnnl_dilated_convolution_forward_desc_init(&desc, dnnl_forward_inference, dnnl_convolution_direct, &src, &wei,
                                                 has_bias ? &plan->bias : nullptr, &dst, strides, dilates, pad_l,
                                                 pad_r) != dnnl_success ||
      dnnl_primitive_desc_create(&pd, &desc, attr.a, engine(), nullptr) != dnnl_success)
    return nullptr;
  plan->src = *dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
  plan->wei = *dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
  plan->dst = *dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
  plan->conv = make_prim(pd, true);
  if (!plan->conv || !reorder(plan->src_user, plan->src, &plan->src_in) ||
      !reorder(plan->wei_user, plan->wei, &plan->wei_in) || !reorder(plan->dst, plan->dst_user, &plan->dst_out))
    return nullptr;
  return plan;
}

PlanCache<ConvPlan>& conv_cache() {
  static auto* cache = new PlanCache<ConvPlan>;
  return *cache;
}

// Bytes of md rounded up to a cache line, so that temporaries carved from
// one buffer stay 64-byte aligned.
size_t padded_size(const dnnl_memory_desc_t& md) { return (dnnl_memory_desc_get_size(&md) + 63) / 64 * 64; }
size_t padded_size(size_t bytes) { return (bytes + 63) / 64 * 64; }

bool run_conv(const ConvPlan& p, const float* x, const float* weight, const float* bias, float* y) {
  // One pooled buffer: blocked copies of x, weight and y, then the largest scratch.
  size_t scratch = p.conv->scratch;
  for (const Prim* r : {p.src_in.get(), p.wei_in.get(), p.dst_out.get()})
    if (r != nullptr) scratch = std::max(scratch, r->scratch);
  const size_t xb = p.src_in ? padded_size(p.src) : 0, wb = p.wei_in ? padded_size(p.wei) : 0,
               yb = p.dst_out ? padded_size(p.dst) : 0;
  const Temp temp(xb + wb + yb + padded_size(scratch));
  char* const xt = temp.data();
  char* const wt = xt + xb;
  char* const yt = wt + wb;
  char* const st = yt + yb;
  dnnl_memory_desc_t smd;
  const Memory xu(p.src_user, x), wu(p.wei_user, weight), yu(p.dst_user, y), bm(p.bias, bias);
  const Memory xc(p.src, p.src_in ? xt : static_cast<const void*>(x));
  const Memory wc(p.wei, p.wei_in ? wt : static_cast<const void*>(weight));
  const Memory yc(p.dst, p.dst_out ? yt : static_cast<void*>(y));
  if (p.src_in && !execute(*p.src_in, {{DNNL_ARG_FROM, &xu}, {DNNL_ARG_TO, &xc}}, scratch_md(*p.src_in, smd), st))
    return false;
  if (p.wei_in && !execute(*p.wei_in, {{DNNL_ARG_FROM, &wu}, {DNNL_ARG_TO, &wc}}, scratch_md(*p.wei_in, smd), st))
    return false;
  std::vector<std::pair<int, const Memory*>> args{{DNNL_ARG_SRC, &xc}, {DNNL_ARG_WEIGHTS, &wc}, {DNNL_ARG_DST, &yc}};
  if (p.has_bias) args.emplace_back(DNNL_ARG_BIAS, &bm);
  if (!execute(*p.conv, args, scratch_md(*p.conv, smd), st)) return false;
  return !p.dst_out || execute(*p.dst_out, {{DNNL_ARG_FROM, &yc}, {DNNL_ARG_TO, &yu}}, scratch_md(*p.dst_out, smd), st);
}

}  // namespace

bool matmul_bf16(int64_t m, int64_t n, int64_t k, const uint16_t* a, int64_t as0, int64_t as1, const uint16_t* b,
                 int64_t bs0, int64_t bs1, uint16_t* c) {
  if (m <= 0 || n <= 0 || k <= 0 || m * n * k < kDnnlMatmulMinMacs) return false;
  // An operand that is neither row- nor column-major (a strided view) is
  // packed row-major first, as the prelude's GEMM packs for sgemm.
  int64_t sa[2], sb[2];
  const bool pack_a = !matrix_strides(m, k, as0, as1, sa), pack_b = !matrix_strides(k, n, bs0, bs1, sb);
  if (pack_a) sa[0] = k, sa[1] = 1;
  if (pack_b) sb[0] = n, sb[1] = 1;
  try {
    const std::shared_ptr<const MatmulPlan> plan =
        matmul_cache().get({m, n, k, sa[0], sa[1], sb[0], sb[1]}, [&] { return matmul_plan(m, n, k, sa, sb); });
    if (!plan) return false;
    const size_t a_bytes = pack_a ? padded_size(static_cast<size_t>(m * k) * 2) : 0;
    const size_t b_bytes = pack_b ? padded_size(static_cast<size_t>(k * n) * 2) : 0;
    const Temp temp(a_bytes + b_bytes + padded_size(plan->prim->scratch));
    if (pack_a) a = packed(m, k, a, as0, as1, reinterpret_cast<uint16_t*>(temp.data()));
    if (pack_b) b = packed(k, n, b, bs0, bs1, reinterpret_cast<uint16_t*>(temp.data() + a_bytes));
    dnnl_memory_desc_t smd;
    const Memory am(plan->a, a), bm(plan->b, b), cm(plan->c, c);
    if (!execute(*plan->prim, {{DNNL_ARG_SRC, &am}, {DNNL_ARG_WEIGHTS, &bm}, {DNNL_ARG_DST, &cm}},
                 scratch_md(*plan->prim, smd), temp.data() + a_bytes + b_bytes))
      return false;
    g_runs.fetch_add(1, std::memory_order_relaxed);
    return true;
  } catch (...) {  // out of memory for the plan or the scratch: the caller's own path reports it
    return false;
  }
}

bool conv2d_f32(const Conv2DGeometry& g, const float* x, const int64_t xs[4], const float* weight, const int64_t ws[4],
                const float* bias, int64_t bs, float* y) {
  if (g.n <= 0 || g.c <= 0 || g.o <= 0 || g.ho <= 0 || g.wo <= 0 || g.groups <= 0) return false;
  if (conv2d_macs(g) < kDnnlConvMinMacs) return false;
  for (int i = 0; i < 4; ++i)
    if (xs[i] < 0 || ws[i] < 0) return false;
  const std::vector<int64_t> key{g.n, g.c, g.h, g.w, g.o, g.kh, g.kw, g.ho, g.wo, g.groups,
                                 g.stride[0], g.stride[1], g.padding[0], g.padding[1], g.dilation[0], g.dilation[1],
                                 xs[0], xs[1], xs[2], xs[3], ws[0], ws[1], ws[2], ws[3], bias != nullptr};
  try {
    const std::shared_ptr<const ConvPlan> plan =
        conv_cache().get(key, [&] { return conv_plan(g, xs, ws, bias != nullptr); });
    if (!plan) return false;
    // oneDNN's convolutions read the bias as a dense vector whatever its
    // descriptor's stride, so a strided one is packed first.
    std::vector<float> dense;
    if (bias != nullptr && bs != 1) {
      for (int64_t i = 0; i < g.o; ++i) dense.push_back(bias[i * bs]);
      bias = dense.data();
    }
    if (!run_conv(*plan, x, weight, bias, y)) return false;
    g_runs.fetch_add(1, std::memory_order_relaxed);
    return true;
  } catch (...) {
    return false;
  }
}

int64_t conv2d_macs(const Conv2DGeometry& g) { return g.n * g.o * g.ho * g.wo * (g.c / g.groups) * g.kh * g.kw; }

uint64_t dnnl_primitive_runs() { return g_runs.load(std::memory_order_relaxed); }

}  // namespace tf::runtime
