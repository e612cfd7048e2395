from tilefoundry.dsl import *

TARGET = Target("cpu", topology=(("device", 1), ("cta", 8)))

S = DimVar("S", 1, 4097)
D = 128
HALF = D // 2

@func
def gate(x: Tensor[(S, D), f32], w: Tensor[(D, D), f32]) -> Tensor[(S, HALF), f32]:
    h = x @ w
    h = h * 0.5                      # rebinding: h now names the product
    a = h[:, :HALF]
    b = h[:, HALF:]
    return silu(a) * -b
