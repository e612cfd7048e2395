"""DLPack 0.6 structs for ctypes, and borrowing a DLTensor from a capsule.

Layouts mirror <dlpack/dlpack.h> (DLPACK_VERSION 60), the header that
tilefoundry.h includes.
"""
import ctypes
import sys


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
KDL_FLOAT8_E4M3FN, KDL_FLOAT8_E8M0FNU = 10, 14  # DLPack >= 1.1 only
_FP8_CODES = {(KDL_FLOAT8_E4M3FN, 8), (KDL_FLOAT8_E8M0FNU, 8)}

_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


class Borrowed:
    """A DLTensor viewing an object's memory without copying it.

    Holds the DLPack capsule, so the producer keeps the memory (and the
    shape/strides arrays the DLTensor points to) alive as long as this object
    lives. The capsule is never consumed: its destructor releases the view.
    """

    def __init__(self, obj, declared=None):
        """declared: the (code, bits) the kernel declares there, if known: a
        uint8 buffer where an 8-bit float is declared carries its bytes."""
        self.source = obj
        self.capsule, is_bool = _capsule_of(obj)
        ptr = _get_pointer(self.capsule, b"dltensor")
        self.managed = ctypes.cast(ptr, ctypes.POINTER(DLManagedTensor)).contents
        self.tensor = self.managed.dl_tensor  # the struct handed to C, by value
        dt = self.tensor.dtype
        fp8_bytes = (dt.code, dt.bits) == (KDL_UINT, 8) and declared in _FP8_CODES
        if is_bool or fp8_bytes:
            # A copy of the struct says what the bytes are (bool for the
            # uint8 view _capsule_of exported, the declared 8-bit float);
            # its shape and strides still point into the capsule.
            self.tensor = DLTensor.from_buffer_copy(self.managed.dl_tensor)
            self.tensor.dtype.code = KDL_BOOL if is_bool else declared[0]

    def data_address(self) -> int:
        """The address of element 0 as the C side sees it."""
        return (self.tensor.data or 0) + self.tensor.byte_offset

    def strides(self):
        t = self.tensor
        if not t.strides:
            return None
        return tuple(t.strides[i] for i in range(t.ndim))


def torch_if_imported():
    """The torch module when the process has imported it, else None: an object
    can only be a torch.Tensor if torch is already loaded, so nothing here
    imports it (importing tilefoundry must not pull in torch)."""
    return sys.modules.get("torch")


def _capsule_of(obj):
    """(DLPack capsule, whether obj is bool). torch 1.13 and numpy < 2 cannot
    export bool, so a bool tensor or array is exported as a uint8 view of
    the same memory, which Borrowed relabels bool (DLPack's kDLBool)."""
    torch = torch_if_imported()
    if torch is not None and isinstance(obj, torch.Tensor):
        from torch.utils import dlpack as torch_dlpack
        # detach() shares storage; to_dlpack refuses tensors that need grad.
        t = obj.detach()
        if t.dtype == torch.bool:
            return torch_dlpack.to_dlpack(t.view(torch.uint8)), True
        return torch_dlpack.to_dlpack(t), False
    if type(obj).__module__ == "numpy" and getattr(obj, "dtype", None) == bool:
        return obj.view("uint8").__dlpack__(), True
    if hasattr(obj, "__dlpack__"):
        return obj.__dlpack__(), False
    raise TypeError(f"expected a torch.Tensor or an object with __dlpack__, got {type(obj).__name__}")


# PyCapsule functions over raw PyObject* (the capsule destructor receives one).
_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_capsule_is_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_IsValid", ctypes.pythonapi))
_capsule_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))


def _delete_managed(address: int):
    managed = ctypes.cast(address, ctypes.POINTER(DLManagedTensor))
    if managed.contents.deleter:
        managed.contents.deleter(managed)


@ctypes.PYFUNCTYPE(None, ctypes.c_void_p)
def _capsule_destructor(capsule):
    # DLPack's protocol: a consumer renames the capsule to "used_dltensor"
    # and owns the tensor from then on; a capsule still named "dltensor" was
    # never consumed, so the producer's deleter runs here.
    if _capsule_is_valid(capsule, b"dltensor"):
        _delete_managed(_capsule_pointer(capsule, b"dltensor"))


class Owned:
    """A DLManagedTensor the library allocated (tf_kernel_call), handed to
    Python: any DLPack consumer takes it without a copy (numpy.from_dlpack,
    torch.from_dlpack, ...), once. Until then this object owns it, and
    collecting it calls the tensor's deleter."""

    def __init__(self, address: int):
        self._address = address
        t = ctypes.cast(address, ctypes.POINTER(DLManagedTensor)).contents.dl_tensor
        self.shape = tuple(t.shape[i] for i in range(t.ndim))
        self.dl_dtype = DLDataType(t.dtype.code, t.dtype.bits, t.dtype.lanes)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        # The legacy (unversioned) capsule: every consumer reads it, and one
        # that asked for max_version accepts it too (the protocol's fallback).
        if self._address is None:
            raise BufferError("this tensor was already handed to a DLPack consumer")
        capsule = _capsule_new(self._address, b"dltensor", ctypes.cast(_capsule_destructor, ctypes.c_void_p))
        self._address = None
        return capsule

    def __dlpack_device__(self):
        return (KDL_CPU, 0)

    def __del__(self):
        if getattr(self, "_address", None) is not None:
            _delete_managed(self._address)
            self._address = None
