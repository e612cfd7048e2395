// Shared helpers of the evaluator tests: build a sealed one-function Module
// from IR directly (sema::make_op_call + Function::make + sema::seal), and
// move values in and out of NDArrays.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/eval/evaluator.h"
#include "core/ir/error.h"
#include "core/ir/module.h"
#include "core/runtime/half.h"
#include "core/runtime/ndarray.h"
#include "core/sema/typeinfer.h"
#include "core/sema/verify.h"

namespace tf::evaltest {

using ir::DType;
using runtime::NDArray;

inline ir::VarPtr param(const std::string& name, ir::Shape shape, DType dtype) {
  return ir::Var::make(name, ir::TensorType::make(std::move(shape), dtype));
}

template <typename OpT, typename... A>
ir::ExprPtr call(std::vector<ir::ExprPtr> args, A&&... op_args) {
  return sema::make_op_call(std::make_shared<OpT>(std::forward<A>(op_args)...), std::move(args));
}

struct Program {
  ir::ModulePtr module;
  ir::FunctionPtr fn;
  std::vector<NDArray> run(const std::vector<NDArray>& inputs) const {
    return eval::evaluate(*module, *fn, inputs);
  }
};

inline ir::FunctionPtr function(const std::string& name, std::vector<ir::VarPtr> params,
                                ir::ExprPtr body) {
  ir::Function::Fields f;
  f.name = name;
  f.params = std::move(params);
  f.return_type = body->type();
  f.body = std::move(body);
  return ir::Function::make(std::move(f));
}

inline Program program(std::vector<ir::VarPtr> params, ir::ExprPtr body,
                       std::vector<ir::FunctionPtr> others = {}) {
  others.push_back(function("f", std::move(params), std::move(body)));
  ir::ModulePtr m = sema::seal(ir::Target::default_cpu(), others);
  return {m, m->lookup("f")};
}

// Storage conversion for test values: floats given as double.
template <typename T>
T to_storage(double v) {
  if constexpr (std::is_same_v<T, runtime::Half> || std::is_same_v<T, runtime::BFloat16>)
    return T::from_float(static_cast<float>(v));
  else
    return static_cast<T>(v);
}
template <typename T>
double from_storage(T v) {
  if constexpr (std::is_same_v<T, runtime::Half> || std::is_same_v<T, runtime::BFloat16>)
    return v.to_float();
  else
    return static_cast<double>(v);
}

template <typename T>
NDArray array(DType dtype, std::vector<int64_t> shape, const std::vector<double>& values) {
  NDArray a = NDArray::empty(dtype, std::move(shape));
  EXPECT_EQ(static_cast<size_t>(a.numel()), values.size());
  T* p = static_cast<T*>(a.data());
  for (size_t i = 0; i < values.size(); ++i) p[i] = to_storage<T>(values[i]);
  return a;
}
inline NDArray f32(std::vector<int64_t> shape, const std::vector<double>& v) {
  return array<float>(DType::kF32, std::move(shape), v);
}
inline NDArray i32(std::vector<int64_t> shape, const std::vector<double>& v) {
  return array<int32_t>(DType::kI32, std::move(shape), v);
}

// The elements of a contiguous array, as doubles.
template <typename T>
std::vector<double> values(const NDArray& a) {
  EXPECT_TRUE(a.is_contiguous());
  std::vector<double> out;
  const T* p = static_cast<const T*>(a.data());
  for (int64_t i = 0; i < a.numel(); ++i) out.push_back(from_storage<T>(p[i]));
  return out;
}

// Runs f and checks it throws ir::Error of `kind` whose message contains `words`.
template <typename F>
void expect_error(F f, ir::ErrorKind kind, const std::string& words) {
  try {
    f();
    ADD_FAILURE() << "expected an Error containing \"" << words << "\"";
  } catch (const ir::Error& e) {
    EXPECT_EQ(static_cast<int>(e.kind()), static_cast<int>(kind)) << e.what();
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

}  // namespace tf::evaltest
