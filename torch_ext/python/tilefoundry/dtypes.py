"""The dtypes that cross the C ABI: one table of DSL name, DLPack (code, bits)
and torch dtype, and every mapping derived from it.

torch is imported inside the functions that need it, never at module import,
so that `import tilefoundry` works without torch.
"""
from ._dlpack import KDL_BFLOAT, KDL_BOOL, KDL_FLOAT, KDL_INT, KDL_UINT

# (DSL name, DLPack (code, bits) the library hands out, torch dtype name,
# numpy dtype name or None). TileFoundry has no unsigned dtype: {kDLUInt, 8}
# is bool, DLPack 0.6's (and torch 1.13's) spelling. The 8- and 4-bit float
# types have no DLPack code and never cross the ABI; numpy has no bfloat16.
TABLE = (
    ("bool", (KDL_UINT, 8), "bool", "bool"),
    ("i8", (KDL_INT, 8), "int8", "int8"),
    ("i32", (KDL_INT, 32), "int32", "int32"),
    ("i64", (KDL_INT, 64), "int64", "int64"),
    ("f16", (KDL_FLOAT, 16), "float16", "float16"),
    ("bf16", (KDL_BFLOAT, 16), "bfloat16", None),
    ("f32", (KDL_FLOAT, 32), "float32", "float32"),
    ("f64", (KDL_FLOAT, 64), "float64", "float64"),
)

# Other spellings the library accepts on input: newer DLPack's kDLBool.
_DL_ALIASES = {(KDL_BOOL, 8): "bool"}

_BY_DL = {dl: name for name, dl, _, _ in TABLE}
_BY_DL.update(_DL_ALIASES)
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
    """The torch dtype of a DSL dtype name."""
    import torch
    if name not in _BY_NAME:
        raise _unsupported(f"{name!r} is not a TileFoundry dtype with a torch dtype")
    return getattr(torch, _BY_NAME[name][1])


def name_from_torch(dtype):
    """The DSL name of a torch dtype, or None when TileFoundry has none."""
    import torch
    for name, _, torch_name, _ in TABLE:
        if dtype == getattr(torch, torch_name):
            return name
    return None


def torch_dtype_from_dl(dt):
    """The torch dtype of a DLDataType, for allocating outputs."""
    name = _BY_DL.get((dt.code, dt.bits)) if dt.lanes == 1 else None
    if name is None:
        raise _unsupported(f"output dtype (code {dt.code}, bits {dt.bits}) has no torch dtype")
    return torch_dtype(name)
