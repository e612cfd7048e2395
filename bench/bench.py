"""make bench: eager PyTorch vs torch.ops.tilefoundry (native backend), side by side.

One run prints markdown tables (and writes them to bench/results.md with
--write): for each op, a small latency shape and a large memory-bound shape,
at 1 and 2 threads: median times of eager torch (default ATen CPU capability
and ATEN_CPU_CAPABILITY=avx512), torch.compile (when a torch 2.x exists),
TileFoundry through torch.ops.tilefoundry (which allocates its outputs) and
through tf_kernel_run into preallocated outputs; ratios; achieved GB/s and %
of a STREAM triad measured in the same process. MatMul is reported in
GFLOP/s against OpenBLAS called directly (numpy) and oneDNN (the torch 2.x
build's, through torch._C._nn.mkldnn_linear on pre-converted operands).
Also: per-call overhead against torch.add on one element, and cold / warm
compile time.

torch.compile needs a torch 2.x, which is not the Debian torch 1.13 the
rest runs under: given --torch2-python (make bench passes the venv of
make test-torch2 when it exists), an extra child per thread count runs the
same eager functions through torch.compile (Inductor, default mode) in that
interpreter, and its medians join the same table.

Each (thread count, ATen capability) runs in its own child process, since
torch reads ATEN_CPU_CAPABILITY and the thread pools are set at start-up.
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

@func
def b_add(a: Tensor[(N,), f32], b: Tensor[(N,), f32]) -> Tensor[(N,), f32]:
    return a + b
"""

SHAPES = {"small": (32, 512), "large": (4096, 4096)}
MATMUL_SHAPES = {"small": (64, 64, 64), "large": (1024, 1024, 1024)}
# --quick (the test suite's smoke run): one tiny shape per kernel, 1 thread,
# a few runs, a small triad; numbers are not meaningful, the table's shape is.
QUICK_SHAPES = {"tiny": (4, 64)}
QUICK_MATMUL_SHAPES = {"tiny": (8, 8, 8)}
# RoPE: q and k [B, S, H, D], caches [S, D]; large = 2 x 64 MiB in, 2 x 64 MiB out.
ROPE_SHAPES = {"small": (1, 16, 8, 64), "large": (4, 1024, 32, 128)}
QUICK_ROPE_SHAPES = {"tiny": (1, 2, 2, 8)}


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


def child(args):
    import torch
    import numpy as np
    global MIN_TIME
    torch.set_num_threads(args.threads)
    if args.quick:
        MIN_TIME = 0.0
    res = {"threads": args.threads, "capability": args.capability, "ops": {}}
    eager = eager_ops(torch)
    # STREAM triad a = b + s * c, 3 x 64 MiB, one pass.
    n = (1 << 16) if args.quick else (16 << 20)
    a, b, c = torch.empty(n), torch.rand(n), torch.rand(n)
    t = median_s(lambda: torch.add(b, c, alpha=3.0, out=a), 10)
    res["triad_gbs"] = 3 * n * 4 / t / 1e9
    tf_ops = {}
    if args.capability == "default":
        import tilefoundry as tf
        t0 = time.perf_counter()
        m = tf.load(SOURCE)
        names = {"rmsnorm": "b_rmsnorm", "residual+rmsnorm": "b_resnorm", "silu*mul": "b_swiglu",
                 "gelu-tanh": "b_gelu", "softmax": "b_softmax", "layer_norm": "b_layernorm",
                 "RoPE rotate-half": "b_rope", "matmul": "b_matmul"}
        kernels = {op: m.compile(fn) for op, fn in names.items()}
        res["compile_all_s"] = time.perf_counter() - t0
        res["backends"] = {op: k.backend for op, k in kernels.items()}
        tf_ops = {op: (tf.register(k), k) for op, k in kernels.items()}
        kadd = m.compile("b_add")
        op_add = tf.register(kadd)
        one = torch.ones(1)
        calls = 20 if args.quick else 200
        res["overhead_tf_us"] = median_s(lambda: op_add(one, one), calls) * 1e6
        res["overhead_add_us"] = median_s(lambda: torch.add(one, one), calls) * 1e6
    for op, fn in eager.items():
        for label, shape in shapes_of(op, args.quick).items():
            inputs = make_inputs(torch, op, shape)
            runs = 3 if args.quick else 10 if label == "large" else 100
            r = {"eager": median_s(lambda: fn(*inputs), runs)}
            outs = fn(*inputs)
            outs = outs if isinstance(outs, tuple) else (outs,)
            r["bytes"] = bytes_moved(op, inputs, outs)
            if op == "matmul":
                m_, k_, n_ = shape
                r["flops"] = 2 * m_ * k_ * n_
                an, bn = inputs[0].numpy(), inputs[1].numpy()
                r["openblas"] = median_s(lambda: an @ bn, runs)
            if op in tf_ops:
                top, kern = tf_ops[op]
                got = top(*inputs)
                got = got if isinstance(got, (tuple, list)) else (got,)
                r["max_err"] = max((g - w).abs().max().item() for g, w in zip(got, outs))
                r["tf"] = median_s(lambda: top(*inputs), runs)
                pre = [torch.empty_like(o) for o in outs]
                r["tf_prealloc"] = median_s(lambda: kern.run(list(inputs), pre), runs)
                r["alloc_only"] = median_s(lambda: [torch.empty_like(o).fill_(0) for o in outs], runs)
            res["ops"][f"{op}|{label}|{shape}"] = r
    print(json.dumps(res))


