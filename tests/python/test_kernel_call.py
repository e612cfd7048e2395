"""Kernels called directly from Python (ctypes + DLPack), checked against eager torch."""
import pytest
import torch

import tilefoundry as tf
from conftest import compile_on, rmsnorm_ref, swiglu_ref

F32_TOL = dict(rtol=1e-5, atol=1e-5)


def test_rmsnorm_f32(module, backend):
    torch.manual_seed(0)
    x, w = torch.randn(7, 96), torch.randn(96)
    y = compile_on(module, "rmsnorm", backend)(x, w)
    assert y.shape == x.shape and y.dtype == torch.float32
    torch.testing.assert_close(y, rmsnorm_ref(x, w), **F32_TOL)


def test_rmsnorm_bf16(module, backend):
    torch.manual_seed(1)
    x, w = torch.randn(5, 128).bfloat16(), torch.randn(128).bfloat16()
    y = compile_on(module, "rmsnorm_bf16", backend)(x, w)
    assert y.dtype == torch.bfloat16
    torch.testing.assert_close(y, rmsnorm_ref(x, w))  # torch's bf16 tolerances


def test_swiglu_f32_and_bf16(module, backend):
    torch.manual_seed(2)
    a, b = torch.randn(6, 40), torch.randn(6, 40)
    torch.testing.assert_close(compile_on(module, "swiglu", backend)(a, b), swiglu_ref(a, b),
                               **F32_TOL)
    a16, b16 = a.bfloat16(), b.bfloat16()
    torch.testing.assert_close(compile_on(module, "swiglu_bf16", backend)(a16, b16),
                               swiglu_ref(a16, b16))


def test_tuple_output(module, backend):
    torch.manual_seed(3)
    x, r, w = torch.randn(4, 32), torch.randn(4, 32), torch.randn(32)
    h, y = compile_on(module, "resnorm", backend)(x, r, w)
    torch.testing.assert_close(h, x + r, **F32_TOL)
    torch.testing.assert_close(y, rmsnorm_ref(x + r, w), **F32_TOL)


def test_evaluate_uses_the_evaluator(module):
    x, w = torch.randn(3, 16), torch.randn(16)
    torch.testing.assert_close(module.evaluate("rmsnorm", x, w), rmsnorm_ref(x, w), **F32_TOL)


def test_strided_view_input(module, backend):
    """A transposed view (non-unit innermost stride) is read through its strides."""
    base = torch.randn(48, 6)
    x = base.t()  # (6, 48), strides (1, 6)
    assert not x.is_contiguous()
    y = compile_on(module, "scale2", backend)(x)
    torch.testing.assert_close(y, x * 2.0)


def test_wrong_dtype_is_an_abi_error(module):
    k = module.compile("rmsnorm", backend="evaluator")
    with pytest.raises(tf.TileFoundryError) as e:
        k(torch.randn(2, 8, dtype=torch.float64), torch.randn(8, dtype=torch.float64))
    assert e.value.status.startswith("TF_ERR_")
    assert "f64" in e.value.message or "dtype" in e.value.message.lower()


def test_wrong_static_extent_is_an_abi_error(module):
    k = module.compile("rmsnorm64", backend="evaluator")
    with pytest.raises(tf.TileFoundryError) as e:
        k(torch.randn(2, 63), torch.randn(63))
    assert "64" in e.value.message and "63" in e.value.message


def test_wrong_arity_is_a_type_error(module):
    with pytest.raises(TypeError, match="takes 2 tensor"):
        module.compile("rmsnorm", backend="evaluator")(torch.randn(2, 8))


def test_bool_output_and_input(module):
    x = torch.randn(3, 5)
    y = module.compile("positive", backend="evaluator")(x)
    assert y.dtype == torch.bool and torch.equal(y, x > 0)
    a, b = torch.tensor([True, False, True]), torch.tensor([True, True, False])
    assert torch.equal(module.compile("band", backend="evaluator")(a, b), a & b)


def test_any_dlpack_object_is_accepted(module):
    np = pytest.importorskip("numpy")
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    y = module.compile("scale2", backend="evaluator")(x)
    assert isinstance(y, np.ndarray)  # results are of the inputs' kind
    torch.testing.assert_close(torch.from_numpy(y), torch.from_numpy(x) * 2.0)
    # call_dlpack: any DLPack consumer takes the result, here torch.
    z = torch.from_dlpack(module.compile("scale2", backend="evaluator").call_dlpack(x))
    torch.testing.assert_close(z, torch.from_numpy(x) * 2.0)


def test_non_tensor_argument_is_a_type_error(module):
    with pytest.raises(TypeError, match="__dlpack__"):
        module.compile("scale2", backend="evaluator")([1.0, 2.0])


def test_uint8_is_u8_and_bool_is_bool(module, backend):
    # uint8 tensors and arrays are u8 (wrapping arithmetic), bool ones bool
    # (exported as a uint8 view, relabelled bool): never one for the other.
    import numpy as np
    k = compile_on(module, "u8_mask", backend)
    x = torch.tensor([1, 100, 200, 255], dtype=torch.uint8)
    m = torch.tensor([True, False, True, True])
    y, big = k(x, m)
    assert y.dtype == torch.uint8 and big.dtype == torch.bool
    assert torch.equal(y, torch.where(m, x + x, x))  # 400 and 510 wrap, as torch's
    assert torch.equal(big, x > 127)
    yn, bign = k(x.numpy(), m.numpy())
    assert yn.dtype == np.uint8 and bign.dtype == np.bool_
    assert (yn == y.numpy()).all() and (bign == big.numpy()).all()
    # A uint8 tensor where bool is declared is a dtype error that names both.
    band = module.compile("band")
    a = torch.tensor([True, False, True])
    for bad in (torch.tensor([1, 0, 2], dtype=torch.uint8), np.array([1, 0, 2], dtype=np.uint8)):
        with pytest.raises(tf.TileFoundryError) as e:
            band(a.numpy() if isinstance(bad, np.ndarray) else a, bad)
        assert e.value.status == "TF_ERR_INVALID_ARGUMENT"
        assert "argument #1 (b): dtype must be bool, but got u8" in e.value.message, e.value.message
    out = torch.full((3,), 7, dtype=torch.uint8)
    with pytest.raises(tf.TileFoundryError, match="must be bool, but got u8"):
        band.run([a, a], [out])
    assert torch.equal(out, torch.full((3,), 7, dtype=torch.uint8))
    assert torch.equal(band(a, a), a)
