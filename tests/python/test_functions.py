"""Shape dispatch, loop-carried accumulators (GridRegionExpr) and call
elaboration (docs/ir.md) end to end through the C ABI and torch."""
import pytest
import torch

import tilefoundry as tf
from conftest import unique_op

SOURCE = '''
from tilefoundry.dsl import *

S = DimVar("S", 1, 4096)
K = DimVar("K", 1, 1 << 16)
N = DimVar("N", 1, 1 << 20)

@func
def decode(q: Tensor[(S, 8), f32]) -> Tensor[(S, 8), f32]:
    pass

@decode.specialize(S=(1, 64))
def decode_small(q: Tensor[(S, 8), f32]) -> Tensor[(S, 8), f32]:
    return softmax(q, axis=-1)

@decode.specialize(S=(64, 4096))
def decode_large(q: Tensor[(S, 8), f32]) -> Tensor[(S, 8), f32]:
    return q * 2.0

@func
def rowsum(x: Tensor[(4, K), f32]) -> Tensor[(4,), f32]:
    acc = zeros((4,), f32)
    for i in tile(K, step=8):
        acc = acc + sum(x[:, i], axes=(1,), keepdim=False)
    return acc

@func
def h(x: Tensor[(N,), f32]) -> Tensor[(N,), f32]:
    return x * x

@func
def g(x: Tensor[(N,), f32]) -> Tensor[(N,), f32]:
    return h(x) + x

@func
def f(a: Tensor[(N,), f32], b: Tensor[(3,), f32]) -> tuple[Tensor[(N,), f32], Tensor[(3,), f32]]:
    return g(a), g(b)
'''


@pytest.fixture(scope="module")
def fmod():
    return tf.load(SOURCE)


def test_one_torch_op_selects_the_variant_per_call(fmod):
    op = tf.register(fmod.compile("decode", backend="evaluator"), unique_op("decode"))
    small, large = torch.randn(63, 8), torch.randn(64, 8)
    torch.testing.assert_close(op(small), torch.softmax(small, dim=-1), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(op(large), large * 2.0, rtol=0, atol=0)


def test_out_of_envelope_shape_is_an_error(fmod):
    k = fmod.compile("decode", backend="evaluator")
    with pytest.raises(Exception, match="S"):
        k(torch.randn(4096, 8))


def test_loop_carried_accumulator_matches_torch(fmod):
    op = tf.register(fmod.compile("rowsum", backend="evaluator"), unique_op("rowsum"))
    x = torch.randn(4, 64)
    torch.testing.assert_close(op(x), x.sum(dim=1), rtol=1e-5, atol=1e-5)


def test_call_chain_specializes_per_call_site(fmod):
    op = tf.register(fmod.compile("f", backend="evaluator"), unique_op("chain"))
    a, b = torch.randn(5), torch.randn(3)
    ya, yb = op(a, b)
    torch.testing.assert_close(ya, a * a + a, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(yb, b * b + b, rtol=1e-6, atol=1e-6)
