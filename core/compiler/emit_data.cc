#include "core/compiler/emit_data.h"

#include "core/compiler/emit_util.h"

namespace tf::compiler {
namespace {

size_t rank_of(const std::vector<Slot>& slots, size_t k) { return slots[k].type->rank(); }
std::string type_of(const std::vector<Slot>& slots, size_t k) { return ctype(slots[k].type->dtype()); }

size_t norm_axis(int64_t axis, size_t rank) {
  return static_cast<size_t>(axis < 0 ? axis + static_cast<int64_t>(rank) : axis);
}

// `const T* name = B[k]` (or mutable) in the generated code.
std::string buffer(const std::vector<Slot>& slots, size_t k, const std::string& name, bool out = false) {
  const std::string T = type_of(slots, k);
  return std::string("  ") + (out ? "" : "const ") + T + "* " + name + " = static_cast<" + (out ? "" : "const ") + T +
         "*>(B[" + S(k) + "]);\n";
}

// The serial index check, in the evaluator's order (the first bad index of
// indices' row-major order; none when the result is empty). `fail` ends it.
void gather_check(std::ostream& o, const std::vector<Slot>& slots, size_t out, size_t x, size_t ind, size_t axis,
                  const std::string& fail) {
  const size_t ri = rank_of(slots, ind);
  const std::string I = S(ind);
  o << "  int64_t n_ = 1, m_ = 1;\n";
  o << "  for (int a = 0; a < " << rank_of(slots, out) << "; ++a) n_ *= sh" << out << "[a];\n";
  o << "  for (int a = 0; a < " << ri << "; ++a) m_ *= sh" << I << "[a];\n";
  o << "  const " << type_of(slots, ind) << "* ic_ = static_cast<const " << type_of(slots, ind) << "*>(B[" << I
    << "]);\n";
  o << "  for (int64_t f = 0; ok && n_ > 0 && f < m_; ++f) {\n";
  o << "    int64_t off = 0, rem = f;\n";
  o << "    for (int a = " << static_cast<int>(ri) - 1 << "; a >= 0; --a) { off += (rem % sh" << I << "[a]) * st" << I
    << "[a]; rem /= sh" << I << "[a]; }\n";
  o << "    const int64_t j = static_cast<int64_t>(ic_[off]);\n";
  o << "    if (j < 0 || j >= sh" << x << "[" << axis << "]) { rt->info[0] = j; rt->info[1] = " << axis
    << "; rt->info[2] = sh" << x << "[" << axis << "]; " << fail << " }\n";
  o << "  }\n";
}

}  // namespace

bool emit_gather(std::ostream& o, std::ostream& pre, const std::vector<Slot>& slots, size_t out, size_t x,
                 size_t indices, const ops::Gather& op) {
  const size_t rx = rank_of(slots, x), r = rank_of(slots, out);
  const size_t axis = norm_axis(op.axis, rx), b = static_cast<size_t>(op.batch_dims);
  const size_t ni = rank_of(slots, indices) - b;
  const bool hoist = slots[indices].kind == Slot::kInput;
  if (hoist) {
    pre << "  { // precheck: gather indices\n  const bool ok = true;\n";
    gather_check(pre, slots, out, x, indices, axis, "return " + S(kErrGatherIndex) + ";");
    pre << "  }\n";
  }
  o << "  { // stage: gather -> slot " << out << "\n";
  if (hoist) {
    o << "  const bool ok = true;\n";
  } else {
    o << "  bool ok = true;\n";
    gather_check(o, slots, out, x, indices, axis, "tf_fail(err, " + S(kErrGatherIndex) + "); ok = false;");
  }
  // Per result axis d: its stride in x (0 on an index axis) and in indices
  // (batch and index axes only); x's gathered axis adds j * st[axis].
  const size_t last = r ? r - 1 : 0;
  o << "  int64_t xs_[" << (r ? r : 1) << "] = {0}, is_[" << (r ? r : 1) << "] = {0};\n";
  for (size_t d = 0; d < r; ++d) {
    if (d < axis) o << "  xs_[" << d << "] = st" << x << "[" << d << "];\n";
    if (d < b) o << "  is_[" << d << "] = st" << indices << "[" << d << "];\n";
    if (d >= axis && d < axis + ni) o << "  is_[" << d << "] = st" << indices << "[" << b + d - axis << "];\n";
    if (d >= axis + ni) o << "  xs_[" << d << "] = st" << x << "[" << d - ni + 1 << "];\n";
  }
  o << "  int64_t n = 1;\n";
  for (size_t d = 0; d < r; ++d) o << "  n *= sh" << out << "[" << d << "];\n";
  o << "  const int64_t inner = " << (r ? "sh" + S(out) + "[" + S(last) + "]" : "1")
    << ", outer = ok && n > 0 ? n / inner : 0, sa = st" << x << "[" << axis << "];\n";
  o << buffer(slots, x, "x") << buffer(slots, indices, "ix") << buffer(slots, out, "y", true);
  o << "  #pragma omp parallel for schedule(static) if (n >= 65536)\n";
  o << "  for (int64_t row = 0; row < outer; ++row) {\n";
  o << "    int64_t xo = 0, io = 0, rem = row;\n";
  o << "    for (int d = " << static_cast<int>(r) - 2 << "; d >= 0; --d) { const int64_t q = rem % sh" << out
    << "[d]; rem /= sh" << out << "[d]; xo += q * xs_[d]; io += q * is_[d]; }\n";
  o << "    for (int64_t q = 0; q < inner; ++q) {\n";
  o << "      const int64_t j = static_cast<int64_t>(ix[io + q * is_[" << last << "]]);\n";
  o << "      y[row * inner + q] = x[xo + q * xs_[" << last << "] + j * sa];\n";
  o << "    }\n  }\n  }\n";
  return !hoist;
}

void emit_topk(std::ostream& o, std::ostream& pre, const std::vector<Slot>& slots, size_t values, size_t indices,
               size_t x, const ops::TopK& op) {
  const size_t r = rank_of(slots, x), axis = norm_axis(op.axis, r);
  const std::string X = S(x), V = S(values), I = S(indices), A = S(axis);
  pre << "  { // precheck: topk k\n";
  pre << "  const int64_t k = sh" << V << "[" << A << "], len = sh" << X << "[" << A << "];\n";
  pre << "  if (k < 0 || k > len) { rt->info[0] = k; rt->info[1] = len; rt->info[2] = " << A << "; return "
      << kErrTopKCount << "; }\n  }\n";
  o << "  { // stage: topk -> slots " << values << ", " << indices << "\n";
  o << "  int64_t outer = 1;\n";
  for (size_t a = 0; a < r; ++a)
    if (a != axis) o << "  outer *= sh" << X << "[" << a << "];\n";
  o << "  const int64_t len = sh" << X << "[" << A << "], k = sh" << V << "[" << A << "];\n";
  o << buffer(slots, x, "x") << buffer(slots, values, "v", true) << buffer(slots, indices, "ix", true);
  o << "  #pragma omp parallel for schedule(static) if (outer * len >= 8192)\n";
  o << "  for (int64_t row = 0; row < (k > 0 ? outer : 0); ++row) {\n";
  o << "    int64_t xo = 0, vo = 0, io = 0, rem = row;\n";
  for (size_t a = r; a-- > 0;) {
    if (a == axis) continue;
    o << "    { const int64_t q = rem % sh" << X << "[" << a << "]; rem /= sh" << X << "[" << a << "]; xo += q * st" << X
      << "[" << a << "]; vo += q * st" << V << "[" << a << "]; io += q * st" << I << "[" << a << "]; }\n";
  }
  o << "    int64_t* order = static_cast<int64_t*>(std::malloc(static_cast<size_t>(len) * sizeof(int64_t)));\n";
  o << "    tf_topk_row(x + xo, st" << X << "[" << A << "], len, k, " << (op.largest ? "true" : "false") << ", v + vo, st"
    << V << "[" << A << "], ix + io, st" << I << "[" << A << "], order);\n";
  o << "    std::free(order); (void)rem;\n";
  o << "  }\n  }\n";
}

void emit_concat(std::ostream& o, const std::vector<Slot>& slots, size_t out, const std::vector<size_t>& ins,
                 const ops::Concat& op) {
  const size_t r = rank_of(slots, out), axis = norm_axis(op.axis, r);
  const std::string T = type_of(slots, out);
  o << "  { // stage: concat -> slot " << out << "\n";
  o << buffer(slots, out, "y", true) << "  int64_t at = 0;\n";
  for (size_t k : ins) {
    o << "  tf_copy_nd<" << T << ">(y + at * st" << out << "[" << axis << "], st" << out << ", static_cast<const " << T
      << "*>(B[" << k << "]), st" << k << ", sh" << k << ", " << r << ");\n";
    o << "  at += sh" << k << "[" << axis << "];\n";
  }
  o << "  (void)at;\n  }\n";
}

void emit_stack(std::ostream& o, const std::vector<Slot>& slots, size_t out, const std::vector<size_t>& ins,
                const ops::Stack& op) {
  const size_t r = rank_of(slots, out), axis = norm_axis(op.axis, r);
  const std::string T = type_of(slots, out);
  o << "  { // stage: stack -> slot " << out << "\n";
  o << buffer(slots, out, "y", true);
  // The result's strides without the new axis: one input's window.
  o << "  int64_t so[" << (r > 1 ? r - 1 : 1) << "] = {0};\n";
  for (size_t d = 0, e = 0; d < r; ++d)
    if (d != axis) o << "  so[" << e++ << "] = st" << out << "[" << d << "];\n";
  for (size_t j = 0; j < ins.size(); ++j)
    o << "  tf_copy_nd<" << T << ">(y + INT64_C(" << j << ") * st" << out << "[" << axis << "], so, static_cast<const "
      << T << "*>(B[" << ins[j] << "]), st" << ins[j] << ", sh" << ins[j] << ", " << r - 1 << ");\n";
  o << "  }\n";
}

void emit_copy(std::ostream& o, const std::vector<Slot>& slots, size_t out, size_t x, const std::string& what) {
  const std::string T = type_of(slots, out);
  o << "  { // stage: " << what << " -> slot " << out << "\n";
  o << "  tf_copy_nd<" << T << ">(static_cast<" << T << "*>(B[" << out << "]), st" << out << ", static_cast<const " << T
    << "*>(B[" << x << "]), st" << x << ", sh" << x << ", " << rank_of(slots, x) << ");\n";
  o << "  }\n";
}

void emit_shape_of(std::ostream& o, const std::vector<Slot>& slots, size_t out, size_t x) {
  o << "  { // stage: shape_of -> slot " << out << "\n" << buffer(slots, out, "y", true);
  for (size_t d = 0; d < rank_of(slots, x); ++d) o << "  y[" << d << "] = sh" << x << "[" << d << "];\n";
  o << "  (void)y;\n  }\n";
}

void emit_rank(std::ostream& o, const std::vector<Slot>& slots, size_t out, size_t x) {
  o << "  { // stage: rank -> slot " << out << "\n" << buffer(slots, out, "y", true);
  o << "  y[0] = INT64_C(" << rank_of(slots, x) << ");\n  }\n";
}

void emit_shape_extract(std::ostream& o, std::ostream& pre, const std::vector<Slot>& slots, size_t out,
                        size_t shape, const ops::ShapeExtract& op) {
  const std::string Sh = S(shape), idx = "INT64_C(" + std::to_string(op.index) + ")";
  pre << "  { // precheck: shape_extract index\n";
  pre << "  const int64_t n = sh" << Sh << "[0], i = " << idx << " < 0 ? " << idx << " + n : " << idx << ";\n";
  pre << "  if (i < 0 || i >= n) { rt->info[0] = " << idx << "; rt->info[1] = n; return " << kErrShapeIndex
      << "; }\n  }\n";
  o << "  { // stage: shape_extract -> slot " << out << "\n";
  o << buffer(slots, shape, "x") << buffer(slots, out, "y", true);
  o << "  const int64_t n = sh" << Sh << "[0], i = " << idx << " < 0 ? " << idx << " + n : " << idx << ";\n";
  o << "  y[0] = static_cast<int64_t>(x[i * st" << Sh << "[0]]);\n  }\n";
}

void emit_shape_compose(std::ostream& o, const std::vector<Slot>& slots, size_t out,
                        const std::vector<std::string>& dims) {
  o << "  { // stage: shape_compose -> slot " << out << "\n" << buffer(slots, out, "y", true);
  for (size_t j = 0; j < dims.size(); ++j) o << "  y[" << j << "] = " << dims[j] << ";\n";
  o << "  (void)y;\n  }\n";
}

}  // namespace tf::compiler
