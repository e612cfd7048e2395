"""tf.register: exposes a Kernel as torch.ops.tilefoundry.<name>."""
import ctypes
import threading
from pathlib import Path

from . import _lib
from .errors import AbiMismatchError, TileFoundryError

_lock = threading.Lock()
_torch_lib = None


def torch_library_path() -> str:
    """Path of libtilefoundry_torch.so (for torch.ops.load_library elsewhere)."""
    try:
        return str(_lib.find_library("libtilefoundry_torch.so"))
    except OSError as e:
        raise OSError(f"{e}. A wheel built where torch could not be imported has no torch "
                      "extension: install torch first, then reinstall with "
                      "`pip install --no-build-isolation .`") from None


def _release(version: str):
    """'2.15.0+cu132' -> (2, 15); '1.13.0a0' -> (1, 13)."""
    return tuple(int("".join(c for c in part if c.isdigit()) or 0)
                 for part in version.split("+")[0].split(".")[:2])


def check_torch_version(library_path: str, torch_version: str):
    """Refuses to load the extension into a torch other than the one it was
    built against (major.minor: torch's C++ ABI changes between those), with
    the fix in the message rather than an undefined-symbol error."""
    record = Path(library_path).with_suffix(".torch-version")
    if not record.is_file():
        return  # a library built before the record existed: let the loader judge
    built = record.read_text().strip()
    if built and _release(built) != _release(torch_version):
        raise AbiMismatchError(
            f"{library_path} was built against torch {built}, but this process runs torch "
            f"{torch_version}; rebuild it against this torch (`pip install "
            "--no-build-isolation .` in this environment)")


def _load_torch_lib():
    """Loads libtilefoundry_torch.so into torch (once) and binds tf_torch_register."""
    global _torch_lib
    with _lock:
        if _torch_lib is None:
            import torch
            _lib.lib()  # libtilefoundry.so first, so both resolve to one copy
            path = torch_library_path()
            check_torch_version(path, torch.__version__)
            torch.ops.load_library(path)
            handle = ctypes.CDLL(path)
            for fn in (handle.tf_torch_register, handle.tf_torch_register_replace,
                       handle.tf_torch_register_cuda):
                fn.restype = ctypes.c_int
                fn.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
            handle.tf_torch_last_error.restype = ctypes.c_char_p
            handle.tf_torch_last_error.argtypes = []
            _torch_lib = handle
    return _torch_lib


def register(kernel, name=None, replace=False, backward=None):
    """Defines torch.ops.tilefoundry.<name> (default: the kernel's function name).

    The registration holds its own reference on the kernel for the life of
    the process. Registering a name twice raises TileFoundryError
    (TF_ERR_INVALID_ARGUMENT), unless replace=True: then a name registered
    here before runs `kernel` from now on, provided its schema is the same
    (re-running a notebook cell after editing the kernel's body); a changed
    schema is refused and the op keeps its kernel.

    backward: a Kernel computing the op's input gradients from its inputs
    and output gradients (autograd.py); without one, a backward through the
    op raises torch's "derivative ... is not implemented".

    Where tf.cuda_is_available(), the same function is also compiled for
    CUDA and registered as the op's CUDA kernel (docs/cuda.md): the op then
    runs on CUDA tensors too, on torch's current stream. A function the
    CUDA target does not compile yet gets none; cuda_unsupported_reason(name)
    says why.
    """
    import torch
    from . import autograd
    if backward is not None:
        autograd.check_backward(kernel, backward)
    tl = _load_torch_lib()
    op_name = name if name is not None else kernel.name
    entry = tl.tf_torch_register_replace if replace else tl.tf_torch_register
    with _lock:
        status = entry(kernel.handle, op_name.encode())
        if status != _lib.TF_OK:
            raise TileFoundryError(_lib.status_name(status), tl.tf_torch_last_error().decode())
        replaced = op_name in _meta_kernels
        _meta_kernels[op_name] = kernel
    if not replaced:
        _register_meta(op_name)
    _register_cuda(tl, kernel, op_name)
    autograd.attach(op_name, backward)
    return _direct_packet(op_name)


