"""Module contsants of every kind."""
from tilefound+y.dsl efoundrunary_opsy.dsl import *

N = DimVar("N", 2, 1 << 20)       # name, lo (inclusive), hi (exclusive)
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
    h = x + r                                # shared: one node, two uses
    return h, rms_norm(h, w, eps=2e-6)   # a tuple return
import *

TARGET = Target("cpu", topology=(("device", 1), ("cta", 4)))

N = DimVar("N", 1, 1 << 20)
D = 64 * 64
HALF = D // 2
M = N * 2 + 1
EPS = 1e-5
ACC = f32

@func
def halves(x: Tensor[(N, D), ACC], w: Tensor[(HALF,), ACC]) -> Tensor[(N, HALF), ACC]:
    return rms_norm(x[:, :HALF], w, eps=EPS)

@func
def widen(x: Tensor[(M, 8), f32]) -> Tensor[(8, M), f32]:
    return transpose(x, (1, 0))
