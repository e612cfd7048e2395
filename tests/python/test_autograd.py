"""A backward written as another @func: tf.register(k, name, backward=kb)
makes the op differentiable (checked by torch.autograd.gradcheck in f64);
without one a backward raises; a backward of the wrong shape is refused."""
import pytest
import torch

import tilefoundry as tf
from conftest import unique_op

SOURCE = '''
from tilefoundry.dsl import *

N = DimVar("N", 1, 4096)
D = DimVar("D", 1, 4096)

@func
def scaled_sin(x: Tensor[(N, D), f64], w: Tensor[(D,), f64]) -> Tensor[(N, D), f64]:
    return sin(x) * w

@func
def scaled_sin_backward(x: Tensor[(N, D), f64], w: Tensor[(D,), f64], g: Tensor[(N, D), f64]
                        ) -> tuple[Tensor[(N, D), f64], Tensor[(D,), f64]]:
    return cos(x) * w * g, sum(sin(x) * g, axes=0, keepdim=False)

@func
def two_out(x: Tensor[(N,), f64]) -> tuple[Tensor[(N,), f64], Tensor[(N,), f64]]:
    return x * x, exp(x)

@func
def two_out_backward(x: Tensor[(N,), f64], ga: Tensor[(N,), f64], gb: Tensor[(N,), f64]) -> Tensor[(N,), f64]:
    return 2.0 * x * ga + exp(x) * gb
'''


@pytest.fixture(scope="module")
def module():
    return tf.load(SOURCE)


def test_gradcheck_of_an_op_with_a_backward_func(module):
    op = tf.register(module.compile("scaled_sin"), unique_op("scaled_sin"),
                     backward=module.compile("scaled_sin_backward"))
    torch.manual_seed(0)
    x = torch.randn(3, 5, dtype=torch.float64, requires_grad=True)
    w = torch.randn(5, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(op, (x, w))
    y = op(x, w)
    assert y.requires_grad
    y.sum().backward()
    torch.testing.assert_close(x.grad, torch.cos(x.detach()) * w.detach().expand(3, 5))


def test_several_outputs_each_get_their_gradient(module):
    op = tf.register(module.compile("two_out"), unique_op("two_out"), backward=module.compile("two_out_backward"))
    x = torch.randn(7, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(op, (x,))
    a, _ = op(x)
    a.sum().backward()  # the unused output's gradient is zeros
    torch.testing.assert_close(x.grad, 2 * x.detach())


def test_without_a_backward_the_graph_is_not_dropped_silently(module):
    op = tf.register(module.compile("scaled_sin"), unique_op("no_backward"))
    x = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
    y = op(x, torch.ones(3, dtype=torch.float64))
    with pytest.raises(RuntimeError, match="not implemented"):
        y.sum().backward()


def test_a_backward_of_the_wrong_signature_is_refused(module):
    with pytest.raises(tf.TileFoundryError, match=r"must take 3 tensor\(s\).*and return 2"):
        tf.register(module.compile("scaled_sin"), unique_op("bad_backward"), backward=module.compile("two_out"))
