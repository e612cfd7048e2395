// Builders shared by the sharding conformance tests: meshes, canonical
// sharded tensor types (Split(axis=k) sugar), Vars, typed Calls, and an
// expectation that a typing rule rejects with the right kind and words.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "core/ir/error.h"
#include "core/ir/shard.h"
#include "core/ops/sharding/shard_util.h"
#include "core/sema/typeinfer.h"

namespace tf::testing_shard {

inline ir::MeshPtr mesh_x(int64_t n = 4) {
  return std::make_shared<const ir::Mesh>(ir::Mesh{"cta", "cta", {n}, {"x"}});
}
inline ir::MeshPtr mesh_xy() {
  return std::make_shared<const ir::Mesh>(ir::Mesh{"cta", "cta", {2, 2}, {"x", "y"}});
}
inline ir::ShardAttr split_axis(int64_t k) { return ir::ShardAttr::split(k); }  // logical: tensor axis k
inline ir::ShardAttr bcast() { return ir::ShardAttr::broadcast(); }
inline ir::ShardAttr partial(ir::Reduction r = ir::Reduction::kSum) { return ir::ShardAttr::partial(r); }

// Tensor[shape, dtype, ShardLayout(mesh, logical attrs)] in canonical form.
inline ir::TypePtr sharded(ir::Shape shape, const ir::MeshPtr& mesh, std::vector<ir::ShardAttr> logical,
                           ir::DType dt = ir::DType::kF32) {
  auto l = ops::shard::canonical_layout(mesh, logical, shape);
  return ir::TensorType::make(std::move(shape), dt, l);
}
inline ir::TypePtr plain(ir::Shape shape, ir::DType dt = ir::DType::kF32) {
  return ir::TensorType::make(std::move(shape), dt);
}
inline ir::ExprPtr var(const std::string& name, ir::TypePtr t) { return ir::Var::make(name, std::move(t)); }

template <typename OpT, typename... A>
ir::CallPtr call(std::vector<ir::ExprPtr> args, A&&... a) {
  return sema::make_op_call(std::make_shared<const OpT>(std::forward<A>(a)...), std::move(args));
}

inline const ir::ShardLayout* layout_of(const ir::ExprPtr& e) {
  const ir::TensorType* t = ir::as_tensor(e->type());
  return t ? ir::as_shard_layout(t->layout()) : nullptr;
}

// The call must fail typeinfer with kType and every word in `words`.
inline void expect_rejected(const std::function<void()>& f, const std::vector<std::string>& words) {
  try {
    f();
    ADD_FAILURE() << "expected a type error containing '" << (words.empty() ? "" : words[0]) << "'";
  } catch (const ir::Error& e) {
    EXPECT_EQ(e.kind(), ir::ErrorKind::kType) << e.what();
    for (const auto& w : words) EXPECT_NE(std::string(e.what()).find(w), std::string::npos) << e.what() << "\n missing: " << w;
  }
}

}  // namespace tf::testing_shard
