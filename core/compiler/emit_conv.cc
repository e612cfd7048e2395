#include "core/compiler/emit_conv.h"

#include "core/compiler/emit_util.h"

namespace tf::compiler {

void emit_conv2d(std::ostream& o, const std::vector<Slot>& slots, size_t out, size_t x, size_t weight,
                 std::optional<size_t> bias, const ops::Conv2D& op) {
  const ir::DType d = slots[out].type->dtype();
  const std::string T = ctype(d), C = ctc(d), X = S(x), W = S(weight), Y = S(out);
  if (C != "float" && C != "double") unsupported("Conv2D of dtype " + std::string(ir::dtype_name(d)));
  auto lit = [](int64_t v) { return "INT64_C(" + std::to_string(v) + ")"; };
  o << "  { // stage: conv2d -> slot " << out << "\n";
  o << "  const int64_t Nn = sh" << X << "[0], H = sh" << X << "[2], Wd = sh" << X << "[3], O = sh" << W
    << "[0], kh = sh" << W << "[2], kw = sh" << W << "[3];\n";
  o << "  const int64_t Ho = sh" << Y << "[2], Wo = sh" << Y << "[3], G = " << lit(op.groups) << ";\n";
  o << "  const int64_t cg = sh" << X << "[1] / G, og = O / G, kk = cg * kh * kw, hw = Ho * Wo;\n";
  o << "  const " << T << "* x = static_cast<const " << T << "*>(B[" << X << "]);\n";
  o << "  const " << T << "* w = static_cast<const " << T << "*>(B[" << W << "]);\n";
  o << "  " << T << "* y = static_cast<" << T << "*>(B[" << Y << "]);\n";
  o << "  if (Nn * O * hw > 0) {\n";
  o << "  " << C << "* col = static_cast<" << C << "*>(std::malloc(static_cast<size_t>(kk * hw + og * kk + og * hw + 1) * sizeof("
    << C << ")));\n";
  o << "  " << C << "* wm = col + kk * hw;\n  " << C << "* res = wm + og * kk;\n";
  o << "  for (int64_t n = 0; n < Nn; ++n) {\n  for (int64_t g = 0; g < G; ++g) {\n";
  // col[(c, i, j), (oh, ow)] = x[n, g*cg + c, oh*s - p + i*d, ow*s - p + j*d], 0 outside.
  o << "  #pragma omp parallel for schedule(static) if (kk * hw >= 65536)\n";
  o << "  for (int64_t rr = 0; rr < kk; ++rr) {\n";
  o << "    const int64_t c = rr / (kh * kw), i = (rr / kw) % kh, j = rr % kw;\n";
  o << "    " << C << "* row = col + rr * hw;\n";
  o << "    const " << T << "* xc = x + n * st" << X << "[0] + (g * cg + c) * st" << X << "[1];\n";
  o << "    for (int64_t oh = 0; oh < Ho; ++oh) {\n";
  o << "      const int64_t ih = oh * " << lit(op.stride.at(0)) << " - " << lit(op.padding.at(0)) << " + i * "
    << lit(op.dilation.at(0)) << ";\n";
  o << "      for (int64_t ow = 0; ow < Wo; ++ow) {\n";
  o << "        const int64_t iw = ow * " << lit(op.stride.at(1)) << " - " << lit(op.padding.at(1)) << " + j * "
    << lit(op.dilation.at(1)) << ";\n";
  o << "        row[oh * Wo + ow] = ih >= 0 && ih < H && iw >= 0 && iw < Wd ? static_cast<" << C
    << ">(tf_widen(xc[ih * st" << X << "[2] + iw * st" << X << "[3]])) : " << C << "(0);\n";
  o << "      }\n    }\n  }\n";
  o << "  for (int64_t q = 0; q < og * kk; ++q) {\n";
  o << "    const int64_t oo = q / kk, rr = q % kk, c = rr / (kh * kw), i = (rr / kw) % kh, j = rr % kw;\n";
  o << "    wm[q] = static_cast<" << C << ">(tf_widen(w[(g * og + oo) * st" << W << "[0] + c * st" << W
    << "[1] + i * st" << W << "[2] + j * st" << W << "[3]]));\n";
  o << "  }\n";
  o << "  if (kk == 0) { for (int64_t q = 0; q < og * hw; ++q) res[q] = " << C << "(0); }\n";
  o << "  else rt->" << (C == "float" ? "sgemm" : "dgemm") << "(0, 0, og, hw, kk, wm, kk, col, hw, res, hw);\n";
  o << "  for (int64_t oo = 0; oo < og; ++oo) {\n";
  if (bias)
    o << "    const " << C << " b = static_cast<" << C << ">(tf_widen(static_cast<const " << T << "*>(B[" << *bias
      << "])[(g * og + oo) * st" << *bias << "[0]]));\n";
  else
    o << "    const " << C << " b = " << C << "(0);\n";
  o << "    " << T << "* yr = y + ((n * O) + g * og + oo) * hw;\n";
  o << "    for (int64_t p = 0; p < hw; ++p) yr[p] = tf_narrow<" << T << ">(static_cast<" << C
    << ">(res[oo * hw + p] + b));\n";
  o << "  }\n";
  o << "  }\n  }\n  std::free(col);\n  }\n  }\n";
}

}  // namespace tf::compiler
