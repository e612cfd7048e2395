// DLDataType <-> at::ScalarType for the dtypes that cross the TileFoundry
// ABI: bool, i8, i32, i64, f16, bf16, f32, f64.
#pragma once

#include <optional>

#include <ATen/core/ScalarType.h>
#include <tilefoundry/tilefoundry.h>

namespace tf::torch_ext {

// Bool is {kDLUInt, 8} under DLPack 0.6 and kDLBool (code 6) from DLPack 0.8.
// TileFoundry has no unsigned integer dtype, so {kDLUInt, 8} always means
// bool here. nullopt: no torch counterpart of a TileFoundry dtype.
std::optional<at::ScalarType> scalar_type_from_dl(DLDataType t);

// True when a torch tensor of this dtype may be handed to a kernel. uint8 is
// refused: toDLPack spells it exactly like bool, and TileFoundry would read
// it as bool.
bool is_supported_input(at::ScalarType s);

// The DLPack dtype a tensor of type s crosses the ABI as: bool is
// {kDLUInt, 8} (DLPack 0.6's spelling, same bytes as torch's bool), the
// others as at::getDLDataType names them. Only for is_supported_input types.
DLDataType dl_from_scalar_type(at::ScalarType s);

}  // namespace tf::torch_ext
