"""inf and nan as DSL literals: they take their partner tensor's dtype like
any float literal, and the compiled kernel agrees with the evaluator."""
import math

import pytest
import torch

import tilefoundry as tf

SOURCE = """
from tilefoundry.dsl import *
N = DimVar("N", 1, 1 << 20)

@func
def extremes(x: Tensor[(N,), f32], h: Tensor[(N,), bf16]) -> tuple[Tensor[(N,), f32], Tensor[(N,), f32], Tensor[(N,), f32], Tensor[(N,), bf16]]:
    return maximum(x, -inf), x + inf, minimum(x, nan), minimum(h, -inf)
"""


@pytest.mark.parametrize("backend", ["native", "evaluator"])
def test_inf_and_nan_literals(backend):
    k = tf.load(SOURCE).compile("extremes", backend=backend)
    x = torch.randn(300)
    h = torch.randn(300).to(torch.bfloat16)
    same, plus_inf, with_nan, lowest = k(x, h)
    assert torch.equal(same, x)
    assert torch.all(plus_inf == math.inf)
    assert torch.all(torch.isnan(with_nan))
    assert lowest.dtype == torch.bfloat16 and torch.all(lowest == -math.inf)


def test_the_dsl_module_names_them():
    from tilefoundry import dsl
    assert dsl.inf == math.inf and math.isnan(dsl.nan) and "inf" in dsl.__all__ and "nan" in dsl.__all__
