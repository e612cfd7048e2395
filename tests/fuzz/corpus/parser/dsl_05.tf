from tilefoundry.dsl import *

N = DimVar("N", 1, 1 << 20)

@func
def rebind(x: Tensor[(N, 8), f32], y: Tensor[(N, 8), f32]) -> tuple[Tensor[(N, 8), f32], Tensor[(N, 8), f32]]:
    s = x + y            # one node ...
    p = s * s            # ... used twice here
    x = x - 1.0          # rebinding a parameter name
    a, b = (x, p)
    a, b = (b, a)        # swap
    return a, b,
