# Two LLM building blocks in the TileFoundry DSL, run by tf_example_c.
from tilefoundry.dsl import *

N = DimVar("N", 1, 1 << 20)       # rows: any count in [1, 2^20)
D = 64                            # hidden size

@func
def rmsnorm(x: Tensor[(N, D), f32], w: Tensor[(D,), f32]) -> Tensor[(N, D), f32]:
    return rms_norm(x, w, eps=1e-6)

@func
def swiglu(a: Tensor[(N, D), f32], b: Tensor[(N, D), f32]) -> Tensor[(N, D), f32]:
    return silu(a) * b
