"""ctypes binding of libtilefoundry.so (include/tilefoundry/tilefoundry.h).

The library is looked up, in order, in $TILEFOUNDRY_LIB_DIR, in the
package's own lib/ (an installed wheel), and in <repo>/build/lib (a source
tree built with `make`). Loading it checks its ABI version against the one
these bindings are written for (ABI_MAJOR, ABI_MINOR).
"""
import ctypes
import importlib.resources
import os
from pathlib import Path

from ._dlpack import DLDataType, DLManagedTensor, DLTensor
from .errors import AbiMismatchError, TileFoundryError

# The C ABI these bindings (structs, prototypes) are written for: a library
# of another major, or of an older minor (which may lack a function used
# here), is refused when loaded. tests/python/test_packaging.py keeps these
# equal to the header's TF_VERSION_MAJOR / TF_VERSION_MINOR.
ABI_MAJOR = 0
ABI_MINOR = 9

TF_OK = 0
TF_MAX_NDIM = 8
TF_BACKEND_NATIVE = 0
TF_BACKEND_EVALUATOR = 1
TF_BACKEND_VIRTUAL_MESH = 2
TF_BACKEND_CUDA = 3
TF_ERR_UNSUPPORTED = 6


class CompileOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("backend", ctypes.c_int32),
        ("flags", ctypes.c_uint32),
        ("reserved", ctypes.c_uint32 * 5),
    ]


class MemoryStats(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("reserved", ctypes.c_uint32)] + [
        (name, ctypes.c_uint64) for name in ("bytes_in_use", "bytes_cached", "blocks_cached",
                                             "cache_limit", "hits", "misses", "bytes_released")]


class InputAxis(ctypes.Structure):
    """tf_input_axis: what binding requires of one input axis (since 0.4)."""
    _fields_ = [("struct_size", ctypes.c_uint32), ("rule", ctypes.c_int32)] + [
        (name, ctypes.c_int64) for name in ("value", "lo", "hi", "dimvar_input", "dimvar_axis")]


class ShardAttr(ctypes.Structure):
    """tf_shard_attr: a tensor's state on one mesh axis (since 0.8)."""
    _fields_ = [("kind", ctypes.c_int32), ("tensor_axis", ctypes.c_int32), ("reduction", ctypes.c_int32)]


TF_SHARD_BROADCAST, TF_SHARD_SPLIT, TF_SHARD_PARTIAL = 0, 1, 2
TF_REDUCTION_NAMES = ("sum", "max", "min")  # index = tf_reduction

# The collectives of a tf_communicator (since 0.8); err is a char buffer.
ALL_REDUCE_FN = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_int32, ctypes.POINTER(DLTensor),
                                 ctypes.c_int32, ctypes.c_void_p, ctypes.c_size_t)
MOVE_FN = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_int32, ctypes.POINTER(DLTensor),
                           ctypes.POINTER(DLTensor), ctypes.c_void_p, ctypes.c_size_t)
REDUCE_SCATTER_FN = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_int32, ctypes.POINTER(DLTensor),
                                     ctypes.POINTER(DLTensor), ctypes.c_int32, ctypes.c_void_p, ctypes.c_size_t)


class Communicator(ctypes.Structure):
    """tf_communicator (since 0.8)."""
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("num_axes", ctypes.c_int32),
        ("axis_size", ctypes.POINTER(ctypes.c_int64)),
        ("axis_coord", ctypes.POINTER(ctypes.c_int64)),
        ("ctx", ctypes.c_void_p),
        ("all_reduce", ALL_REDUCE_FN),
        ("all_gather", MOVE_FN),
        ("reduce_scatter", REDUCE_SCATTER_FN),
        ("all_to_all", MOVE_FN),
        ("flags", ctypes.c_uint32),
    ]


TF_COMM_TRUSTED_CALLS = 1


def package_dir() -> Path:
    """The directory of the tilefoundry package (its install prefix in a wheel)."""
    return Path(str(importlib.resources.files(__package__))).resolve()


def lib_dirs():
    """Directories searched for the shared libraries, in order."""
    here = package_dir()
    dirs = []
    if os.environ.get("TILEFOUNDRY_LIB_DIR"):
        dirs.append(Path(os.environ["TILEFOUNDRY_LIB_DIR"]))
    dirs.append(here / "lib")
    dirs.append(here.parents[2] / "build" / "lib")  # here = <repo>/torch_ext/python/tilefoundry
    return dirs


