"""torch.ops.tilefoundry.* from Python: schema, results, and error paths."""
import pytest
import torch

import tilefoundry as tf
from conftest import rmsnorm_ref, swiglu_ref, unique_op

F32_TOL = dict(rtol=1e-5, atol=1e-5)


@pytest.fixture(scope="module")
def ops(module):
    """One registration per kernel for this file (evaluator backend: always available)."""
    names = {}
    for fn in ("rmsnorm", "rmsnorm64", "rmsnorm_bf16", "swiglu", "resnorm"):
        names[fn] = tf.register(module.compile(fn, backend="evaluator"), unique_op(fn))
    return names


def test_register_returns_the_torch_op(module):
    name = unique_op("rms")
    op = tf.register(module.compile("rmsnorm", backend="evaluator"), name)
    x, w = torch.randn(3, 16), torch.randn(16)
    torch.testing.assert_close(op(x, w), getattr(torch.ops.tilefoundry, name)(x, w), rtol=0, atol=0)
    torch.testing.assert_close(op(x, w), rmsnorm_ref(x, w), **F32_TOL)


def test_bool_and_integer_dtypes(module):
    positive = tf.register(module.compile("positive", backend="evaluator"), unique_op("positive"))
    band = tf.register(module.compile("band", backend="evaluator"), unique_op("band"))
    iadd = tf.register(module.compile("iadd", backend="evaluator"), unique_op("iadd"))
    x = torch.randn(4, 6)
    assert torch.equal(positive(x), x > 0)
    a, b = torch.tensor([True, True, False, False]), torch.tensor([True, False, True, False])
    assert torch.equal(band(a, b), a & b)
    i, j = torch.arange(5, dtype=torch.int64) * 3, torch.full((5,), 1 << 40, dtype=torch.int64)
    assert torch.equal(iadd(i, j), i + j)


def test_schema_is_derived_from_the_signature(module):
    name = unique_op("resnorm")
    tf.register(module.compile("resnorm", backend="evaluator"), name)
    schema = str(torch._C._jit_get_schemas_for_operator(f"tilefoundry::{name}")[0])
    assert schema == f"tilefoundry::{name}(Tensor x, Tensor r, Tensor w) -> (Tensor, Tensor)"


def test_default_name_is_the_function_name(module):
    # The only registration under the kernel's own name in this process.
    op = tf.register(module.compile("swiglu_bf16", backend="evaluator"))
    a, b = torch.randn(3, 8).bfloat16(), torch.randn(3, 8).bfloat16()
    torch.testing.assert_close(op(a, b), swiglu_ref(a, b))
    assert op is torch.ops.tilefoundry.swiglu_bf16
    schemas = torch._C._jit_get_schemas_for_operator("tilefoundry::swiglu_bf16")
    assert sorted(str(s) for s in schemas) == [
        "tilefoundry::swiglu_bf16(Tensor a, Tensor b) -> Tensor",
        "tilefoundry::swiglu_bf16.out(Tensor a, Tensor b, *, Tensor(a!) out) -> Tensor(a!)"]


def test_rmsnorm_matches_eager(ops):
    torch.manual_seed(0)
    x, w = torch.randn(8, 256), torch.randn(256)
    torch.testing.assert_close(ops["rmsnorm"](x, w), rmsnorm_ref(x, w), **F32_TOL)
    xb, wb = x.bfloat16(), w.bfloat16()
    torch.testing.assert_close(ops["rmsnorm_bf16"](xb, wb), rmsnorm_ref(xb, wb))


def test_swiglu_matches_eager(ops):
    a, b = torch.randn(5, 33), torch.randn(5, 33)
    torch.testing.assert_close(ops["swiglu"](a, b), swiglu_ref(a, b), **F32_TOL)


def test_tuple_result(ops):
    x, r, w = torch.randn(2, 16), torch.randn(2, 16), torch.randn(16)
    h, y = ops["resnorm"](x, r, w)
    torch.testing.assert_close(h, x + r, **F32_TOL)
    torch.testing.assert_close(y, rmsnorm_ref(x + r, w), **F32_TOL)


def test_requires_grad_input_is_accepted(ops):
    x, w = torch.randn(2, 16, requires_grad=True), torch.randn(16)
    torch.testing.assert_close(ops["rmsnorm"](x, w).detach(), rmsnorm_ref(x.detach(), w), **F32_TOL)


