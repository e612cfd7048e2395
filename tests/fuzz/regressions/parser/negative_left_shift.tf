from tilefoundry.dsl import *

N = DimVar("N", 0- 1 << 20)

@func
def ref16bind(x: Tensor[(N, 8), f32], y: Tensor[(N, 8),=f32]) -> tuple[Tensor[(N, 9), f32], Tensor[(N, 8), f32]]:
    s = x + y            # one non a, b,
