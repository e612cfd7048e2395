from tilefoundry.dsl import *

# Two ranks ("device" level) along one tensor-parallel axis.
TARGET = Target("cpu", topology=(("device", 2), ("cta", 1)))
dev = Mesh(topology="device", shape=(2,), axes=("tp",))
# Symbolic extents: one kernel for every size; each rank binds them from its
# shares (F from w1's columns: the share's extent times the 2 ranks).
B = DimVar("B", 1, 65536)
D = DimVar("D", 1, 65536)
F = DimVar("F", 1, 65536)

@func
def mlp(x: Tensor[(B, D), f32, ShardLayout(dev, (Broadcast(),))],
        w1: Tensor[(D, F), f32, ShardLayout(dev, (Split(axis=1),))],
        w2: Tensor[(F, D), f32, ShardLayout(dev, (Split(axis=0),))],
        g: Tensor[(D,), f32, ShardLayout(dev, (Broadcast(),))]) -> Tensor[(B, D), f32, ShardLayout(dev, (Broadcast(),))]:
    y = silu(x @ w1) @ w2                                   # Partial("sum") over tp
    y = reshard(y, layout=ShardLayout(dev, (Broadcast(),)))  # one all-reduce
    return rms_norm(y + x, g, eps=1e-6)

@func
def plain(x: Tensor[(B, D), f32], w1: Tensor[(D, F), f32], w2: Tensor[(F, D), f32],
          g: Tensor[(D,), f32]) -> Tensor[(B, D), f32]:
    return rms_norm(silu(x @ w1) @ w2 + x, g, eps=1e-6)
