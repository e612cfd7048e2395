// Compiled vs evaluator for every op and dtype: every registered op except
// Local (no single-device meaning) compiles natively — compile() does not
// throw, so nothing falls back — for every dtype its typeinfer accepts, and
// agrees with the evaluator on contiguous and strided inputs. Unary and
// Binary are covered kind by kind: every kind of their tables in
// core/ops/math/math.h, on every dtype typeinfer accepts for that kind. Data
// movement and integer results must match bit for bit; float math within
// compiler_helpers.h's tolerance. Completeness tests fail when an op is
// registered, or a Unary / Binary kind added, without a case here.
#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "compiler_helpers.h"
#include "core/frontend/parser.h"
#include "core/ir/error.h"
#include "core/ops/math/math.h"
#include "core/ops/nn/nn.h"
#include "core/ops/registry.h"
#include "core/ops/shape/shape.h"
#include "core/ops/sharding/sharding.h"
#include "core/ops/tensor/tensor.h"
#include "core/runtime/float8.h"
#include "core/sema/typeinfer.h"
#include "core/sema/verify.h"

namespace tf::comptest {
namespace {

using Args = std::vector<ir::ExprPtr>;
using Outs = std::vector<ir::ExprPtr>;

const std::vector<DType> kAll = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16, DType::kI32,
                                 DType::kI64, DType::kI8,  DType::kU8,  DType::kBool};
const std::vector<DType> kWithFp8 = {DType::kF32, DType::kF64, DType::kF16,     DType::kBF16,     DType::kI32,
                                     DType::kI64, DType::kI8,  DType::kU8,      DType::kBool,     DType::kFP8E4M3,
                                     DType::kF8E8M0};

// random_array plus i8 and the 8-bit floats (every bit pattern, NaN codes included).
NDArray random_any(DType d, const std::vector<int64_t>& shape, std::mt19937& rng, double scale = 2.0) {
  if (d != DType::kI8 && d != DType::kU8 && d != DType::kFP8E4M3 && d != DType::kF8E8M0)
    return random_array(d, shape, rng, scale);
  NDArray a = NDArray::empty(d, shape);
  std::uniform_int_distribution<int> u(d == DType::kI8 ? -128 : 0, d == DType::kI8 ? 127 : 255);
  for (int64_t i = 0; i < a.numel(); ++i) static_cast<uint8_t*>(a.data())[i] = static_cast<uint8_t>(u(rng));
  return a;
}

NDArray int_array(DType d, const std::vector<int64_t>& shape, const std::function<int64_t(int64_t)>& value) {
  NDArray a = NDArray::empty(d, shape);
  for (int64_t i = 0; i < a.numel(); ++i) {
    if (d == DType::kI32) static_cast<int32_t*>(a.data())[i] = static_cast<int32_t>(value(i));
    else static_cast<int64_t*>(a.data())[i] = value(i);
  }
  return a;
}

NDArray contiguous(const NDArray& a) {
  NDArray out = NDArray::empty(a.dtype(), a.shape());
  a.copy_to(out);
  return out;
}

// The same values in a non-contiguous view (every other element of the last
// axis of a twice-as-wide buffer); rank-0 arrays are returned as they are.
NDArray strided(const NDArray& a) {
  if (a.ndim() == 0) return a;
  std::vector<int64_t> wide = a.shape();
  wide.back() *= 2;
  NDArray big = NDArray::empty(a.dtype(), wide);
  std::memset(big.data(), 0x5A, static_cast<size_t>(big.numel() * ir::dtype_bytes(a.dtype())));
  std::vector<int64_t> st(a.ndim(), 2);  // the wide buffer's C-order strides, last one doubled
  for (size_t d = a.ndim() - 1, e = static_cast<size_t>(wide.back()); d-- > 0; e *= static_cast<size_t>(wide[d]))
    st[d] = static_cast<int64_t>(e);
  NDArray v = NDArray::view(big, a.shape(), st);
  a.copy_to(v);
  return v;
}

// One dtype's part of an op's test function: its inputs and the body over
// their parameters. exact: compare bytes (data movement, integers).
struct Piece {
  std::vector<NDArray> inputs;
  std::function<Outs(const Args&)> body;
  bool exact = true;
};

ir::VarPtr param_for(const NDArray& a, size_t i) {
  ir::Shape shape(a.shape().begin(), a.shape().end());
  return ir::Var::make("x" + std::to_string(i), ir::TensorType::make(shape, a.dtype()));
}

// Whether typeinfer accepts the piece (kType means: a dtype the op refuses).
bool accepted(const Piece& p) {
  Args params;
  for (size_t i = 0; i < p.inputs.size(); ++i) params.push_back(param_for(p.inputs[i], i));
  try {
    p.body(params);
    return true;
  } catch (const ir::Error& e) {
    if (e.kind() != ir::ErrorKind::kType) throw;
    return false;
  }
}

void expect_same(const NDArray& got, const NDArray& want, bool exact, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  NDArray g = contiguous(got), w = contiguous(want);
  const bool fp8 = w.dtype() == DType::kFP8E4M3 || w.dtype() == DType::kF8E8M0;
  if (exact || fp8 || !ir::is_float(w.dtype())) {
    const size_t n = static_cast<size_t>(w.numel() * ir::dtype_bytes(w.dtype()));
    if (w.dtype() == DType::kBool) {
      for (int64_t i = 0; i < w.numel(); ++i)
        EXPECT_EQ(static_cast<const bool*>(g.data())[i], static_cast<const bool*>(w.data())[i]) << what << " @" << i;
      return;
    }
    EXPECT_EQ(std::memcmp(g.data(), w.data(), n), 0) << what << ": not bit-identical";
    return;
  }
  EXPECT_EQ(compare(g, w, tolerance(w.dtype())), "") << what;
}

std::set<std::string>& covered() {
  static std::set<std::string> s;
  return s;
}

// Builds one function from every accepted piece, compiles it natively (must
// not throw) and compares with the evaluator on contiguous and strided inputs.
void check_op(const std::string& op, const std::vector<Piece>& candidates) {
  std::vector<const Piece*> pieces;
  for (const Piece& p : candidates)
    if (accepted(p)) pieces.push_back(&p);
  ASSERT_FALSE(pieces.empty()) << op << ": typeinfer accepted no case";
  ir::Function::Fields f;
  f.name = "every_" + op;
  Outs outs;
  std::vector<bool> exact;
  std::vector<NDArray> inputs;
  for (const Piece* p : pieces) {
    Args params;
    for (const NDArray& a : p->inputs) {
      params.push_back(param_for(a, inputs.size()));
      f.params.push_back(std::static_pointer_cast<const ir::Var>(params.back()));
      inputs.push_back(a);
    }
    for (const ir::ExprPtr& o : p->body(params)) {
      outs.push_back(o);
      exact.push_back(p->exact);
    }
  }
  f.body = outs.size() == 1 ? outs[0] : ir::Tuple::make(outs);
  f.return_type = f.body->type();
  ir::ModulePtr m = sema::seal(ir::Target::default_cpu(), {ir::Function::make(f)});
  const ir::Function& fn = *m->lookup(f.name);
  std::shared_ptr<const compiler::CompiledFunction> k;
  try {
    k = compiler::compile(fn);
  } catch (const ir::Error& e) {
    FAIL() << op << " did not compile natively: " << e.what();
  }
  for (bool use_strided : {false, true}) {
    std::vector<NDArray> in;
    for (const NDArray& a : inputs) in.push_back(use_strided ? strided(a) : a);
    std::vector<NDArray> want = eval::evaluate(*m, fn, in);
    std::vector<NDArray> got = run_native(*k, fn, in);
    ASSERT_EQ(got.size(), want.size()) << op;
    for (size_t i = 0; i < want.size(); ++i)
      expect_same(got[i], want[i], exact[i],
                  op + (use_strided ? " (strided)" : "") + " output #" + std::to_string(i) + " " +
                      std::string(ir::dtype_name(want[i].dtype())));
  }
  covered().insert(op);
}

ir::ExprPtr call(ir::OpPtr op, Args args) { return sema::make_op_call(std::move(op), std::move(args)); }
template <typename O, typename... A>
ir::OpPtr mk(A&&... a) {
  return std::make_shared<O>(std::forward<A>(a)...);
}

std::mt19937& rng() {
  static std::mt19937 r(606);
  return r;
}

// Pieces of a unary-shaped op: one input of dtype d and shape `shape`.
std::vector<Piece> per_dtype(const std::vector<DType>& ds, const std::vector<int64_t>& shape,
                             const std::function<ir::ExprPtr(const ir::ExprPtr&, DType)>& f, bool exact = true) {
  std::vector<Piece> out;
  for (DType d : ds)
    out.push_back({{random_any(d, shape, rng())}, [f, d](const Args& a) { return Outs{f(a[0], d)}; },
                   exact || !ir::is_float(d)});
  return out;
}

using ops::BinaryKind;
using ops::UnaryKind;

// ---- Unary and Binary, kind by kind ----------------------------------------
// The kinds come from the X-macro tables of core/ops/math/math.h, so a kind
// added there gets a case here without editing this file.

std::vector<UnaryKind> all_unary_kinds() {
  return {
#define TF_X(e, s, c) UnaryKind::e,
      TF_UNARY_KIND_LIST(TF_X)
#undef TF_X
  };
}

std::vector<BinaryKind> all_binary_kinds() {
  return {
#define TF_X(e, s, o, c) BinaryKind::e,
      TF_BINARY_KIND_LIST(TF_X)
#undef TF_X
  };
}

std::string unary_case_name(UnaryKind k) { return "Unary_" + std::string(ops::unary_kind_name(k)); }
std::string binary_case_name(BinaryKind k) { return "Binary_" + std::string(ops::binary_kind_name(k)); }

// Uniform floats in [lo, hi] stored as d (a float dtype).
NDArray float_array(DType d, const std::vector<int64_t>& shape, double lo, double hi) {
  EXPECT_TRUE(ir::is_float(d)) << "float_array: " << ir::dtype_name(d) << " is not a float dtype";
  return uniform_array(d, shape, rng(), lo, hi);
}

// The candidate pieces of one Unary kind: every dtype of kAll (typeinfer then
// drops the ones the kind refuses). Floats get two inputs, one of both signs
// and one strictly positive (the domain of log, sqrt, rsqrt, ...), so a kind
// that is NaN on half its inputs is still compared on real values.
std::vector<Piece> unary_pieces(UnaryKind kind) {
  std::vector<Piece> out;
  auto body = [kind](const Args& a) { return Outs{call(mk<ops::Unary>(kind), {a[0]})}; };
  for (DType d : kAll) {
    const bool exact = !ir::is_float(d);
    out.push_back({{random_any(d, {4, 6}, rng(), 3.0)}, body, exact});
    if (ir::is_float(d)) out.push_back({{float_array(d, {4, 6}, 0.0625, 6.0)}, body, exact});
  }
  return out;
}

// The candidate pieces of one Binary kind: every dtype of kAll, lhs (3, 5)
// against a broadcast rhs (5). Some rhs elements repeat lhs's row 1, so the
// comparison kinds see equal operands; integer divisors are never 0 (a zero
// divisor is a run-time error, tested in test_breadth.cc).
std::vector<Piece> binary_pieces(BinaryKind kind) {
  std::vector<Piece> out;
  for (DType d : kAll) {
    NDArray lhs = random_any(d, {3, 5}, rng()), rhs = random_any(d, {5}, rng());
    const size_t bytes = static_cast<size_t>(ir::dtype_bytes(d));
    auto* l = static_cast<uint8_t*>(lhs.data());
    auto* r = static_cast<uint8_t*>(rhs.data());
    for (size_t j = 0; j < 5; j += 2) std::memcpy(r + j * bytes, l + (5 + j) * bytes, bytes);
    if (ir::is_int(d))
      for (size_t j = 0; j < 5; ++j)
        if (std::all_of(r + j * bytes, r + (j + 1) * bytes, [](uint8_t b) { return b == 0; })) r[j * bytes] = 3;
    out.push_back({{lhs, rhs},
                   [kind](const Args& a) { return Outs{call(mk<ops::Binary>(kind), {a[0], a[1]})}; },
                   !ir::is_float(d)});
  }
  return out;
}

// The dtypes (of the first input) of the candidates typeinfer accepts.
std::set<DType> accepted_dtypes(const std::vector<Piece>& candidates) {
  std::set<DType> out;
  for (const Piece& p : candidates)
    if (accepted(p)) out.insert(p.inputs[0].dtype());
  return out;
}

struct KindCase {
  std::string name;
  std::function<std::vector<Piece>()> pieces;
};

const std::vector<KindCase>& kind_cases() {
  static const std::vector<KindCase> table = [] {
    std::vector<KindCase> t;
    for (UnaryKind k : all_unary_kinds()) t.push_back({unary_case_name(k), [k] { return unary_pieces(k); }});
    for (BinaryKind k : all_binary_kinds()) t.push_back({binary_case_name(k), [k] { return binary_pieces(k); }});
    return t;
  }();
  return table;
}

const KindCase* find_kind_case(const std::string& name) {
  for (const KindCase& c : kind_cases())
    if (c.name == name) return &c;
  return nullptr;
}

const std::map<std::string, std::function<void()>>& cases() {
  static const std::map<std::string, std::function<void()>> table = {
      {"Cast",
       [] {
         // Every (from, to) pair: one piece per source dtype, one output per target.
         std::vector<Piece> ps;
         for (DType from : kWithFp8)
           ps.push_back({{random_any(from, {3, 7}, rng(), 600.0)}, [from](const Args& a) {
                           Outs o;
                           for (DType to : kWithFp8)
                             if (to != from) o.push_back(call(mk<ops::Cast>(to), {a[0]}));
                           return o;
                         }});
         check_op("Cast", ps);
       }},
      {"Reduce", [] {
         check_op("Reduce", per_dtype(kAll, {4, 9}, [](const ir::ExprPtr& x, DType d) {
                    // bool: max is the one reduction typeinfer accepts (any(x)).
                    return call(mk<ops::Reduce>(std::vector<int64_t>{0}, false,
                                                d == DType::kBool ? ops::ReduceKind::kMax : ops::ReduceKind::kAbsMax),
                                {x});
                  }));
       }},
      {"Reshape", [] {
         check_op("Reshape", per_dtype(kWithFp8, {4, 6}, [](const ir::ExprPtr& x, DType) {
                    return call(mk<ops::Reshape>(ir::Shape{2, 12}), {x});
                  }));
       }},
      {"Transpose", [] {
         check_op("Transpose", per_dtype(kWithFp8, {2, 3, 4}, [](const ir::ExprPtr& x, DType) {
                    return call(mk<ops::Transpose>(std::vector<int64_t>{2, 0, 1}), {x});
                  }));
       }},
      {"Slice", [] {
         check_op("Slice", per_dtype(kAll, {6, 8}, [](const ir::ExprPtr& x, DType) {
                    return call(mk<ops::Slice>(ir::Shape{1, 0}, ir::Shape{5, 8}, std::vector<int64_t>{2, 3}), {x});
                  }));
       }},
      {"Zeros",
       [] {
         std::vector<Piece> ps;
         for (DType d : kAll)
           ps.push_back({{}, [d](const Args&) {
                           return Outs{call(mk<ops::Zeros>(ir::Shape{2, 3}, d, ir::StorageKind::kGmem), {})};
                         }});
         check_op("Zeros", ps);
       }},
      {"Where",
       [] {
         // cond (3, 1) against values (3, 5) and (5): all three broadcast.
         // (fp8 values are not computed on by elementwise stages: the evaluator runs them.)
         std::vector<Piece> ps;
         for (DType d : kAll)
           ps.push_back({{random_any(DType::kBool, {3, 1}, rng()), random_any(d, {3, 5}, rng()), random_any(d, {5}, rng())},
                         [](const Args& a) { return Outs{call(mk<ops::Where>(), {a[0], a[1], a[2]})}; }});
         check_op("Where", ps);
       }},
      {"Clamp",
       [] {
         // Both bounds, one side each; integer dtypes saturate a bound past their range.
         check_op("Clamp", per_dtype(kAll, {4, 6}, [](const ir::ExprPtr& x, DType d) {
                    const double inf = std::numeric_limits<double>::infinity();
                    if (!ir::is_float(d)) return call(mk<ops::Clamp>(-1000.0, 1.0), {x});
                    return call(mk<ops::Clamp>(d == DType::kF32 ? -inf : -0.3, d == DType::kF64 ? inf : 0.7), {x});
                  }));
       }},
      {"Bitcast",
       [] {
         std::vector<Piece> ps;
         const std::pair<DType, DType> pairs[] = {{DType::kF32, DType::kI32}, {DType::kI64, DType::kF64},
                                                  {DType::kF16, DType::kBF16}, {DType::kFP8E4M3, DType::kI8},
                                                  {DType::kI8, DType::kF8E8M0},
                                                  {DType::kU8, DType::kFP8E4M3}, {DType::kI8, DType::kU8}};
         for (auto [from, to] : pairs)
           ps.push_back({{random_any(from, {3, 7}, rng())},
                         [to = to](const Args& a) { return Outs{call(mk<ops::Bitcast>(to), {a[0]})}; }});
         check_op("Bitcast", ps);
       }},
      {"Arange",
       [] {
         std::vector<Piece> ps;
         for (DType d : kWithFp8)
           ps.push_back({{}, [d](const Args&) {
                           const bool fl = ir::is_float(d);
                           return Outs{call(mk<ops::Arange>(ir::ShapeDim(37), fl ? -1.25 : -7.0, fl ? 0.125 : 3.0, d), {})};
                         }});
         check_op("Arange", ps);
       }},
      {"Gather",
       [] {
         std::vector<Piece> ps;
         for (DType d : kWithFp8)
           for (DType id : {DType::kI32, DType::kI64}) {
             // axis 1, batch_dims 1: out[b, i, j, t] = x[b, idx[b, i, j], t]
             ps.push_back({{random_any(d, {2, 5, 3}, rng()),
                            int_array(id, {2, 4, 2}, [](int64_t i) { return (i * 7 + 3) % 5; })},
                           [](const Args& a) { return Outs{call(mk<ops::Gather>(1, 1), {a[0], a[1]})}; }});
             // axis 0, no batching, a scalar-free 1-d index.
             ps.push_back({{random_any(d, {6, 4}, rng()), int_array(id, {5}, [](int64_t i) { return (5 - i) % 6; })},
                           [](const Args& a) { return Outs{call(mk<ops::Gather>(0, 0), {a[0], a[1]})}; }});
           }
         check_op("Gather", ps);
       }},
      {"InsertSlice",
       [] {
         std::vector<Piece> ps;
         for (DType d : kAll)
           ps.push_back({{random_any(d, {5, 6}, rng()), random_any(d, {2, 3}, rng()),
                          int_array(DType::kI32, {}, [](int64_t) { return 2; }),
                          int_array(DType::kI64, {}, [](int64_t) { return 1; })},
                         [](const Args& a) {
                           ir::ExprPtr offs = ir::Tuple::make({a[2], a[3]});
                           return Outs{call(mk<ops::InsertSlice>(ops::insert_slice_literals(offs)), {a[0], a[1], offs})};
                         }});
         check_op("InsertSlice", ps);
       }},
      {"CacheUpdate",
       [] {
         std::vector<Piece> ps;
         for (DType d : kAll)
           ps.push_back({{random_any(d, {2, 8, 2, 3}, rng()), int_array(DType::kI32, {}, [](int64_t) { return 3; }),
                          int_array(DType::kI32, {}, [](int64_t) { return 2; }), random_any(d, {2, 4, 2, 3}, rng())},
                         [](const Args& a) { return Outs{call(mk<ops::CacheUpdate>(), {a[0], a[1], a[2], a[3]})}; }});
         check_op("CacheUpdate", ps);
       }},
      {"CacheScatter",
       [] {
         std::vector<Piece> ps;
         for (DType d : kAll)
           ps.push_back({{random_any(d, {3, 8, 2}, rng()), random_any(d, {3, 2, 2}, rng()),
                          int_array(DType::kI32, {3}, [](int64_t i) { return (i * 3) % 7; })},
                         [](const Args& a) { return Outs{call(mk<ops::CacheScatter>(), {a[0], a[1], a[2]})}; }});
         check_op("CacheScatter", ps);
       }},
      {"TopK",
       [] {
         std::vector<Piece> ps;
         for (DType d : kAll)
           for (bool largest : {true, false}) {
             // Few distinct values, so ties are common and their order is checked.
             NDArray x = random_any(d, {3, 9}, rng(), 1.4);
             ps.push_back({{x}, [largest](const Args& a) {
                             ir::ExprPtr t = call(mk<ops::TopK>(ir::ShapeDim(4), 1, largest, true), {a[0]});
                             return Outs{ir::TupleGetItem::make(t, 0), ir::TupleGetItem::make(t, 1)};
                           }});
             ps.push_back({{x}, [largest](const Args& a) {
                             ir::ExprPtr t = call(mk<ops::TopK>(ir::ShapeDim(3), 0, largest, false), {a[0]});
                             return Outs{ir::TupleGetItem::make(t, 0), ir::TupleGetItem::make(t, 1)};
                           }});
           }
         check_op("TopK", ps);
       }},
      {"Concat",
       [] {
         std::vector<Piece> ps;
         for (DType d : kWithFp8)
           ps.push_back({{random_any(d, {2, 3}, rng()), random_any(d, {2, 1}, rng()), random_any(d, {2, 4}, rng())},
                         [](const Args& a) {
                           return Outs{call(mk<ops::Concat>(-1), {ir::Tuple::make({a[0], a[1], a[2]})})};
                         }});
         check_op("Concat", ps);
       }},
      {"Stack",
       [] {
         std::vector<Piece> ps;
         for (DType d : kWithFp8)
           ps.push_back({{random_any(d, {2, 3}, rng()), random_any(d, {2, 3}, rng())}, [](const Args& a) {
                           return Outs{call(mk<ops::Stack>(1), {ir::Tuple::make({a[0], a[1]})})};
                         }});
         check_op("Stack", ps);
       }},
      {"ShapeOf", [] {
         check_op("ShapeOf", per_dtype(kAll, {3, 1, 4}, [](const ir::ExprPtr& x, DType) {
                    return call(mk<ops::ShapeOf>(), {x});
                  }));
       }},
      {"Rank", [] {
         check_op("Rank", per_dtype(kAll, {3, 1, 4}, [](const ir::ExprPtr& x, DType) {
                    return call(mk<ops::Rank>(), {x});
                  }));
       }},
      {"ShapeExtract", [] {
         check_op("ShapeExtract", {Piece{{random_any(DType::kF32, {3, 7, 2}, rng())}, [](const Args& a) {
                                           ir::ExprPtr s = call(mk<ops::ShapeOf>(), {a[0]});
                                           return Outs{call(mk<ops::ShapeExtract>(-2), {s}),
                                                       call(mk<ops::ShapeExtract>(0), {s})};
                                         }}});
       }},
      {"ShapeCompose", [] {
         check_op("ShapeCompose",
                  {Piece{{random_any(DType::kF32, {3, 7, 2}, rng())}, [](const Args& a) {
                           ir::ExprPtr s = call(mk<ops::ShapeOf>(), {a[0]});
                           ir::ExprPtr d1 = call(mk<ops::ShapeExtract>(1), {s});
                           ir::ExprPtr d0 = call(mk<ops::ShapeExtract>(0), {s});
                           return Outs{call(mk<ops::ShapeCompose>(), {ir::Tuple::make({d1, d0, d1})})};
                         }}});
       }},
      {"Reshard", [] {
         check_op("Reshard", per_dtype(kWithFp8, {3, 5}, [](const ir::ExprPtr& x, DType) {
                    return call(mk<ops::Reshard>(nullptr, std::nullopt), {x});
                  }));
       }},
      {"MatMul",
       [] {
         std::vector<Piece> ps;
         for (DType d : kAll)
           ps.push_back({{random_any(d, {2, 3, 4}, rng()), random_any(d, {4, 5}, rng())},
                         [](const Args& a) { return Outs{call(mk<ops::MatMul>(), {a[0], a[1]})}; }, false});
         check_op("MatMul", ps);
       }},
      {"Conv2D",
       [] {
         std::vector<Piece> ps;
         for (DType d : kAll) {
           // stride 2, padding 1, dilation 2, 2 groups, with bias.
           ps.push_back({{random_any(d, {2, 4, 7, 8}, rng()), random_any(d, {6, 2, 3, 2}, rng()),
                          random_any(d, {6}, rng())},
                         [](const Args& a) {
                           return Outs{call(mk<ops::Conv2D>(std::vector<int64_t>{2, 1}, std::vector<int64_t>{1, 2},
                                                            std::vector<int64_t>{2, 1}, 2),
                                            {a[0], a[1], a[2]})};
                         },
                         false});
           // Defaults, no bias.
           ps.push_back({{random_any(d, {1, 3, 5, 5}, rng()), random_any(d, {2, 3, 3, 3}, rng())},
                         [](const Args& a) {
                           return Outs{call(mk<ops::Conv2D>(std::vector<int64_t>{1, 1}, std::vector<int64_t>{0, 0},
                                                            std::vector<int64_t>{1, 1}, 1),
                                            {a[0], a[1], ir::Tuple::make({})})};
                         },
                         false});
         }
         check_op("Conv2D", ps);
       }},
      {"SoftMax", [] {
         check_op("SoftMax", per_dtype(kAll, {3, 17}, [](const ir::ExprPtr& x, DType) {
                    return call(mk<ops::SoftMax>(-1), {x});
                  }, false));
       }},
      {"Silu", [] {
         check_op("Silu", per_dtype(kAll, {3, 17}, [](const ir::ExprPtr& x, DType) {
                    return call(mk<ops::Silu>(), {x});
                  }, false));
       }},
      {"Gelu", [] {
         check_op("Gelu", per_dtype(kAll, {3, 17}, [](const ir::ExprPtr& x, DType) {
                    return call(mk<ops::Gelu>("none"), {x});
                  }, false));
       }},
      {"ReLU", [] {
         check_op("ReLU", per_dtype(kAll, {3, 17}, [](const ir::ExprPtr& x, DType) {
                    return call(mk<ops::ReLU>(), {x});
                  }));
       }},
      {"Sigmoid", [] {
         check_op("Sigmoid", per_dtype(kAll, {3, 17}, [](const ir::ExprPtr& x, DType) {
                    return call(mk<ops::Sigmoid>(), {x});
                  }, false));
       }},
      {"Tanh", [] {
         check_op("Tanh", per_dtype(kAll, {3, 17}, [](const ir::ExprPtr& x, DType) {
                    return call(mk<ops::Tanh>(), {x});
                  }, false));
       }},
      {"RMSNorm",
       [] {
         std::vector<Piece> ps;
         for (DType d : kAll)
           ps.push_back({{random_any(d, {3, 16}, rng()), random_any(d, {16}, rng())},
                         [](const Args& a) { return Outs{call(mk<ops::RMSNorm>(1e-6), {a[0], a[1]})}; }, false});
         check_op("RMSNorm", ps);
       }},
      {"LayerNorm",
       [] {
         std::vector<Piece> ps;
         for (DType d : kAll)
           ps.push_back({{random_any(d, {3, 16}, rng()), random_any(d, {16}, rng()), random_any(d, {16}, rng())},
                         [](const Args& a) { return Outs{call(mk<ops::LayerNorm>(1e-5), {a[0], a[1], a[2]})}; },
                         false});
         check_op("LayerNorm", ps);
       }},
      {"RoPE",
       [] {
         std::vector<Piece> ps;
         for (DType d : kAll)
           ps.push_back({{random_any(d, {1, 3, 2, 4}, rng()), random_any(d, {1, 3, 1, 4}, rng()),
                          random_any(d, {6, 4}, rng()), random_any(d, {6, 4}, rng()),
                          int_array(DType::kI64, {1, 3}, [](int64_t i) { return 5 - 2 * i; })},
                         [](const Args& a) {
                           ir::ExprPtr t = call(mk<ops::RoPE>(), {a[0], a[1], a[2], a[3], a[4]});
                           return Outs{ir::TupleGetItem::make(t, 0), ir::TupleGetItem::make(t, 1)};
                         },
                         false});
         check_op("RoPE", ps);
       }},
  };
  return table;
}

// Ops that keep no native code on purpose (see the file comment).
const std::set<std::string> kNotCompiled = {"Local"};

class EveryOp : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryOp, CompilesNativelyAndAgreesWithTheEvaluator) {
  auto it = cases().find(GetParam());
  ASSERT_NE(it, cases().end()) << GetParam();
  it->second();
  EXPECT_TRUE(covered().count(GetParam())) << GetParam() << ": no function was compiled";
}

