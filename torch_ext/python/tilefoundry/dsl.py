"""The DSL's names, so that a kernel file (`from tilefoundry.dsl import *`)
is valid, importable Python (docs/dsl.md).

Nothing here computes: the C++ frontend parses the file's text. Types and
layouts are inert records; surface functions are placeholders that raise
when called from Python, one per name the library lists
(tf_surface_function_name). Note that `import *` deliberately shadows the
builtins sum, abs, round and slice with their DSL meanings.
"""
from . import _lib


class DimVar:
    """A symbolic extent with half-open range [lo, hi)."""

    def __init__(self, name, lo, hi):
        self.name, self.lo, self.hi = name, lo, hi

    def __repr__(self):
        return f"DimVar({self.name!r}, {self.lo}, {self.hi})"

    # Arithmetic builds DimExprs in the DSL; here it only has to not fail.
    def _expr(self, *_):
        return self

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _expr
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = _expr


def dim_min(a, b):
    """dim_min(a, b): the smaller extent (a DimExpr in the DSL)."""
    return min(a, b) if isinstance(a, int) and isinstance(b, int) else a


def dim_max(a, b):
    """dim_max(a, b): the larger extent (a DimExpr in the DSL)."""
    return max(a, b) if isinstance(a, int) and isinstance(b, int) else a


class DType:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


bool_ = DType("bool")
u8, i8, i32, i64 = DType("u8"), DType("i8"), DType("i32"), DType("i64")
f16, bf16, f32, f64 = DType("f16"), DType("bf16"), DType("f32"), DType("f64")
fp8e4m3, f8e8m0, f4e2m1 = DType("fp8e4m3"), DType("f8e8m0"), DType("f4e2m1")


class _Annotation:
    """Tensor[(shape), dtype, layout?] — an inert record of its subscript."""

    def __init__(self, kind, args):
        self.kind, self.args = kind, args

    def __repr__(self):
        return f"{self.kind}[{self.args!r}]"


class _TensorType:
    def __class_getitem__(cls, args):
        return _Annotation("Tensor", args)


class Tensor(_TensorType):
    """Annotation only: Tensor[(N, D), f32] or Tensor[(N, D), f32, ShardLayout(...)]."""


class _Record:
    """Target, Mesh, Layout, ShardLayout, Split, Broadcast, Partial: inert records."""

    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __repr__(self):
        return f"{type(self).__name__}{self.args!r}"


class Target(_Record): pass
class Mesh(_Record): pass
class Layout(_Record): pass
class ShardLayout(_Record): pass
class Split(_Record): pass
class Broadcast(_Record): pass
class Partial(_Record): pass


class DslFunction:
    """What @func makes in plain Python: a record of the function and its specializations."""

    def __init__(self, fn):
        self.fn = fn
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self.specializations = []

    def specialize(self, **ranges):
        def wrap(fn):
            self.specializations.append((ranges, fn))
            return DslFunction(fn)
        return wrap

    def __call__(self, *args, **kwargs):
        raise TypeError(f"{self.__name__} is a TileFoundry DSL function; compile it with "
                        "tf.load(path).compile(name) or decorate it with @tf.func")


def func(fn=None, *, inplace=None):
    """The DSL's @func marker; @func(inplace=...) names the parameter(s) whose
    buffers receive the results (read by the frontend, not here)."""
    if fn is None:
        return DslFunction
    return DslFunction(fn)


def _placeholder(name):
    def surface(*args, **kwargs):
        raise TypeError(f"{name}() is a TileFoundry DSL operation; it only has meaning "
                        "inside a compiled @func")
    surface.__name__ = surface.__qualname__ = name
    return surface


# Every function a @func body may call (op surface functions and the
# parser's own reshard, local, tile, load_tile), as the library lists them:
# an op added to the library is importable here without an edit.
SURFACE_FUNCTIONS = _lib.surface_function_names()

globals().update({name: _placeholder(name) for name in SURFACE_FUNCTIONS})

# The float literals the DSL spells as names (a mask's -inf).
inf = float("inf")
nan = float("nan")

__all__ = [
    "DimVar", "DType", "Tensor", "Target", "Mesh", "Layout", "ShardLayout", "Split",
    "Broadcast", "Partial", "func", "DslFunction", "dim_min", "dim_max",
    "u8", "i8", "i32", "i64", "f16", "bf16", "f32", "f64", "fp8e4m3", "f8e8m0", "f4e2m1",
    "inf", "nan",
] + SURFACE_FUNCTIONS

# `bool` is the DSL's name for the bool dtype, but shadowing Python's bool in
# every kernel file would break ordinary code; it is exported as `bool_` and
# reachable as dsl.bool for attribute access.
globals()["bool"] = bool_
__all__.append("bool_")
