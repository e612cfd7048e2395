"""The five kernels an LLM-inference kernel author writes first, as the docs
(dsl.md, ops.md, python.md) spell them, through torch.ops.tilefoundry and
against torch: residual + RMSNorm in bf16, causal softmax with a scale,
Hugging Face-layout RoPE, a per-sequence KV-cache append in place, and
per-row fp8 quantization."""
import torch

import tilefoundry as tf
from conftest import unique_op

SOURCE = '''
from tilefoundry.dsl import *

B = DimVar("B", 1, 64)
S = DimVar("S", 1, 4096)
N = DimVar("N", 1, 1 << 16)
P = DimVar("P", 1, 1 << 16)
L = DimVar("L", 1, 1 << 16)

@func
def add_rmsnorm(x: Tensor[(N, 256), bf16], r: Tensor[(N, 256), bf16], w: Tensor[(256,), bf16]
                ) -> tuple[Tensor[(N, 256), bf16], Tensor[(N, 256), bf16]]:
    h = x + r
    return h, rms_norm(h, w, eps=1e-6)

@func
def causal_softmax(scores: Tensor[(B, 4, S, S), f32]) -> Tensor[(B, 4, S, S), f32]:
    keep = arange(S) <= reshape(arange(S), (S, 1))
    return softmax(where(keep, scores * 0.125, -inf), axis=-1)

@func
def rotary(q: Tensor[(B, S, 8, 64), f32], k: Tensor[(B, S, 2, 64), f32], cos: Tensor[(P, 64), f32],
           sin: Tensor[(P, 64), f32], pos: Tensor[(B, S), i64]
           ) -> tuple[Tensor[(B, S, 8, 64), f32], Tensor[(B, S, 2, 64), f32]]:
    return rope(q, k, cos, sin, pos)

@func(inplace="cache")
def kv_append(cache: Tensor[(B, L, 2, 64), bf16], new: Tensor[(B, 1, 2, 64), bf16],
              pos: Tensor[(B,), i32]) -> Tensor[(B, L, 2, 64), bf16]:
    return cache_scatter(cache, new, pos)

@func
def quantize(x: Tensor[(N, 256), f32]) -> tuple[Tensor[(N, 256), fp8e4m3], Tensor[(N, 1), f32]]:
    scale = abs_max(x, axes=1) / 448.0
    return cast(x / scale, fp8e4m3), scale

@func
def dequantize(q: Tensor[(N, 256), fp8e4m3], scale: Tensor[(N, 1), f32]) -> Tensor[(N, 256), f32]:
    return cast(q, f32) * scale
'''


def ops():
    m = tf.load(SOURCE)
    return {name: tf.register(m.compile(name), unique_op(name)) for name in m.functions}


def test_the_five_kernels_agree_with_torch():
    torch.manual_seed(0)
    op = ops()
    # residual + RMSNorm, bf16, Hugging Face's LlamaRMSNorm rounding
    x, r, w = torch.randn(5, 256).bfloat16(), torch.randn(5, 256).bfloat16(), torch.randn(256).bfloat16()
    h, y = op["add_rmsnorm"](x, r, w)
    hf = (x + r).float()
    want = (hf * torch.rsqrt(hf.pow(2).mean(-1, keepdim=True) + 1e-6)).bfloat16() * w
    assert torch.equal(h, x + r)
    torch.testing.assert_close(y, want, rtol=1e-2, atol=1e-2)
    # causal softmax with a scale
    s = torch.randn(2, 4, 7, 7)
    mask = torch.ones(7, 7, dtype=torch.bool).tril()
    want = torch.softmax((s * 0.125).masked_fill(~mask, float("-inf")), dim=-1)
    torch.testing.assert_close(op["causal_softmax"](s), want, rtol=1e-5, atol=1e-6)
    # RoPE, rotate-half, cos / sin tables indexed by position
    q, k = torch.randn(2, 3, 8, 64), torch.randn(2, 3, 2, 64)
    angle = torch.arange(16.0)[:, None] / (10000 ** (torch.arange(0, 64, 2).float() / 64)).repeat(2)[None]
    cos, sin = angle.cos(), angle.sin()
    pos = torch.tensor([[0, 1, 2], [5, 9, 15]])

    def rotated(t):
        c, sn = cos[pos][:, :, None], sin[pos][:, :, None]
        half = torch.cat((-t[..., 32:], t[..., :32]), dim=-1)
        return t * c + half * sn
    qr, kr = op["rotary"](q, k, cos, sin, pos)
    torch.testing.assert_close(qr, rotated(q), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(kr, rotated(k), rtol=1e-5, atol=1e-5)
    # a KV cache append, one token per sequence at its own position, in place
    cache, new = torch.randn(3, 32, 2, 64).bfloat16(), torch.randn(3, 1, 2, 64).bfloat16()
    at = torch.tensor([0, 17, 31], dtype=torch.int32)
    want = cache.clone()
    want.view(96, 2, 64).index_copy_(0, torch.arange(3) * 32 + at.long(), new.view(3, 2, 64))
    assert op["kv_append"](cache, new, at) is None
    assert torch.equal(cache, want)
    # per-row fp8: within e4m3's half-ulp (2^-4 relative) of the input
    xs = torch.randn(6, 256) * torch.logspace(-3, 3, 6)[:, None]
    codes, scale = op["quantize"](xs)
    torch.testing.assert_close(scale, xs.abs().amax(1, keepdim=True) / 448.0)
    back = op["dequantize"](codes, scale)
    assert ((back - xs).abs() <= xs.abs() * 2.0 ** -4 + scale * 2.0 ** -9).all()
