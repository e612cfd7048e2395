"""One rank of a torch.distributed (Gloo) job running sharded kernels; the
processes are started by test_distributed.py.

    python dist_worker.py SCENARIO RANK WORLD RENDEZVOUS_FILE OUT_DIR

Each scenario computes on this rank, checks what it can against plain
PyTorch on the logical tensors (every rank builds them from one seed), and
writes OUT_DIR/rank<R>.json: {"ok": bool, "error": str, ...}.
"""
import datetime
import json
import os
import sys
import time
import traceback

import torch
import torch.distributed as dist

import tilefoundry as tf  # the package under test: the parent's PYTHONPATH / install
from tilefoundry import distributed as tfd

HEADER = """from tilefoundry.dsl import *
TARGET = Target("cpu", topology=(("device", {world}), ("cta", 1)))
d1 = Mesh(topology="device", shape=({world},), axes=("tp",))
"""
MESH22 = 'd22 = Mesh(topology="device", shape=(2, 2), axes=("dp", "tp"))\n'

# The tensor-parallel block over symbolic extents: one kernel for every size.
MLP = """
B = DimVar("B", 1, 1 << 16)
D = DimVar("D", 1, 1 << 16)
F = DimVar("F", 1, 1 << 16)

@func
def mlp(x: Tensor[(B, D), f32, ShardLayout(d1, (Broadcast(),))],
        w1: Tensor[(D, F), f32, ShardLayout(d1, (Split(axis=1),))],
        w2: Tensor[(F, D), f32, ShardLayout(d1, (Split(axis=0),))],
        g: Tensor[(D,), f32, ShardLayout(d1, (Broadcast(),))]) -> Tensor[(B, D), f32, ShardLayout(d1, (Broadcast(),))]:
    y = silu(x @ w1) @ w2
    y = reshard(y, layout=ShardLayout(d1, (Broadcast(),)))
    return rms_norm(y + x, g, eps=1e-6)

@func
def partial_out(x: Tensor[(4, 8), f32, ShardLayout(d1, (Split(axis=1),))],
                w: Tensor[(8, 8), f32, ShardLayout(d1, (Split(axis=0),))]) -> Tensor[(4, 8), f32, ShardLayout(d1, (Partial("sum"),))]:
    return x @ w

@func
def plain(x: Tensor[(4, 8), f32]) -> Tensor[(4, 8), f32]:
    return x * 2.0
"""

LOOP = """
@func
def complete(p: Tensor[(8, 12), f32, ShardLayout(d1, (Partial("sum"),))]) -> Tensor[(8, 12), f32, ShardLayout(d1, (Broadcast(),))]:
    return reshard(p, layout=ShardLayout(d1, (Broadcast(),)))

@func
def looped(x: Tensor[(8, 12), f32, ShardLayout(d1, (Split(axis=1),))],
           w: Tensor[(12, 12), f32, ShardLayout(d1, (Split(axis=0),))]) -> Tensor[(8, 12), f32, ShardLayout(d1, (Split(axis=1),))]:
    h = x
    for i in range(3):
        b = complete(h @ w) * 0.5
        h = reshard(b, layout=ShardLayout(d1, (Split(axis=1),)))
    return h
"""

# Every Reshard direction on one mesh axis, and two that gather.
DIRECTIONS = [('Partial("sum")', "Broadcast()"), ('Partial("max")', "Broadcast()"), ('Partial("min")', "Broadcast()"),
              ('Partial("sum")', "Split(axis=0)"), ('Partial("max")', "Split(axis=1)"),
              ("Split(axis=0)", "Broadcast()"), ("Split(axis=1)", "Broadcast()"),
              ("Split(axis=0)", "Split(axis=1)"), ("Split(axis=1)", "Split(axis=0)"),
              ("Broadcast()", "Split(axis=1)"), ("Broadcast()", 'Partial("sum")'),
              ('Partial("sum")', 'Partial("max")')]
DIRECTIONS22 = [('Split(axis=0), Partial("sum")', "Split(axis=0), Broadcast()"),
                ("Split(axis=0), Split(axis=1)", "Broadcast(), Broadcast()"),
                ("Split(axis=0), Split(axis=1)", "Split(axis=1), Split(axis=0)"),
                ('Partial("sum"), Split(axis=1)', "Split(axis=0), Split(axis=1)"),
                ("Split(axis=0), Split(axis=0)", "Broadcast(), Split(axis=1)"),
                ("Split(axis=0), Split(axis=0)", "Split(axis=0), Broadcast()"),
                ('Partial("sum"), Partial("sum")', "Broadcast(), Broadcast()"),
                ("Split(axis=0), Broadcast()", "Split(axis=0), Split(axis=0)"),
                ("Split(axis=0), Split(axis=0)", "Broadcast(), Split(axis=0)")]