def inductor_child(args):
    """Runs under a torch 2.x: torch.compile of each eager function, per shape
    (compiled and warmed before timing), and oneDNN's GEMM for matmul."""
    import torch
    global MIN_TIME
    torch.set_num_threads(args.threads)
    if args.quick:
        MIN_TIME = 0.0
    res = {"threads": args.threads, "torch": torch.__version__, "ops": {}}
    for op, fn in eager_ops(torch).items():
        for label, shape in shapes_of(op, args.quick).items():
            inputs = make_inputs(torch, op, shape)
            runs = 3 if args.quick else 10 if label == "large" else 100
            compiled = torch.compile(fn)
            compiled(*inputs)
            r = {"inductor": median_s(lambda: compiled(*inputs), runs)}
            if op == "matmul":
                a = inputs[0].to_mkldnn()
                bt = inputs[1].t().contiguous().to_mkldnn()  # mkldnn_linear takes [out, in] weights
                r["onednn"] = median_s(lambda: torch._C._nn.mkldnn_linear(a, bt, None), runs)
            res["ops"][f"{op}|{label}|{shape}"] = r
    print(json.dumps(res))


def shapes_of(op, quick):
    if op == "RoPE rotate-half":
        return QUICK_ROPE_SHAPES if quick else ROPE_SHAPES
    if op == "matmul":
        return QUICK_MATMUL_SHAPES if quick else MATMUL_SHAPES
    return QUICK_SHAPES if quick else SHAPES


def run_inductor_child(python, threads, quick):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    cmd = [python, __file__, "--inductor-child", "--threads", str(threads)] + (["--quick"] if quick else [])
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"bench torch.compile child ({python}, {threads} thread(s)) failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_child(threads, capability, cache_dir, quick):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads),
               TF_CACHE_DIR=cache_dir)
    if capability == "avx512":
        env["ATEN_CPU_CAPABILITY"] = "avx512"
    cmd = [sys.executable, __file__, "--child", "--threads", str(threads), "--capability", capability]
    out = subprocess.run(cmd + (["--quick"] if quick else []), env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"bench child {threads} thread(s) / {capability} failed:\n{out.stderr}")
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


