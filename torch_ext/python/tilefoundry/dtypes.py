"""DLDataType -> torch dtype, for allocating outputs."""
from ._dlpack import KDL_BFLOAT, KDL_BOOL, KDL_FLOAT, KDL_INT, KDL_UINT


def torch_dtype_from_dl(dt):
    import torch
    table = {
        (KDL_FLOAT, 16): torch.float16, (KDL_FLOAT, 32): torch.float32,
        (KDL_FLOAT, 64): torch.float64, (KDL_BFLOAT, 16): torch.bfloat16,
        (KDL_INT, 8): torch.int8, (KDL_INT, 32): torch.int32, (KDL_INT, 64): torch.int64,
        # TileFoundry has no unsigned dtype: {kDLUInt, 8} is bool (DLPack 0.6 spelling).
        (KDL_UINT, 8): torch.bool, (KDL_BOOL, 8): torch.bool,
    }
    key = (dt.code, dt.bits)
    if dt.lanes != 1 or key not in table:
        from .errors import TileFoundryError
        raise TileFoundryError("TF_ERR_UNSUPPORTED",
                               f"output dtype (code {dt.code}, bits {dt.bits}) has no torch dtype")
    return table[key]