def reshard_source(mesh, directions):
    out = ""
    for n, (a, b) in enumerate(directions):
        out += (f"\n@func\ndef r{n}(x: Tensor[(8, 12), f32, ShardLayout({mesh}, ({a},))]) -> "
                f"Tensor[(8, 12), f32, ShardLayout({mesh}, ({b},))]:\n"
                f"    return reshard(x, layout=ShardLayout({mesh}, ({b},)))\n")
    return out


IDENTITY = {"sum": 0.0, "max": float("-inf"), "min": float("inf")}


def share(value, attrs, sizes, coords):
    """This rank's share of a logical tensor: blocks of split axes (in mesh
    order), the value on share 0 of Partial axes and the identity elsewhere."""
    t = value
    for m, (kind, axis, red) in enumerate(attrs):
        if kind == 1:
            t = t.chunk(sizes[m], dim=axis)[coords[m]]
    t = t.clone()
    partial = [m for m, a in enumerate(attrs) if a[0] == 2]
    if partial and any(coords[m] != 0 for m in partial):
        t.fill_(IDENTITY[attrs[partial[0]][2]])
    return t


def logical(local, attrs, groups, sizes):
    """The logical tensor from every rank's share (collectives of the test's own)."""
    t = local.contiguous()
    for m in reversed(range(len(attrs))):
        kind, axis, red = attrs[m]
        if kind == 1:
            parts = [torch.empty_like(t) for _ in range(sizes[m])]
            dist.all_gather(parts, t, group=groups[m])
            t = torch.cat(parts, dim=axis)
        elif kind == 2:
            t = t.clone()
            op = {"sum": dist.ReduceOp.SUM, "max": dist.ReduceOp.MAX, "min": dist.ReduceOp.MIN}[red]
            dist.all_reduce(t, op=op, group=groups[m])
    return t


def check_reshards(m, names, groups, coords, sizes, result):
    x = torch.Generator().manual_seed(11)
    x = torch.randn(8, 12, generator=x)
    worst = 0.0
    for name in names:
        k = m.compile(name)
        sig = tfd.signature_of(k)
        y = k(share(x, sig.inputs[0], sizes, coords), mesh=groups)
        got = logical(y, sig.outputs[0], groups, sizes)
        worst = max(worst, (got - x).abs().max().item())
    result["worst"] = worst
    result["ok"] = worst < 1e-5


def errors_of(*calls):
    """The message of the TypeError / ValueError each call raises ("no error" if none)."""
    errors = []
    for call in calls:
        try:
            call()
            errors.append("no error")
        except (TypeError, ValueError) as e:
            errors.append(str(e))
    return errors


def mlp_reference(x, w1, w2, gamma):
    h = torch.nn.functional.silu(x @ w1) @ w2 + x
    return h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6) * gamma


