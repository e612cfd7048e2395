"""Kernel: one compiled function, callable on torch tensors, numpy arrays or any __dlpack__ object."""
import ctypes

from . import _lib
from ._dlpack import Borrowed, DLDataType, DLManagedTensor, DLTensor, Owned, torch_if_imported
from .dtypes import name_from_dl, numpy_dtype, torch_dtype_from_dl


_BACKEND_NAMES = {_lib.TF_BACKEND_NATIVE: "native", _lib.TF_BACKEND_EVALUATOR: "evaluator",
                  _lib.TF_BACKEND_VIRTUAL_MESH: "virtual_mesh", _lib.TF_BACKEND_CUDA: "cuda"}


class Kernel:
    """Owns one reference on a tf_kernel handle (released when collected)."""

    def __init__(self, handle: ctypes.c_void_p):
        self._handle = handle
        L = _lib.lib()
        n = ctypes.c_size_t()
        _lib.check(L.tf_kernel_num_inputs(handle, ctypes.byref(n)))
        self.num_inputs = n.value
        _lib.check(L.tf_kernel_num_outputs(handle, ctypes.byref(n)))
        self.num_outputs = n.value
        name = ctypes.c_char_p()
        _lib.check(L.tf_kernel_name(handle, ctypes.byref(name)))
        self.name = name.value.decode()
        backend = ctypes.c_int32()
        _lib.check(L.tf_kernel_backend(handle, ctypes.byref(backend)))
        self.backend = _BACKEND_NAMES.get(backend.value, f"backend#{backend.value}")
        # The signature's (code, bits) per input and output: a uint8 buffer
        # where an 8-bit float is declared carries its bytes (Borrowed).
        self._in_dl = [self._declared(L.tf_kernel_input_desc, i) for i in range(self.num_inputs)]
        self._out_dl = [self._declared(L.tf_kernel_output_type, i) for i in range(self.num_outputs)]
        # Per output, the input it is written in place of (@func(inplace=...)), or None.
        self.inplace = [self._alias(L, i) for i in range(self.num_outputs)]

    def _alias(self, L, i):
        a = ctypes.c_int64()
        _lib.check(L.tf_kernel_output_alias(self._handle, i, ctypes.byref(a)))
        return a.value if a.value >= 0 else None

    def _declared(self, fn, i):
        dtype, ndim = DLDataType(), ctypes.c_int32()
        _lib.check(fn(self._handle, i, ctypes.byref(dtype), ctypes.byref(ndim)))
        return (dtype.code, dtype.bits)

    def borrow_inputs(self, tensors):
        """Borrowed views of input tensors, as the signature reads them."""
        torch = torch_if_imported()
        if torch is not None:
            for i, t in enumerate(tensors):
                if isinstance(t, torch.Tensor) and type(t) not in (torch.Tensor, torch.nn.Parameter):
                    self._refuse_subclass(i, t)
        return [Borrowed(t, d) for t, d in zip(tensors, self._in_dl)]

    def _refuse_subclass(self, i, t):
        """A tensor subclass is read through its DLPack export only when it
        has one over real memory; a DTensor or another wrapper does not."""
        name = self.input_names()[i]
        if _is_dtensor(t):
            raise TypeError(f"{self.name}: argument #{i} ({name}) is a DTensor, but the kernel has no device "
                            "mesh (its types carry no ShardLayout); pass a plain tensor (dtensor.full_tensor() "
                            "or to_local())")
        try:
            has_data = t.numel() == 0 or t.data_ptr() != 0
        except RuntimeError:
            has_data = False
        if not has_data:
            raise TypeError(f"{self.name}: argument #{i} ({name}) is a {type(t).__name__}, a tensor subclass "
                            "without data TileFoundry can read; pass a plain tensor")

    def _borrow_outputs(self, tensors):
        return [Borrowed(t, d) for t, d in zip(tensors, self._out_dl)]

    def __del__(self):
        handle = getattr(self, "_handle", None)
        if handle and _lib._lib is not None:
            _lib.lib().tf_kernel_release(handle)
            self._handle = None

    @property
    def handle(self) -> int:
        """The raw tf_kernel pointer (borrowed; valid while this object lives)."""
        return self._handle.value

    def __repr__(self):
        return f"<tilefoundry.Kernel {self.name} backend={self.backend}>"

    def input_names(self):
        """The parameters' names (read from the library once)."""
        names = getattr(self, "_input_names", None)
        if names is None:
            L = _lib.lib()
            names = []
            for i in range(self.num_inputs):
                name = ctypes.c_char_p()
                _lib.check(L.tf_kernel_input_name(self._handle, i, ctypes.byref(name)))
                names.append(name.value.decode())
            self._input_names = names
        return list(names)

    def output_desc(self, inputs, i):
        """(torch dtype, shape) of output i for these Borrowed inputs."""
        dtype, shape = self._output_desc(inputs, i)
        return torch_dtype_from_dl(dtype), shape

    def _output_desc(self, inputs, i):
        """(DLDataType, shape) of output i for these Borrowed inputs."""
        return self._describe(_dl_array(inputs), len(inputs), i)

    def _describe(self, arr, n_in, i):
        """(DLDataType, shape) of output i for a C array of n_in input DLTensors."""
        dtype, ndim = DLDataType(), ctypes.c_int32()
        shape = (ctypes.c_int64 * _lib.TF_MAX_NDIM)()
        # The library's message names the argument at fault (the inputs are
        # what output_desc checks); "output i" would point at the wrong side.
        _lib.check(_lib.lib().tf_kernel_output_desc(self._handle, arr, n_in, i,
                                                    ctypes.byref(dtype), ctypes.byref(ndim), shape),
                   self.name)
        return dtype, tuple(shape[j] for j in range(ndim.value))

    def run(self, inputs, outputs):
        """Runs on borrowed inputs, writing into caller-allocated outputs in place.
        An in-place output (self.inplace) is passed as its input tensor itself."""
        self._check_arity(inputs)
        if len(outputs) != self.num_outputs:
            raise TypeError(f"{self.name} has {self.num_outputs} output(s), got {len(outputs)}")
        self._run(self.borrow_inputs(inputs), self._borrow_outputs(outputs))

    def __call__(self, *tensors, mesh=None, check_calls=True):
        """Calls the kernel; returns one result, or a tuple for several. The
        results are of the inputs' kind: torch tensors for torch inputs,
        numpy arrays for numpy inputs, else DLPack tensors (call_dlpack). An
        in-place result is written into its input, and that input object is
        what is returned for it.

        A kernel sharded over a device mesh runs this rank of a
        torch.distributed job when called with DTensors, or with local
        shares and mesh= (a DeviceMesh or process groups): see
        tilefoundry.distributed (check_calls=False skips the ranks' check
        that they make the same call)."""
        self._check_arity(tensors)
        torch = torch_if_imported()
        if mesh is not None or (torch is not None and any(_is_dtensor(t) for t in tensors)):
            from . import distributed
            return distributed.call(self, tensors, mesh, check_calls)
        if torch is not None and any(isinstance(t, torch.Tensor) for t in tensors):
            outputs = self._call_into(tensors, lambda dt, shape: torch.empty(shape, dtype=torch_dtype_from_dl(dt)))
        elif any(type(t).__module__ == "numpy" for t in tensors):
            # numpy-owned, writable outputs (numpy marks what it takes through DLPack read-only).
            import numpy as np
            outputs = self._call_into(
                tensors, lambda dt, shape: np.empty(shape, numpy_dtype(name_from_dl(dt), self.name)))
        else:
            outputs = self.call_dlpack(*tensors, as_tuple=True)
        return outputs[0] if self.num_outputs == 1 else tuple(outputs)

    def call_dlpack(self, *tensors, as_tuple=False):
        """Calls the kernel on any __dlpack__ objects (torch not needed); the
        library allocates the results (its output pool) and hands each out
        as an object with __dlpack__, for numpy.from_dlpack, torch.from_dlpack
        or any other consumer."""
        self._check_arity(tensors)
        ins = self.borrow_inputs(tensors)
        n = self.num_outputs
        outs = (ctypes.POINTER(DLManagedTensor) * max(n, 1))()
        _lib.check(_lib.lib().tf_kernel_call(self._handle, _dl_array(ins), len(ins), outs, n), self.name)
        owned = tuple(Owned(ctypes.cast(outs[i], ctypes.c_void_p).value) for i in range(n))
        return owned if as_tuple or n != 1 else owned[0]

    def _call_into(self, tensors, allocate):
        """Runs into outputs the caller's framework owns: allocate(DLDataType, shape)."""
        ins = self.borrow_inputs(tensors)
        arr = _dl_array(ins)  # one C array for every description and the run
        outputs = [tensors[a] if a is not None else allocate(*self._describe(arr, len(ins), i))
                   for i, a in enumerate(self.inplace)]
        self._run_into(arr, len(ins), self._borrow_outputs(outputs))
        return outputs

    def _check_arity(self, tensors):
        if len(tensors) != self.num_inputs:
            raise TypeError(f"{self.name} takes {self.num_inputs} tensor(s) "
                            f"({', '.join(self.input_names())}), got {len(tensors)}")

    def _run(self, ins, outs):
        self._run_into(_dl_array(ins), len(ins), outs)

    def _run_into(self, arr, n_in, outs):
        """tf_kernel_run on a C array of n_in input DLTensors and Borrowed outputs."""
        status = _lib.lib().tf_kernel_run(self._handle, arr, n_in, _dl_array(outs), len(outs))
        _lib.check(status, self.name)

    def shape_program(self):
        """The signature's shape rules as data (shape_program.ShapeProgram):
        per input its dtype and what binding requires of each axis, per
        output its dtype and each extent as a program over the input
        extents. Read from the library once, then cached."""
        cached = getattr(self, "_shape_program", None)
        if cached is None:
            from . import shape_program
            cached = shape_program.load(self._handle, self.name, self.num_inputs, self.num_outputs)
            self._shape_program = cached
        return cached


def _is_dtensor(t):
    return type(t).__name__ == "DTensor" and type(t).__module__.startswith("torch.distributed")


def _dl_array(borrowed):
    """A C array of DLTensor structs (shallow copies: data/shape/strides still borrowed)."""
    arr = (DLTensor * max(len(borrowed), 1))()
    for i, b in enumerate(borrowed):
        arr[i] = b.tensor
    return arr