std::vector<std::string> case_names() {
  std::vector<std::string> out;
  for (const auto& [name, fn] : cases()) out.push_back(name);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Ops, EveryOp, ::testing::ValuesIn(case_names()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

// One case per Unary / Binary kind: a function with one output per accepted
// dtype (typeinfer decides; at least one must be accepted), compiled natively
// and compared with the evaluator on contiguous and strided inputs.
class EveryKind : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryKind, CompilesNativelyOnEveryAcceptedDtypeAndAgreesWithTheEvaluator) {
  const KindCase* c = find_kind_case(GetParam());
  ASSERT_NE(c, nullptr) << GetParam();
  std::vector<Piece> candidates = c->pieces();
  const std::set<DType> dtypes = accepted_dtypes(candidates);
  ASSERT_FALSE(dtypes.empty()) << GetParam() << ": typeinfer accepted none of the candidate dtypes";
  check_op(GetParam(), candidates);
  EXPECT_TRUE(covered().count(GetParam())) << GetParam() << ": no function was compiled";
  std::string list;
  for (DType d : dtypes) list += std::string(list.empty() ? "" : " ") + std::string(ir::dtype_name(d));
  RecordProperty("dtypes", list);
  RecordProperty("num_dtypes", static_cast<int>(dtypes.size()));
}

std::vector<std::string> kind_case_names() {
  std::vector<std::string> out;
  for (const KindCase& c : kind_cases()) out.push_back(c.name);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Kinds, EveryKind, ::testing::ValuesIn(kind_case_names()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

// Ops whose cases are per kind (EveryKind) instead of one EveryOp case.
const std::set<std::string> kKinded = {"Unary", "Binary"};

TEST(EveryOpTable, EveryRegisteredOpHasANativeCase) {
  for (const ops::OpInfo& op : ops::all_ops()) {
    if (kNotCompiled.count(op.name)) continue;
    if (kKinded.count(op.name)) {
      bool any = false;
      for (const KindCase& c : kind_cases()) any = any || c.name.rfind(op.name + "_", 0) == 0;
      EXPECT_TRUE(any) << "op '" << op.name << "' has no per-kind compiled-vs-evaluator case";
      continue;
    }
    EXPECT_TRUE(cases().count(op.name)) << "op '" << op.name << "' has no compiled-vs-evaluator case";
  }
  for (const std::string& name : kKinded) {
    bool registered = false;
    for (const ops::OpInfo& op : ops::all_ops()) registered = registered || op.name == name;
    EXPECT_TRUE(registered) << name << " is no longer a registered op: update kKinded";
  }
}

// Every kind of the Unary and Binary tables (read from the X-macro lists,
// checked against the name tables) has an EveryKind case that typeinfer
// accepts on at least one of its candidate dtypes.
TEST(EveryOpTable, EveryUnaryAndBinaryKindHasANativeCase) {
  const std::vector<std::string> names = kind_case_names();
  const std::set<std::string> instantiated(names.begin(), names.end());
  EXPECT_EQ(instantiated.size(), names.size()) << "two kinds share a case name";
  size_t n = 0;
  for (UnaryKind k : all_unary_kinds()) {
    ++n;
    EXPECT_EQ(ops::unary_kind_from_name(ops::unary_kind_name(k)), k) << ops::unary_kind_name(k);
    EXPECT_TRUE(instantiated.count(unary_case_name(k))) << "Unary kind '" << ops::unary_kind_name(k) << "' has no case";
    EXPECT_FALSE(accepted_dtypes(unary_pieces(k)).empty())
        << "typeinfer accepts Unary kind '" << ops::unary_kind_name(k) << "' on none of " << kAll.size() << " dtypes";
  }
  for (BinaryKind k : all_binary_kinds()) {
    ++n;
    EXPECT_EQ(ops::binary_kind_from_name(ops::binary_kind_name(k)), k) << ops::binary_kind_name(k);
    EXPECT_TRUE(instantiated.count(binary_case_name(k))) << "Binary kind '" << ops::binary_kind_name(k) << "' has no case";
    EXPECT_FALSE(accepted_dtypes(binary_pieces(k)).empty())
        << "typeinfer accepts Binary kind '" << ops::binary_kind_name(k) << "' on none of " << kAll.size() << " dtypes";
  }
  EXPECT_EQ(instantiated.size(), n);
}

// The 8-bit floats are storage formats: Unary / Binary on them is refused
// with kUnsupported (the C ABI then falls back to the evaluator) rather than
// compiled. Checked per kind, so a kind that starts compiling fp8 fails here
// and belongs in the EveryKind candidates instead.
TEST(EveryOpTable, UnaryAndBinaryOnFp8AreUnsupportedNotCompiled) {
  for (DType d : {DType::kFP8E4M3, DType::kF8E8M0}) {
    std::vector<std::pair<std::string, Piece>> pieces;
    for (UnaryKind k : all_unary_kinds())
      pieces.push_back({unary_case_name(k),
                        {{random_any(d, {2, 3}, rng())},
                         [k](const Args& a) { return Outs{call(mk<ops::Unary>(k), {a[0]})}; }}});
    for (BinaryKind k : all_binary_kinds())
      pieces.push_back({binary_case_name(k),
                        {{random_any(d, {2, 3}, rng()), random_any(d, {3}, rng())},
                         [k](const Args& a) { return Outs{call(mk<ops::Binary>(k), {a[0], a[1]})}; }}});
    size_t refused = 0;
    for (const auto& [name, p] : pieces) {
      if (!accepted(p)) continue;
      const std::string what = name + " on " + std::string(ir::dtype_name(d));
      ir::Function::Fields f;
      f.name = "fp8_case";
      Args params;
      for (size_t i = 0; i < p.inputs.size(); ++i) {
        params.push_back(param_for(p.inputs[i], i));
        f.params.push_back(std::static_pointer_cast<const ir::Var>(params.back()));
      }
      f.body = p.body(params)[0];
      f.return_type = f.body->type();
      ir::ModulePtr m = sema::seal(ir::Target::default_cpu(), {ir::Function::make(f)});
      try {
        compiler::compile(*m->lookup(f.name));
        ADD_FAILURE() << what << " compiled natively: move it into the EveryKind candidates";
      } catch (const ir::Error& e) {
        EXPECT_EQ(e.kind(), ir::ErrorKind::kUnsupported) << what << ": " << e.what();
        ++refused;
      }
    }
    EXPECT_GT(refused, 0u) << ir::dtype_name(d) << ": typeinfer accepted no kind";
  }
}

// The gather index check, hoisted (indices a parameter: nothing is written)
// or in the stage (indices computed), and TopK's k against a DimVar extent,
// come back as the evaluator's run-time errors.
const char* kErrorSource = R"(from tilefoundry.dsl import *
N = DimVar("N", 1, 64)
M = DimVar("M", 1, 64)

@func
def g(x: Tensor[(N, 4), f32], i: Tensor[(N, 2), i64]) -> Tensor[(N, 2), f32]:
    return gather(x, i, axis=1, batch_dims=1)

@func
def g2(x: Tensor[(N, 4), f32], i: Tensor[(3,), i32]) -> Tensor[(N, 3), f32]:
    return gather(x, i + 1, axis=1)

@func
def tk(x: Tensor[(N, M), f32]) -> tuple[Tensor[(N, N), f32], Tensor[(N, N), i64]]:
    return topk(x, N, axis=1)
)";

void expect_same_error(const std::function<void()>& native, const std::function<void()>& reference) {
  std::string want;
  try {
    reference();
    ADD_FAILURE() << "the evaluator raised no error";
  } catch (const ir::Error& e) {
    EXPECT_EQ(e.kind(), ir::ErrorKind::kRuntime) << e.what();
    want = e.what();
  }
  try {
    native();
    ADD_FAILURE() << "the native kernel raised no error; the evaluator says: " << want;
  } catch (const ir::Error& e) {
    EXPECT_EQ(e.kind(), ir::ErrorKind::kRuntime) << e.what();
    EXPECT_EQ(std::string(e.what()), want);
  }
}

TEST(EveryOpErrors, BadGatherIndexIsTheEvaluatorsError) {
  ir::ModulePtr m = frontend::parse_module(kErrorSource, "errors.tf");
  const ir::Function& g = *m->lookup("g");
  auto k = compiler::compile(g);
  EXPECT_FALSE(k->may_fail()) << "a parameter's indices are checked before anything is written";
  NDArray x = random_any(DType::kF32, {3, 4}, rng());
  NDArray i = int_array(DType::kI64, {3, 2}, [](int64_t j) { return j == 3 ? 4 : (j == 5 ? -1 : j % 4); });
  expect_same_error([&] { run_native(*k, g, {x, i}); }, [&] { eval::evaluate(*m, g, {x, i}); });
  try {
    run_native(*k, g, {x, i});
  } catch (const ir::Error& e) {
    EXPECT_NE(std::string(e.what()).find("index 4 is out of range for axis 1 of extent 4"), std::string::npos)
        << e.what();
  }
  // Computed indices: checked in the stage.
  const ir::Function& g2 = *m->lookup("g2");
  auto k2 = compiler::compile(g2);
  EXPECT_TRUE(k2->may_fail());
  NDArray i2 = int_array(DType::kI32, {3}, [](int64_t j) { return j == 2 ? 3 : j; });  // 3 + 1 = 4
  expect_same_error([&] { run_native(*k2, g2, {x, i2}); }, [&] { eval::evaluate(*m, g2, {x, i2}); });
  NDArray ok = int_array(DType::kI32, {3}, [](int64_t j) { return 2 - j; });
  expect_agree(*k2, *m, g2, {x, ok}, "g2 in range");
}

TEST(EveryOpErrors, TopKWithKBeyondTheAxisIsTheEvaluatorsError) {
  ir::ModulePtr m = frontend::parse_module(kErrorSource, "errors.tf");
  const ir::Function& tk = *m->lookup("tk");
  auto k = compiler::compile(tk);
  NDArray fine = random_any(DType::kF32, {3, 5}, rng());
  expect_agree(*k, *m, tk, {fine}, "k = N <= M");
  NDArray bad = random_any(DType::kF32, {6, 5}, rng());
  expect_same_error([&] { run_native(*k, tk, {bad}); }, [&] { eval::evaluate(*m, tk, {bad}); });
}

}  // namespace
}  // namespace tf::comptest