def scenario_mlp(rank, world, result):
    m = tf.load(HEADER.format(world=world) + MLP)
    k = m.compile("mlp")
    g = torch.Generator().manual_seed(5)
    x, w1, w2, gamma = (torch.randn(4, 8, generator=g), torch.randn(8, 16, generator=g),
                        torch.randn(16, 8, generator=g), torch.randn(8, generator=g))
    pg = dist.group.WORLD
    import gc
    gc.disable()  # a communicator left in a reference cycle stays visible below
    y = k(x, w1.chunk(world, dim=1)[rank], w2.chunk(world, dim=0)[rank], gamma, mesh=pg)
    # No communicator keeps a process group alive after the call (one that did
    # would outlive destroy_process_group and abort the process at exit).
    result["groups_kept"] = sum(1 for o in gc.get_objects()
                                if isinstance(o, tfd.TorchCommunicator) and o.groups is not None)
    gc.enable()
    result["backend"] = k.backend  # native segments between the collectives
    result["maxdiff"] = (y - mlp_reference(x, w1, w2, gamma)).abs().max().item()
    # The same kernel at other extents (B, D, F bound from the shares).
    x2, w12, w22, gamma2 = (torch.randn(3, 12, generator=g), torch.randn(12, 8 * world, generator=g),
                            torch.randn(8 * world, 12, generator=g), torch.randn(12, generator=g))
    y2 = k(x2, w12.chunk(world, dim=1)[rank], w22.chunk(world, dim=0)[rank], gamma2, mesh=pg)
    result["maxdiff_other_size"] = (y2 - mlp_reference(x2, w12, w22, gamma2)).abs().max().item()
    # Collectives per call: the agreement check's all-gather and the block's
    # all-reduce; with check_calls=False the all-reduce alone.
    counts = []
    for check in (True, False):
        before = tfd.stats()
        y3 = k(x2, w12.chunk(world, dim=1)[rank], w22.chunk(world, dim=0)[rank], gamma2, mesh=pg, check_calls=check)
        after = tfd.stats()
        counts.append((after["collectives"] - before["collectives"], after["bytes"] - before["bytes"]))
        result["maxdiff_other_size"] = max(result["maxdiff_other_size"], (y3 - y2).abs().max().item())
    result["collectives_checked"], result["collectives_trusted"] = counts
    every = [torch.empty_like(y) for _ in range(world)]
    dist.all_gather(every, y)
    result["ranks_agree"] = all(torch.equal(e, every[0]) for e in every)
    # A Partial result comes back as this rank's share, not completed.
    p = m.compile("partial_out")
    wp = torch.randn(8, 8, generator=g)
    share_ = p(x.chunk(world, dim=1)[rank], wp.chunk(world, dim=0)[rank], mesh=pg)
    total = share_.clone()
    dist.all_reduce(total)
    result["partial_diff"] = (total - x @ wp).abs().max().item()
    result["partial_is_share"] = not torch.allclose(share_, x @ wp, atol=1e-3)
    # Misuse: a kernel without a mesh, a mesh of the wrong size.
    result["errors"] = errors_of(lambda: m.compile("plain")(x, mesh=pg),
                                 lambda: k(x, w1, w2, gamma, mesh=[pg, pg]))
    result["ok"] = (result["maxdiff"] < 1e-4 and result["maxdiff_other_size"] < 1e-4 and result["ranks_agree"] and result["partial_diff"] < 1e-4
                    and result["partial_is_share"] and result["groups_kept"] == 0)


def scenario_reshard(rank, world, result):
    m = tf.load(HEADER.format(world=world) + reshard_source("d1", DIRECTIONS))
    check_reshards(m, [f"r{n}" for n in range(len(DIRECTIONS))], [dist.group.WORLD], [rank], [world], result)


