// Op: the base of every HIR operator (docs/ir.md). An Op is an immutable value
// describing *what* a Call computes (kind and attributes); the Call supplies
// the operands. Concrete ops live in core/ops, one struct per Op, and
// expose their attributes through attrs() so that equality, hashing and
// printing are generic.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/ir/dtype.h"
#include "core/ir/layout.h"
#include "core/ir/shape.h"

namespace tf::ir {

// LayoutPtr: a layout-valued attribute (Reshard's target layout); compared
// and hashed structurally, spelled as its DSL text.
using AttrValue = std::variant<bool, int64_t, double, std::string, DType, std::vector<int64_t>,
                               Shape, StorageKind, LayoutPtr>;

struct Attr {
  std::string name;  // the DSL keyword spelling
  AttrValue value;
};

bool attr_value_equal(const AttrValue& a, const AttrValue& b);
size_t attr_value_hash(const AttrValue& v);
// DSL literal spelling: True, 3, 1e-06, "tanh", f32, (0, 1), (N, 4), "rmem".
std::string attr_value_to_string(const AttrValue& v);
// Shortest spelling that parses back to the same double, always float-looking.
std::string format_double(double d);

class Op {
 public:
  virtual ~Op() = default;
  // The Op's class name ("Binary", "RMSNorm"); the registry key.
  virtual std::string_view name() const = 0;
  // Canonical attributes in declaration order; equal ops have equal attrs.
  virtual std::vector<Attr> attrs() const = 0;
  // The DSL function that builds this op ("add", "rms_norm") and the
  // attributes it takes as keywords; together they are the printed form
  // `surface_name(operands..., k=v, ...)` that the parser reads back.
  virtual std::string surface_name() const = 0;
  virtual std::vector<Attr> surface_attrs() const { return attrs(); }

  bool structural_equal(const Op& other) const;
  size_t structural_hash() const;
  std::string to_string() const;  // Binary(kind="add")
};
using OpPtr = std::shared_ptr<const Op>;

}  // namespace tf::ir