def test_autograd_records_the_op_and_its_backward_fails_by_name(ops):
    # The ops have no backward: the graph is not dropped silently (an output
    # that did not require grad); a backward through the op names it.
    x, w = torch.randn(2, 16, requires_grad=True), torch.randn(16)
    y = ops["rmsnorm"](x, w)
    assert y.requires_grad and y.grad_fn is not None
    with pytest.raises(RuntimeError, match="derivative for tilefoundry::.* is not implemented"):
        y.sum().backward()
    h, y2 = ops["resnorm"](x, torch.randn(2, 16), w)
    assert h.requires_grad and y2.requires_grad
    # The out= form records it on the written tensor alike.
    out = torch.empty(2, 16)
    ops["rmsnorm"].out(x, w, out=out)
    with pytest.raises(RuntimeError, match="is not implemented"):
        out.sum().backward()


def test_the_recorded_node_has_edges_to_the_inputs_that_require_grad_only(ops, module):
    x, w = torch.randn(2, 16, requires_grad=True), torch.randn(16)
    y = ops["rmsnorm"](x, w)
    assert [type(n).__name__ for n, _ in y.grad_fn.next_functions] == ["AccumulateGrad"]
    assert y.grad_fn.next_functions[0][0].variable is x
    # An output that cannot carry a gradient (bool) gets no history.
    positive = tf.register(module.compile("positive", backend="evaluator"), unique_op("positive"))
    b = positive(x)
    assert b.dtype == torch.bool and not b.requires_grad and b.grad_fn is None
    torch.testing.assert_close(b, x.detach() > 0, rtol=0, atol=0)


def test_without_grad_mode_nothing_is_recorded(ops):
    x, w = torch.randn(2, 16, requires_grad=True), torch.randn(16, requires_grad=True)
    with torch.no_grad():
        y = ops["rmsnorm"](x, w)
    assert not y.requires_grad and y.grad_fn is None
    torch.testing.assert_close(y, rmsnorm_ref(x.detach(), w.detach()), **F32_TOL)


def test_forward_mode_ad_through_an_op_without_derivative_is_refused(ops):
    import torch.autograd.forward_ad as fwAD
    w = torch.randn(16)
    with fwAD.dual_level():
        x = fwAD.make_dual(torch.randn(2, 16), torch.randn(2, 16))
        with pytest.raises(NotImplementedError, match="forward AD"):
            ops["rmsnorm"](x, w)


def test_no_grad_and_plain_inputs_give_plain_outputs(ops):
    x, w = torch.randn(2, 16, requires_grad=True), torch.randn(16)
    with torch.no_grad():
        assert not ops["rmsnorm"](x, w).requires_grad
    assert not ops["rmsnorm"](x.detach(), w).requires_grad
    assert ops["rmsnorm"](x.detach(), w).grad_fn is None


def test_registering_a_name_twice_is_refused(module):
    name = unique_op("twice")
    k = module.compile("swiglu", backend="evaluator")
    tf.register(k, name)
    with pytest.raises(tf.TileFoundryError) as e:
        tf.register(k, name)
    assert e.value.status == "TF_ERR_INVALID_ARGUMENT"
    assert "already registered" in e.value.message and name in e.value.message


REPLACEABLE = """
from tilefoundry.dsl import *
N = DimVar("N", 1, 1024)

@func
def scale(x: Tensor[(N, 4), f32]) -> Tensor[(N, 4), f32]:
    return x * 2.0

@func
def scale_again(x: Tensor[(N, 4), f32]) -> Tensor[(N, 4), f32]:
    return x * 3.0 + 1.0

@func
def two(x: Tensor[(N, 4), f32], y: Tensor[(N, 4), f32]) -> Tensor[(N, 4), f32]:
    return x + y
"""


def test_a_registration_is_replaced_when_asked(module):
    # A notebook cell run again: same name, same schema, a new body.
    m = tf.load(REPLACEABLE)
    name = unique_op("cell")
    op = tf.register(m.compile("scale"), name)
    x = torch.randn(3, 4)
    torch.testing.assert_close(op(x), x * 2.0, rtol=0, atol=0)
    again = tf.register(m.compile("scale_again"), name, replace=True)
    torch.testing.assert_close(again(x), x * 3.0 + 1.0)
    torch.testing.assert_close(op(x), x * 3.0 + 1.0)  # the same op object: it runs the new kernel
    out = torch.empty(3, 4)
    op.out(x, out=out)
    torch.testing.assert_close(out, x * 3.0 + 1.0)
    assert op(torch.empty(5, 4, device="meta")).shape == (5, 4)  # the Meta kernel describes it too
    # A schema cannot change under a name: refused, and the op is as it was.
    with pytest.raises(tf.TileFoundryError) as e:
        tf.register(m.compile("two"), name, replace=True)
    assert e.value.status == "TF_ERR_INVALID_ARGUMENT" and "schema" in e.value.message
    torch.testing.assert_close(op(x), x * 3.0 + 1.0)
    # Without replace=True a second registration is still an error.
    with pytest.raises(tf.TileFoundryError, match="already registered"):
        tf.register(m.compile("scale"), name)
    # replace=True on a new name registers it.
    fresh = tf.register(m.compile("scale"), unique_op("fresh"), replace=True)
    torch.testing.assert_close(fresh(x), x * 2.0, rtol=0, atol=0)


