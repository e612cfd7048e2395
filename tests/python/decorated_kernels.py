# An ordinary Python module that defines kernels with @tf.func: importing it
# compiles and registers them. Non-DSL Python lives alongside.
import torch

import tilefoundry as tf
from tilefoundry.dsl import *

ROWS = DimVar("ROWS", 1, 1 << 16)
HIDDEN = 48

HELPER_TABLE = {"not": "dsl"}  # plain Python, ignored by the DSL loader


def eager_gate(a, b):
    return torch.nn.functional.silu(a) * b


@tf.func
def deco_gate(a: Tensor[(ROWS, HIDDEN), f32], b: Tensor[(ROWS, HIDDEN), f32]) -> Tensor[(ROWS, HIDDEN), f32]:
    return silu(a) * b


@tf.func(name="deco_norm_eval", backend="evaluator")
def deco_norm(x: Tensor[(ROWS, HIDDEN), f32], w: Tensor[(HIDDEN,), f32]) -> Tensor[(ROWS, HIDDEN), f32]:
    return rms_norm(x, w, eps=1e-6)
