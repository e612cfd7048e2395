#include "core/compiler/cuda/grid_size.h"

#include <algorithm>
#include <unordered_map>

#include "core/compiler/cuda/cuda_codegen.h"
#include "core/compiler/cuda/kernel_split.h"
#include "core/compiler/cuda/prelude.h"
#include "core/tir/functor.h"
#include "core/tir/op.h"
#include "core/tir/transform.h"

namespace tf::compiler::cuda {

using namespace tir;

namespace {

// The leaf's blocks in terms of the kernel's parameters: the lets on the
// path to it substituted, its guards as selects. Null for a leaf whose
// work is not one parallel loop.
ExprPtr blocks_in_context(const StmtPtr& s, Launch launch, VarMap* lets) {
  if (const LetStmt* l = as<LetStmt>(s); l && is_context(s)) {
    (*lets)[l->var().get()] = substitute(l->value(), *lets);
    return blocks_in_context(l->body(), launch, lets);
  }
  if (const IfThenElse* i = as<IfThenElse>(s)) {
    // kernel_split keeps the branch holding the leaf as the then case.
    if (i->else_case()) return nullptr;
    ExprPtr b = blocks_in_context(i->then_case(), launch, lets);
    return b ? select(substitute(i->cond(), *lets), b, i64(0)) : nullptr;
  }
  const For* f = as<For>(s);
  if (!f || f->for_kind() != ForKind::kParallel) return nullptr;
  const ExprPtr n = substitute(f->extent(), *lets);
  if (launch == Launch::kBlocks) return n;
  return div(add(n, i64(kBlockThreads - 1)), i64(kBlockThreads));
}

// Loads of the parameters' shapes, strides and run-time scalars become
// loads of the argument words; anything else left unknown.
class ToWords final : public Mutator {
 public:
  std::unordered_map<const Var*, int64_t> offsets;  // parameter array -> its first word
  bool unknown = false;

 protected:
  ExprPtr mutate_Load(const Load& n, const ExprPtr& self) override {
    auto it = offsets.find(n.base().get());
    if (it == offsets.end()) {
      unknown = true;
      return self;
    }
    return load(kernel_arg_words(), add(i64(it->second), mutate(n.index())));
  }
  ExprPtr mutate_Var(const Var& n, const ExprPtr& self) override {
    unknown = unknown || &n != kernel_arg_words().get();
    return self;
  }
  ExprPtr mutate_Address(const Address&, const ExprPtr& self) override {
    unknown = true;
    return self;
  }
  ExprPtr mutate_Call(const Call&, const ExprPtr& self) override {
    unknown = true;
    return self;
  }
};

// The parameters' arrays at their words (cuda_codegen.h's args_layout).
ToWords word_offsets(const LoweredEntry& e) {
  const ArgsLayout l = args_layout(e);
  ToWords w;
  for (size_t k = 0; k < e.slots.size(); ++k) {
    w.offsets[e.slot_vars.at(k).shape.get()] = static_cast<int64_t>(l.sh + l.dims[k]);
    w.offsets[e.slot_vars.at(k).strides.get()] = static_cast<int64_t>(l.st + l.dims[k]);
  }
  w.offsets[e.scalars.get()] = static_cast<int64_t>(l.rs);
  return w;
}

bool checked(BinaryOp op, int64_t a, int64_t b, int64_t* out) {
  switch (op) {
    case BinaryOp::kAdd: return !__builtin_add_overflow(a, b, out);
    case BinaryOp::kSub: return !__builtin_sub_overflow(a, b, out);
    case BinaryOp::kMul: return !__builtin_mul_overflow(a, b, out);
    case BinaryOp::kDiv:
    case BinaryOp::kMod:
      if (b == 0 || (a == INT64_MIN && b == -1)) return false;
      *out = op == BinaryOp::kDiv ? a / b : a % b;  // C's truncation, as TIR's
      return true;
    case BinaryOp::kMin: *out = std::min(a, b); return true;
    case BinaryOp::kMax: *out = std::max(a, b); return true;
    case BinaryOp::kEq: *out = a == b; return true;
    case BinaryOp::kNe: *out = a != b; return true;
    case BinaryOp::kLt: *out = a < b; return true;
    case BinaryOp::kLe: *out = a <= b; return true;
    case BinaryOp::kGt: *out = a > b; return true;
    case BinaryOp::kGe: *out = a >= b; return true;
    case BinaryOp::kAnd: *out = a != 0 && b != 0; return true;
    case BinaryOp::kOr: *out = a != 0 || b != 0; return true;
  }
  return false;
}

std::optional<int64_t> value_of(const Expr& e, const std::vector<int64_t>& words) {
  switch (e.kind()) {
    case ExprKind::kIntImm: return static_cast<const IntImm&>(e).value();
    case ExprKind::kLoad: {
      auto& l = static_cast<const Load&>(e);
      if (l.base() != kernel_arg_words()) return std::nullopt;
      const std::optional<int64_t> i = value_of(*l.index(), words);
      if (!i || *i < 0 || static_cast<uint64_t>(*i) >= words.size()) return std::nullopt;
      return words[static_cast<size_t>(*i)];
    }
    case ExprKind::kBinary: {
      auto& b = static_cast<const Binary&>(e);
      if (ir::is_float(b.a()->dtype())) return std::nullopt;
      const std::optional<int64_t> x = value_of(*b.a(), words), y = value_of(*b.b(), words);
      int64_t out = 0;
      if (!x || !y || !checked(b.op(), *x, *y, &out)) return std::nullopt;
      return out;
    }
    case ExprKind::kUnary: {
      auto& u = static_cast<const Unary&>(e);
      const std::optional<int64_t> x = value_of(*u.a(), words);
      if (!x || ir::is_float(u.a()->dtype())) return std::nullopt;
      if (u.op() == UnaryOp::kNot) return int64_t{*x == 0};
      if (*x == INT64_MIN) return std::nullopt;
      return -*x;
    }
    case ExprKind::kSelect: {
      auto& s = static_cast<const Select&>(e);
      const std::optional<int64_t> c = value_of(*s.cond(), words);
      if (!c) return std::nullopt;
      return value_of(*(*c ? s.t() : s.f()), words);
    }
    case ExprKind::kCast: {
      // Index arithmetic widens and narrows only between i32, i64 and bool.
      auto& c = static_cast<const Cast&>(e);
      const std::optional<int64_t> x = value_of(*c.value(), words);
      if (!x || ir::is_float(c.value()->dtype())) return std::nullopt;
      if (c.dtype() == DType::kBool) return int64_t{*x != 0};
      if (c.dtype() == DType::kI64) return x;
      if (c.dtype() == DType::kI32 && *x >= INT32_MIN && *x <= INT32_MAX) return x;
      return std::nullopt;
    }
    default: return std::nullopt;
  }
}

}  // namespace

const VarPtr& kernel_arg_words() {
  static const VarPtr words = Var::make("A", Type::pointer(DType::kI64));
  return words;
}

ExprPtr kernel_blocks(const StmtPtr& kernel, Launch launch, const LoweredEntry& e) {
  if (launch == Launch::kOneBlock) return nullptr;  // the launch alone says: one block
  VarMap lets;
  const ExprPtr blocks = blocks_in_context(kernel, launch, &lets);
  if (!blocks) return nullptr;
  ToWords words = word_offsets(e);
  ExprPtr out = words.mutate(blocks);
  return words.unknown ? nullptr : out;
}

std::optional<int64_t> evaluate_blocks(const ExprPtr& blocks, const std::vector<int64_t>& words) {
  return value_of(*blocks, words);
}

}  // namespace tf::compiler::cuda
