"""TileFoundry for Python: load DSL kernels, run them on torch tensors, and
expose them as torch.ops.tilefoundry.* operators.

    import tilefoundry as tf
    m = tf.load("kernels.py")
    k = m.compile("rmsnorm")            # a Kernel, callable on tensors
    op = tf.register(k)                 # torch.ops.tilefoundry.rmsnorm

Importing it never imports torch; kernels also run on numpy arrays and any
other __dlpack__ object. `python -m tilefoundry --cmake-dir` (or
tf.cmake_prefix_path()) locates the installed C header and CMake package.
"""
from . import _lib, dsl
from .decorator import func
from .errors import AbiMismatchError, TileFoundryError
from .kernel import Kernel
from .locations import cmake_dir, cmake_prefix_path, include_dir, library_dir
from .module import Module, load
from .runtime import (cuda_is_available, cuda_unavailable_reason, empty_cache, get_num_threads,
                      memory_stats, set_memory_cache_limit, set_num_threads)
from .torch_ops import cuda_unsupported_reason, register, torch_library_path

__all__ = ["load", "Module", "Kernel", "register", "func", "TileFoundryError", "AbiMismatchError",
           "dsl", "torch_library_path", "abi_version", "memory_stats", "set_memory_cache_limit",
           "empty_cache", "set_num_threads", "get_num_threads", "cmake_prefix_path", "cmake_dir",
           "include_dir", "library_dir", "cuda_is_available", "cuda_unavailable_reason",
           "cuda_unsupported_reason", "__version__"]

# The library is loaded (and its ABI version checked) on import, so that a
# mismatched build is an ImportError here rather than a failure at first use.
# torch is not imported: only registering an op or calling a kernel on torch
# tensors does that.
_lib.lib()


def _package_version() -> str:
    from importlib import metadata
    try:
        return metadata.version(__name__)
    except metadata.PackageNotFoundError:
        return "0+source"  # run from a source tree, not installed


__version__ = _package_version()


def abi_version() -> int:
    """(major << 16) | minor of the loaded libtilefoundry.so."""
    from . import _lib
    return _lib.lib().tf_abi_version()
