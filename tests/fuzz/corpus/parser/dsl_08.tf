from tilefoundry.dsl import *

TARGET = Target("cpu", topology=(("device", 1), ("cta", 4)))

N = DimVar("N", 1, 1 << 20)

@func
def binary_ops(a: Tensor[(N, 8), f32], b: Tensor[(N, 8), f32], p: Tensor[(N, 8), bool],
               q: Tensor[(N, 8), bool]) -> tuple[Tensor[(N, 8), f32], Tensor[(N, 8), bool]]:
    r = add(a, b)            # a + b
    r = sub(r, b)            # r - b
    r = mul(r, b)            # r * b
    r = div(r, b)            # r / b
    r = minimum(r, 0.0)      # no operator spelling
    r = maximum(r, b)        # no operator spelling
    c = cmp_eq(a, b)         # a == b
    c = c | cmp_ne(a, b)     # a != b
    c = c | cmp_lt(a, b)     # a < b
    c = c | cmp_le(a, b)     # a <= b
    c = c | cmp_gt(a, b)     # a > b
    c = c | cmp_ge(a, 1.5)   # a >= 1.5
    c = logical_and(c, p)    # c & p
    c = logical_or(c, q)     # c | q
    c = logical_xor(c, p)    # no operator spelling
    return r, c

@func
def unary_ops(x: Tensor[(N, 8), f32], p: Tensor[(N, 8), bool]
              ) -> tuple[Tensor[(N, 8), f32], Tensor[(N, 8), bool]]:
    y = neg(x)               # -x
    y = abs(y)
    y = rsqrt(y + 1.0)
    y = sqrt(y)
    y = exp(y)
    y = log(y)
    y = exp2(y)
    y = log2(y)
    y = ceil(y)
    y = floor(y)
    y = round(y)
    y = square(y)
    y = relu(y)
    y = sin(y)
    y = cos(y)
    return y, logical_not(p)  # ~p

@func
def tensor_ops(x: Tensor[(N, 8, 16), f32]) -> tuple[
        Tensor[(N, 8, 16), bf16], Tensor[(N,), f32], Tensor[(N, 8, 1), f32], Tensor[(N, 1, 1), f32],
        Tensor[(N, 8), f32], Tensor[(N, 8), f32], Tensor[(N, 128), f32], Tensor[(16, 8, N), f32],
        Tensor[(N, 4, 16), f32], Tensor[(4, 16), f32, "rmem"]]:
    return (cast(x, bf16),
            sum(x, axes=(1, 2), keepdim=False),
            mean(x, axes=-1),
            amax(x, axes=(1, 2)),
            abs_max(x, axes=2, keepdim=False),
            reduce(x, axes=-1, keepdim=False, kind="sum"),
            reshape(x, (N, 128)),
            transpose(x, (2, 1, 0)),
            slice(x, begin=(0, 0, 0), end=(N, 8, 16), strides=(1, 2, 1)),
            zeros((4, 16), f32, storage="rmem"))

@func
def nn_ops(a: Tensor[(N, 64), f16], w: Tensor[(64, 32), f16], g: Tensor[(32,), f16]) -> Tensor[(N, 32), f16]:
    h = matmul(a, w)         # a @ w
    h = softmax(h, axis=-1)
    h = gelu(h, approximate="none") + silu(h)
    return rms_norm(h, g, eps=1e-5)
