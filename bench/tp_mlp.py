"""make bench: the tensor-parallel MLP block on 2 ranks (torch.distributed,
Gloo, one process per rank) — TileFoundry's sharded kernel called with
DTensors against DTensor's own execution of the same block, in one job.

    python tp_mlp.py [--quick]      # starts the ranks; prints one JSON line

Reported per shape: the median time of a steady call on each side (rank 0,
both ranks one thread; ours also with check_calls=False), the bytes TileFoundry's collectives moved per call
(what each rank passed to them) against the minimum the types require (one
all-reduce of the [B, D] partial product), and the collectives DTensor
issued per call (torch's CommDebugMode).
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

SOURCE = """from tilefoundry.dsl import *
TARGET = Target("cpu", topology=(("device", 2), ("cta", 1)))
dev = Mesh(topology="device", shape=(2,), axes=("tp",))

@func
def mlp(x: Tensor[({B}, {D}), f32, ShardLayout(dev, (Broadcast(),))],
        w1: Tensor[({D}, {F}), f32, ShardLayout(dev, (Split(axis=1),))],
        w2: Tensor[({F}, {D}), f32, ShardLayout(dev, (Split(axis=0),))],
        g: Tensor[({D},), f32, ShardLayout(dev, (Broadcast(),))]) -> Tensor[({B}, {D}), f32, ShardLayout(dev, (Broadcast(),))]:
    y = silu(x @ w1) @ w2
    y = reshard(y, layout=ShardLayout(dev, (Broadcast(),)))
    return rms_norm(y + x, g, eps=1e-6)
"""
SHAPES = {"decode (B=8, D=1024, F=4096)": (8, 1024, 4096), "prefill (B=256, D=1024, F=4096)": (256, 1024, 4096)}
QUICK_SHAPES = {"tiny (B=4, D=8, F=16)": (4, 8, 16)}


def median_ms(fn, runs):
    fn()
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e3


def rank_main(rank, rdv, quick):
    import gc
    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=f"file://{rdv}", rank=rank, world_size=2)
    torch.set_num_threads(1)
    rows = measure(quick)
    if rank == 0:
        print(json.dumps({"torch": torch.__version__, "rows": rows}))
    dist.barrier()
    # The DTensors, the mesh and their reference cycles are freed while the
    # process group exists: a Gloo worker thread that drops a finished
    # collective's Python-owned tensors during interpreter shutdown aborts
    # the process ("terminate called without an active exception").
    gc.collect()
    dist.destroy_process_group()


def measure(quick):
    """Every DTensor and the mesh live in this frame only (see rank_main)."""
    import torch
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Replicate, Shard, distribute_tensor
    from torch.distributed.tensor.debug import CommDebugMode
    import tilefoundry as tf
    from tilefoundry import distributed as tfd

    dm = init_device_mesh("cpu", (2,), mesh_dim_names=("tp",))
    runs = 3 if quick else 20
    rows = {}
    for label, (b, d, f) in (QUICK_SHAPES if quick else SHAPES).items():
        k = tf.load(SOURCE.format(B=b, D=d, F=f)).compile("mlp")
        g = torch.Generator().manual_seed(0)
        x, w1, w2, gamma = (torch.randn(b, d, generator=g), torch.randn(d, f, generator=g) / d ** 0.5,
                            torch.randn(f, d, generator=g) / f ** 0.5, torch.randn(d, generator=g))
        xd, gd = distribute_tensor(x, dm, [Replicate()]), distribute_tensor(gamma, dm, [Replicate()])
        w1d, w2d = distribute_tensor(w1, dm, [Shard(1)]), distribute_tensor(w2, dm, [Shard(0)])

        def dtensor_block():
            h = torch.nn.functional.silu(xd @ w1d) @ w2d
            h = h.redistribute(dm, [Replicate()]) + xd
            return h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6) * gd

        ours = lambda: k(xd, w1d, w2d, gd)  # noqa: E731
        err = (ours().full_tensor() - dtensor_block().full_tensor()).abs().max().item()
        before = tfd.stats()["bytes"]
        t_ours = median_ms(ours, runs)
        calls = runs + 1
        bytes_ours = (tfd.stats()["bytes"] - before) / calls
        before = tfd.stats()["bytes"]
        t_trusted = median_ms(lambda: k(xd, w1d, w2d, gd, check_calls=False), runs)
        bytes_trusted = (tfd.stats()["bytes"] - before) / calls
        t_dtensor = median_ms(dtensor_block, runs)
        with CommDebugMode() as cm:
            dtensor_block()
        rows[label] = {"tf_ms": t_ours, "tf_trusted_ms": t_trusted, "dtensor_ms": t_dtensor, "tf_bytes": bytes_ours,
                       "tf_trusted_bytes": bytes_trusted, "min_bytes": b * d * 4,
                       "dtensor_collectives": cm.get_total_counts(), "max_diff": err}
    return rows


def main():
    quick = "--quick" in sys.argv
    if "--rank" in sys.argv:
        i = sys.argv.index("--rank")
        return rank_main(int(sys.argv[i + 1]), sys.argv[i + 2], quick)
    with tempfile.TemporaryDirectory() as tmp:
        rdv = os.path.join(tmp, "rendezvous")
        env = dict(os.environ, OMP_NUM_THREADS="1")
        cmd = [sys.executable, __file__] + (["--quick"] if quick else [])
        procs = [subprocess.Popen(cmd + ["--rank", str(r), rdv], env=env, stdout=subprocess.PIPE, text=True)
                 for r in range(2)]
        outs = [p.communicate(timeout=900)[0] for p in procs]
        if any(p.returncode != 0 for p in procs):
            sys.exit(f"tp_mlp: a rank failed ({[p.returncode for p in procs]})")
        print(outs[0].strip().splitlines()[-1])


if __name__ == "__main__":
    main()