def find_library(name: str) -> Path:
    for d in lib_dirs():
        if (d / name).is_file():
            return d / name
    searched = ", ".join(str(d) for d in lib_dirs())
    raise OSError(f"{name} not found (searched {searched}); install the package with "
                  "`pip install --no-build-isolation .`, build it with `make build`, "
                  "or set TILEFOUNDRY_LIB_DIR")


_P = ctypes.c_void_p
_SZ = ctypes.c_size_t
_PSZ = ctypes.POINTER(ctypes.c_size_t)
_PSTR = ctypes.POINTER(ctypes.c_char_p)
_PTEN = ctypes.POINTER(DLTensor)

# name: (restype, argtypes). Every tf_status function returns c_int.
_PROTOTYPES = {
    "tf_abi_version": (ctypes.c_uint32, []),
    "tf_last_error": (ctypes.c_char_p, []),
    "tf_status_name": (ctypes.c_char_p, [ctypes.c_int]),
    "tf_module_parse": (ctypes.c_int, [ctypes.c_char_p, _SZ, ctypes.c_char_p, ctypes.POINTER(_P)]),
    "tf_module_print": (ctypes.c_int, [_P, ctypes.POINTER(ctypes.c_void_p)]),
    "tf_module_num_functions": (ctypes.c_int, [_P, _PSZ]),
    "tf_module_function_name": (ctypes.c_int, [_P, _SZ, _PSTR]),
    "tf_module_signature": (ctypes.c_int, [_P, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]),
    "tf_module_release": (None, [_P]),
    "tf_kernel_compile": (ctypes.c_int, [_P, ctypes.c_char_p, ctypes.POINTER(CompileOptions),
                                         ctypes.POINTER(_P)]),
    "tf_kernel_backend": (ctypes.c_int, [_P, ctypes.POINTER(ctypes.c_int32)]),
    "tf_kernel_name": (ctypes.c_int, [_P, _PSTR]),
    "tf_kernel_num_inputs": (ctypes.c_int, [_P, _PSZ]),
    "tf_kernel_num_outputs": (ctypes.c_int, [_P, _PSZ]),
    "tf_kernel_output_alias": (ctypes.c_int, [_P, _SZ, ctypes.POINTER(ctypes.c_int64)]),
    "tf_kernel_input_name": (ctypes.c_int, [_P, _SZ, _PSTR]),
    "tf_kernel_input_desc": (ctypes.c_int, [_P, _SZ, ctypes.POINTER(DLDataType),
                                            ctypes.POINTER(ctypes.c_int32)]),
    "tf_kernel_output_desc": (ctypes.c_int, [_P, _PTEN, _SZ, _SZ, ctypes.POINTER(DLDataType),
                                             ctypes.POINTER(ctypes.c_int32),
                                             ctypes.POINTER(ctypes.c_int64)]),
    "tf_kernel_run": (ctypes.c_int, [_P, _PTEN, _SZ, _PTEN, _SZ]),
    "tf_kernel_call": (ctypes.c_int, [_P, _PTEN, _SZ,
                                      ctypes.POINTER(ctypes.POINTER(DLManagedTensor)), _SZ]),
    "tf_kernel_retain": (ctypes.c_int, [_P]),
    "tf_kernel_release": (None, [_P]),
    "tf_string_free": (None, [ctypes.c_void_p]),
    "tf_memory_get_stats": (ctypes.c_int, [ctypes.POINTER(MemoryStats)]),
    "tf_memory_set_cache_limit": (ctypes.c_int, [ctypes.c_uint64]),
    "tf_memory_empty_cache": (ctypes.c_int, []),
    "tf_set_num_threads": (ctypes.c_int, [ctypes.c_int32]),
    "tf_get_num_threads": (ctypes.c_int, [ctypes.POINTER(ctypes.c_int32)]),
    "tf_kernel_output_type": (ctypes.c_int, [_P, _SZ, ctypes.POINTER(DLDataType),
                                             ctypes.POINTER(ctypes.c_int32)]),
    "tf_kernel_input_axis": (ctypes.c_int, [_P, _SZ, _SZ, ctypes.POINTER(InputAxis)]),
    "tf_kernel_input_extent": (ctypes.c_int, [_P, _SZ, _SZ, ctypes.POINTER(ctypes.c_int64), _SZ,
                                              _PSZ]),
    "tf_kernel_output_extent": (ctypes.c_int, [_P, _SZ, _SZ, ctypes.POINTER(ctypes.c_int64), _SZ,
                                               _PSZ]),
    "tf_kernel_mesh_rank": (ctypes.c_int, [_P, ctypes.POINTER(ctypes.c_int32)]),
    "tf_kernel_mesh_axis": (ctypes.c_int, [_P, ctypes.c_int32, ctypes.POINTER(ctypes.c_int64), _PSTR]),
    "tf_kernel_input_shard": (ctypes.c_int, [_P, _SZ, ctypes.c_int32, ctypes.POINTER(ShardAttr)]),
    "tf_kernel_output_shard": (ctypes.c_int, [_P, _SZ, ctypes.c_int32, ctypes.POINTER(ShardAttr)]),
    "tf_kernel_call_rank": (ctypes.c_int, [_P, _PTEN, _SZ, ctypes.POINTER(ctypes.POINTER(DLManagedTensor)), _SZ,
                                           ctypes.POINTER(Communicator)]),
    "tf_surface_function_count": (ctypes.c_int, [_PSZ]),
    "tf_surface_function_name": (ctypes.c_int, [_SZ, _PSTR]),
    "tf_backend_available": (ctypes.c_int, [ctypes.c_int32]),
}

