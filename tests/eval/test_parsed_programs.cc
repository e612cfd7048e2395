// End-to-end: DSL source -> frontend::parse_module -> evaluate.
#include <cmath>

#include "core/frontend/parser.h"
#include "eval_helpers.h"

namespace tf::evaltest {
namespace {

constexpr const char* kSource = R"(from tilefoundry.dsl import *

N = DimVar("N", 1, 1024)

@func
def resnorm(x: Tensor[(N, 2), f32], r: Tensor[(N, 2), f32], w: Tensor[(2,), f32]
            ) -> tuple[Tensor[(N, 2), f32], Tensor[(N, 2), f32]]:
    h = x + r
    return h, rms_norm(h, w, eps=0.0)

@func
def swiglu(a: Tensor[(N, 2), f32], b: Tensor[(N, 2), f32]) -> Tensor[(N, 2), f32]:
    return silu(a) * b
)";

TEST(ParsedProgram, ResidualPlusRmsNorm) {
  ir::ModulePtr m = frontend::parse_module(kSource, "resnorm.py");
  auto out = eval::evaluate(*m, *m->lookup("resnorm"),
                            {f32({1, 2}, {1, 2}), f32({1, 2}, {2, 2}), f32({2}, {1, 2})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(values<float>(out[0]), (std::vector<double>{3, 4}));
  const double r = 1 / std::sqrt(12.5);  // mean of [9, 16]
  std::vector<double> y = values<float>(out[1]);
  EXPECT_NEAR(y[0], 3 * r, 1e-6);
  EXPECT_NEAR(y[1], 8 * r, 1e-6);
}

TEST(ParsedProgram, SwiGluBindsNFromTheInputs) {
  ir::ModulePtr m = frontend::parse_module(kSource, "swiglu.py");
  auto out = eval::evaluate(*m, *m->lookup("swiglu"), {f32({3, 2}, {0, 0, 0, 0, 0, 0}), f32({3, 2}, {1, 2, 3, 4, 5, 6})});
  EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(values<float>(out[0]), (std::vector<double>(6, 0.0)));  // silu(0) = 0
  expect_error([&] { eval::evaluate(*m, *m->lookup("swiglu"), {f32({0, 2}, {}), f32({0, 2}, {})}); },
               ir::ErrorKind::kInvalidArgument, "N");
}

}  // namespace
}  // namespace tf::evaltest
