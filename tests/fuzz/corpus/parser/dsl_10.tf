from tilefoundry.dsl import *

TARGET = Target("cpu", topology=(("device", 1), ("cta", 8)))

S = DimVar("S", 1, 4097)

@func
def gate(x: Tensor[(S, 128), f32], w: Tensor[(128, 128), f32]) -> Tensor[(S, 64), f32]:
    t0 = matmul(x, w) * 0.5
    return silu(slice(t0, begin=(0, 0), end=(S, 64), strides=(1, 1))) * neg(slice(t0, begin=(0, 64), end=(S, 128), strides=(1, 1)))
