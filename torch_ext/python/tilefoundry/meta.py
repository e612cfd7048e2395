"""Meta kernels for torch.ops.tilefoundry.*: output shapes from HIR shape
inference, reached only through the C ABI.

* Concrete sizes (eager meta tensors, torch 1.13, static tracing): the
  output description is tf_kernel_output_desc's answer, so binding checks
  (dtype, rank, static extents, DimVar ranges) are exactly the real kernel's.
* Symbolic sizes (torch 2.x FakeTensors under torch.compile(dynamic=True)):
  tf_kernel_output_desc needs integers, and calling it on the SymInts' hints
  would specialize the graph. Instead the kernel's typed signature
  (tf_module_signature: the return type HIR inferred, with dim expressions
  in DSL syntax) is evaluated over the SymInts: each DimVar is bound from the
  first parameter axis that is exactly that DimVar, and `+ - * // %`,
  dim_min / dim_max become SymInt arithmetic. The result is a symbolic output
  size, so one graph serves every sequence length.
"""
import ast
import re

_DTYPES = {"f32": "float32", "f16": "float16", "bf16": "bfloat16", "f64": "float64",
           "i8": "int8", "i32": "int32", "i64": "int64", "bool": "bool"}


def _split_dims(text):
    """'(N * 2) + 1, 4' -> ['(N * 2) + 1', '4'] (commas inside calls kept)."""
    dims, depth, cur = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            dims.append(cur.strip())
            cur = ""
            continue
        depth += ch in "([" and 1 or (ch in ")]" and -1 or 0)
        cur += ch
    if cur.strip():
        dims.append(cur.strip())
    return dims


def _tensors(text):
    """Every Tensor[(dims), dtype ...] in text, in order, as (dims, dtype)."""
    out, i = [], 0
    while (i := text.find("Tensor[(", i)) >= 0:
        start = i = i + len("Tensor[(")
        depth = 1
        while depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        dtype = re.match(r",\s*(\w+)", text[i:]).group(1)
        out.append((_split_dims(text[start:i - 1]), dtype))
    return out


def parse_signature(sig):
    """'def f(x: Tensor[(N, 4), f32], ...) -> T' -> (params, results), each a
    list of (dim expression strings, dtype name)."""
    head, _, ret = sig.partition(") -> ")
    return _tensors(head), _tensors(ret)


def _eval_dim(expr, env):
    """Evaluates a DSL dim expression over ints or SymInts."""
    import torch
    smin = getattr(torch, "sym_min", min)
    smax = getattr(torch, "sym_max", max)
    ops = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
           ast.Mult: lambda a, b: a * b, ast.FloorDiv: lambda a, b: a // b,
           ast.Mod: lambda a, b: a % b}
    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.Name):
            return env[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in ops:
            return ops[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") in ("dim_min", "dim_max"):
            a, b = (ev(x) for x in node.args)
            return (smin if node.func.id == "dim_min" else smax)(a, b)
        raise KeyError(ast.dump(node))
    return ev(ast.parse(expr, mode="eval"))


def _is_symbolic(tensors):
    import torch
    sym = getattr(torch, "SymInt", None)
    return sym is not None and any(isinstance(s, sym) for t in tensors for s in t.shape)


def _check_axis(ok, arg, axis, want, got):
    """torch._check where torch has it (2.x): over SymInts it becomes a guard
    or a runtime assert of the compiled graph instead of a specialization."""
    import torch
    check = getattr(torch, "_check", None)
    msg = lambda: f"argument #{arg} axis {axis} must be {want}, but got {got}"  # noqa: E731
    if check is not None:
        check(ok, msg)
    elif not ok:
        raise RuntimeError(msg())


def symbolic_shapes(signature, tensors):
    """Output (shape, dtype name) list for these input tensors, by evaluating
    the signature; raises KeyError when a DimVar cannot be bound. Static
    extents and repeated DimVars of the inputs are checked like the kernel's
    binding does (DimVar ranges are not: the signature does not carry them)."""
    params, results = parse_signature(signature)
    env = {}
    for arg, ((dims, _), t) in enumerate(zip(params, tensors)):
        for axis, (d, size) in enumerate(zip(dims, t.shape)):
            if re.fullmatch(r"[A-Za-z_]\w*", d):
                if d not in env:
                    env[d] = size
                else:
                    _check_axis(size == env[d], arg, axis, d, size)
            elif re.fullmatch(r"\d+", d):
                _check_axis(size == int(d), arg, axis, d, size)
    return [([_eval_dim(d, env) for d in dims], dt) for dims, dt in results]


class _Described:
    """A data-less CPU DLTensor describing a (meta) tensor's dtype and shape:
    all tf_kernel_output_desc reads."""

    def __init__(self, t):
        import ctypes
        import torch
        from ._dlpack import (KDL_BFLOAT, KDL_CPU, KDL_FLOAT, KDL_INT, KDL_UINT, DLDataType,
                              DLTensor)
        codes = {torch.float32: (KDL_FLOAT, 32), torch.float16: (KDL_FLOAT, 16),
                 torch.float64: (KDL_FLOAT, 64), torch.bfloat16: (KDL_BFLOAT, 16),
                 torch.int8: (KDL_INT, 8), torch.int32: (KDL_INT, 32),
                 torch.int64: (KDL_INT, 64), torch.bool: (KDL_UINT, 8)}
        code, bits = codes.get(t.dtype, (255, 0))  # unknown: the C side reports it
        self.shape = (ctypes.c_int64 * max(t.dim(), 1))(*[int(s) for s in t.shape])
        self.tensor = DLTensor()
        self.tensor.device.device_type = KDL_CPU
        self.tensor.ndim = t.dim()
        self.tensor.dtype = DLDataType(code, bits, 1)
        self.tensor.shape = self.shape


def meta_impl(kernel, signature):
    """The Meta kernel of one registered op."""
    import torch

    def impl(*tensors):
        if _is_symbolic(tensors):
            if signature is None:
                raise NotImplementedError(f"{kernel.name}: symbolic sizes need the kernel's "
                                          "signature (compile it through Module.compile)")
            outs = [torch.empty(shape, dtype=getattr(torch, _DTYPES[dt]), device="meta")
                    for shape, dt in symbolic_shapes(signature, tensors)]
        else:
            borrowed = [_Described(t) for t in tensors]
            outs = []
            for i in range(kernel.num_outputs):
                dtype, shape = kernel.output_desc(borrowed, i)
                outs.append(torch.empty(shape, dtype=dtype, device="meta"))
        return outs[0] if len(outs) == 1 else tuple(outs)
    return impl


def _check(cond, message):
    """torch._check where torch has it (it understands symbolic conditions),
    a plain RuntimeError otherwise (torch 1.x)."""
    import torch
    if hasattr(torch, "_check"):
        torch._check(cond, message)
    elif not cond:
        raise RuntimeError(message())


def meta_out_impl(kernel, signature, out_names):
    """The Meta kernel of the op's .out overload: the functional Meta kernel's
    results say what each out= tensor must be; the out= tensors themselves
    are returned, as the schema's alias annotations promise."""
    import torch
    functional = meta_impl(kernel, signature)

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
