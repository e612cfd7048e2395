"""Meta kernels of torch.ops.tilefoundry.*: shapes come from
HIR shape inference through the C ABI — tf_kernel_output_desc for concrete
sizes, the kernel's typed signature evaluated over SymInts for symbolic ones
— so torch.compile(fullgraph=True, dynamic=True) captures a model calling the
ops once for every sequence length. The torch 2.x parts run under
`make test-torch2`; on Debian's torch 1.13 they are skipped."""
import itertools

import pytest
import torch

import tilefoundry as tf
from tilefoundry import meta

_ids = itertools.count()

SRC = '''from tilefoundry.dsl import *

S = DimVar("S", 1, 4096)
D = 16

@func
def rmsnorm(x: Tensor[(S, D), f32], w: Tensor[(D,), f32]) -> Tensor[(S, D), f32]:
    return rms_norm(x, w, eps=1e-6)

@func
def pad_rows(x: Tensor[(S, D), f32]) -> tuple[Tensor[(S * 2 + 1, D), f32], Tensor[(dim_min(S, 8), D), f32]]:
    return zeros((S * 2 + 1, D), f32), x[:dim_min(S, 8), :]
'''

TORCH2 = int(torch.__version__.split(".")[0]) >= 2


@pytest.fixture(scope="module")
def ops():
    # The Meta kernel reads shapes, not code: the evaluator keeps these tests
    # independent of a C++ compiler.
    module = tf.load(SRC)
    n = next(_ids)
    return (tf.register(module.compile("rmsnorm", backend="evaluator"), "meta_rmsnorm_%d" % n),
            tf.register(module.compile("pad_rows", backend="evaluator"), "meta_pad_rows_%d" % n))


def test_meta_shapes_match_the_cpu_kernel(ops):
    norm, pad = ops
    x, w = torch.randn(5, 16), torch.randn(16)
    for real, fake in ((norm(x, w), norm(x.to("meta"), w.to("meta"))),):
        assert fake.device.type == "meta"
        assert (fake.shape, fake.dtype) == (real.shape, real.dtype)
    real, fake = pad(x), pad(x.to("meta"))
    assert [t.shape for t in fake] == [t.shape for t in real] == [(11, 16), (5, 16)]
    assert all(t.device.type == "meta" for t in fake)


def test_meta_checks_bindings_like_the_kernel(ops):
    norm, _ = ops
    with pytest.raises(RuntimeError, match="axis 0 must be 16, but got 15"):
        norm(torch.empty(5, 16, device="meta"), torch.empty(15, device="meta"))
    with pytest.raises(RuntimeError, match="outside its range"):
        norm(torch.empty(5000, 16, device="meta"), torch.empty(16, device="meta"))


def test_signature_is_evaluated_over_symbolic_sizes():
    """The symbolic path, with plain ints standing in for SymInts."""
    module = tf.load(SRC)
    sig = module.signature("pad_rows")
    shapes = meta.symbolic_shapes(sig, [torch.empty(7, 16, device="meta")])
    assert shapes == [([15, 16], "f32"), ([7, 16], "f32")]
    shapes = meta.symbolic_shapes(sig, [torch.empty(30, 16, device="meta")])
    assert shapes[1] == ([8, 16], "f32")


def test_symbolic_path_checks_static_extents_and_repeated_dimvars():
    module = tf.load(SRC)
    sig = module.signature("rmsnorm")
    with pytest.raises(RuntimeError, match="argument #1 axis 0 must be 16, but got 15"):
        meta.symbolic_shapes(sig, [torch.empty(5, 16, device="meta"), torch.empty(15, device="meta")])
    both = "def f(a: Tensor[(N, 4), f32], b: Tensor[(N,), f32]) -> Tensor[(N,), f32]"
    with pytest.raises(RuntimeError, match="argument #1 axis 0 must be N, but got 6"):
        meta.symbolic_shapes(both, [torch.empty(5, 4), torch.empty(6)])
    assert meta.symbolic_shapes(both, [torch.empty(5, 4), torch.empty(5)]) == [([5], "f32")]


def test_parse_signature_keeps_call_commas_inside_a_dim():
    params, results = meta.parse_signature(
        "def f(x: Tensor[(N, 4), f32]) -> tuple[Tensor[(dim_min(N, 8), 4), bf16], Tensor[(), i32]]")
    assert params == [(["N", "4"], "f32")]
    assert results == [(["dim_min(N, 8)", "4"], "bf16"), ([], "i32")]


@pytest.mark.skipif(not TORCH2, reason="torch.compile needs torch 2.x (make test-torch2)")
def test_compile_dynamic_captures_once_without_graph_break(ops):
    norm, pad = ops
    w = torch.randn(16)
    compiles = []

    def backend(gm, example_inputs):
        compiles.append(gm)
        return gm.forward

    def model(x):
        y = norm(x, w)
        big, small = pad(y)
        return big.sum() + small.sum() + y

    compiled = torch.compile(model, backend=backend, fullgraph=True, dynamic=True)
    for s in (3, 5, 9, 17, 33):
        x = torch.randn(s, 16)
        torch.testing.assert_close(compiled(x), model(x))
    assert len(compiles) == 1, "recompiled per sequence length"
    # Both ops are nodes of the one graph, and its input's rows are symbolic.
    targets = [n.target for n in compiles[0].graph.nodes if n.op == "call_function"]
    for op in (norm, pad):
        assert op in targets or op.default in targets, targets
    inputs = [n.meta["example_value"] for n in compiles[0].graph.nodes if n.op == "placeholder"]
    rows = [t.shape[0] for t in inputs if isinstance(t, torch.Tensor) and t.dim() == 2]
    assert rows and all(isinstance(r, torch.SymInt) for r in rows), rows


@pytest.mark.skipif(not hasattr(torch.library, "opcheck"), reason="torch.library.opcheck needs torch >= 2.4")
def test_opcheck(ops):
    """Every check opcheck has (schema, autograd registration, FakeTensor,
    AOT dispatch with dynamic shapes) on both ops."""
    norm, pad = ops
    for op, args in ((norm, (torch.randn(6, 16), torch.randn(16))), (pad, (torch.randn(6, 16),)),
                     (pad, (torch.randn(11, 16),))):
        results = torch.library.opcheck(op.default, args)  # the packet also holds .out
        assert results and set(results.values()) == {"SUCCESS"}, results
