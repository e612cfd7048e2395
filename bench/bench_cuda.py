"""make bench-cuda: TileFoundry's CUDA kernels against torch on the same GPU,
side by side in one run.

For each memory-bound kernel a model replaces with a custom op (rmsnorm,
residual + rmsnorm, silu * mul, RoPE, softmax, layer_norm), at a decode
shape, a prefill shape and a shape whose tensors are larger than any GPU's
L2 cache (so that GB/s is the memory's, not the cache's): the time of
torch.ops.tilefoundry.<op> on CUDA
tensors, of torch eager and of torch.compile (Triton), each the median of
many CUDA-event-timed calls after warm-up; the bytes the op must move
(inputs read once, outputs written once) over the time as GB/s, and that as
a fraction of the device's copy bandwidth measured here (a device-to-device
copy of 1 GiB). Then the host cost of one call: a tiny tilefoundry op
against a tiny torch.add, per call over many calls.

Every row is printed as it is measured. A result that differs from
torch's is marked in its row and makes the run exit with status 1 after
the table; a torch.compile that fails leaves its column empty and says why
once, since that is torch's problem, not the kernel's.

Needs a GPU, torch with CUDA and the CUDA backend; without them it says
which is missing and exits with status 2.
"""
import argparse
import statistics
import sys
import time


def need(cond, why):
    if not cond:
        print("bench-cuda: " + why, file=sys.stderr)
        sys.exit(2)


try:
    import torch
except ImportError:
    torch = None
need(torch is not None, "torch is not installed")
need(torch.cuda.is_available(), "torch sees no CUDA device")
import tilefoundry as tf  # noqa: E402

need(tf.cuda_is_available(), "the CUDA backend is unavailable: " + tf.cuda_unavailable_reason())

SRC = '''
from tilefoundry.dsl import *
N = DimVar("N", 1, 1 << 20)
D = DimVar("D", 1, 1 << 16)
S = DimVar("S", 1, 1 << 16)
H = DimVar("H", 1, 256)
HK = DimVar("HK", 1, 256)
P = DimVar("P", 1, 1 << 20)
E = DimVar("E", 2, 1024)

@func
def rmsnorm(x: Tensor[(N, D), bf16], w: Tensor[(D,), bf16]) -> Tensor[(N, D), bf16]:
    return rms_norm(x, w, eps=1e-6)

@func
def res_rmsnorm(x: Tensor[(N, D), bf16], r: Tensor[(N, D), bf16], w: Tensor[(D,), bf16]) -> tuple[Tensor[(N, D), bf16], Tensor[(N, D), bf16]]:
    h = x + r
    return h, rms_norm(h, w, eps=1e-6)

@func
def silu_mul(a: Tensor[(N, D), bf16], b: Tensor[(N, D), bf16]) -> Tensor[(N, D), bf16]:
    return silu(a) * b

@func
def rope_bf16(q: Tensor[(1, S, H, E), bf16], k: Tensor[(1, S, HK, E), bf16], c: Tensor[(P, E), bf16], s: Tensor[(P, E), bf16], pos: Tensor[(1, S), i64]) -> tuple[Tensor[(1, S, H, E), bf16], Tensor[(1, S, HK, E), bf16]]:
    return rope(q, k, c, s, pos)

@func
def smax(x: Tensor[(N, D), f32]) -> Tensor[(N, D), f32]:
    return softmax(x)

@func
def lnorm(x: Tensor[(N, D), bf16], w: Tensor[(D,), bf16], b: Tensor[(D,), bf16]) -> Tensor[(N, D), bf16]:
    return layer_norm(x, w, b, eps=1e-5)

@func
def tiny_add(a: Tensor[(N, D), f32], b: Tensor[(N, D), f32]) -> Tensor[(N, D), f32]:
    return a + b
'''


def t_rmsnorm(x, w):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)).to(x.dtype) * w


def t_res_rmsnorm(x, r, w):
    h = x + r
    return h, t_rmsnorm(h, w)


def t_silu_mul(a, b):
    return torch.nn.functional.silu(a) * b


def t_rope(q, k, c, s, pos):
    cos, sin = c[pos[0]][None, :, None, :], s[pos[0]][None, :, None, :]

    def rot(x):
        h = x.shape[-1] // 2
        return torch.cat((-x[..., h:], x[..., :h]), dim=-1)
    return q * cos + rot(q) * sin, k * cos + rot(k) * sin


def t_smax(x):
    return torch.softmax(x, -1)


def t_lnorm(x, w, b):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, 1e-5)


