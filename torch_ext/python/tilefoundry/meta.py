"""Meta kernels for torch.ops.tilefoundry.*: output shapes from HIR shape
inference, reached only through the C ABI.

* Concrete sizes (eager meta tensors, torch 1.13, static tracing): each
  output's description is tf_kernel_output_desc's answer. Rationale: that
  call binds the inputs exactly as the CPU kernel does, so the Meta kernel
  accepts and rejects exactly what the kernel does, with the kernel's own
  messages (dtype, rank, static extents, DimVar ranges, a zero divisor or a
  negative output extent), for one C call per output.
* Symbolic sizes (torch 2.x FakeTensors under torch.compile(dynamic=True)):
  tf_kernel_output_desc needs integers, and calling it on the SymInts' hints
  would specialize the graph. Instead the kernel's shape program
  (Kernel.shape_program: the signature's rules as data) is evaluated over
  the SymInts. Every rule binding applies to an input axis becomes a
  torch._check — a guard or a runtime assert of the compiled graph, not a
  specialization — and each output extent is its program run in SymInt
  arithmetic (torch.sym_min / sym_max for MIN / MAX). The output sizes stay
  symbolic, so one graph serves every sequence length.
"""
import operator

from . import dtypes
from . import shape_program as sp
from .errors import TileFoundryError


def _check(cond, message):
    """torch._check where torch has it (it understands symbolic conditions),
    a plain RuntimeError otherwise (torch 1.x, where sizes are ints)."""
    import torch
    if hasattr(torch, "_check"):
        torch._check(cond, message)
    elif not cond:
        raise RuntimeError(message())


def _symbolic_ops():
    """The binary opcodes over ints or SymInts: min / max that stay
    symbolic, and a divisor checked to be nonzero (the kernel's run-time
    error) rather than specialized."""
    import torch

    def nonzero_divisor(op):
        def apply(a, b):
            _check(b != 0, lambda: "shape expression divides by zero")
            return op(a, b)
        return apply
    return {**sp.INT_OPS,
            sp.FLOORDIV: nonzero_divisor(operator.floordiv), sp.MOD: nonzero_divisor(operator.mod),
            sp.MIN: getattr(torch, "sym_min", min), sp.MAX: getattr(torch, "sym_max", max)}


def _check_axis(where, axis, rule, shapes, size, ops):
    """Checks one input axis against its rule, as the kernel's binding does."""
    if rule.rule in (sp.BINDS_DIMVAR, sp.EQUALS_DIMVAR):
        def outside():
            return (f"{where}: axis {axis} = {size} is outside its DimVar's range "
                    f"[{rule.lo}, {rule.hi})")
        _check(size >= rule.lo, outside)
        _check(size < rule.hi, outside)
    if rule.rule == sp.BINDS_DIMVAR:
        return  # its program is the axis itself
    want = sp.evaluate(rule.program, shapes, ops)
    if rule.rule == sp.EQUALS_DIMVAR:
        a, x = rule.dimvar
        _check(size == want, lambda: f"{where}: axis {axis} is {size}, but the DimVar it names "
                                     f"is {want} from argument #{a} axis {x}")
    else:
        _check(size == want, lambda: f"{where}: axis {axis} must be {want}, but got {size}")


def symbolic_outputs(kernel, tensors):
    """[(shape, dtype name)] of the kernel's outputs for these input tensors,
    from its shape program, after checking every rule of the kernel's binding
    (with torch._check where torch has it). The sizes may be ints or SymInts."""
    program = kernel.shape_program()
    if len(tensors) != len(program.inputs):
        raise TileFoundryError("TF_ERR_INVALID_ARGUMENT", f"'{kernel.name}' takes "
                               f"{len(program.inputs)} input tensor(s), but got {len(tensors)}")
    ops = _symbolic_ops()
    shapes = [tuple(t.shape) for t in tensors]
    names = kernel.input_names()
    for i, (rule, t) in enumerate(zip(program.inputs, tensors)):
        where = f"'{kernel.name}' argument #{i} ({names[i]})"
        if not dtypes.torch_holds(t.dtype, rule.dtype):
            raise TileFoundryError("TF_ERR_INVALID_ARGUMENT",
                                   f"{where}: dtype must be {rule.dtype}, but got {t.dtype}")
        if len(shapes[i]) != len(rule.axes):
            raise TileFoundryError("TF_ERR_INVALID_ARGUMENT", f"{where}: rank must be "
                                   f"{len(rule.axes)}, but got shape {list(shapes[i])}")
        for axis, axis_rule in enumerate(rule.axes):
            _check_axis(where, axis, axis_rule, shapes, shapes[i][axis], ops)
    outputs = []
    for o, rule in enumerate(program.outputs):
        shape = [sp.evaluate(p, shapes, ops) for p in rule.extents]
        for axis, extent in enumerate(shape):
            _check(extent >= 0, lambda: f"'{kernel.name}' output #{o} axis {axis}: "
                                        f"extent evaluates to {extent}")
        outputs.append((shape, rule.dtype))
    return outputs


