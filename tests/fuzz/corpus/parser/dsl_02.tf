"""Module constants of every kind."""
from tilefoundry.dsl import *

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