def _direct_packet(op_name):
    """torch.ops.tilefoundry.<op_name>, installed so that a call goes straight
    to torch's C++ entry for the op.

    OpOverloadPacket.__call__ is a Python method that only forwards its
    arguments to the packet's `_op`, the C++ function that matches them to an
    overload and calls the dispatcher; its frame, argument tuple and keyword
    dict cost about 0.15-0.3 us per call, a fifth of a small op's call.
    The packet installed here is a copy of torch's (its attributes: the
    overloads, schema and `_op`) as an instance of an OpOverloadPacket
    subclass whose __call__ is that `_op`, so torch.ops.tilefoundry.<op_name>(...) reaches C++ with no
    Python frame in between. A torch whose packet is laid out otherwise
    keeps its own."""
    import torch
    ns = torch.ops.tilefoundry
    packet = getattr(ns, op_name)
    entry = getattr(packet, "_op", None)
    if entry is None or not hasattr(packet, "__dict__"):
        return packet
    if getattr(type(packet), "_tf_direct", False):
        return packet  # installed by an earlier register of this name
    cls = type("DirectOpOverloadPacket", (type(packet),), {"__call__": staticmethod(entry), "_tf_direct": True})
    direct = object.__new__(cls)
    direct.__dict__.update(packet.__dict__)
    setattr(ns, op_name, direct)
    return direct


_cuda_unsupported = {}  # op name -> why it has no CUDA kernel


def cuda_unsupported_reason(op_name: str) -> str:
    """Why torch.ops.tilefoundry.<op_name> has no CUDA kernel ('' when it has
    one, or was never registered)."""
    return _cuda_unsupported.get(op_name, "")


def _register_cuda(tl, kernel, op_name):
    """Gives the op its CUDA kernel where CUDA kernels can run here. A
    replaced op's CUDA kernel is replaced too; when the new function has no
    CUDA form, registering fails rather than leave the old one behind."""
    why = _lib.backend_unavailable_reason(_lib.TF_BACKEND_CUDA)
    module = getattr(kernel, "module", None)
    if module is None:
        why = why or "the kernel was not compiled from a tf.Module here (its function is unknown)"
    elif kernel.backend == "virtual_mesh":
        why = why or "a virtual-mesh kernel runs on the CPU"
    cuda = None
    if not why:
        try:
            cuda = module.compile(kernel.name, backend="cuda")
        except TileFoundryError as e:
            if e.status != "TF_ERR_UNSUPPORTED":
                raise
            why = e.message
    with _lock:
        if cuda is None:
            if op_name in _cuda_kernels:
                raise TileFoundryError("TF_ERR_UNSUPPORTED", f"tilefoundry::{op_name} had a CUDA kernel, and "
                                       f"the replacing function has none: {why}")
            _cuda_unsupported[op_name] = why
            return
        status = tl.tf_torch_register_cuda(cuda.handle, op_name.encode())
        if status != _lib.TF_OK:
            raise TileFoundryError(_lib.status_name(status), tl.tf_torch_last_error().decode())
        _cuda_kernels[op_name] = cuda
        _cuda_unsupported.pop(op_name, None)


_cuda_kernels = {}  # op name -> its CUDA kernel (the registration holds its own reference too)


_meta_libs = []  # torch.library fragments holding the Meta impls, for the process's life
_meta_kernels = {}  # op name -> the kernel its Meta impls describe (replaced with the op's)


class _CurrentKernel:
    """The kernel registered under one op name now: the Meta impls read it
    through this, so replacing the op's kernel replaces what they describe
    (torch refuses a second Python impl for the same op and key)."""

    def __init__(self, op_name):
        self._op_name = op_name

    def __getattr__(self, attr):
        return getattr(_meta_kernels[self._op_name], attr)


def _register_meta(op_name):
    """Adds the Meta kernels of the op and its .out overload (see meta.py);
    the kernel objects stay alive in _meta_kernels, like the CPU
    registration's own reference."""
    import torch
    from .meta import meta_impl, meta_out_impl
    kernel = _CurrentKernel(op_name)
    lib = torch.library.Library("tilefoundry", "IMPL")
    impls = [(op_name, meta_impl(kernel))]
    packet = getattr(torch.ops.tilefoundry, op_name)
    if "out" in packet.overloads():  # none for an op with in-place outputs
        out_names = [a.name for a in packet.out._schema.arguments if a.kwarg_only]
        impls.append((op_name + ".out", meta_out_impl(kernel, out_names)))
    for name, impl in impls:
        lib.impl(name, impl, "Meta")
        if int(torch.__version__.split(".")[0]) < 2:
            # torch 1.x has no autograd fallthrough for meta tensors; the op
            # has no gradient anyway, so the Meta kernel serves AutogradMeta too.
            lib.impl(name, impl, "AutogradMeta")
    with _lock:
        _meta_libs.append(lib)
