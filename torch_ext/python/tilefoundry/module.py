"""tf.load and Module: a parsed, sealed (verified + typed) DSL module."""
import ctypes
import os

from . import _lib
from .kernel import Kernel

_BACKENDS = {"native": _lib.TF_BACKEND_NATIVE, "evaluator": _lib.TF_BACKEND_EVALUATOR,
             "virtual_mesh": _lib.TF_BACKEND_VIRTUAL_MESH, "cuda": _lib.TF_BACKEND_CUDA}


class Module:
    """Owns one tf_module handle. Immutable; safe to share across threads."""

    def __init__(self, source: str, filename: str = "<string>"):
        data = source.encode()
        handle = ctypes.c_void_p()
        _lib.check(_lib.lib().tf_module_parse(data, len(data), filename.encode(),
                                              ctypes.byref(handle)), f"parsing {filename}")
        self._handle = handle
        self.filename = filename
        self._evaluators = {}

    def __del__(self):
        handle = getattr(self, "_handle", None)
        if handle and _lib._lib is not None:
            _lib.lib().tf_module_release(handle)
            self._handle = None

    @property
    def functions(self):
        """Names of the module's functions, in source order."""
        L = _lib.lib()
        n = ctypes.c_size_t()
        _lib.check(L.tf_module_num_functions(self._handle, ctypes.byref(n)))
        names = []
        for i in range(n.value):
            name = ctypes.c_char_p()
            _lib.check(L.tf_module_function_name(self._handle, i, ctypes.byref(name)))
            names.append(name.value.decode())
        return names

    def __str__(self):
        """The canonical DSL source (tf_module_print)."""
        text = ctypes.c_void_p()
        _lib.check(_lib.lib().tf_module_print(self._handle, ctypes.byref(text)))
        return _lib.take_string(text)

    def __repr__(self):
        return f"<tilefoundry.Module {self.filename!r} functions={self.functions}>"

    def signature(self, name: str) -> str:
        """The typed signature of `name` in DSL syntax."""
        text = ctypes.c_void_p()
        _lib.check(_lib.lib().tf_module_signature(self._handle, name.encode(), ctypes.byref(text)),
                   f"signature of {name!r}")
        return _lib.take_string(text)

    def compile(self, name: str, backend: str = "native") -> Kernel:
        """Compiles function `name`; backend is "native", "evaluator", "virtual_mesh"
        or "cuda" (NVIDIA GPUs, docs/cuda.md: TileFoundryError with
        TF_ERR_UNSUPPORTED where tf.cuda_is_available() is False)."""
        if backend not in _BACKENDS:
            raise ValueError(f"backend must be one of {sorted(_BACKENDS)}, got {backend!r}")
        opts = _lib.CompileOptions()
        opts.struct_size = ctypes.sizeof(opts)
        opts.backend = _BACKENDS[backend]
        handle = ctypes.c_void_p()
        _lib.check(_lib.lib().tf_kernel_compile(self._handle, name.encode(), ctypes.byref(opts),
                                                ctypes.byref(handle)), f"compiling {name!r}")
        kernel = Kernel(handle)
        kernel.signature = self.signature(name)  # the typed signature, for humans
        kernel.module = self  # tf.register compiles the same function for CUDA from it
        return kernel

    def evaluate(self, name: str, *tensors, mesh=None):
        """Runs `name` with the reference evaluator (compiled once per name).

        mesh="virtual" runs the virtual-mesh evaluator (docs/sharding.md):
        arguments are the logical tensors, each mesh instance runs on its
        local shards, and the logical result is reassembled.
        """
        if mesh not in (None, "virtual"):
            raise ValueError(f'mesh must be None or "virtual", got {mesh!r}')
        backend = "evaluator" if mesh is None else "virtual_mesh"
        if (name, backend) not in self._evaluators:
            self._evaluators[(name, backend)] = self.compile(name, backend=backend)
        return self._evaluators[(name, backend)](*tensors)


def load(source_or_path) -> Module:
    """Parses DSL source text, or the file at a path.

    The argument is a path when it names an existing file or ends with .py
    or .tf (then the file must exist); otherwise it is source text.
    """
    text = os.fspath(source_or_path) if isinstance(source_or_path, os.PathLike) else source_or_path
    if not isinstance(text, str):
        raise TypeError(f"tf.load expects source text or a path, got {type(text).__name__}")
    is_path = "\n" not in text and (text.endswith((".py", ".tf")) or os.path.isfile(text))
    if is_path:
        with open(text, encoding="utf-8") as f:
            return Module(f.read(), filename=text)
    return Module(text)
