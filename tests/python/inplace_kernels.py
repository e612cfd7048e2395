# DSL kernels with in-place results (@func(inplace=...)), for
# test_inplace.py. Valid Python (it imports), and the text the C++ frontend
# parses.
from tilefoundry.dsl import *

B = DimVar("B", 1, 64)
L = DimVar("L", 1, 1 << 16)
S = DimVar("S", 1, 64)
N = DimVar("N", 1, 1 << 16)


@func(inplace="cache")
def kv_append(cache: Tensor[(B, L, 2, 16), f32], new: Tensor[(B, S, 2, 16), f32],
              pos: Tensor[(B,), i32]) -> Tensor[(B, L, 2, 16), f32]:
    return cache_scatter(cache, new, pos)


@func(inplace=("k", None))
def k_and_score(k: Tensor[(B, L, 2, 16), bf16], new: Tensor[(B, 1, 2, 16), bf16],
                pos: Tensor[(B,), i64]) -> tuple[Tensor[(B, L, 2, 16), bf16], Tensor[(B, 1, 2, 1), bf16]]:
    return cache_scatter(k, new, pos), sum(new * new, axes=3)


@func(inplace="x")
def scale_(x: Tensor[(N, 8), f32]) -> Tensor[(N, 8), f32]:
    return x * 2.0
