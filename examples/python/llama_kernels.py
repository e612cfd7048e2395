# TileFoundry kernels of a Llama-style block (valid Python; see docs/dsl.md).
from tilefoundry.dsl import *

T = DimVar("T", 1, 1 << 20)      # tokens
H = DimVar("H", 1, 1 << 16)      # hidden size
F = DimVar("F", 1, 1 << 18)      # MLP (intermediate) size


@func
def llama_rmsnorm(x: Tensor[(T, H), f32], w: Tensor[(H,), f32]) -> Tensor[(T, H), f32]:
    return rms_norm(x, w, eps=1e-6)


@func
def llama_swiglu(gate: Tensor[(T, F), f32], up: Tensor[(T, F), f32]) -> Tensor[(T, F), f32]:
    return silu(gate) * up
