"""m.evaluate(name, *tensors, mesh="virtual") (docs/sharding.md): a sharded
function run on the virtual mesh gives the same logical answer as torch's
unsharded computation."""
from pathlib import Path

import pytest
import torch

import tilefoundry as tf

SOURCE = '''
from tilefoundry.dsl import *

TARGET = Target("cpu", topology=(("device", 1), ("cta", 4)))

cta = Mesh(topology="cta", shape=(4,), axes=("x",))

@func
def kmatmul(a: Tensor[(8, 16), f32, ShardLayout(cta, (Partial("sum"),))],
            w: Tensor[(16, 8), f32, ShardLayout(cta, (Broadcast(),))]
            ) -> Tensor[(8, 8), f32, ShardLayout(cta, (Broadcast(),))]:
    return reshard(a @ w, layout=ShardLayout(cta, (Broadcast(),)))

@func
def partial_add(a: Tensor[(8, 16), f32, ShardLayout(cta, (Partial("sum"),))],
                b: Tensor[(8, 16), f32, ShardLayout(cta, (Partial("sum"),))]
                ) -> Tensor[(8, 16), f32, ShardLayout(cta, (Broadcast(),))]:
    return reshard(a + b, layout=ShardLayout(cta, (Broadcast(),)))

@func
def split_rows(x: Tensor[(8, 16), f32, ShardLayout(cta, (Split(axis=0),))]
               ) -> Tensor[(8, 16), f32, ShardLayout(cta, (Split(axis=0),))]:
    return x * x + x
'''


@pytest.fixture(scope="module")
def mod():
    return tf.load(SOURCE)


def test_partial_sum_add_equals_unsharded(mod):
    torch.manual_seed(0)
    a, b = torch.randn(8, 16), torch.randn(8, 16)
    out = mod.evaluate("partial_add", a, b, mesh="virtual")
    torch.testing.assert_close(out, a + b)


def test_matmul_with_one_partial_sum_input_equals_unsharded(mod):
    a, w = torch.randn(8, 16), torch.randn(16, 8)
    torch.testing.assert_close(mod.evaluate("kmatmul", a, w, mesh="virtual"), a @ w)


def test_split_rows_elementwise_equals_unsharded(mod):
    x = torch.randn(8, 16)
    out = mod.evaluate("split_rows", x, mesh="virtual")
    torch.testing.assert_close(out, x * x + x)


def test_virtual_mesh_differs_from_plain_evaluation_only_in_how_it_runs(mod):
    x = torch.randn(8, 16)
    torch.testing.assert_close(mod.evaluate("split_rows", x, mesh="virtual"), mod.evaluate("split_rows", x))


def test_unknown_mesh_mode_is_rejected(mod):
    with pytest.raises(ValueError, match="virtual"):
        mod.evaluate("split_rows", torch.randn(8, 16), mesh="real")


def test_kernel_reports_the_virtual_mesh_backend(mod):
    k = mod.compile("split_rows", backend="virtual_mesh")
    assert k.backend == "virtual_mesh"



# The tensor-parallel block over DimVars B, D, F on a 2-rank device mesh:
# the MPI example's module (which mpirun runs across processes).
SYMBOLIC = (Path(__file__).resolve().parents[2] / "examples" / "mpi" / "mlp.tf").read_text()


@pytest.mark.parametrize("b,d,f", [(4, 8, 16), (3, 12, 10)])
def test_symbolic_extents_on_the_virtual_mesh(b, d, f):
    """The tensor-parallel block over DimVars: one module, any extents whose
    split axes divide by the mesh; the printed module reads back."""
    m = tf.load(SYMBOLIC)
    gen = torch.Generator().manual_seed(b * 100 + f)
    x, w1, w2, g = (torch.randn(b, d, generator=gen), torch.randn(d, f, generator=gen),
                    torch.randn(f, d, generator=gen), torch.randn(d, generator=gen))
    h = torch.nn.functional.silu(x @ w1) @ w2 + x
    want = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6) * g
    torch.testing.assert_close(m.evaluate("mlp", x, w1, w2, g, mesh="virtual"), want, rtol=1e-4, atol=1e-4)
    assert "strides=((F // 2) * 2, F // 2, 1)" in str(m)
    assert str(tf.load(str(m))) == str(m)


def test_symbolic_split_extent_must_divide_by_the_mesh():
    m = tf.load(SYMBOLIC)
    x, w1, w2, g = torch.randn(2, 4), torch.randn(4, 5), torch.randn(5, 4), torch.randn(4)
    with pytest.raises(tf.TileFoundryError, match="has extent 5, which its 2 shares do not divide"):
        m.evaluate("mlp", x, w1, w2, g, mesh="virtual")
