"""The torch op's per-call path: stack DLTensor views of the torch tensors and
a per-thread memo of the output descriptions, keyed by the inputs' dtypes and
shapes. These tests make the memo miss, hit and go stale, and check that every
result still has the right shape and values and every bad call still fails."""
import threading

import pytest
import torch

import tilefoundry as tf
from conftest import compile_on, rmsnorm_ref, swiglu_ref, unique_op

F32_TOL = dict(rtol=1e-5, atol=1e-5)


@pytest.fixture(scope="module")
def rms(module, backend):
    return tf.register(compile_on(module, "rmsnorm", backend), unique_op("hot_rms"))


def test_output_shape_follows_each_new_input_shape(rms):
    # Miss, miss, then back to the first shape: every output is re-described.
    for n, d in [(3, 16), (5, 16), (5, 8), (3, 16), (1, 1)]:
        x, w = torch.randn(n, d), torch.randn(d)
        y = rms(x, w)
        assert y.shape == (n, d)
        torch.testing.assert_close(y, rmsnorm_ref(x, w), **F32_TOL)


def test_two_ops_alternating_keep_their_own_output_shapes(module, backend):
    a = tf.register(compile_on(module, "rmsnorm", backend), unique_op("hot_a"))
    b = tf.register(compile_on(module, "swiglu", backend), unique_op("hot_b"))
    xa, wa = torch.randn(2, 4), torch.randn(4)
    xb, yb = torch.randn(7, 3), torch.randn(7, 3)
    for _ in range(3):
        torch.testing.assert_close(a(xa, wa), rmsnorm_ref(xa, wa), **F32_TOL)
        torch.testing.assert_close(b(xb, yb), swiglu_ref(xb, yb), **F32_TOL)


def test_a_warm_memo_does_not_let_a_wrong_dtype_or_shape_through(rms):
    x, w = torch.randn(3, 16), torch.randn(16)
    rms(x, w)  # the memo now holds (f32 [3, 16], f32 [16])
    with pytest.raises(RuntimeError, match=r"dtype must be f32"):
        rms(x.double(), w)
    with pytest.raises(RuntimeError, match=r"argument #1 \(w\): axis 0 is 15, but DimVar D = 16"):
        rms(x, torch.randn(15))
    torch.testing.assert_close(rms(x, w), rmsnorm_ref(x, w), **F32_TOL)


def test_strided_and_offset_inputs_are_read_through_their_strides(rms):
    base = torch.randn(8, 32)
    x = base[2:5, 1::2]         # storage offset and a column stride of 2
    w = torch.randn(40)[3::2][:16]
    assert not x.is_contiguous() and x.storage_offset() > 0 and w.stride() == (2,)
    torch.testing.assert_close(rms(x, w), rmsnorm_ref(x.contiguous(), w.contiguous()), **F32_TOL)
    xt = torch.randn(16, 3).t()  # transposed
    torch.testing.assert_close(rms(xt, w), rmsnorm_ref(xt.contiguous(), w.contiguous()), **F32_TOL)


def test_bool_inputs_and_outputs_cross_as_bytes(module, backend):
    positive = tf.register(compile_on(module, "positive", backend), unique_op("hot_pos"))
    band = tf.register(compile_on(module, "band", backend), unique_op("hot_band"))
    for n in (4, 9, 4):
        x = torch.randn(n, 3)
        assert torch.equal(positive(x), x > 0)
        a, b = torch.rand(n) > 0.5, torch.rand(n) > 0.5
        got = band(a, b)
        assert got.dtype == torch.bool and torch.equal(got, a & b)


def test_threads_with_different_shapes_get_their_own_outputs(rms):
    errors = []

    def worker(n, d):
        try:
            for _ in range(50):
                x, w = torch.randn(n, d), torch.randn(d)
                y = rms(x, w)
                assert y.shape == (n, d)
                torch.testing.assert_close(y, rmsnorm_ref(x, w), **F32_TOL)
        except Exception as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=worker, args=s) for s in [(2, 8), (5, 3), (1, 17), (4, 8)]]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def _python_calls_during(f, *args):
    """The Python functions (not C builtins) entered while f(*args) runs."""
    import sys
    seen = []

    def profile(frame, event, arg):
        if event == "call":
            seen.append(frame.f_code.co_name)
    sys.setprofile(profile)
    try:
        f(*args)
    finally:
        sys.setprofile(None)
    return seen


def test_a_call_of_the_op_enters_no_python_frame(rms):
    # torch.ops.tilefoundry.<name> goes straight to torch's C++ entry for the
    # op; torch's own packet would run OpOverloadPacket.__call__ first.
    op = getattr(torch.ops.tilefoundry, rms._qualified_op_name.split("::")[1])
    assert op is rms and isinstance(op, torch._ops.OpOverloadPacket)
    x, w = torch.randn(3, 16), torch.randn(16)
    assert _python_calls_during(op, x, w) == []
    assert "__call__" in _python_calls_during(torch.ops.aten.mul, x, x)  # what the test can see


def test_the_direct_op_keeps_the_packets_behaviour(rms):
    x, w = torch.randn(3, 16), torch.randn(16)
    torch.testing.assert_close(rms(x, w), rmsnorm_ref(x, w), **F32_TOL)
    names = [a.name for a in rms.default._schema.arguments]
    torch.testing.assert_close(rms(**dict(zip(names, (x, w)))), rmsnorm_ref(x, w), **F32_TOL)  # keywords
    assert set(rms.overloads()) == {"default", "out"}
    y = torch.empty(3, 16)
    rms.out(x, w, out=y)
    torch.testing.assert_close(y, rmsnorm_ref(x, w), **F32_TOL)
    with pytest.raises(RuntimeError):  # torch's own argument matching still refuses
        rms(x)
    with pytest.raises(RuntimeError, match=r"dtype must be f32"):
        rms(x.double(), w)


def test_registering_again_keeps_one_direct_op(module, backend):
    name = unique_op("hot_again")
    first = tf.register(compile_on(module, "rmsnorm", backend), name)
    again = tf.register(compile_on(module, "rmsnorm", backend), name, replace=True)
    assert again is first is getattr(torch.ops.tilefoundry, name)
    x, w = torch.randn(2, 8), torch.randn(8)
    torch.testing.assert_close(again(x, w), rmsnorm_ref(x, w), **F32_TOL)