def inputs(name, rows, d):
    bf = dict(device="cuda", dtype=torch.bfloat16)
    if name == "rmsnorm":
        return torch.randn(rows, d, **bf), torch.rand(d, **bf)
    if name == "res_rmsnorm":
        return torch.randn(rows, d, **bf), torch.randn(rows, d, **bf), torch.rand(d, **bf)
    if name == "silu_mul":
        return torch.randn(rows, 4 * d, **bf), torch.randn(rows, 4 * d, **bf)
    if name == "rope_bf16":
        heads, e = d // 128, 128
        return (torch.randn(1, rows, heads, e, **bf), torch.randn(1, rows, max(1, heads // 4), e, **bf),
                torch.randn(rows + 16, e, **bf), torch.randn(rows + 16, e, **bf),
                torch.arange(rows, device="cuda", dtype=torch.int64)[None])
    if name == "smax":
        return (torch.randn(rows, d, device="cuda"),)
    if name == "lnorm":
        return torch.randn(rows, d, **bf), torch.rand(d, **bf), torch.randn(d, **bf)
    raise KeyError(name)


# (rows, d): a decode step, a prefill, and tensors of 256 MiB in bf16 (the
# largest L2, H100's and H200's, is 50 MiB).
SHAPES = ((8, 4096), (4096, 4096), (32768, 4096))


def nbytes(tensors):
    return sum(t.numel() * t.element_size() for t in tensors)


def gpu_time(fn, args, reps):
    """Median seconds per call, CUDA events around each call, after warm-up."""
    for _ in range(10):
        fn(*args)
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(*args)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return statistics.median(times)


def copy_bandwidth():
    x = torch.empty(1 << 28, device="cuda")  # 1 GiB of f32
    y = torch.empty_like(x)
    t = gpu_time(lambda: y.copy_(x), (), 20)
    return 2 * nbytes([x]) / t


def host_cost(fn, args, calls):
    for _ in range(100):
        fn(*args)
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        fn(*args)
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / calls


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--no-compile", action="store_true", help="leave out the torch.compile column")
    args = ap.parse_args()
    module = tf.Module(SRC)
    ops = {name: tf.register(module.compile(name), name="bench_cuda_" + name)
           for name in ("rmsnorm", "res_rmsnorm", "silu_mul", "rope_bf16", "smax", "lnorm", "tiny_add")}
    refs = {"rmsnorm": t_rmsnorm, "res_rmsnorm": t_res_rmsnorm, "silu_mul": t_silu_mul, "rope_bf16": t_rope,
            "smax": t_smax, "lnorm": t_lnorm}
    bw = copy_bandwidth()
    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}; "
          f"device copy bandwidth {bw / 1e9:.0f} GB/s\n")
    print("| op | shape | tf us | eager us | compile us | tf GB/s | % copy BW | tf vs eager | tf vs compile |")
    print("|---|---|---|---|---|---|---|---|---|")
    mismatches = []
    for name, ref in refs.items():
        compiled = None if args.no_compile else torch.compile(ref)
        for rows, d in SHAPES:
            xs = inputs(name, rows, d)
            got, want = ops[name](*xs), ref(*xs)
            outs = got if isinstance(got, tuple) else (got,)
            wants = want if isinstance(want, tuple) else (want,)
            diff = max(float((g.float() - w.float()).abs().max()) for g, w in zip(outs, wants))
            agrees = all(torch.allclose(g.float(), w.float(), atol=5e-2, rtol=5e-2) for g, w in zip(outs, wants))
            if not agrees:
                mismatches.append(f"{name} {rows}x{d}: max diff {diff:.3g}")
            moved = nbytes([x for x in xs if x.dtype != torch.int64]) + nbytes(outs)
            t_tf = gpu_time(ops[name], xs, args.reps)
            t_eager = gpu_time(ref, xs, args.reps)
            t_comp = float("nan")
            if compiled is not None:
                try:
                    t_comp = gpu_time(compiled, xs, args.reps)
                except Exception as e:  # Triton missing a compiler, an Inductor bug: torch's, not ours
                    print(f"torch.compile failed, its column left empty: {type(e).__name__}: {e}".splitlines()[0])
                    compiled = None
            note = "" if agrees else f" MISMATCH (max diff {diff:.3g})"
            print(f"| {name} | {rows}x{d} | {t_tf * 1e6:.1f} | {t_eager * 1e6:.1f} | {t_comp * 1e6:.1f} | "
                  f"{moved / t_tf / 1e9:.0f} | {100 * moved / t_tf / bw:.0f}% | {t_eager / t_tf:.2f}x | "
                  f"{t_comp / t_tf:.2f}x |{note}")
            del xs, got, want, outs, wants
    a, b = torch.randn(1, 8, device="cuda"), torch.randn(1, 8, device="cuda")
    t_ours = host_cost(ops["tiny_add"], (a, b), 20000)
    t_torch = host_cost(torch.add, (a, b), 20000)
    print(f"\nper call, 1x8 f32 add: tilefoundry {t_ours * 1e6:.2f} us, torch.add {t_torch * 1e6:.2f} us "
          f"({t_ours / t_torch:.2f}x)")
    if mismatches:
        print("\nresults that differ from torch's:\n  " + "\n  ".join(mismatches))
        sys.exit(1)


if __name__ == "__main__":
    main()
