"""Side-by-side timings: eager PyTorch vs torch.ops.tilefoundry, one run.

Prints a markdown table of median times and the ratio tilefoundry/eager
(< 1 means TileFoundry is faster). Sizes stay modest so the run finishes in
well under a minute even when the kernels run on the reference evaluator.
Run by `make bench` (PYTHONPATH and TILEFOUNDRY_LIB_DIR set by the Makefile).
"""
import argparse
import statistics
import time

import torch

import tilefoundry as tf

SOURCE = """from tilefoundry.dsl import *

N = DimVar("N", 1, 1 << 20)
D = DimVar("D", 1, 1 << 16)

@func
def bench_rmsnorm(x: Tensor[(N, D), f32], w: Tensor[(D,), f32]) -> Tensor[(N, D), f32]:
    return rms_norm(x, w, eps=1e-6)

@func
def bench_swiglu(a: Tensor[(N, D), f32], b: Tensor[(N, D), f32]) -> Tensor[(N, D), f32]:
    return silu(a) * b
"""

SHAPES = {"small": (32, 256), "large": (512, 2048)}


def eager_rmsnorm(x, w):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)).to(x.dtype) * w


def eager_swiglu(a, b):
    return torch.nn.functional.silu(a) * b


def median_ms(fn, args, runs):
    fn(*args)  # warm-up
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn(*args)
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--backend", choices=["native", "evaluator"], default="native")
    args = parser.parse_args()

    m = tf.load(SOURCE)
    k_norm, k_glu = m.compile("bench_rmsnorm", args.backend), m.compile("bench_swiglu", args.backend)
    ops = {"rmsnorm": (tf.register(k_norm), eager_rmsnorm),
           "silu*mul": (tf.register(k_glu), eager_swiglu)}

    print(f"tilefoundry backend: {k_norm.backend} (requested {args.backend}); "
          f"torch {torch.__version__}, {torch.get_num_threads()} threads; median of {args.runs}\n")
    print("| op | shape | eager ms | tilefoundry ms | ratio | max abs err |")
    print("|---|---|---:|---:|---:|---:|")
    g = torch.Generator().manual_seed(0)
    for op_name, (tf_op, eager_op) in ops.items():
        for label, (n, d) in SHAPES.items():
            if op_name == "rmsnorm":
                inputs = (torch.randn(n, d, generator=g), torch.randn(d, generator=g))
            else:
                inputs = (torch.randn(n, d, generator=g), torch.randn(n, d, generator=g))
            err = (tf_op(*inputs) - eager_op(*inputs)).abs().max().item()
            t_eager = median_ms(eager_op, inputs, args.runs)
            t_tf = median_ms(tf_op, inputs, args.runs)
            print(f"| {op_name} | {label} {n}x{d} | {t_eager:.3f} | {t_tf:.3f} | "
                  f"{t_tf / t_eager:.2f} | {err:.1e} |")


if __name__ == "__main__":
    main()
