"""m.evaluate(name, *tensors, mesh="virtual") (docs/sharding.md): a sharded
function run on the virtual mesh gives the same logical answer as torch's
unsharded computation."""
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
