"""make bench: eager PyTorch at its best vs torch.ops.tilefoundry, side by side.

One run prints markdown tables (and writes them to bench/results.md with
--write): for each op, a latency shape and memory-bound shapes of 8, 32 and
128 MiB per tensor, at 1 and 2 threads, medians of a steady loop (call, drop
the result, call again, as a model does):

* eager: eager torch in a process whose allocator keeps freed memory
  (GLIBC_TUNABLES with mmap_max=0 and a huge trim threshold, which is what a
  caching malloc such as jemalloc gives a long-running model), timed in
  alternation with tf in the same process, under the default ATen CPU
  capability in one process and ATEN_CPU_CAPABILITY=avx512 in another;
  "eager fresh" is plain glibc, where every large temporary is a fresh mmap.
* inductor: torch.compile (Inductor, default mode) of the same functions, in
  a torch 2.x process with the same warm allocator (when a torch 2.x is given:
  --torch2-python; make bench passes make test-torch2's venv when it exists).
* tf: torch.ops.tilefoundry.<op>, outputs from TileFoundry's pool (the fresh-
  output path users call); tf .out: the op's out= overload into preallocated
  outputs. GB/s counts the bytes read and written once, against the STREAM
  triad measured beside the row in the same process (the higher of one just
  before and one just after its timings: a shared host's bandwidth moves by
  2x within minutes).

Each of these processes runs three times (once with --quick), in turn with
the others. A row's eager and tf (and its .out and triad) come from the one
run, of either ATen kernel set, where eager + tf took least: both sides of
the ratio from one moment of a shared host whose bandwidth moves by 2x
within seconds, and eager under whichever kernel set serves it best. The
other times (eager fresh, Inductor) are the fastest of their runs.

A second table puts kernels written from elementary ops (RMSNorm from
mean / rsqrt / multiply, LayerNorm from means, softmax from amax / exp / sum,
rotate-half RoPE from slices / neg / concat) beside the built-in op of the
same math, the two measured in alternation: composed / built-in > 1 means
the composition is slower.

A third table times ops beyond the row kernels against eager, in
alternation, on one [2048, 4096] f32 input: a transpose, an amax over rows,
a sum over axis 0, a sum over the rows of a transpose and of a scaled
transpose (x.T * 2), a row sum of squares, a sum of everything, a softmax over axis 0, a softmax of a transpose, tanh,
log and gelu's erf form; then, on their own inputs, a mean squared error
of two inputs ((a - b) ** 2 averaged), a sum over axis 0 of a product
(a bias gradient's g * m), a softmax of x masked
by a random bool mask (where(m, x, -1e30)), a bf16 batch of transposed
matrices (k.transpose(-1, -2)), a 3x3 Conv2D, a bf16 MatMul and a linear
layer's x @ w.T.

A KV-cache table appends one token per sequence in place (@func(inplace=
"cache") over cache_scatter: only the token's rows are written) against
torch's in-place index_copy_ of the same rows, for one sequence and for 8
sequences at different positions (index_copy_ then runs on the flattened
[B * L, H, D] cache with one row index per token).

MatMul is reported in GFLOP/s, with decode shapes (M = 1, 8, 16 against
K = N = 4096), against torch.mm, OpenBLAS called directly (numpy), and the
torch 2.x build's torch.mm and oneDNN (torch._C._nn.mkldnn_linear on
pre-converted operands). Also: per-call overhead on one element against
torch.add and against torch.ops.aten.add (torch's add through the
torch.ops path every custom op takes), and cold / warm compile time.

With a torch 2.x, bench/tp_mlp.py runs the tensor-parallel MLP block on two
ranks (Gloo, one process each) as a sharded kernel called with DTensors and
as DTensor's own ops: time, and the bytes our collectives moved against the
one all-reduce the block's types require.

Each (thread count, allocator, ATen capability) runs in its own child
process, since glibc reads GLIBC_TUNABLES, torch reads ATEN_CPU_CAPABILITY,
and the thread pools are set at start-up.
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

SOURCE = """from tilefoundry.dsl import *

N = DimVar("N", 1, 1 << 24)
D = DimVar("D", 1, 1 << 20)
K = DimVar("K", 1, 1 << 16)
RB = DimVar("RB", 1, 1 << 10)
RS = DimVar("RS", 1, 1 << 16)
RH = DimVar("RH", 1, 1 << 10)
RP = DimVar("RP", 1, 1 << 20)

@func
def b_rmsnorm(x: Tensor[(N, D), f32], w: Tensor[(D,), f32]) -> Tensor[(N, D), f32]:
    return rms_norm(x, w, eps=1e-6)

@func
def b_resnorm(x: Tensor[(N, D), f32], r: Tensor[(N, D), f32], w: Tensor[(D,), f32]) -> tuple[Tensor[(N, D), f32], Tensor[(N, D), f32]]:
    h = x + r
    return h, rms_norm(h, w, eps=1e-6)

@func
def b_swiglu(a: Tensor[(N, D), f32], b: Tensor[(N, D), f32]) -> Tensor[(N, D), f32]:
    return silu(a) * b

@func
def b_gelu(x: Tensor[(N, D), f32]) -> Tensor[(N, D), f32]:
    return gelu(x, approximate="tanh")

@func
def b_softmax(x: Tensor[(N, D), f32]) -> Tensor[(N, D), f32]:
    return softmax(x)

@func
def b_layernorm(x: Tensor[(N, D), f32], w: Tensor[(D,), f32], b: Tensor[(D,), f32]) -> Tensor[(N, D), f32]:
    return layer_norm(x, w, b, eps=1e-5)

@func
def b_matmul(a: Tensor[(N, K), f32], b: Tensor[(K, D), f32]) -> Tensor[(N, D), f32]:
    return matmul(a, b)

@func
def b_rope(q: Tensor[(RB, RS, RH, D), f32], k: Tensor[(RB, RS, RH, D), f32], c: Tensor[(RP, D), f32], s: Tensor[(RP, D), f32], p: Tensor[(RB, RS), i64]) -> tuple[Tensor[(RB, RS, RH, D), f32], Tensor[(RB, RS, RH, D), f32]]:
    return rope(q, k, c, s, p)

@func(inplace="cache")
def b_kv_append(cache: Tensor[(RB, RP, RH, D), bf16], new: Tensor[(RB, RS, RH, D), bf16], pos: Tensor[(RB,), i32]) -> Tensor[(RB, RP, RH, D), bf16]:
    return cache_scatter(cache, new, pos)