_lib = None


def lib():
    """The loaded libtilefoundry.so with prototypes set (loaded once)."""
    global _lib
    if _lib is None:
        path = find_library("libtilefoundry.so")
        handle = ctypes.CDLL(str(path))
        _check_abi(handle, path)
        for name, (restype, argtypes) in _PROTOTYPES.items():
            fn = getattr(handle, name)
            fn.restype = restype
            fn.argtypes = argtypes
        _lib = handle
    return _lib


def _check_abi(handle, path):
    """Refuses a library whose ABI these bindings cannot use."""
    version = getattr(handle, "tf_abi_version", None)
    if version is None:
        raise AbiMismatchError(f"{path} is not a TileFoundry library (no tf_abi_version)")
    version.restype = ctypes.c_uint32
    version.argtypes = []
    got = version()
    major, minor = got >> 16, got & 0xFFFF
    if major != ABI_MAJOR or minor < ABI_MINOR:
        raise AbiMismatchError(
            f"{path} has C ABI {major}.{minor}, but this tilefoundry Python package needs "
            f"{ABI_MAJOR}.{ABI_MINOR} (same major, at least that minor): the library and the "
            "package come from different builds; reinstall both from one source tree "
            "(`pip install --no-build-isolation .`) or point TILEFOUNDRY_LIB_DIR at the "
            "matching build's lib/")


def status_name(status: int) -> str:
    return lib().tf_status_name(status).decode()


def check(status: int, what: str = ""):
    """Raises TileFoundryError for a non-TF_OK status, with tf_last_error()."""
    if status != TF_OK:
        message = lib().tf_last_error().decode(errors="replace")
        raise TileFoundryError(status_name(status), f"{what}: {message}" if what else message)


def surface_function_names():
    """The DSL's callable names (tf_surface_function_name), in the library's order."""
    count = ctypes.c_size_t()
    check(lib().tf_surface_function_count(ctypes.byref(count)), "tf_surface_function_count")
    names = []
    for i in range(count.value):
        name = ctypes.c_char_p()
        check(lib().tf_surface_function_name(i, ctypes.byref(name)), "tf_surface_function_name")
        names.append(name.value.decode())
    return names


def take_string(ptr: ctypes.c_void_p) -> str:
    """Decodes a string the library allocated, then frees it with tf_string_free."""
    try:
        return ctypes.string_at(ptr.value).decode()
    finally:
        lib().tf_string_free(ptr)


def backend_unavailable_reason(backend: int) -> str:
    """'' when `backend` (a TF_BACKEND_*) can compile and run kernels in this
    process; otherwise why not (tf_backend_available)."""
    L = lib()
    if L.tf_backend_available(backend) == TF_OK:
        return ""
    return L.tf_last_error().decode()
