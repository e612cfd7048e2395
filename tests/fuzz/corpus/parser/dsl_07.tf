from tilefoundry.dsl import *

N = DimVar("N", 1, 1 << 20)

@func
def windows(x: Tensor[(N, 8, 16), f32]) -> tuple[Tensor[(N, 16), f32], Tensor[(N, 2, 8), f32],
                                                  Tensor[(8, 16), f32], Tensor[(N, 8, 4), f32]]:
    return x[:, 0], x[:, 1:3, ::2], x[0], x[:, :, -4:]