def scenario_mesh22(rank, world, result):
    assert world == 4
    m = tf.load(HEADER.format(world=world) + MESH22 + reshard_source("d22", DIRECTIONS22))
    # Axis "dp" groups ranks with equal tp coordinate; "tp" those with equal dp.
    coords = [rank // 2, rank % 2]
    dp_groups = [dist.new_group([0, 2]), dist.new_group([1, 3])]
    tp_groups = [dist.new_group([0, 1]), dist.new_group([2, 3])]
    groups = [dp_groups[coords[1]], tp_groups[coords[0]]]
    check_reshards(m, [f"r{n}" for n in range(len(DIRECTIONS22))], groups, coords, [2, 2], result)


def scenario_loop(rank, world, result):
    m = tf.load(HEADER.format(world=world) + LOOP)
    k = m.compile("looped")
    g = torch.Generator().manual_seed(7)
    x, w = torch.randn(8, 12, generator=g), torch.randn(12, 12, generator=g)
    y = k(x.chunk(world, dim=1)[rank], w.chunk(world, dim=0)[rank], mesh=dist.group.WORLD)
    want = x
    for _ in range(3):
        want = (want @ w) * 0.5
    result["maxdiff"] = (y - want.chunk(world, dim=1)[rank]).abs().max().item()
    result["ok"] = result["maxdiff"] < 1e-3


def scenario_fail(rank, world, result):
    """Rank 1 passes a share of the wrong shape and fails before any
    collective; rank 0 must get an error, not wait forever."""
    m = tf.load(HEADER.format(world=world) + MLP)
    k = m.compile("mlp")
    x, gamma = torch.randn(4, 8), torch.randn(8)
    rows = 9 if rank == 1 else 8
    t0 = time.time()
    try:
        k(x, torch.randn(8, 16 // world), torch.randn(rows, 8), gamma, mesh=dist.group.WORLD)
        result["error"] = "no error"
    except tf.TileFoundryError as e:
        result["error"] = str(e)
    result["seconds"] = time.time() - t0
    result["ok"] = result["error"] != "no error"
    if rank == 1:
        # Stay in the job (rather than closing the connection), so that rank 0's
        # error is its engine's timeout.
        time.sleep(3 * float(os.environ.get("TF_DIST_TIMEOUT", "60")))


def scenario_mismatch(rank, world, result):
    """Rank 1 calls a kernel of other shapes: without the agreement check the
    ranks' all-reduces would differ in size."""
    rows = 4 if rank == 0 else 6
    m = tf.load(HEADER.format(world=world) + MLP.replace("(4, 8)", f"({rows}, 8)"))
    k = m.compile("mlp")
    x, w1, w2, gamma = torch.randn(rows, 8), torch.randn(8, 16 // world), torch.randn(16 // world, 8), torch.randn(8)
    t0 = time.time()
    try:
        k(x, w1, w2, gamma, mesh=dist.group.WORLD)
        result["error"] = "no error"
    except tf.TileFoundryError as e:
        result["error"] = str(e)
    result["seconds"] = time.time() - t0
    result["ok"] = "do not make the same call" in result["error"]


def scenario_dtensor(rank, world, result):
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Partial, Replicate, Shard, distribute_tensor
    dm = init_device_mesh("cpu", (world,), mesh_dim_names=("tp",))
    m = tf.load(HEADER.format(world=world) + MLP)
    k = m.compile("mlp")
    g = torch.Generator().manual_seed(5)
    x, w1, w2, gamma = (torch.randn(4, 8, generator=g), torch.randn(8, 16, generator=g),
                        torch.randn(16, 8, generator=g), torch.randn(8, generator=g))
    xd, gd = distribute_tensor(x, dm, [Replicate()]), distribute_tensor(gamma, dm, [Replicate()])
    w1d, w2d = distribute_tensor(w1, dm, [Shard(1)]), distribute_tensor(w2, dm, [Shard(0)])
    y = k(xd, w1d, w2d, gd)
    result["is_dtensor"] = type(y).__name__ == "DTensor" and list(y.placements) == [Replicate()]
    # DTensor's own execution of the same block.
    h = torch.nn.functional.silu(xd @ w1d) @ w2d
    h = h.redistribute(dm, [Replicate()]) + xd
    ref = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6) * gd
    result["vs_dtensor"] = (y.full_tensor() - ref.full_tensor()).abs().max().item()
    result["vs_plain"] = (y.full_tensor() - mlp_reference(x, w1, w2, gamma)).abs().max().item()
    # A Partial result stays Partial.
    p = m.compile("partial_out")
    wp = torch.randn(8, 8, generator=g)
    pd = p(distribute_tensor(x, dm, [Shard(1)]), distribute_tensor(wp, dm, [Shard(0)]))
    result["partial_placement"] = str(pd.placements[0])
    result["partial_diff"] = (pd.full_tensor() - x @ wp).abs().max().item()
    result["errors"] = errors_of(lambda: k(distribute_tensor(x, dm, [Shard(0)]), w1d, w2d, gd),
                                 lambda: m.compile("plain")(xd),
                                 lambda: k(xd, w1, w2d, gd))
    result["ok"] = (result["is_dtensor"] and result["vs_dtensor"] < 1e-4 and result["vs_plain"] < 1e-4
                    and result["partial_diff"] < 1e-4 and isinstance(pd.placements[0], Partial))


def main():
    scenario, rank, world, rdv, out_dir = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
    timeout = datetime.timedelta(seconds=float(os.environ.get("TF_DIST_TIMEOUT", "60")))
    dist.init_process_group("gloo", init_method=f"file://{rdv}", rank=rank, world_size=world, timeout=timeout)
    torch.set_num_threads(1)
    result = {"ok": False, "error": ""}
    try:
        globals()[f"scenario_{scenario}"](rank, world, result)
    except Exception:  # noqa: BLE001 -- the test reads the traceback
        result["error"] = traceback.format_exc()
        result["ok"] = False
    with open(os.path.join(out_dir, f"rank{rank}.json"), "w") as f:
        json.dump(result, f)
    if scenario != "fail":
        dist.barrier()
    # What the scenario left in reference cycles (an exception's traceback
    # holds the frames that held DTensors and their DeviceMesh) is freed now,
    # while its process group exists; left to the collector at interpreter
    # shutdown, after destroy_process_group, it aborted the process
    # ("terminate called without an active exception", 1 run in 6 to 40).
    import gc
    gc.collect()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
