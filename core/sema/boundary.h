// The function boundary. A function returns by value: its result is
// materialized into the caller's output buffer, and the declared return type
// is the type of that buffer. What the buffer's type fixes is the logical
// value — shape (DimVar bounds included), dtype and sharding (mesh, the
// Split / Broadcast / Partial state of every mesh axis, the layout positions).
// Where the body's value lives and how it is strided is the body's business:
// a register accumulator (storage rmem) or a reduction that kept its input's
// strides materializes into a fresh gmem buffer with the declared strides.
#pragma once

#include <optional>
#include <string>

#include "core/ir/type.h"

namespace tf::sema {

// nullopt when a value of type `value` can be returned as `declared`;
// otherwise what differs, e.g. "mesh axis 0 is Partial("sum") in the returned
// value but Broadcast() in the return annotation (...)".
std::optional<std::string> return_mismatch(const ir::TypePtr& value, const ir::TypePtr& declared);

}  // namespace tf::sema
