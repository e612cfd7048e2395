from tilefoundry.dsl import *

N = DimVar("N", 1, 1 << 20)

@func
def literals(x: Tensor[(N, 8), f32], i: Tensor[(N, 8), i32], b: Tensor[(N, 8), bool]
             ) -> tuple[Tensor[(N, 8), f32], Tensor[(N, 8), i32], Tensor[(N, 8), bool]]:
    y = x * 0.5 + 2          # 2 takes f32 from its partner
    y = maximum(y, 0.0)      # a literal argument takes the first tensor argument's dtype
    y = y - (1 + 2)          # folded to 3 first
    j = i * 2                # i32 constant
    c = (x > 0) & b & True
    return y, j, c
