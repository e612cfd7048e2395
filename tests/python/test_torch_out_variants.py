"""Every registered op has an out= overload in PyTorch's convention:
tilefoundry::<op>.out(<inputs>, *, Tensor(a!) out) -> Tensor(a!) (out0, out1,
... for several outputs). It writes into the caller's tensors (any strides,
even one aliasing an input), returns them, and refuses a wrong one (dtype,
shape, device) with a message naming it, before writing anything. Usable
eagerly, from TorchScript and, on torch 2.x, under torch.compile."""
import pytest
import torch

import tilefoundry as tf
from conftest import compile_on, rmsnorm_ref, swiglu_ref, unique_op

TORCH2 = int(torch.__version__.split(".")[0]) >= 2
SENTINEL = -12345.0


@pytest.fixture(scope="module")
def swiglu(module, backend):
    return tf.register(compile_on(module, "swiglu", backend), unique_op("out_swiglu"))


@pytest.fixture(scope="module")
def resnorm(module, backend):
    return tf.register(compile_on(module, "resnorm", backend), unique_op("out_resnorm"))


def test_schema_has_alias_annotations(swiglu, resnorm):
    assert str(swiglu.out._schema).endswith("(Tensor a, Tensor b, *, Tensor(a!) out) -> Tensor(a!)")
    assert str(resnorm.out._schema).endswith(
        "*, Tensor(a!) out0, Tensor(b!) out1) -> (Tensor(a!), Tensor(b!))")


def test_writes_into_out_and_returns_it(swiglu):
    a, b = torch.randn(64, 256), torch.randn(64, 256)
    y = torch.full((64, 256), SENTINEL)
    r = swiglu.out(a, b, out=y)
    assert r is y
    torch.testing.assert_close(y, swiglu_ref(a, b), rtol=1e-5, atol=1e-5)
    # The overload packet picks .out for an out= keyword, like torch.add.
    y2 = torch.empty(64, 256)
    assert swiglu(a, b, out=y2) is y2
    torch.testing.assert_close(y2, y)


def test_several_outputs(resnorm):
    x, r, w = torch.randn(8, 32), torch.randn(8, 32), torch.randn(32)
    h, y = torch.empty(8, 32), torch.empty(8, 32)
    got = resnorm.out(x, r, w, out0=h, out1=y)
    assert got[0] is h and got[1] is y
    torch.testing.assert_close(h, x + r)
    torch.testing.assert_close(y, rmsnorm_ref(x + r, w), rtol=1e-5, atol=1e-5)


