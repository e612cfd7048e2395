from tilefoundry.dsl import *

N = DimVar("N", 1, 1 << 20)       # name, lo (inclusive), hi (exclusive)
D = 4096

@func
def rmsnorm(x: Tensor[(N, D), f32], w: Tensor[(D,), f32]) -> Tensor[(N, D), f32]:
    return rms_norm(x, w, eps=1e-6)

@func
def swiglu(a: Tensor[(N, D), bf16], b: Tensor[(N, D), bf16]) -> Tensor[(N, D), bf16]:
    return silu(a) * b

@func
def resnorm(x: Tensor[(N, D), f32], r: Tensor[(N, D), f32], w: Tensor[(D,), f32]
            ) -> tuple[Tensor[(N, D), f32], Tensor[(N, D), f32]]:
    h = x + r                            # shared: one node, two uses
    return h, rms_norm(h, w, eps=1e-6)   # a tuple return
