"""Process-wide runtime settings: the output-memory pool and the kernels'
thread count (tilefoundry.h, "output memory" and "threads")."""
import ctypes

from . import _lib

_STAT_FIELDS = ("bytes_in_use", "bytes_cached", "blocks_cached", "cache_limit", "hits", "misses",
                "bytes_released")


def memory_stats() -> dict:
    """The output pool's counters: bytes_in_use (pooled outputs alive),
    bytes_cached / blocks_cached (freed outputs kept for reuse), cache_limit,
    hits / misses (pooled requests served from the cache or not) and
    bytes_released (returned to the OS). Outputs under 128 KiB are not pooled
    and not counted."""
    s = _lib.MemoryStats()
    s.struct_size = ctypes.sizeof(s)
    _lib.check(_lib.lib().tf_memory_get_stats(ctypes.byref(s)), "memory_stats")
    return {name: getattr(s, name) for name in _STAT_FIELDS}


def set_memory_cache_limit(nbytes: int) -> None:
    """Bounds the bytes the pool keeps for reuse (0: keep nothing) and evicts
    down to the bound at once. The default is 1/8 of physical memory, at most
    4 GiB; TF_MEMORY_CACHE_LIMIT (e.g. "512M") sets it at start-up."""
    if nbytes < 0:
        raise ValueError(f"set_memory_cache_limit: nbytes must be >= 0, got {nbytes}")
    _lib.check(_lib.lib().tf_memory_set_cache_limit(nbytes), "set_memory_cache_limit")


def empty_cache() -> None:
    """Returns every cached output block to the OS (live outputs stay)."""
    _lib.check(_lib.lib().tf_memory_empty_cache(), "empty_cache")


def set_num_threads(n: int) -> None:
    """Compiled kernels use at most n threads (0: OpenMP's default). The torch
    operators follow torch.set_num_threads by themselves; this is for calls
    through Kernel objects and other languages."""
    _lib.check(_lib.lib().tf_set_num_threads(n), "set_num_threads")


def get_num_threads() -> int:
    """The setting: n as last set (by set_num_threads or a torch operator
    following torch), 0 when unset."""
    n = ctypes.c_int32()
    _lib.check(_lib.lib().tf_get_num_threads(ctypes.byref(n)), "get_num_threads")
    return n.value


def cuda_is_available() -> bool:
    """Whether kernels can be compiled for and run on an NVIDIA GPU here
    (an NVIDIA driver with a device, and NVRTC); tf.register then also
    gives each op its CUDA kernel."""
    return _lib.backend_unavailable_reason(_lib.TF_BACKEND_CUDA) == ""


def cuda_unavailable_reason() -> str:
    """Why cuda_is_available() is False ('' when it is True)."""
    return _lib.backend_unavailable_reason(_lib.TF_BACKEND_CUDA)
