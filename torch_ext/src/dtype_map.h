// DLDataType <-> at::ScalarType for the dtypes that cross the TileFoundry
// ABI: bool, u8, i8, i32, i64, f16, bf16, f32, f64, and the 8-bit floats:
// torch's float8 dtypes where this torch has them (fp8e4m3 from 2.1,
// f8e8m0 from 2.7); where it lacks one (1.13), such a tensor crosses as a
// uint8 tensor holding its bytes.
#pragma once

#include <optional>

#include <ATen/core/ScalarType.h>
#include <tilefoundry/tilefoundry.h>

namespace tf::torch_ext {

// bool is kDLBool (code 6, which DLPack 0.6 does not name) and {kDLUInt, 8}
// is u8 (torch's uint8), as DLPack defines them; the extension builds its
// DLTensors from the tensor's own dtype, so torch 1.13's DLPack spelling of
// bool ({kDLUInt, 8}) never reaches the library from here. nullopt: no torch
// counterpart of a TileFoundry dtype.
std::optional<at::ScalarType> scalar_type_from_dl(DLDataType t);

// True when a torch tensor of this dtype may be handed to a kernel.
bool is_supported_input(at::ScalarType s);

// The DLPack dtype a tensor of type s crosses the ABI as. Only for
// is_supported_input types.
DLDataType dl_from_scalar_type(at::ScalarType s);

// The DLPack dtype tensor type s crosses as where the kernel declares
// `declared`: a uint8 tensor where an 8-bit float is declared is that
// float's bytes (with any torch: code that quantizes to uint8 runs on both
// lines); otherwise as above.
DLDataType dl_for(at::ScalarType s, DLDataType declared);

}  // namespace tf::torch_ext