@func
def b_add(a: Tensor[(N,), f32], b: Tensor[(N,), f32]) -> Tensor[(N,), f32]:
    return a + b

@func
def b_rmsnorm16(x: Tensor[(N, D), bf16], w: Tensor[(D,), bf16]) -> Tensor[(N, D), bf16]:
    return rms_norm(x, w, eps=1e-6)

@func
def c_rmsnorm(x: Tensor[(N, D), f32], w: Tensor[(D,), f32]) -> Tensor[(N, D), f32]:
    return x * rsqrt(mean(x * x, axes=-1) + 1e-6) * w

@func
def c_rmsnorm16(x: Tensor[(N, D), bf16], w: Tensor[(D,), bf16]) -> Tensor[(N, D), bf16]:
    h = cast(x, f32)
    return cast(h * rsqrt(mean(h * h, axes=-1) + 1e-6), bf16) * w

@func
def c_layernorm(x: Tensor[(N, D), f32], w: Tensor[(D,), f32], b: Tensor[(D,), f32]) -> Tensor[(N, D), f32]:
    d = x - mean(x, axes=-1)
    return d * rsqrt(mean(d * d, axes=-1) + 1e-5) * w + b

@func
def c_softmax(x: Tensor[(N, D), f32]) -> Tensor[(N, D), f32]:
    e = exp(x - amax(x, axes=-1))
    return e / sum(e, axes=-1)

