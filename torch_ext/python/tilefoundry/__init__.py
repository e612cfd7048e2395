"""TileFoundry for Python: load DSL kernels, run them on torch tensors, and
expose them as torch.ops.tilefoundry.* operators.

    import tilefoundry as tf
    m = tf.load("kernels.py")
    k = m.compile("rmsnorm")            # a Kernel, callable on tensors
    op = tf.register(k)                 # torch.ops.tilefoundry.rmsnorm
"""
from . import dsl
from .decorator import func
from .errors import TileFoundryError
from .kernel import Kernel
from .module import Module, load
from .runtime import (empty_cache, get_num_threads, memory_stats, set_memory_cache_limit,
                      set_num_threads)
from .torch_ops import register, torch_library_path

__all__ = ["load", "Module", "Kernel", "register", "func", "TileFoundryError", "dsl",
           "torch_library_path", "abi_version", "memory_stats", "set_memory_cache_limit",
           "empty_cache", "set_num_threads", "get_num_threads"]


def abi_version() -> int:
    """(major << 16) | minor of the loaded libtilefoundry.so."""
    from . import _lib
    return _lib.lib().tf_abi_version()
