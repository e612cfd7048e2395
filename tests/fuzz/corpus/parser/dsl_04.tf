from tilefoundry.dsl import *

N = DimVar("N", 1, 1 << 20)

@func
def split_sign(x: Tensor[(N, 8), f32]) -> tuple[Tensor[(N, 8), f32], Tensor[(N, 8), f32]]:
    """Positive and negative parts."""
    return relu(x), relu(-x)

@func
def magnitude(x: Tensor[(N, 8), f32]) -> Tensor[(N, 8), f32]:
    pos, neg_part = split_sign(x)
    t = split_sign(x=x)
    return pos + neg_part + t[0] - t[-1]

@func
def twice(x: Tensor[(N, 8), f32]) -> Tensor[(N, 8), f32]: return x * 2.0

@func
def four_rows(x: Tensor[(4, 8), f32]) -> Tensor[(4, 8), f32]:
    return twice(x)              # N binds to 4
