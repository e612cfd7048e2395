// Shape dispatch (docs/ir.md) at the sema level: the authoring freeze and
// run-time variant selection, on hand-built IR.
#include <gtest/gtest.h>

#include "core/ir/error.h"
#include "core/sema/dispatch.h"

namespace tf::sema {
namespace {

const ir::ShapeDim kS = ir::ShapeDim::var("S", 1, 100);

ir::Function::Fields signature() {
  ir::Function::Fields f;
  f.name = "d";
  f.params = {ir::Var::make("q", ir::TensorType::make({kS}, ir::DType::kF32))};
  f.return_type = ir::TensorType::make({kS}, ir::DType::kF32);
  return f;
}

ir::FunctionPtr variant(const ir::Function::Fields& base, int64_t lo, int64_t hi, std::string label) {
  ir::Function::Fields f = base;
  f.body = f.params[0];
  f.specializations = {{"S", lo, hi}};
  f.label = std::move(label);
  return ir::Function::make(std::move(f));
}

TEST(HirConformance, Dispatch_SealedBaseRejectsALaterVariant) {
  PrototypeBuilder b(signature());
  b.add_variant(variant(b.base(), 1, 50, "lo"));
  b.add_variant(variant(b.base(), 50, 100, "hi"));
  EXPECT_FALSE(b.sealed());
  ir::FunctionPtr base = b.seal();
  EXPECT_TRUE(b.sealed());
  EXPECT_EQ(b.seal(), base);  // idempotent: the same node
  try {
    b.add_variant(variant(b.base(), 1, 2, "late"));
    ADD_FAILURE() << "expected the sealed base to reject a variant";
  } catch (const ir::Error& e) {
    EXPECT_EQ(e.kind(), ir::ErrorKind::kVerify);
    EXPECT_NE(std::string(e.what()).find("sealed"), std::string::npos) << e.what();
  }
  EXPECT_EQ(base->variants().size(), 2u);
}

TEST(HirConformance, Dispatch_EveryInEnvelopeShapeSelectsExactlyOneVariant) {
  PrototypeBuilder b(signature());
  b.add_variant(variant(b.base(), 50, 100, "hi"));  // declaration order does not matter
  b.add_variant(variant(b.base(), 1, 50, "lo"));
  ir::FunctionPtr base = b.seal();
  for (int64_t s = 1; s < 100; ++s) {
    int matches = 0;
    for (const auto& v : base->variants()) {
      const auto& p = v->specializations()[0];
      matches += s >= p.lo && s < p.hi;
    }
    EXPECT_EQ(matches, 1) << s;
    EXPECT_EQ(select_variant(*base, {{"S", s}}).label(), s < 50 ? "lo" : "hi") << s;
  }
  try {
    select_variant(*base, {{"S", 100}});
    ADD_FAILURE() << "expected an out-of-envelope error";
  } catch (const ir::Error& e) {
    EXPECT_EQ(e.kind(), ir::ErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("S = 100 is outside the dispatch envelope [1, 100)"), std::string::npos)
        << e.what();
  }
}

TEST(HirConformance, Dispatch_AVariantMustNotCarryVariants) {
  ir::Function::Fields f = signature();
  f.body = f.params[0];
  f.specializations = {{"S", 1, 100}};
  f.variants = {variant(signature(), 1, 100, "x")};
  EXPECT_THROW(ir::Function::make(std::move(f)), ir::Error);
}

}  // namespace
}  // namespace tf::sema
