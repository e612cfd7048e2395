"""The reference for bench/gemm_libs.cc: torch 2.x's own oneDNN (through
mkldnn_linear, as bench/bench.py measures it) on the same f32 shapes, 1 and 2
threads, GFLOP/s medians. Run with a torch 2.x, e.g. the venv of
`make test-torch2`:  build-torch2/venv/bin/python bench/gemm_torch_onednn.py
"""
import sys
import time

import torch

SHAPES = [(64, 64, 64), (256, 256, 256), (1024, 1024, 1024), (1, 4096, 4096), (2, 4096, 4096),
          (4, 4096, 4096), (8, 4096, 4096), (16, 4096, 4096), (16, 16, 16), (32, 32, 32),
          (128, 128, 128), (512, 512, 512), (4096, 256, 256), (64, 256, 2048), (1, 512, 256)]


def median_s(fn, min_s=0.3):
    fn()
    times, total = [], 0.0
    while len(times) < 5 or (total < min_s and len(times) < 2000):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
        total += times[-1]
    return sorted(times)[len(times) // 2]


def main():
    max_threads = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    print(f"torch {torch.__version__}; {'m x n x k':<16} thr  onednn  torch.mm  (GFLOP/s, median)")
    g = torch.Generator().manual_seed(1)
    for m, n, k in SHAPES:
        a, b = torch.rand(m, k, generator=g), torch.rand(k, n, generator=g)
        am, btm = a.to_mkldnn(), b.t().contiguous().to_mkldnn()  # mkldnn_linear takes [out, in] weights
        for t in range(1, max_threads + 1):
            torch.set_num_threads(t)
            flops = 2.0 * m * n * k
            dnnl = flops / median_s(lambda: torch._C._nn.mkldnn_linear(am, btm, None)) / 1e9
            mm = flops / median_s(lambda: torch.mm(a, b)) / 1e9
            print(f"{f'{m}x{n}x{k}':<16} {t:3d} {dnnl:7.1f} {mm:9.1f}", flush=True)


if __name__ == "__main__":
    main()
