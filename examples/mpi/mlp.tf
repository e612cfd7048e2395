from tilefoundry.dsl import *

# Two ranks ("device" level) along one tensor-parallel axis.
TARGET = Target("cpu", topology=(("device", 2), ("cta", 1)))
dev = Mesh(topology="device", shape=(2,), axes=("tp",))

@func
def mlp(x: Tensor[(4, 8), f32, ShardLayout(dev, (Broadcast(),))],
        w1: Tensor[(8, 16), f32, ShardLayout(dev, (Split(axis=1),))],
        w2: Tensor[(16, 8), f32, ShardLayout(dev, (Split(axis=0),))],
        g: Tensor[(8,), f32, ShardLayout(dev, (Broadcast(),))]) -> Tensor[(4, 8), f32, ShardLayout(dev, (Broadcast(),))]:
    y = silu(x @ w1) @ w2                                   # Partial("sum") over tp
    y = reshard(y, layout=ShardLayout(dev, (Broadcast(),)))  # one all-reduce
    return rms_norm(y + x, g, eps=1e-6)

@func
def plain(x: Tensor[(4, 8), f32], w1: Tensor[(8, 16), f32], w2: Tensor[(16, 8), f32],
          g: Tensor[(8,), f32]) -> Tensor[(4, 8), f32]:
    return rms_norm(silu(x @ w1) @ w2 + x, g, eps=1e-6)