def test_strided_and_aliasing_outs(swiglu):
    a, b = torch.randn(64, 256), torch.randn(64, 256)
    want = swiglu_ref(a, b)
    # A transposed view: written element by element through its strides.
    base = torch.full((256, 64), SENTINEL)
    swiglu.out(a, b, out=base.t())
    torch.testing.assert_close(base.t(), want, rtol=1e-5, atol=1e-5)
    # A window of a larger buffer: only the window is written.
    big = torch.full((64, 512), SENTINEL)
    swiglu.out(a, b, out=big[:, 128:384])
    torch.testing.assert_close(big[:, 128:384], want, rtol=1e-5, atol=1e-5)
    assert (big[:, :128] == SENTINEL).all() and (big[:, 384:] == SENTINEL).all()
    # out aliasing an input: in place, as if the inputs were read first.
    a2 = a.clone()
    swiglu.out(a2, b, out=a2)
    torch.testing.assert_close(a2, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("bad, message", [
    (lambda: torch.empty(64, 256, dtype=torch.float64), "out has dtype Double, but the op computes Float"),
    (lambda: torch.empty(64, 255), r"out has shape \[64, 255\], but the op computes \[64, 256\]"),
    (lambda: torch.empty(0), r"out has shape \[0\]"),
    (lambda: torch.empty(64, 256, device="meta"), "out is on meta, but the inputs are on cpu"),
])
def test_a_wrong_out_is_refused_and_nothing_is_written(swiglu, bad, message):
    a, b = torch.randn(64, 256), torch.randn(64, 256)
    out = bad()
    if out.device.type == "cpu":
        out.fill_(SENTINEL)
    with pytest.raises(RuntimeError, match=message):
        # A CPU out reaches the CPU kernel; a meta out sends the call to the
        # Meta kernel (the dispatcher picks Meta over CPU), which refuses it.
        swiglu.out(a, b, out=out)
    if out.device.type == "cpu":
        assert (out == SENTINEL).all()


def test_a_self_overlapping_out_is_refused(swiglu):
    a, b = torch.randn(4, 8), torch.randn(4, 8)
    row = torch.full((8,), SENTINEL)
    with pytest.raises(RuntimeError, match="overlap"):
        swiglu.out(a, b, out=row.expand(4, 8))
    assert (row == SENTINEL).all()


def test_torchscript_calls_the_out_overload(swiglu):
    name = swiglu._qualified_op_name.split("::")[1]
    src = f"""
def f(a, b, y):
    return torch.ops.tilefoundry.{name}(a, b, out=y)
"""
    cu = torch.jit.CompilationUnit(src)
    a, b = torch.randn(16, 32), torch.randn(16, 32)
    y = torch.empty(16, 32)
    assert cu.f(a, b, y).data_ptr() == y.data_ptr()
    torch.testing.assert_close(y, swiglu_ref(a, b), rtol=1e-5, atol=1e-5)
    assert f"tilefoundry::{name}" in str(cu.f.graph)


def test_meta_out_checks_and_returns_out(swiglu):
    a, b = torch.randn(64, 256, device="meta"), torch.randn(64, 256, device="meta")
    y = torch.empty(64, 256, device="meta")
    assert swiglu.out(a, b, out=y) is y
    with pytest.raises(RuntimeError, match="out has shape"):
        swiglu.out(a, b, out=torch.empty(64, 1, device="meta"))


@pytest.mark.skipif(not TORCH2, reason="torch.compile needs torch 2.x (make test-torch2)")
def test_compile_sees_the_mutation(swiglu):
    """Functionalization must see that .out writes y: the compiled function's
    result and the buffer both hold the op's values, also when the buffer is
    read afterwards inside the graph."""
    def model(a, b, y):
        swiglu.out(a, b, out=y)
        return y * 2 + 1

    compiled = torch.compile(model, fullgraph=True)
    a, b = torch.randn(32, 64), torch.randn(32, 64)
    y = torch.zeros(32, 64)
    got = compiled(a, b, y)
    torch.testing.assert_close(y, swiglu_ref(a, b), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(got, swiglu_ref(a, b) * 2 + 1, rtol=1e-5, atol=1e-5)


@pytest.mark.skipif(not hasattr(torch.library, "opcheck"), reason="torch.library.opcheck needs torch >= 2.4")
def test_opcheck_out(swiglu, resnorm):
    x, r, w = torch.randn(8, 32), torch.randn(8, 32), torch.randn(32)
    for op, args, kwargs in ((swiglu.out, (x, r), {"out": torch.empty(8, 32)}),
                             (resnorm.out, (x, r, w), {"out0": torch.empty(8, 32),
                                                       "out1": torch.empty(8, 32)})):
        results = torch.library.opcheck(op, args, kwargs)
        assert results and set(results.values()) == {"SUCCESS"}, results


def test_an_input_named_out_keeps_its_name(backend):
    src = """from tilefoundry.dsl import *
N = DimVar("N", 1, 1024)

@func
def shift(out: Tensor[(N,), f32]) -> Tensor[(N,), f32]:
    return out + 1.0
"""
    op = tf.register(compile_on(tf.load(src), "shift", backend), unique_op("out_named"))
    assert "(Tensor out, *, Tensor(a!) out_) -> Tensor(a!)" in str(op.out._schema)
    x, y = torch.randn(10), torch.empty(10)
    assert op.out(x, out_=y) is y
    torch.testing.assert_close(y, x + 1)