def test_invalid_op_name_is_refused(module):
    with pytest.raises(tf.TileFoundryError) as e:
        tf.register(module.compile("swiglu", backend="evaluator"), "not a name")
    assert e.value.status == "TF_ERR_INVALID_ARGUMENT"
    assert "identifier" in e.value.message


# What the user got wrong, first, with the op's name and the argument's:
# no C function names or status codes of the library under the op.
def test_wrong_dtype_raises_runtime_error_naming_the_argument(ops):
    with pytest.raises(RuntimeError) as e:
        ops["rmsnorm"](torch.randn(2, 8, dtype=torch.float64), torch.randn(8, dtype=torch.float64))
    msg = str(e.value).splitlines()[0]
    assert "argument #0 (x): dtype must be f32, but got f64" in msg, msg
    assert msg.startswith("tilefoundry::"), msg
    assert "tf_kernel_" not in msg and "TF_ERR_" not in msg and "failed" not in msg, msg


def test_wrong_shape_raises_runtime_error_naming_the_argument(ops):
    with pytest.raises(RuntimeError) as e:
        ops["rmsnorm64"](torch.randn(3, 65), torch.randn(65))
    msg = str(e.value).splitlines()[0]
    assert "argument #0" in msg and "64" in msg and "65" in msg, msg
    assert "tf_kernel_" not in msg and "TF_ERR_" not in msg, msg


def test_uint8_is_u8_and_bool_is_bool(module):
    op = tf.register(module.compile("u8_mask"), unique_op("u8_mask"))
    x = torch.tensor([1, 100, 200, 255], dtype=torch.uint8)
    m = torch.tensor([True, False, True, True])
    y, big = op(x, m)
    assert torch.equal(y, torch.where(m, x + x, x)) and torch.equal(big, x > 127)
    with pytest.raises(RuntimeError, match="dtype must be bool, but got u8"):
        op(x, x)
    with pytest.raises(RuntimeError, match="dtype must be f32, but got u8"):
        tf.register(module.compile("swiglu"), unique_op("swiglu"))(x.view(2, 2), x.view(2, 2))


def test_meta_tensor_gets_the_meta_kernel_not_the_cpu_one(ops):
    # Meta tensors exist without any accelerator. Every op has a Meta kernel
    # (tests/python/test_meta_kernels.py): it describes the output and never
    # reaches the CPU kernel, which would refuse a non-CPU tensor.
    y = ops["swiglu"](torch.empty(2, 2, device="meta"), torch.empty(2, 2, device="meta"))
    assert y.device.type == "meta" and y.shape == (2, 2)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device; this torch/machine has none")
def test_cuda_tensor_is_refused(ops):
    with pytest.raises((RuntimeError, NotImplementedError)):
        ops["swiglu"](torch.randn(2, 2, device="cuda"), torch.randn(2, 2, device="cuda"))


def test_c_entry_point_refuses_null_kernel_without_throwing():
    from tilefoundry import torch_ops
    tl = torch_ops._load_torch_lib()
    assert tl.tf_torch_register(None, b"null_kernel") == 5  # TF_ERR_INVALID_ARGUMENT
    assert b"NULL" in tl.tf_torch_last_error()


def test_c_entry_point_refuses_released_kernel(module):
    import ctypes
    from tilefoundry import _lib, torch_ops
    tl = torch_ops._load_torch_lib()
    k = module.compile("swiglu", backend="evaluator")
    raw = ctypes.c_void_p(k.handle)
    _lib.lib().tf_kernel_retain(raw)
    _lib.lib().tf_kernel_release(raw)  # balanced: k still owns one reference
    del k
    status = tl.tf_torch_register(raw, b"released_kernel")
    assert _lib.status_name(status) == "TF_ERR_INVALID_HANDLE"
    assert b"not a live kernel" in tl.tf_torch_last_error()
