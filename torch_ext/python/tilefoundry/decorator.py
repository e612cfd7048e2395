"""@tf.func: load + compile + register a DSL function defined in a Python file."""
import ast
import inspect

from . import dsl
from .module import Module
from .torch_ops import register

_DSL_NAMES = set(dsl.__all__)


def func(fn=None, *, name=None, backend="native", inplace=None):
    """Compiles a DSL @func written in an ordinary Python module.

    The DSL part of fn's source file (its `tilefoundry.dsl` imports, module
    level constants such as DimVars, and every function decorated with a
    `func`) is parsed as one kernel file, so names fn uses resolve; other
    Python in the file is blanked out line for line, so error locations
    still point at the user's file. inplace= is the DSL's @func(inplace=...)
    (the parameter(s) whose buffers receive the results), passed on to the
    kernel file as written. Returns torch.ops.tilefoundry.<name>.
    """
    del inplace  # read from the decorator's source by dsl_subset
    def wrap(f):
        path = inspect.getsourcefile(f)
        with open(path, encoding="utf-8") as fh:
            source = fh.read()
        module = Module(dsl_subset(source), filename=path)
        kernel = module.compile(f.__name__, backend=backend)
        return register(kernel, name or f.__name__)

    return wrap(fn) if fn is not None else wrap


def dsl_subset(source: str) -> str:
    """The kernel-file part of a Python source, same line count as the input."""
    tree = ast.parse(source)
    lines = source.splitlines()
    kept = [""] * len(lines)
    for node in tree.body:
        if not _is_dsl_statement(node):
            continue
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        for ln in range(first, node.end_lineno + 1):
            kept[ln - 1] = lines[ln - 1]
        for dec in getattr(node, "decorator_list", []):
            if _decorator_name(dec) == "func" and dec.lineno == dec.end_lineno:
                # @tf.func / @tilefoundry.func / @tf.func(...) -> the DSL's
                # @func, keeping an inplace= argument
                indent = lines[dec.lineno - 1][: dec.col_offset - 1]
                kept[dec.lineno - 1] = indent + "@func" + _inplace_argument(dec)
    return "\n".join(kept) + "\n"


def _is_dsl_statement(node) -> bool:
    if isinstance(node, ast.ImportFrom):
        return (node.module or "").endswith("dsl")
    if isinstance(node, ast.FunctionDef):
        return any(_decorator_name(d) in ("func", "specialize") for d in node.decorator_list)
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return _is_dsl_value(node.value)
    return False


_VALUE_NODES = (ast.Constant, ast.Name, ast.BinOp, ast.UnaryOp, ast.Tuple, ast.Call,
                ast.keyword, ast.operator, ast.unaryop, ast.expr_context)


def _is_dsl_value(expr) -> bool:
    """Literals, arithmetic and tuples over names, and calls of DSL names (DimVar, Mesh, ...)."""
    for sub in ast.walk(expr):
        if not isinstance(sub, _VALUE_NODES):
            return False
        if isinstance(sub, ast.Call) and not (isinstance(sub.func, ast.Name)
                                              and sub.func.id in _DSL_NAMES):
            return False
    return True


def _inplace_argument(dec) -> str:
    """'(inplace=...)' as written in the decorator call, or ''."""
    for kw in getattr(dec, "keywords", []):
        if kw.arg == "inplace":
            return f"(inplace={ast.unparse(kw.value)})"
    return ""


def _decorator_name(dec) -> str:
    target = dec.func if isinstance(dec, ast.Call) else dec
    if isinstance(target, ast.Attribute):
        return target.attr
    if isinstance(target, ast.Name):
        return target.id
    return ""
