from tilefoundry.dsl import *

CTX = DimVar("CTX", 1, 8193)
N = DimVar("N", 1, 1 << 20)
WINDOW = dim_min(512, CTX // 4)

@func
def window(x: Tensor[(WINDOW, 128), f32], y: Tensor[(dim_max(N, 16), 2), f32]) -> Tensor[(WINDOW, 128), f32]:
    return x * 2.0
