"""A small Llama-style block whose RMSNorm and SwiGLU gate are TileFoundry
torch ops, checked against the same block in eager PyTorch.

    x -> RMSNorm -> (W_gate, W_up) -> silu(gate) * up -> W_down -> + x -> RMSNorm

Prints the max abs error and median timings; exits 1 when the error exceeds
the tolerance. Run with PYTHONPATH=torch_ext/python (the Makefile sets it).
"""
import statistics
import sys
import time
from pathlib import Path

import torch

import tilefoundry as tf

HERE = Path(__file__).resolve().parent
TOKENS, HIDDEN, FFN = 32, 256, 688
EPS = 1e-6
TOLERANCE = 1e-4


def eager_rmsnorm(x, w):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS)).to(x.dtype) * w


def eager_swiglu(gate, up):
    return torch.nn.functional.silu(gate) * up


class LlamaBlock(torch.nn.Module):
    def __init__(self, rmsnorm, swiglu):
        super().__init__()
        g = torch.Generator().manual_seed(0)
        self.norm1 = torch.nn.Parameter(1 + 0.1 * torch.randn(HIDDEN, generator=g))
        self.norm2 = torch.nn.Parameter(1 + 0.1 * torch.randn(HIDDEN, generator=g))
        self.w_gate = torch.nn.Parameter(torch.randn(HIDDEN, FFN, generator=g) / HIDDEN ** 0.5)
        self.w_up = torch.nn.Parameter(torch.randn(HIDDEN, FFN, generator=g) / HIDDEN ** 0.5)
        self.w_down = torch.nn.Parameter(torch.randn(FFN, HIDDEN, generator=g) / FFN ** 0.5)
        self.rmsnorm, self.swiglu = rmsnorm, swiglu

    @torch.no_grad()
    def forward(self, x):
        h = self.rmsnorm(x, self.norm1)
        mlp = self.swiglu(h @ self.w_gate, h @ self.w_up) @ self.w_down
        return self.rmsnorm(x + mlp, self.norm2)


def median_ms(fn, x, runs=7):
    fn(x)  # warm-up (first call may compile)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn(x)
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def main():
    m = tf.load(str(HERE / "llama_kernels.py"))
    kernels = {name: m.compile(name) for name in ("llama_rmsnorm", "llama_swiglu")}
    rmsnorm = tf.register(kernels["llama_rmsnorm"])
    swiglu = tf.register(kernels["llama_swiglu"])

    tf_block = LlamaBlock(rmsnorm, swiglu)
    eager_block = LlamaBlock(eager_rmsnorm, eager_swiglu)
    x = torch.randn(TOKENS, HIDDEN, generator=torch.Generator().manual_seed(1))
    err = (tf_block(x) - eager_block(x)).abs().max().item()

    backend = kernels["llama_rmsnorm"].backend
    print(f"llama block [{TOKENS}x{HIDDEN}, ffn {FFN}], tilefoundry backend: {backend}")
    print(f"max abs error vs eager: {err:.3e} (tolerance {TOLERANCE:.0e})")
    t_tf, t_eager = median_ms(tf_block, x), median_ms(eager_block, x)
    print(f"median time: tilefoundry {t_tf:.3f} ms, eager {t_eager:.3f} ms, "
          f"ratio {t_tf / t_eager:.2f}x")
    if not err <= TOLERANCE:
        print("FAIL: error above tolerance", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
