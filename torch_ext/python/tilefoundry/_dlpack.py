"""DLPack 0.6 structs for ctypes, and borrowing a DLTensor from a capsule.

Layouts mirror <dlpack/dlpack.h> (DLPACK_VERSION 60), the header that
tilefoundry.h includes.
"""
import ctypes


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),  # in elements; NULL = compact
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensor(ctypes.Structure):
    pass


DLManagedTensor._fields_ = [
    ("dl_tensor", DLTensor),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))),
]

KDL_CPU = 1
KDL_INT, KDL_UINT, KDL_FLOAT, KDL_BFLOAT = 0, 1, 2, 4
KDL_BOOL = 6  # DLPack >= 0.8 only

_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


class Borrowed:
    """A DLTensor viewing an object's memory without copying it.

    Holds the DLPack capsule, so the producer keeps the memory (and the
    shape/strides arrays the DLTensor points to) alive as long as this object
    lives. The capsule is never consumed: its destructor releases the view.
    """

    def __init__(self, obj):
        self.source = obj
        self.capsule = _capsule_of(obj)
        ptr = _get_pointer(self.capsule, b"dltensor")
        self.managed = ctypes.cast(ptr, ctypes.POINTER(DLManagedTensor)).contents
        self.tensor = self.managed.dl_tensor  # the struct handed to C, by value

    def data_address(self) -> int:
        """The address of element 0 as the C side sees it."""
        return (self.tensor.data or 0) + self.tensor.byte_offset

    def strides(self):
        t = self.tensor
        if not t.strides:
            return None
        return tuple(t.strides[i] for i in range(t.ndim))


def _capsule_of(obj):
    try:
        import torch
        from torch.utils import dlpack as torch_dlpack
        if isinstance(obj, torch.Tensor):
            # detach() shares storage; to_dlpack refuses tensors that need grad.
            t = obj.detach()
            if t.dtype == torch.bool:
                # torch 1.13 cannot export bool; a uint8 view of the same
                # memory is DLPack 0.6's spelling of bool ({kDLUInt, 8}).
                t = t.view(torch.uint8)
            return torch_dlpack.to_dlpack(t)
    except ImportError:
        pass
    if hasattr(obj, "__dlpack__"):
        return obj.__dlpack__()
    raise TypeError(f"expected a torch.Tensor or an object with __dlpack__, got {type(obj).__name__}")