@func
def c_rope(q: Tensor[(RB, RS, RH, D), f32], k: Tensor[(RB, RS, RH, D), f32], c: Tensor[(RB, RS, D), f32], s: Tensor[(RB, RS, D), f32]) -> tuple[Tensor[(RB, RS, RH, D), f32], Tensor[(RB, RS, RH, D), f32]]:
    c = reshape(c, (RB, RS, 1, D))
    s = reshape(s, (RB, RS, 1, D))
    qr = concat((-q[:, :, :, D // 2:], q[:, :, :, :D // 2]), axis=-1)
    kr = concat((-k[:, :, :, D // 2:], k[:, :, :, :D // 2]), axis=-1)
    return q * c + qr * s, k * c + kr * s

@func
def o_transpose(x: Tensor[(N, D), f32]) -> Tensor[(D, N), f32]:
    return transpose(x, (1, 0))

@func
def o_amax(x: Tensor[(N, D), f32]) -> Tensor[(N,), f32]:
    return amax(x, axes=-1, keepdim=False)

@func
def o_sum0(x: Tensor[(N, D), f32]) -> Tensor[(D,), f32]:
    return sum(x, axes=0, keepdim=False)

@func
def o_sum_t(x: Tensor[(N, D), f32]) -> Tensor[(D,), f32]:
    return sum(transpose(x, (1, 0)), axes=-1, keepdim=False)

@func
def o_sum_ts(x: Tensor[(N, D), f32]) -> Tensor[(D,), f32]:
    return sum(transpose(x, (1, 0)) * 2.0, axes=-1, keepdim=False)

@func
def o_mse(a: Tensor[(N, D), f32], b: Tensor[(N, D), f32]) -> Tensor[(), f32]:
    d = a - b
    return mean(d * d, axes=(0, 1), keepdim=False)

@func
def o_sumsq(x: Tensor[(N, D), f32]) -> Tensor[(N, 1), f32]:
    return sum(x * x, axes=-1)

@func
def o_bias_grad(g: Tensor[(N, D), f32], m: Tensor[(N, D), f32]) -> Tensor[(D,), f32]:
    return sum(g * m, axes=0, keepdim=False)

@func
def o_total(x: Tensor[(N, D), f32]) -> Tensor[(), f32]:
    return sum(x, axes=(0, 1), keepdim=False)

@func
def o_masked_softmax(x: Tensor[(N, D), f32], m: Tensor[(N, D), bool]) -> Tensor[(N, D), f32]:
    return softmax(where(m, x, -1e30))

@func
def o_softmax0(x: Tensor[(N, D), f32]) -> Tensor[(N, D), f32]:
    return softmax(x, axis=0)

@func
def o_softmax_t(x: Tensor[(N, D), f32]) -> Tensor[(D, N), f32]:
    return softmax(transpose(x, (1, 0)))

@func
def o_batch_t16(x: Tensor[(RB, N, D), bf16]) -> Tensor[(RB, D, N), bf16]:
    return transpose(x, (0, 2, 1))

@func
def o_tanh(x: Tensor[(N, D), f32]) -> Tensor[(N, D), f32]:
    return tanh(x)

@func
def o_log(x: Tensor[(N, D), f32]) -> Tensor[(N, D), f32]:
    return log(abs(x) + 1.0)

@func
def o_gelu_erf(x: Tensor[(N, D), f32]) -> Tensor[(N, D), f32]:
    return gelu(x, approximate="none")

@func
def o_conv(x: Tensor[(RB, RH, RS, RS), f32], w: Tensor[(RH, RH, 3, 3), f32]) -> Tensor[(RB, RH, RS, RS), f32]:
    return conv2d(x, w, None, padding=1)

@func
def o_mm16(a: Tensor[(N, K), bf16], b: Tensor[(K, D), bf16]) -> Tensor[(N, D), bf16]:
    return a @ b

@func
def o_linear(x: Tensor[(N, K), f32], w: Tensor[(D, K), f32]) -> Tensor[(N, D), f32]:
    return x @ transpose(w, (1, 0))
"""

# Hand-written compositions against the built-in op computing the same math
# (both through torch.ops.tilefoundry, same inputs): label -> (composed
# function, built-in function, dtype of the inputs, op whose inputs to use).
COMPOSITIONS = {"rmsnorm f32": ("c_rmsnorm", "b_rmsnorm", "float32", "rmsnorm"),
                "rmsnorm bf16": ("c_rmsnorm16", "b_rmsnorm16", "bfloat16", "rmsnorm"),
                "layer_norm f32": ("c_layernorm", "b_layernorm", "float32", "layer_norm"),
                "softmax f32": ("c_softmax", "b_softmax", "float32", "softmax"),
                "RoPE rotate-half f32": ("c_rope", "b_rope", "float32", "RoPE rotate-half")}
# A composition's inputs where they differ from its built-in's: the composed
# RoPE takes cos / sin already gathered by position ([B, S, D]), as Hugging
# Face's apply_rotary_pos_emb does; the built-in gathers rows of the tables.
COMPOSED_INPUTS = {"c_rope": lambda q, k, c, s, p: (q, k, c[p].contiguous(), s[p].contiguous())}

# Ops beyond the row kernels, against eager: label -> function (other_eager
# has their eager forms). Each reads one [N, 4096] f32 input but those
# whose inputs OTHER_PRODUCT_INPUTS lists.
OTHER_OPS = {"transpose": "o_transpose", "amax over rows": "o_amax", "sum over axis 0": "o_sum0",
             "sum of a transpose": "o_sum_t", "sum of a scaled transpose": "o_sum_ts",
             "mse loss": "o_mse", "row sums of squares": "o_sumsq", "sum of g * m over axis 0": "o_bias_grad",
             "sum of all": "o_total", "masked softmax": "o_masked_softmax", "softmax over axis 0": "o_softmax0",
             "softmax of a transpose": "o_softmax_t", "tanh": "o_tanh",
             "batched transpose bf16": "o_batch_t16", "log": "o_log", "gelu (erf)": "o_gelu_erf",
             "conv2d 3x3": "o_conv", "matmul bf16": "o_mm16", "linear x @ w.T": "o_linear"}


def other_eager(torch):
    F = torch.nn.functional
    return {"transpose": lambda x: x.t().contiguous(), "amax over rows": lambda x: x.amax(-1),
            "sum over axis 0": lambda x: x.sum(0), "sum of a transpose": lambda x: x.t().sum(-1),
            "sum of a scaled transpose": lambda x: (x.t() * 2.0).sum(-1),
            "mse loss": lambda a, b: ((a - b) * (a - b)).mean(), "row sums of squares": lambda x: (x * x).sum(-1, True),
            "sum of g * m over axis 0": lambda g, m: (g * m).sum(0), "sum of all": lambda x: x.sum(),
            "masked softmax": lambda x, m: torch.softmax(torch.where(m, x, -1e30), -1),
            "softmax over axis 0": lambda x: torch.softmax(x, 0),
            "softmax of a transpose": lambda x: torch.softmax(x.t(), -1),
            "batched transpose bf16": lambda x: x.transpose(1, 2).contiguous(),
            "tanh": torch.tanh, "log": lambda x: torch.log(x.abs() + 1.0), "gelu (erf)": F.gelu,
            "conv2d 3x3": lambda x, w: F.conv2d(x, w, None, padding=1), "matmul bf16": torch.mm,
            "linear x @ w.T": F.linear}
OTHER_SHAPES = {"32 MiB": (2048, 4096)}
QUICK_OTHER_SHAPES = {"tiny": (8, 64)}
# label -> {shape label: (shape of each input, dtype or one per input)}; the
# conv's input is [images, channels, height, width] by a [channels, channels,
# 3, 3] weight; a bool input is a random mask (half its elements set).
OTHER_PRODUCT_INPUTS = {
    "mse loss": {"32 MiB": (((2048, 4096), (2048, 4096)), "float32")},
    "sum of g * m over axis 0": {"32 MiB": (((2048, 4096), (2048, 4096)), "float32")},
    "masked softmax": {"32 MiB": (((2048, 4096), (2048, 4096)), ("float32", "bool"))},
    "batched transpose bf16": {"32x1024x512": (((32, 1024, 512),), "bfloat16")},
    "conv2d 3x3": {"4x32x56x56": (((4, 32, 56, 56), (32, 32, 3, 3)), "float32")},
    "matmul bf16": {"256x1024x1024": (((256, 1024), (1024, 1024)), "bfloat16")},
    "linear x @ w.T": {"decode M=8": (((8, 4096), (4096, 4096)), "float32")}}
QUICK_OTHER_PRODUCT_INPUTS = {
    "mse loss": {"tiny": (((8, 64), (8, 64)), "float32")},
    "sum of g * m over axis 0": {"tiny": (((8, 64), (8, 64)), "float32")},
    "masked softmax": {"tiny": (((8, 64), (8, 64)), ("float32", "bool"))},
    "batched transpose bf16": {"tiny": (((2, 8, 40),), "bfloat16")},
    "conv2d 3x3": {"tiny": (((1, 4, 8, 8), (4, 4, 3, 3)), "float32")},
    "matmul bf16": {"tiny": (((8, 8), (8, 8)), "bfloat16")},
    "linear x @ w.T": {"tiny": (((2, 8), (8, 8)), "float32")}}

# Row-op shapes [N, 4096] f32: 8, 32 and 128 MiB per tensor, and a latency shape.
SHAPES = {"small": (32, 512), "8 MiB": (512, 4096), "32 MiB": (2048, 4096), "128 MiB": (8192, 4096)}
# M x K x N; decode: one to sixteen tokens against a 4096 x 4096 weight.
MATMUL_SHAPES = {"small": (64, 64, 64), "large": (1024, 1024, 1024), "decode M=1": (1, 4096, 4096),
                 "decode M=8": (8, 4096, 4096), "decode M=16": (16, 4096, 4096)}
# --quick (the test suite's smoke run): one tiny shape per kernel, 1 thread,
# a few runs, a small triad; numbers are not meaningful, the table's shape is.
QUICK_SHAPES = {"tiny": (4, 64)}
QUICK_MATMUL_SHAPES = {"tiny": (8, 8, 8)}
# RoPE: q and k [B, S, H, D] (8 / 32 / 128 MiB each), caches [S, D].
ROPE_SHAPES = {"small": (1, 16, 8, 64), "8 MiB": (1, 512, 32, 128), "32 MiB": (4, 512, 32, 128),
               "128 MiB": (4, 2048, 32, 128)}
QUICK_ROPE_SHAPES = {"tiny": (1, 2, 2, 8)}
# KV cache (B, L, kv heads, head dim), bf16, one new token per sequence.
KV_SHAPES = {"1 seq": (1, 4096, 8, 128), "8 seqs": (8, 4096, 8, 128)}
QUICK_KV_SHAPES = {"tiny": (2, 16, 2, 8)}
# glibc keeps freed memory for reuse instead of unmapping it: the allocator a
# long-running model process has (jemalloc / tcmalloc behave alike).
WARM_ALLOCATOR = "glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=68719476736"


MIN_TIME = 0.2  # seconds each median keeps sampling for; --quick sets 0


def median_s(fn, runs, min_time=None):
    min_time = MIN_TIME if min_time is None else min_time
    fn()
    times = []
    t_end = time.perf_counter() + min_time
    while len(times) < runs or (time.perf_counter() < t_end and len(times) < 2000):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def paired_s(fa, fb, runs, rounds=5):
    """Medians of two functions measured in alternation, the smallest of
    `rounds` for each: noise that comes and goes on a shared machine then
    lands on both sides of a ratio, not on one."""
    a, b = [], []
    for _ in range(1 if MIN_TIME == 0 else rounds):
        a.append(median_s(fa, runs, MIN_TIME / rounds))
        b.append(median_s(fb, runs, MIN_TIME / rounds))
    return min(a), min(b)


def eager_ops(torch):
    F = torch.nn.functional

    def rmsnorm(x, w):
        xf = x.float()
        return w * (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)).to(x.dtype)

    def resnorm(x, r, w):
        h = x + r
        return h, rmsnorm(h, w)

    def rope(q, k, cos, sin, pos):  # HF apply_rotary_pos_emb, rotate-half
        c, s = cos[pos].unsqueeze(2), sin[pos].unsqueeze(2)

        def rot(x):
            h = x.shape[-1] // 2
            return torch.cat((-x[..., h:], x[..., :h]), dim=-1)
        return q * c + rot(q) * s, k * c + rot(k) * s

    return {
        "rmsnorm": rmsnorm,
        "residual+rmsnorm": resnorm,
        "silu*mul": lambda a, b: F.silu(a) * b,
        "gelu-tanh": lambda x: F.gelu(x, approximate="tanh"),
        "softmax": lambda x: torch.softmax(x, -1),
        "layer_norm": lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b, 1e-5),
        "RoPE rotate-half": rope,
        "matmul": torch.mm,
    }


def as_tuple(r):
    return r if isinstance(r, tuple) else (r,)


def make_inputs(torch, op, shape):
    g = torch.Generator().manual_seed(0)
    if op == "matmul":
        m, k, n = shape
        return (torch.randn(m, k, generator=g), torch.randn(k, n, generator=g))
    if op == "RoPE rotate-half":
        b, s, h, d = shape
        return (torch.randn(b, s, h, d, generator=g), torch.randn(b, s, h, d, generator=g),
                torch.randn(s, d, generator=g), torch.randn(s, d, generator=g),
                torch.randint(0, s, (b, s), generator=g))
    n, d = shape
    x = lambda: torch.randn(n, d, generator=g)  # noqa: E731
    w = torch.randn(d, generator=g)
    return {"rmsnorm": (x(), w), "residual+rmsnorm": (x(), x(), w), "silu*mul": (x(), x()),
            "gelu-tanh": (x(),), "softmax": (x(),), "layer_norm": (x(), w, torch.randn(d, generator=g))}[op]


def bytes_moved(op, inputs, outputs):
    return sum(t.numel() * t.element_size() for t in list(inputs) + list(outputs))


def triad_gbs(torch, quick):
    """STREAM triad a = b + s * c, 3 x 64 MiB, one pass."""
    n = (1 << 16) if quick else (16 << 20)
    a, b, c = torch.empty(n), torch.rand(n), torch.rand(n)
    t = median_s(lambda: torch.add(b, c, alpha=3.0, out=a), 10)
    return 3 * n * 4 / t / 1e9


def child(args):
    """One process: eager times for every op and shape; with --role tf also
    torch.ops.tilefoundry (fresh outputs and .out), the triad, OpenBLAS and
    the per-call overhead."""
    import torch
    import numpy as np  # noqa: F401  (OpenBLAS through ndarray @)
    global MIN_TIME
    torch.set_num_threads(args.threads)
    if args.quick:
        MIN_TIME = 0.0
    res = {"threads": args.threads, "role": args.role, "ops": {}}
    res["triad_gbs"] = triad_gbs(torch, args.quick)
    tf_ops = {}
    if args.role == "tf":
        import tilefoundry as tf
        t0 = time.perf_counter()
        m = tf.load(SOURCE)
        names = {"rmsnorm": "b_rmsnorm", "residual+rmsnorm": "b_resnorm", "silu*mul": "b_swiglu",
                 "gelu-tanh": "b_gelu", "softmax": "b_softmax", "layer_norm": "b_layernorm",
                 "RoPE rotate-half": "b_rope", "matmul": "b_matmul"}
        kernels = {op: m.compile(fn) for op, fn in names.items()}
        res["compile_all_s"] = time.perf_counter() - t0
        res["backends"] = {op: k.backend for op, k in kernels.items()}
        tf_ops = {op: registered(tf, m, names[op]) for op in kernels}
    if args.role == "tf" and not args.rows_only:
        op_add = tf.register(m.compile("b_add"))
        one = torch.ones(1)
        calls = 20 if args.quick else 2000
        # In alternation (paired_s): a passing slowdown of this shared host
        # once landed on one side only (1.61 against 0.92 us in one run,
        # 1.23 against 0.89 in the runs around it).
        tf_s, add_s = paired_s(lambda: op_add(one, one), lambda: torch.add(one, one), calls)
        res["overhead_tf_us"], res["overhead_add_us"] = tf_s * 1e6, add_s * 1e6
        # torch's own add called the way every custom op is: through
        # torch.ops (Python overload resolution, a boxed IValue stack).
        res["overhead_ops_add_us"] = median_s(lambda: torch.ops.aten.add(one, one), calls) * 1e6
    for op, fn in selected(eager_ops(torch), args.only).items():
        for label, shape in shapes_of(op, args.quick).items():
            inputs = make_inputs(torch, op, shape)
            runs = 3 if args.quick else 10 if label != "small" else 100
            r = {"aten": os.environ.get("ATEN_CPU_CAPABILITY", "default")}
            if op not in tf_ops:
                r["eager"] = median_s(lambda: fn(*inputs), runs)
            outs = fn(*inputs)
            outs = outs if isinstance(outs, tuple) else (outs,)
            r["bytes"] = bytes_moved(op, inputs, outs)
            if op == "matmul":
                m_, k_, n_ = shape
                r["flops"] = 2 * m_ * k_ * n_
                an, bn = inputs[0].numpy(), inputs[1].numpy()
                r["openblas"] = median_s(lambda: an @ bn, runs)
            if op in tf_ops:
                top = tf_ops[op]
                got = top(*inputs)
                got = got if isinstance(got, (tuple, list)) else (got,)
                r["max_err"] = max((g - w).abs().max().item() for g, w in zip(got, outs))
                del got
                # The machine's bandwidth beside this row: a shared host's
                # swings by 2x within minutes, so the run's first triad says
                # little about a row measured later (the higher of the two
                # around the row's timings is the strict reference).
                before = triad_gbs(torch, args.quick) if op != "matmul" else None
                # Eager and tf in alternation: a ratio of two times taken
                # minutes apart compared two states of this host (rmsnorm on
                # two threads at 32 MiB: 1.83 so, 3.65-4.14 in alternation).
                r["eager"], r["tf"] = paired_s(lambda: fn(*inputs), lambda: top(*inputs),
                                               max(3, runs // 3), rounds=3)
                pre = [torch.empty_like(o) for o in outs]
                kw = {"out": pre[0]} if len(pre) == 1 else {f"out{i}": o for i, o in enumerate(pre)}
                r["tf_out"] = median_s(lambda: top.out(*inputs, **kw), runs)
                if before is not None:
                    r["triad"] = max(before, triad_gbs(torch, args.quick))
            res["ops"][f"{op}|{label}|{shape}"] = r
    if args.role == "tf" and not args.only and not args.rows_only:
        res["compositions"] = compositions(torch, m, args.quick)
        res["other_ops"] = other_ops(torch, m, args.quick)
        res["kv_cache"] = kv_cache(torch, m, args.quick)
    print(json.dumps(res))


REGISTERED = {}


def registered(tf, m, fn):
    """torch.ops.tilefoundry.<fn>, registered once per process."""
    if fn not in REGISTERED:
        REGISTERED[fn] = tf.register(m.compile(fn))
    return REGISTERED[fn]


def compositions(torch, m, quick):
    """Each hand-written composition against its built-in, at the row shapes."""
    import tilefoundry as tf
    out = {}
    for name, (composed, builtin, dtype, op) in COMPOSITIONS.items():
        kc, kb = registered(tf, m, composed), registered(tf, m, builtin)
        for label, shape in shapes_of(op, quick).items():
            if label == "small":
                continue
            inputs = tuple(t.to(getattr(torch, dtype)) if t.is_floating_point() else t
                           for t in make_inputs(torch, op, shape))
            c_inputs = COMPOSED_INPUTS.get(composed, lambda *a: a)(*inputs)
            runs = 3 if quick else 10
            got, want = as_tuple(kc(*c_inputs)), as_tuple(kb(*inputs))
            before = triad_gbs(torch, quick)
            composed_s, builtin_s = paired_s(lambda: kc(*c_inputs), lambda: kb(*inputs), runs)
            r = {"composed": composed_s, "builtin": builtin_s, "triad": max(before, triad_gbs(torch, quick)),
                 "bytes": bytes_moved(op, c_inputs, want),
                 "max_diff": max((g.float() - w.float()).abs().max().item() for g, w in zip(got, want))}
            del got, want
            out[f"{name}|{label}|{shape}"] = r
    return out


def other_ops(torch, m, quick):
    """Each of OTHER_OPS against its eager form, in alternation."""
    import tilefoundry as tf
    out = {}
    g = torch.Generator().manual_seed(0)
    products = QUICK_OTHER_PRODUCT_INPUTS if quick else OTHER_PRODUCT_INPUTS
    for name, fn in OTHER_OPS.items():
        k, eager = registered(tf, m, fn), other_eager(torch)[name]
        cases = {label: ((make_inputs(torch, "gelu-tanh", shape)[0],), shape)
                 for label, shape in (QUICK_OTHER_SHAPES if quick else OTHER_SHAPES).items()}
        if name in products:
            cases = {label: (tuple(random_input(torch, s, d, g) for s, d in zip(shapes, per_input(dtype, shapes))),
                             shapes[0])
                     for label, (shapes, dtype) in products[name].items()}
        for label, (x, shape) in cases.items():
            tf_s, eager_s = paired_s(lambda: k(*x), lambda: eager(*x), 3 if quick else 10)
            diff = (k(*x).float() - eager(*x).float()).abs().max().item()
            out[f"{name}|{label}|{shape}"] = {"tf": tf_s, "eager": eager_s, "backend": m.compile(fn).backend,
                                              "max_diff": diff}
    return out


def per_input(dtype, shapes):
    return dtype if isinstance(dtype, tuple) else (dtype,) * len(shapes)


def random_input(torch, shape, dtype, g):
    """Normal values in dtype; for bool, a mask with about half its elements set."""
    x = torch.randn(shape, generator=g)
    return x > 0 if dtype == "bool" else x.to(getattr(torch, dtype))


def kv_cache(torch, m, quick):
    """One token appended per sequence, in place: torch.ops.tilefoundry's
    in-place cache_scatter against index_copy_ into the flattened cache."""
    import tilefoundry as tf
    op = registered(tf, m, "b_kv_append")
    out = {}
    for label, (b, length, h, d) in (QUICK_KV_SHAPES if quick else KV_SHAPES).items():
        g = torch.Generator().manual_seed(0)
        cache = torch.randn(b, length, h, d, generator=g).bfloat16()
        new = torch.randn(b, 1, h, d, generator=g).bfloat16()
        pos = torch.randint(0, length, (b,), generator=g, dtype=torch.int32)
        flat, rows = cache.view(b * length, h, d), torch.arange(b) * length + pos.long()
        new_rows = new.view(b, h, d)
        want = cache.clone()
        want.view(b * length, h, d).index_copy_(0, rows, new_rows)
        op(cache, new, pos)
        calls = 20 if quick else 2000
        tf_s, torch_s = paired_s(lambda: op(cache, new, pos), lambda: flat.index_copy_(0, rows, new_rows),
                                 calls)
        out[f"{label}|{(b, length, h, d)}"] = {"tf": tf_s, "index_copy": torch_s,
                                               "bytes": 2 * new.numel() * new.element_size(),
                                               "exact": bool(torch.equal(cache, want))}
    return out


def inductor_child(args):
    """Runs under a torch 2.x: torch.compile of each eager function, per shape
    (compiled and warmed before timing); torch.mm and oneDNN's GEMM for matmul."""
    import torch
    global MIN_TIME
    torch.set_num_threads(args.threads)
    if args.quick:
        MIN_TIME = 0.0
    res = {"threads": args.threads, "torch": torch.__version__, "ops": {}}
    for op, fn in selected(eager_ops(torch), args.only).items():
        for label, shape in shapes_of(op, args.quick).items():
            inputs = make_inputs(torch, op, shape)
            runs = 3 if args.quick else 10 if label != "small" else 100
            compiled = torch.compile(fn)
            compiled(*inputs)
            r = {"inductor": median_s(lambda: compiled(*inputs), runs)}
            if op == "matmul":
                r["mm"] = median_s(lambda: torch.mm(*inputs), runs)
                a = inputs[0].to_mkldnn()
                bt = inputs[1].t().contiguous().to_mkldnn()  # mkldnn_linear takes [out, in] weights
                r["onednn"] = median_s(lambda: torch._C._nn.mkldnn_linear(a, bt, None), runs)
            res["ops"][f"{op}|{label}|{shape}"] = r
    print(json.dumps(res))


def selected(ops, only):
    """The ops named by --only (all when it is empty)."""
    if not only:
        return ops
    names = only.split(",")
    unknown = [n for n in names if n not in ops]
    if unknown:
        sys.exit(f"bench: --only names unknown op(s) {unknown}; the ops are {list(ops)}")
    return {op: fn for op, fn in ops.items() if op in names}


def shapes_of(op, quick):
    if op == "RoPE rotate-half":
        return QUICK_ROPE_SHAPES if quick else ROPE_SHAPES
    if op == "matmul":
        return QUICK_MATMUL_SHAPES if quick else MATMUL_SHAPES
    return QUICK_SHAPES if quick else SHAPES


def child_env(threads, warm_allocator):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads))
    env.pop("ATEN_CPU_CAPABILITY", None)
    if warm_allocator:
        env["GLIBC_TUNABLES"] = WARM_ALLOCATOR
    else:
        env.pop("GLIBC_TUNABLES", None)
    return env


def run_inductor_child(python, threads, quick, only):
    cmd = [python, __file__, "--inductor-child", "--threads", str(threads), "--only", only] + (["--quick"] if quick else [])
    out = subprocess.run(cmd, env=child_env(threads, True), capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"bench torch.compile child ({python}, {threads} thread(s)) failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_tp_mlp(python, quick):
    """bench/tp_mlp.py under the torch 2.x (DTensor): its two ranks' result."""
    cmd = [python, os.path.join(os.path.dirname(os.path.abspath(__file__)), "tp_mlp.py")] + (["--quick"] if quick else [])
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"bench tensor-parallel MLP ({python}) failed:\n{out.stderr[-4000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


# The children of one thread count: (role, warm allocator, ATen capability).
# Both warm children time eager and tf in alternation, each under one of
# ATen's kernel sets (eager at its best is whichever is faster for a row);
# the avx512 one times only the rows (see merge_child).
CHILDREN = {"tf": ("tf", True, "default"), "avx512": ("tf", True, "avx512"),
            "fresh": ("eager", False, "default")}


# Runs of each process: on the EPYC guest the bandwidth two threads see
# moves between 41 and 97 GB/s within minutes, and one process per side
# compared whichever moments they happened to run in (Inductor's silu * b
# at 128 MiB on two threads measured 5.6 ms in one run, ours 6.9; in the
# run before, ours 3.6 and 4.2). Two runs each still left both of ours of
# one row in a slow minute (silu * b on two threads: 1.54 ms at 32 MiB,
# 0.85-0.90 in other runs).
ROUNDS = 3


def merge_child(rounds):
    """One result from the runs of the children of one role: a row that
    timed eager and tf in alternation (and the overhead, each composition
    and each KV-cache row, pairs too) from the run where its pair took
    least time, so a ratio's two sides come from one moment of the host;
    a row of eager alone (and OpenBLAS), the fastest of the runs. Tables
    that some runs leave out (the avx512 child times only rows) come from
    the runs that have them."""
    out = dict(rounds[0], ops={})
    for key in rounds[0]["ops"]:
        rows = [r["ops"][key] for r in rounds]
        if "tf" in rows[0]:
            out["ops"][key] = dict(min(rows, key=lambda row: row["eager"] + row["tf"]))
        else:
            out["ops"][key] = {field: min(row[field] for row in rows) if field in ("eager", "openblas")
                               else rows[0][field] for field in rows[0]}
    with_overhead = [r for r in rounds if "overhead_tf_us" in r]
    if with_overhead:
        best = min(with_overhead, key=lambda r: r["overhead_tf_us"] + r["overhead_add_us"])
        for field in ("overhead_tf_us", "overhead_add_us", "overhead_ops_add_us"):
            out[field] = best[field]
    for table, pair in (("compositions", ("composed", "builtin")), ("kv_cache", ("tf", "index_copy")),
                        ("other_ops", ("tf", "eager"))):
        having = [r[table] for r in rounds if table in r]
        if having:
            out[table] = {key: min((t[key] for t in having), key=lambda row: row[pair[0]] + row[pair[1]])
                          for key in having[0]}
    return out


def merge_inductor(rounds):
    """The torch 2.x child's rounds: each time the fastest of the rounds."""
    out = dict(rounds[0], ops={})
    for key, row in rounds[0]["ops"].items():
        out["ops"][key] = {field: min(r["ops"][key][field] for r in rounds) for field in row}
    return out


def run_child(threads, kind, cache_dir, quick, only):
    role, warm, capability = CHILDREN[kind]
    env = child_env(threads, warm)
    env["TF_CACHE_DIR"] = cache_dir
    if capability == "avx512":
        env["ATEN_CPU_CAPABILITY"] = "avx512"
    cmd = [sys.executable, __file__, "--child", "--threads", str(threads), "--role", role, "--only", only]
    cmd += ["--rows-only"] if kind == "avx512" else []
    out = subprocess.run(cmd + (["--quick"] if quick else []), env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"bench child {threads} thread(s) / {kind} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def cold_warm_compile(cache_dir):
    """Cold: the first compile of a function with an empty cache (runs TF_CC).
    Warm: the same function in a fresh process (disk cache + dlopen)."""
    code = ("import time, tilefoundry as tf, sys\nm = tf.load(sys.argv[1])\nt = time.perf_counter()\n"
            "k = m.compile('b_swiglu')\nprint(time.perf_counter() - t, k.backend)")
    env = dict(os.environ, TF_CACHE_DIR=cache_dir)
    cold = subprocess.run([sys.executable, "-c", code, SOURCE], env=env, capture_output=True, text=True, check=True)
    warm = subprocess.run([sys.executable, "-c", code, SOURCE], env=env, capture_output=True, text=True, check=True)
    return float(cold.stdout.split()[0]), float(warm.stdout.split()[0])


def fmt_ms(s):
    return f"{s * 1e3:.3f}" if s is not None else "n/a"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def ratio(a, b):
    return f"{a / b:.2f}" if a is not None and b else "n/a"


def report(results, inductor, cold, warm, torch_version, thread_counts=(1, 2), tp=None, only="", rounds=1):
    """results: {(threads, kind): child result}; inductor: {threads:
    inductor_child result} (empty without a torch 2.x); tp: bench/tp_mlp.py's
    result (None without a torch 2.x)."""
    lines = []
    w = lines.append
    w(f"# TileFoundry bench — {datetime.date.today().isoformat()}\n")
    w(f"Machine: {cpu_model()}, {os.cpu_count()} cores, {platform.platform()}; torch {torch_version}. "
      "Medians of a steady loop (call, drop the result, call again); times in ms. x peer = peer time / "
      "tf time (> 1: TileFoundry faster). eager = eager torch with a warm allocator (GLIBC_TUNABLES keeps "
      "freed memory, as jemalloc would), timed in alternation with tf; ATen = its kernel set; eager fresh = "
      "plain glibc (every large temporary a fresh mmap). tf = torch.ops.tilefoundry (outputs from the "
      "pool); tf .out = its out= overload into preallocated outputs. GB/s = bytes read + written once / "
      "time; % triad against the STREAM triad measured beside the row in the same process (the higher of "
      "one just before its tf timings and one just after its .out timings: this host's bandwidth moves "
      f"within minutes; the section heading gives the range). Every process ran {rounds} time(s), in turn "
      "with the others, the warm ones under ATen's default and avx512 kernels; a row's eager, tf, .out "
      "and triad come from the one run where eager + tf took least (a ratio from one moment of the host); "
      "eager fresh and inductor are the fastest of their runs.\n")
    if inductor:
        w(f"torch.compile (Inductor, default mode): torch {next(iter(inductor.values()))['torch']} in its "
          "own process, with the same warm allocator; oneDNN and torch 2.x's torch.mm are that build's.\n")
    else:
        w("torch.compile (Inductor): not measured, no torch 2.x given (make test-torch2 builds its venv; "
          "then make bench uses it).\n")
    for threads in thread_counts:
        d = results[(threads, "tf")]
        f = results.get((threads, "fresh"), {"ops": {}})["ops"]
        ind = inductor.get(threads, {"ops": {}})["ops"]
        triad = d["triad_gbs"]
        beside = [r["triad"] for r in d["ops"].values() if "triad" in r]
        span = f"; {min(beside):.1f}-{max(beside):.1f} beside the rows" if beside else ""
        w(f"\n## {threads} thread(s) — STREAM triad {triad:.1f} GB/s at the start{span}\n")
        w("| op | shape | eager | ATen | eager fresh | inductor | tf | tf .out | x eager | x eager fresh | "
          "x inductor | GB/s tf | % triad tf | GB/s .out | % triad .out | triad GB/s | max err |")
        w("|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for key, r in d["ops"].items():
            op, label, shape = key.split("|")
            if op == "matmul":
                continue
            eager = r["eager"]
            fresh = f.get(key, {}).get("eager")
            ti = ind.get(key, {}).get("inductor")
            gbs, gbs_out = r["bytes"] / r["tf"] / 1e9, r["bytes"] / r["tf_out"] / 1e9
            row_triad = r.get("triad", triad)
            w(f"| {op} | {label} {shape} | {fmt_ms(eager)} | {r['aten']} | {fmt_ms(fresh)} | {fmt_ms(ti)} | "
              f"{fmt_ms(r['tf'])} | {fmt_ms(r['tf_out'])} | {ratio(eager, r['tf'])} | {ratio(fresh, r['tf'])} | "
              f"{ratio(ti, r['tf'])} | {gbs:.1f} | {100 * gbs / row_triad:.0f}% | {gbs_out:.1f} | "
              f"{100 * gbs_out / row_triad:.0f}% | {row_triad:.1f} | {r['max_err']:.1e} |")
        w("\n| matmul | shape | torch.mm GFLOP/s | OpenBLAS (numpy) GFLOP/s | oneDNN GFLOP/s | "
          "torch 2.x mm GFLOP/s | inductor GFLOP/s | tf GFLOP/s | tf .out GFLOP/s | tf / oneDNN | "
          "tf / OpenBLAS |")
        w("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for key, r in d["ops"].items():
            op, label, shape = key.split("|")
            if op != "matmul":
                continue
            gf = lambda s: f"{r['flops'] / s / 1e9:.1f}" if s else "n/a"  # noqa: E731
            i = ind.get(key, {})
            w(f"| matmul | {label} {shape} | {gf(r['eager'])} | {gf(r['openblas'])} | {gf(i.get('onednn'))} | "
              f"{gf(i.get('mm'))} | {gf(i.get('inductor'))} | {gf(r['tf'])} | {gf(r['tf_out'])} | "
              f"{ratio(i.get('onednn'), r['tf'])} | {ratio(r['openblas'], r['tf'])} |")
        w("\n| composition | shape | built-in ms | composed ms | composed / built-in | GB/s composed | "
          "% triad composed | max diff |")
        w("|---|---|---:|---:|---:|---:|---:|---:|")
        for key, r in d.get("compositions", {}).items():
            name, label, shape = key.split("|")
            gbs = r["bytes"] / r["composed"] / 1e9
            w(f"| {name} | {label} {shape} | {fmt_ms(r['builtin'])} | {fmt_ms(r['composed'])} | "
              f"{r['composed'] / r['builtin']:.2f} | {gbs:.1f} | {100 * gbs / r.get('triad', triad):.0f}% | "
              f"{r['max_diff']:.1e} |")
        w("\nOther ops against eager (warm allocator), in alternation; f32 but the bf16 product.\n")
        w("| other op | shape | eager ms | tf ms | x eager | max diff | backend |")
        w("|---|---|---:|---:|---:|---:|---|")
        for key, r in d.get("other_ops", {}).items():
            name, label, shape = key.split("|")
            w(f"| {name} | {label} {shape} | {fmt_ms(r['eager'])} | {fmt_ms(r['tf'])} | "
              f"{r['eager'] / r['tf']:.2f} | {r['max_diff']:.1e} | {r['backend']} |")
        w("\nKV-cache append: bf16, one token per sequence, written in place.\n")
        w("| kv cache | shape | index_copy_ ms | tf ms | tf / index_copy_ | exact |")
        w("|---|---|---:|---:|---:|---|")
        for key, r in d.get("kv_cache", {}).items():
            label, shape = key.split("|")
            w(f"| kv append | {label} {shape} | {r['index_copy'] * 1e3:.4f} | {r['tf'] * 1e3:.4f} | "
              f"{r['tf'] / r['index_copy']:.2f} | {r['exact']} |")
        w(f"\nPer-call overhead (1 element; tf and torch.add in alternation, the smaller of 5 medians each): "
          f"torch.ops.tilefoundry {d['overhead_tf_us']:.2f} us, "
          f"torch.add {d['overhead_add_us']:.2f} us ({d['overhead_tf_us'] / d['overhead_add_us']:.2f}x), "
          f"torch.ops.aten.add, torch's add through the same torch.ops path, {d['overhead_ops_add_us']:.2f} us "
          f"({d['overhead_tf_us'] / d['overhead_ops_add_us']:.2f}x).")
    w("\n## Tensor-parallel MLP on 2 ranks\n")
    if tp is None:
        w("Not measured: " + ("--only runs the named ops alone." if only else
                              "DTensor needs a torch 2.x (make test-torch2 builds its venv)."))
    else:
        w(f"silu(x @ w1) @ w2, all-reduce, rms_norm(y + x) with w1 split by columns and w2 by rows over a "
          f"2-rank mesh: torch {tp['torch']}, Gloo over loopback, one process and one thread per rank; "
          "tf = the sharded kernel called with DTensors (its ranks run native segments between the "
          "collectives), tf trusted = the same with check_calls=False (no agreement check: one collective "
          "round trip less), DTensor = the same block in DTensor ops. Bytes: what one rank passed to "
          "collectives per call (the one all-reduce of the [B, D] partial product, and 8 bytes of the ranks' "
          "agreement check), against the all-reduce the types require.\n")
        w("| block | shape | DTensor ms | tf ms | tf trusted ms | x DTensor | x DTensor trusted | "
          "tf bytes / call | minimum bytes | DTensor collectives / call | max diff |")
        w("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for label, r in tp["rows"].items():
            w(f"| tp mlp | {label} | {r['dtensor_ms']:.3f} | {r['tf_ms']:.3f} | {r['tf_trusted_ms']:.3f} | "
              f"{r['dtensor_ms'] / r['tf_ms']:.2f} | {r['dtensor_ms'] / r['tf_trusted_ms']:.2f} | "
              f"{r['tf_bytes']:.0f} | {r['min_bytes']} | {r['dtensor_collectives']} | {r['max_diff']:.1e} |")
    if cold is None:
        w("\nCompile: not measured (--quick).")
    else:
        w(f"\nCompile: cold {cold * 1e3:.0f} ms (one function, empty cache, runs the compiler), "
          f"warm {warm * 1e3:.1f} ms (fresh process, cached object).")
    w(f"\nBackends: {results[(thread_counts[0], 'tf')].get('backends')}")
    return "\n".join(lines) + "\n"


def default_torch2_python():
    """make test-torch2's venv, when it has been built."""
    here = os.path.dirname(os.path.abspath(__file__))
    py = os.path.join(here, "..", "build-torch2", "venv", "bin", "python")
    return py if os.path.exists(py) else None


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--child", action="store_true")
    p.add_argument("--inductor-child", action="store_true")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--role", default="tf", choices=("tf", "eager"))
    p.add_argument("--rows-only", action="store_true",
                   help="child: time the op rows only (no overhead, compositions or KV-cache rows)")
    p.add_argument("--torch2-python", default=os.environ.get("TF_BENCH_TORCH2_PYTHON") or default_torch2_python(),
                   help="a Python with torch 2.x for the torch.compile column (default: build-torch2/venv)")
    p.add_argument("--write", default=None, help="also write the report to this file")
    p.add_argument("--quick", action="store_true",
                   help="smoke run (seconds): one tiny shape per kernel, 1 thread, no compile timing")
    p.add_argument("--only", default="",
                   help="comma-separated ops (e.g. matmul,softmax): only their rows, without compositions, "
                        "the KV-cache rows, compile timing and the tensor-parallel block")
    args = p.parse_args()
    if args.child:
        return child(args)
    if args.inductor_child:
        return inductor_child(args)
    import torch
    cold = warm = None
    if not args.quick and not args.only:
        with tempfile.TemporaryDirectory() as cold_dir:
            cold, warm = cold_warm_compile(cold_dir)
    cache = os.environ.get("TF_CACHE_DIR", os.path.expanduser("~/.cache/tilefoundry"))
    thread_counts = (1,) if args.quick else (1, 2)
    kinds = ("tf", "fresh") if args.quick else tuple(CHILDREN)
    # Every process runs ROUNDS times, the rounds one after another, so that
    # both sides of a ratio between processes are sampled at several
    # moments of a shared host (see merge_child).
    runs, inductor_runs = [], []
    for _ in range(1 if args.quick else ROUNDS):
        runs.append({(t, k): run_child(t, k, cache, args.quick, args.only) for t in thread_counts for k in kinds})
        if args.torch2_python:
            inductor_runs.append({t: run_inductor_child(args.torch2_python, t, args.quick, args.only)
                                  for t in thread_counts})
    # The two warm children's runs merge into one: each row from the run
    # (of either ATen kernel set) where eager + tf took least.
    paired = [k for k in kinds if CHILDREN[k][0] == "tf"]
    results = {(t, "tf"): merge_child([r[(t, k)] for k in paired for r in runs]) for t in thread_counts}
    results.update({(t, k): merge_child([r[(t, k)] for r in runs])
                    for t in thread_counts for k in kinds if k not in paired})
    inductor = {t: merge_inductor([r[t] for r in inductor_runs]) for t in inductor_runs[0]} if inductor_runs else {}
    tp = None
    if args.torch2_python:
        tp = None if args.only else run_tp_mlp(args.torch2_python, args.quick)
    text = report(results, inductor, cold, warm, torch.__version__, thread_counts, tp, args.only, len(runs))
    print(text)
    if args.write:
        with open(args.write, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
