"""8-bit floats across torch versions: torch's float8_e4m3fn where it has it
(2.1 on), else a uint8 tensor of the bytes; a uint8 tensor (or numpy array)
passes for an fp8 argument on every version, through Kernel calls and torch
ops alike."""
import numpy as np
import pytest
import torch

import tilefoundry as tf
from conftest import compile_on, unique_op

HAS_FP8 = hasattr(torch, "float8_e4m3fn")
# e4m3fn codes by hand (sign, 4 exponent bits biased 7, 3 mantissa bits):
# 1.0, 0.5, -2.0, 448 (the largest finite), 0, 0.0625 * 1.125 (rounds from 0.07).
VALUES = torch.tensor([1.0, 0.5, -2.0, 448.0, 0.0, 0.07])
CODES = torch.tensor([0x38, 0x30, 0xC0, 0x7E, 0x00, 0x19], dtype=torch.uint8)
DECODED = torch.tensor([1.0, 0.5, -2.0, 448.0, 0.0, 0.0703125])


def as_bytes(q):
    return q.view(torch.uint8) if q.dtype != torch.uint8 else q


def test_fp8_results_are_torch_float8_or_their_bytes(module, backend):
    q = compile_on(module, "to_fp8", backend)(VALUES)
    assert q.dtype == (torch.float8_e4m3fn if HAS_FP8 else torch.uint8)
    assert torch.equal(as_bytes(q), CODES)
    if HAS_FP8:
        assert torch.equal(as_bytes(q), as_bytes(VALUES.to(torch.float8_e4m3fn)))  # torch's own rounding


def test_uint8_bytes_pass_for_an_fp8_argument(module, backend):
    dequant = compile_on(module, "from_fp8", backend)
    assert torch.equal(dequant(CODES), DECODED)
    assert np.array_equal(dequant(CODES.numpy()), DECODED.numpy())
    if HAS_FP8:
        assert torch.equal(dequant(CODES.view(torch.float8_e4m3fn)), DECODED)
    out = torch.empty(6, dtype=torch.float8_e4m3fn if HAS_FP8 else torch.uint8)
    compile_on(module, "to_fp8", backend).run([VALUES], [out])
    assert torch.equal(as_bytes(out), CODES)
    raw = np.zeros(6, dtype=np.uint8)  # numpy has no fp8: its bytes, always
    compile_on(module, "to_fp8", backend).run([VALUES.numpy()], [raw])
    assert np.array_equal(raw, CODES.numpy())


def test_torch_ops_take_and_give_fp8_on_every_torch(module):
    quant = tf.register(module.compile("to_fp8"), unique_op("to_fp8"))
    dequant = tf.register(module.compile("from_fp8"), unique_op("from_fp8"))
    q = quant(VALUES)
    assert q.dtype == (torch.float8_e4m3fn if HAS_FP8 else torch.uint8)
    assert torch.equal(as_bytes(q), CODES)
    assert torch.equal(dequant(q), DECODED)
    assert torch.equal(dequant(CODES), DECODED)  # uint8 bytes on any torch
    with pytest.raises(RuntimeError, match="dtype must be fp8e4m3, but got i8"):
        dequant(CODES.view(torch.int8))
