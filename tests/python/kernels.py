# DSL kernels used by the Python tests. Valid Python (it imports), and the
# text the C++ frontend parses.
from tilefoundry.dsl import *

N = DimVar("N", 1, 1 << 20)
D = DimVar("D", 1, 1 << 16)


@func
def rmsnorm(x: Tensor[(N, D), f32], w: Tensor[(D,), f32]) -> Tensor[(N, D), f32]:
    return rms_norm(x, w, eps=1e-6)


@func
def rmsnorm_bf16(x: Tensor[(N, D), bf16], w: Tensor[(D,), bf16]) -> Tensor[(N, D), bf16]:
    return rms_norm(x, w, eps=1e-6)


@func
def rmsnorm64(x: Tensor[(N, 64), f32], w: Tensor[(64,), f32]) -> Tensor[(N, 64), f32]:
    return rms_norm(x, w, eps=1e-6)


@func
def swiglu(a: Tensor[(N, D), f32], b: Tensor[(N, D), f32]) -> Tensor[(N, D), f32]:
    return silu(a) * b


@func
def swiglu_bf16(a: Tensor[(N, D), bf16], b: Tensor[(N, D), bf16]) -> Tensor[(N, D), bf16]:
    return silu(a) * b


@func
def resnorm(x: Tensor[(N, D), f32], r: Tensor[(N, D), f32], w: Tensor[(D,), f32]
            ) -> tuple[Tensor[(N, D), f32], Tensor[(N, D), f32]]:
    h = x + r
    return h, rms_norm(h, w, eps=1e-6)


@func
def scale2(x: Tensor[(N, D), f32]) -> Tensor[(N, D), f32]:
    return x * 2.0


@func
def positive(x: Tensor[(N, D), f32]) -> Tensor[(N, D), bool]:
    return x > 0.0


@func
def band(a: Tensor[(N,), bool], b: Tensor[(N,), bool]) -> Tensor[(N,), bool]:
    return a & b


@func
def u8_mask(x: Tensor[(N,), u8], m: Tensor[(N,), bool]) -> tuple[Tensor[(N,), u8], Tensor[(N,), bool]]:
    return where(m, x + x, x), x > 127


@func
def to_fp8(x: Tensor[(N,), f32]) -> Tensor[(N,), fp8e4m3]:
    return cast(x, fp8e4m3)


@func
def from_fp8(q: Tensor[(N,), fp8e4m3]) -> Tensor[(N,), f32]:
    return cast(q, f32)


@func
def iadd(a: Tensor[(N,), i64], b: Tensor[(N,), i64]) -> Tensor[(N,), i64]:
    return a + b
