"""A kernel's shape rules as data, read through the C ABI (since 0.4:
tf_kernel_input_axis, tf_kernel_input_extent, tf_kernel_output_type,
tf_kernel_output_extent; docs/c-abi.md, "Shapes as data").

For each input: its dtype, and per axis the rule binding applies (a static
extent, the axis that binds a DimVar, a later occurrence of a DimVar, or an
expression) with the program of the value it must have. For each output: its
dtype and per axis the program of its extent. A program is a tuple of int64
words in postfix order over the input extents; `evaluate` runs one over ints,
or over torch SymInts when given SymInt-aware operations (meta.py).
"""
import ctypes
import operator
from collections import namedtuple

from . import _lib
from ._dlpack import DLDataType
from .dtypes import name_from_dl

# tf_dim_op
PUSH_CONST, PUSH_INPUT_EXTENT, ADD, SUB, MUL, FLOORDIV, MOD, MIN, MAX = range(1, 10)
# tf_axis_rule
STATIC, BINDS_DIMVAR, EQUALS_DIMVAR, EXPR = range(1, 5)

# One input axis: rule (tf_axis_rule); value (STATIC); lo, hi (the DimVar's
# range [lo, hi), for the DimVar rules); dimvar ((input, axis) binding the
# DimVar, or None); program (the value binding requires of the axis).
InputAxis = namedtuple("InputAxis", "rule value lo hi dimvar program")
# An input: dtype (DSL name, "f32") and its InputAxis per axis.
InputRule = namedtuple("InputRule", "dtype axes")
# An output: dtype (DSL name) and the program of each extent.
OutputRule = namedtuple("OutputRule", "dtype extents")
ShapeProgram = namedtuple("ShapeProgram", "inputs outputs")

# The binary opcodes over ints, with the ABI's floor semantics (Python's).
INT_OPS = {ADD: operator.add, SUB: operator.sub, MUL: operator.mul,
           FLOORDIV: operator.floordiv, MOD: operator.mod, MIN: min, MAX: max}


def evaluate(program, shapes, ops=INT_OPS):
    """The value of a program on input shapes (shapes[input][axis], ints or
    SymInts); ops maps each binary opcode to its function."""
    stack, pc = [], 0
    while pc < len(program):
        op = program[pc]
        if op == PUSH_CONST:
            stack.append(program[pc + 1])
            pc += 2
        elif op == PUSH_INPUT_EXTENT:
            stack.append(shapes[program[pc + 1]][program[pc + 2]])
            pc += 3
        else:
            b, a = stack.pop(), stack.pop()
            stack.append(ops[op](a, b))
            pc += 1
    (value,) = stack
    return value


def _program(fn, handle, i, axis, what):
    """The words of one program: its length first, then the program."""
    length = ctypes.c_size_t()
    _lib.check(fn(handle, i, axis, None, 0, ctypes.byref(length)), what)
    words = (ctypes.c_int64 * max(length.value, 1))()
    _lib.check(fn(handle, i, axis, words, length.value, ctypes.byref(length)), what)
    return tuple(words[:length.value])


def load(handle, name, num_inputs, num_outputs):
    """The ShapeProgram of a tf_kernel handle (name is used in messages)."""
    L = _lib.lib()
    dtype, ndim = DLDataType(), ctypes.c_int32()
    inputs = []
    for i in range(num_inputs):
        _lib.check(L.tf_kernel_input_desc(handle, i, ctypes.byref(dtype), ctypes.byref(ndim)), name)
        axes = []
        for axis in range(ndim.value):
            r = _lib.InputAxis(struct_size=ctypes.sizeof(_lib.InputAxis))
            _lib.check(L.tf_kernel_input_axis(handle, i, axis, ctypes.byref(r)), name)
            dimvar = (r.dimvar_input, r.dimvar_axis) if r.dimvar_input >= 0 else None
            program = _program(L.tf_kernel_input_extent, handle, i, axis, name)
            axes.append(InputAxis(r.rule, r.value, r.lo, r.hi, dimvar, program))
        inputs.append(InputRule(name_from_dl(dtype), tuple(axes)))
    outputs = []
    for i in range(num_outputs):
        _lib.check(L.tf_kernel_output_type(handle, i, ctypes.byref(dtype), ctypes.byref(ndim)),
                   name)
        extents = tuple(_program(L.tf_kernel_output_extent, handle, i, axis, name)
                        for axis in range(ndim.value))
        outputs.append(OutputRule(name_from_dl(dtype), extents))
    return ShapeProgram(tuple(inputs), tuple(outputs))