def report(results, inductor, cold, warm, torch_version, thread_counts=(1, 2)):
    """inductor: {threads: inductor_child result} (empty without a torch 2.x)."""
    lines = []
    w = lines.append
    w(f"# TileFoundry bench — {datetime.date.today().isoformat()}\n")
    w(f"Machine: {cpu_model()}, {os.cpu_count()} cores, "
      f"{platform.platform()}; torch {torch_version}. Medians; times in ms. "
      "x peer = peer time / TileFoundry time (> 1: TileFoundry faster). tf = torch.ops.tilefoundry "
      "(allocates its outputs: 4 MiB and more in huge pages), tf-pre = tf_kernel_run into preallocated "
      "outputs (through ctypes: ~5 us more per call than tf); alloc = torch.empty_like().fill_(0) of the "
      "outputs, the page-fault cost every fresh eager output pays.\n")
    if inductor:
        w(f"torch.compile (Inductor, default mode): torch {next(iter(inductor.values()))['torch']} "
          "in its own process; oneDNN is that build's.\n")
    else:
        w("torch.compile (Inductor): not measured, no torch 2.x given (make test-torch2 builds its venv; "
          "then make bench uses it).\n")
    by = {(r["threads"], r["capability"]): r for r in results}
    for threads in thread_counts:
        d, x = by[(threads, "default")], by[(threads, "avx512")]
        ind = inductor.get(threads, {"ops": {}})["ops"]
        w(f"\n## {threads} thread(s) — STREAM triad {d['triad_gbs']:.1f} GB/s\n")
        w("| op | shape | eager | eager avx512 | inductor | tf | tf-pre | alloc | x eager | x avx512 | "
          "x inductor | GB/s tf-pre | % triad | max err |")
        w("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for key, r in d["ops"].items():
            op, label, shape = key.split("|")
            if op == "matmul":
                continue
            ra = x["ops"][key]
            ti = ind.get(key, {}).get("inductor")
            gbs = r["bytes"] / r["tf_prealloc"] / 1e9
            w(f"| {op} | {label} {shape} | {fmt_ms(r['eager'])} | {fmt_ms(ra['eager'])} | {fmt_ms(ti)} | "
              f"{fmt_ms(r['tf'])} | {fmt_ms(r['tf_prealloc'])} | {fmt_ms(r['alloc_only'])} | "
              f"{ratio(r['eager'], r['tf'])} | {ratio(ra['eager'], r['tf'])} | {ratio(ti, r['tf'])} | "
              f"{gbs:.1f} | {100 * gbs / d['triad_gbs']:.0f}% | {r['max_err']:.1e} |")
        w("\n| matmul | shape | torch.mm ms | OpenBLAS (numpy) GFLOP/s | oneDNN GFLOP/s | inductor GFLOP/s | "
          "tf GFLOP/s | tf-pre GFLOP/s | tf / OpenBLAS | tf-pre / OpenBLAS |")
        w("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for key, r in d["ops"].items():
            op, label, shape = key.split("|")
            if op != "matmul":
                continue
            gf = lambda s: f"{r['flops'] / s / 1e9:.1f}" if s else "n/a"  # noqa: E731
            i = ind.get(key, {})
            w(f"| matmul | {label} {shape} | {fmt_ms(r['eager'])} | {gf(r['openblas'])} | {gf(i.get('onednn'))} | "
              f"{gf(i.get('inductor'))} | {gf(r['tf'])} | {gf(r['tf_prealloc'])} | "
              f"{ratio(r['openblas'], r['tf'])} | {ratio(r['openblas'], r['tf_prealloc'])} |")
        w(f"\nPer-call overhead (1 element): torch.ops.tilefoundry {d['overhead_tf_us']:.2f} us, "
          f"torch.add {d['overhead_add_us']:.2f} us ({d['overhead_tf_us'] / d['overhead_add_us']:.2f}x).")
    if cold is None:
        w("\nCompile: not measured (--quick).")
    else:
        w(f"\nCompile: cold {cold * 1e3:.0f} ms (one function, empty cache, runs the compiler), "
          f"warm {warm * 1e3:.1f} ms (fresh process, cached object).")
    w(f"\nBackends: {by[(1, 'default')].get('backends')}")
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
    p.add_argument("--capability", default="default")
    p.add_argument("--torch2-python", default=os.environ.get("TF_BENCH_TORCH2_PYTHON") or default_torch2_python(),
                   help="a Python with torch 2.x for the torch.compile column (default: build-torch2/venv)")
    p.add_argument("--write", default=None, help="also write the report to this file")
    p.add_argument("--quick", action="store_true",
                   help="smoke run (seconds): one tiny shape per kernel, 1 thread, no compile timing")
    args = p.parse_args()
    if args.child:
        return child(args)
    if args.inductor_child:
        return inductor_child(args)
    import torch
    cold = warm = None
    if not args.quick:
        with tempfile.TemporaryDirectory() as cold_dir:
            cold, warm = cold_warm_compile(cold_dir)
    cache = os.environ.get("TF_CACHE_DIR", os.path.expanduser("~/.cache/tilefoundry"))
    thread_counts = (1,) if args.quick else (1, 2)
    results = [run_child(t, c, cache, args.quick) for t in thread_counts for c in ("default", "avx512")]
    inductor = {}
    if args.torch2_python:
        inductor = {t: run_inductor_child(args.torch2_python, t, args.quick) for t in thread_counts}
    text = report(results, inductor, cold, warm, torch.__version__, thread_counts)
    print(text)
    if args.write:
        with open(args.write, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
