from tilefoundry.dsl import *
TARGET = Target("cpu", topology=(("de\"v\\i\nce", 1), ("cta", 4)))
N = DimVar("N", 1, 8)
@func
def f(x: Tensor[(N,), f32]) -> Tensor[(N,), f32]:
    return x
