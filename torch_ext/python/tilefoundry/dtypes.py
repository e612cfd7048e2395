"""The dtypes that cross the C ABI: one table of DSL name, DLPack (code, bits)
and torch dtype, and every mapping derived from it.

torch is imported inside the functions that need it, never at module import,
so that `import tilefoundry` works without torch.
"""
from ._dlpack import (KDL_BFLOAT, KDL_BOOL, KDL_FLOAT, KDL_FLOAT8_E4M3FN, KDL_FLOAT8_E8M0FNU, KDL_INT,
                      KDL_UINT)

# (DSL name, DLPack (code, bits), torch dtype name, numpy dtype name or
# None). bool is kDLBool (code 6) and {kDLUInt, 8} is u8, as DLPack defines
# them; torch 1.13 and numpy < 2 cannot export or import kDLBool, so bool
# crosses as a uint8 view relabelled bool (_dlpack.py). The 8-bit floats
# are torch's float8 dtypes where torch has them; where it lacks one (torch
# 1.13) and in numpy, a uint8 tensor or array of their bytes stands for them
# (FP8_BYTES). f4e2m1 does not cross; numpy has no bfloat16.
TABLE = (
    ("bool", (KDL_BOOL, 8), "bool", "bool"),
    ("u8", (KDL_UINT, 8), "uint8", "uint8"),
    ("i8", (KDL_INT, 8), "int8", "int8"),
    ("i32", (KDL_INT, 32), "int32", "int32"),
    ("i64", (KDL_INT, 64), "int64", "int64"),
    ("f16", (KDL_FLOAT, 16), "float16", "float16"),
    ("bf16", (KDL_BFLOAT, 16), "bfloat16", None),
    ("f32", (KDL_FLOAT, 32), "float32", "float32"),
    ("f64", (KDL_FLOAT, 64), "float64", "float64"),
    ("fp8e4m3", (KDL_FLOAT8_E4M3FN, 8), "float8_e4m3fn", "uint8"),
    ("f8e8m0", (KDL_FLOAT8_E8M0FNU, 8), "float8_e8m0fnu", "uint8"),
)

# The 8-bit floats, whose bytes a uint8 tensor or array may carry.
FP8_BYTES = {(KDL_FLOAT8_E4M3FN, 8), (KDL_FLOAT8_E8M0FNU, 8)}

_BY_DL = {dl: name for name, dl, _, _ in TABLE}
_BY_NAME = {name: (dl, torch_name) for name, dl, torch_name, _ in TABLE}
_NUMPY = {name: numpy_name for name, _, _, numpy_name in TABLE if numpy_name}


def _unsupported(what):
    from .errors import TileFoundryError
    return TileFoundryError("TF_ERR_UNSUPPORTED", what)


def name_from_dl(dt):
    """The DSL name ("f32") of a DLDataType."""
    name = _BY_DL.get((dt.code, dt.bits)) if dt.lanes == 1 else None
    if name is None:
        raise _unsupported(f"dtype (code {dt.code}, bits {dt.bits}, lanes {dt.lanes}) "
                           "is not a TileFoundry dtype")
    return name


def dl_from_name(name):
    """(code, bits) of a DSL dtype name."""
    if name not in _BY_NAME:
        raise _unsupported(f"{name!r} is not a TileFoundry dtype with a DLPack code")
    return _BY_NAME[name][0]


def numpy_dtype(name, what="kernel"):
    """The numpy dtype of a DSL dtype name (numpy imported here, only then)."""
    import numpy as np
    if name not in _NUMPY:
        raise TypeError(f"{what}: numpy has no {name}; call_dlpack() hands the result to a "
                        "DLPack consumer that has one (torch.from_dlpack)")
    return np.dtype(_NUMPY[name])


def torch_dtype(name):
    """The torch dtype of a DSL dtype name (uint8 for an 8-bit float this
    torch has no dtype for: its bytes)."""
    import torch
    if name not in _BY_NAME:
        raise _unsupported(f"{name!r} is not a TileFoundry dtype with a torch dtype")
    dl, torch_name = _BY_NAME[name]
    if dl in FP8_BYTES:
        return getattr(torch, torch_name, torch.uint8)
    return getattr(torch, torch_name)


def name_from_torch(dtype):
    """The DSL name of a torch dtype, or None when TileFoundry has none."""
    import torch
    for name, _, torch_name, _ in TABLE:
        if hasattr(torch, torch_name) and dtype == getattr(torch, torch_name):
            return name
    return None


def torch_holds(dtype, name):
    """Whether a torch tensor of `dtype` passes for DSL dtype `name`: its own
    dtype, or uint8 (its bytes) for an 8-bit float."""
    import torch
    if name_from_torch(dtype) == name:
        return True
    return name in _BY_NAME and _BY_NAME[name][0] in FP8_BYTES and dtype == torch.uint8


def torch_dtype_from_dl(dt):
    """The torch dtype of a DLDataType, for allocating outputs."""
    name = _BY_DL.get((dt.code, dt.bits)) if dt.lanes == 1 else None
    if name is None:
        raise _unsupported(f"output dtype (code {dt.code}, bits {dt.bits}) has no torch dtype")
    return torch_dtype(name)