def _is_symbolic(tensors):
    import torch
    sym = getattr(torch, "SymInt", None)
    return sym is not None and any(isinstance(s, sym) for t in tensors for s in t.shape)


class _Described:
    """A data-less CPU DLTensor describing a (meta) tensor's dtype and shape:
    all tf_kernel_output_desc reads."""

    def __init__(self, t, declared=None):
        import ctypes
        from ._dlpack import KDL_CPU, DLDataType, DLTensor
        name = dtypes.name_from_torch(t.dtype)
        # An unknown dtype gets a code no dtype has: the C side reports it.
        code, bits = dtypes.dl_from_name(name) if name else (255, 0)
        if name == "u8" and declared in dtypes.FP8_BYTES:
            code, bits = declared  # a uint8 tensor carrying an 8-bit float's bytes
        self.shape = (ctypes.c_int64 * max(t.dim(), 1))(*[int(s) for s in t.shape])
        self.tensor = DLTensor()
        self.tensor.device.device_type = KDL_CPU
        self.tensor.ndim = t.dim()
        self.tensor.dtype = DLDataType(code, bits, 1)
        self.tensor.shape = self.shape


def meta_impl(kernel):
    """The Meta kernel of one registered op. An in-place output is not a
    result of the op (its input is mutated instead): only the fresh ones are
    returned, None when there are none, as the schema says."""
    import torch

    def impl(*tensors):
        if _is_symbolic(tensors):
            outs = [torch.empty(shape, dtype=dtypes.torch_dtype(dt), device="meta")
                    for shape, dt in symbolic_outputs(kernel, tensors)]
        else:
            borrowed = [_Described(t, d) for t, d in zip(tensors, kernel._in_dl)]
            outs = []
            for i in range(kernel.num_outputs):
                dtype, shape = kernel.output_desc(borrowed, i)
                outs.append(torch.empty(shape, dtype=dtype, device="meta"))
        outs = [o for o, a in zip(outs, kernel.inplace) if a is None]
        if not outs:
            return None
        return outs[0] if len(outs) == 1 else tuple(outs)
    return impl


def meta_out_impl(kernel, out_names):
    """The Meta kernel of the op's .out overload: the functional Meta kernel's
    results say what each out= tensor must be; the out= tensors themselves
    are returned, as the schema's alias annotations promise."""
    functional = meta_impl(kernel)

    def impl(*args, **kwargs):
        inputs = args[:kernel.num_inputs]
        given = list(args[kernel.num_inputs:]) + [kwargs[n] for n in out_names[len(args) - kernel.num_inputs:]]
        want = functional(*inputs)
        want = (want,) if kernel.num_outputs == 1 else want
        device = inputs[0].device if inputs else given[0].device
        for name, w, g in zip(out_names, want, given):
            _check(g.device == device,
                   lambda: f"tilefoundry::{kernel.name}.out: {name} is on {g.device}, "
                           f"but the inputs are on {device}")
            _check(g.dtype == w.dtype,
                   lambda: f"tilefoundry::{kernel.name}.out: {name} has dtype {g.dtype}, "
                           f"but the op computes {w.dtype} there")
            _check(g.dim() == w.dim() and all(a == b for a, b in zip(g.shape, w.shape)),
                   lambda: f"tilefoundry::{kernel.name}.out: {name} has shape {list(g.shape)}, "
                           f"but the op computes {list(w.shape)} there")
        return given[0] if len(given) == 1 else tuple(given)
    return impl
