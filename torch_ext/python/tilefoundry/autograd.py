"""A backward for a registered op, written as another @func.

tf.register(k, name, backward=kb) makes torch.ops.tilefoundry.<name>
differentiable: kb takes the op's inputs followed by one gradient per
output and returns one gradient per input (a gradient of a non-float input
is computed but not used: such inputs are not differentiable). The op's
Autograd kernel wraps a torch.autograd.Function whose forward runs the op
below autograd and whose backward calls kb; it replaces the extension's
"not implemented" kernel for that op (the .out overload keeps it: torch
does not differentiate out= variants either). The same code serves torch
1.13 and 2.x; torch.library.register_autograd would need a Python-defined
op on the older line.
"""
import threading
import warnings

_lock = threading.Lock()
_backwards = {}  # op name -> the backward Kernel now (replaced with the op's)
_libs = []       # torch.library fragments holding the Autograd kernels


def _below_autograd(op, inputs):
    """op(*inputs) with the Autograd keys skipped (the CPU kernel runs, not
    this module's Autograd kernel again). The guard is an RAII object: torch
    1.13's is not a context manager, so it lives exactly as long as `guard`."""
    import torch
    guard = torch._C._AutoDispatchBelowAutograd()
    try:
        return op(*inputs)
    finally:
        del guard


def check_backward(kernel, backward):
    """Refuses a backward whose signature cannot be the op's."""
    from .errors import TileFoundryError
    if any(a is not None for a in kernel.inplace):
        raise TileFoundryError(
            "TF_ERR_INVALID_ARGUMENT",
            f"'{kernel.name}' writes a result in place of an input; an op that mutates its "
            "inputs takes no backward (write the update as a function returning a fresh result)")
    want_in, want_out = kernel.num_inputs + kernel.num_outputs, kernel.num_inputs
    if backward.num_inputs != want_in or backward.num_outputs != want_out:
        raise TileFoundryError(
            "TF_ERR_INVALID_ARGUMENT",
            f"backward '{backward.name}' of '{kernel.name}' must take {want_in} tensor(s) (the "
            f"{kernel.num_inputs} input(s), then a gradient per output) and return {want_out} (a "
            f"gradient per input), but takes {backward.num_inputs} and returns {backward.num_outputs}")


def attach(op_name, backward):
    """Makes the op differentiable through `backward` (a Kernel), or, with
    None, leaves it without a derivative again (after a replace)."""
    import torch
    with _lock:
        known = op_name in _backwards
        _backwards[op_name] = backward
    if known or backward is None:
        return
    op = getattr(torch.ops.tilefoundry, op_name).default

    class _Op(torch.autograd.Function):
        @staticmethod
        def forward(ctx, *inputs):
            out = _below_autograd(op, inputs)
            ctx.save_for_backward(*inputs)
            return out

        @staticmethod
        def backward(ctx, *grads):
            kb = _backwards.get(op_name)
            if kb is None:
                raise RuntimeError(f"the derivative for 'tilefoundry::{op_name}' is not implemented "
                                   "(its backward was removed by a replace)")
            inputs = ctx.saved_tensors
            got = kb(*inputs, *[g.contiguous() for g in grads])
            got = got if isinstance(got, tuple) else (got,)
            return tuple(g if t.is_floating_point() else None for g, t in zip(got, inputs))

    lib = torch.library.Library("tilefoundry", "IMPL")
    with warnings.catch_warnings():
        # Replacing the extension's "not implemented" Autograd kernel is the point.
        warnings.filterwarnings("ignore", message="Overriding a previously registered kernel")
        lib.impl(op_name, lambda *inputs: _Op.apply(*inputs), "Autograd")
    with _lock:
        _libs.append(lib)
