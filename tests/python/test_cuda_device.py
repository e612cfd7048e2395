"""torch.ops.tilefoundry.* on CUDA tensors: against torch's own CUDA ops and
the CPU op, with strided and offset inputs, out=, TorchScript,
torch.compile and CUDA graph capture. Needs a GPU, torch with CUDA and the
CUDA backend (`make test-cuda`); elsewhere every test skips, saying which
of them is missing."""
import pytest

torch = pytest.importorskip("torch")
import tilefoundry as tf  # noqa: E402

if not torch.cuda.is_available():
    pytest.skip("no CUDA device for torch here", allow_module_level=True)
if not tf.cuda_is_available():
    pytest.skip("the CUDA backend is unavailable: " + tf.cuda_unavailable_reason(), allow_module_level=True)

SRC = '''
from tilefoundry.dsl import *
N = DimVar("N", 1, 1 << 20)
D = DimVar("D", 1, 1 << 16)

@func
def rmsnorm(x: Tensor[(N, D), f32], w: Tensor[(D,), f32]) -> Tensor[(N, D), f32]:
    return rms_norm(x, w, eps=1e-6)

@func
def res_rmsnorm(x: Tensor[(N, D), bf16], r: Tensor[(N, D), bf16], w: Tensor[(D,), bf16]) -> tuple[Tensor[(N, D), bf16], Tensor[(N, D), bf16]]:
    h = x + r
    return h, rms_norm(h, w, eps=1e-6)

@func
def swiglu(a: Tensor[(N, D), f16], b: Tensor[(N, D), f16]) -> Tensor[(N, D), f16]:
    return silu(a) * b

@func
def smax(x: Tensor[(N, D), f32]) -> Tensor[(N, D), f32]:
    return softmax(x)

@func
def lnorm(x: Tensor[(N, D), f32], w: Tensor[(D,), f32], b: Tensor[(D,), f32]) -> Tensor[(N, D), f32]:
    return layer_norm(x, w, b, eps=1e-5)

@func
def idiv(a: Tensor[(N, D), i32], b: Tensor[(N, D), i32]) -> Tensor[(N, D), i32]:
    return a / b

@func
def conv(x: Tensor[(N, 8, 32, 32), f32], w: Tensor[(16, 4, 3, 3), f32], b: Tensor[(16,), f32]) -> Tensor[(N, 16, 16, 16), f32]:
    return conv2d(x, w, b, stride=2, padding=1, groups=2)

@func
def tiles(x: Tensor[(N, D), f32]) -> Tensor[(N,), f32]:
    acc = zeros((N,), f32)
    for i in tile(D, step=128):
        acc = acc * 0.5 + sum(x[:, i], axes=(1,), keepdim=False)
    return acc
'''

_ops = {}


def op(name):
    if name not in _ops:
        _ops[name] = tf.register(tf.Module(SRC).compile(name), name="cudadev_" + name)
    return _ops[name]


def rms_ref(x, w, eps=1e-6):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * w.float()).to(x.dtype)


CASES = {
    "rmsnorm": (lambda n, d: (torch.randn(n, d, device="cuda"), torch.rand(d, device="cuda")),
                lambda x, w: rms_ref(x, w)),
    "swiglu": (lambda n, d: (torch.randn(n, d, device="cuda", dtype=torch.float16),
                             torch.randn(n, d, device="cuda", dtype=torch.float16)),
               lambda a, b: torch.nn.functional.silu(a) * b),
    "smax": (lambda n, d: (torch.randn(n, d, device="cuda"),), lambda x: torch.softmax(x, -1)),
    "lnorm": (lambda n, d: (torch.randn(n, d, device="cuda"), torch.rand(d, device="cuda"),
                            torch.randn(d, device="cuda")),
              lambda x, w, b: torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, 1e-5)),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("shape", [(1, 7), (33, 256), (257, 4096), (4096, 1000)])
def test_matches_torch_cuda_and_the_cpu_op(name, shape):
    make, ref = CASES[name]
    args = make(*shape)
    got = op(name)(*args)
    assert got.is_cuda and got.device == args[0].device
    tol = dict(atol=2e-3, rtol=2e-3) if args[0].dtype == torch.float16 else dict(atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(got, ref(*args), **tol)
    torch.testing.assert_close(got.cpu(), op(name)(*[a.cpu() for a in args]), **tol)


def test_residual_rmsnorm_bf16_two_outputs():
    x, r = torch.randn(64, 512, device="cuda", dtype=torch.bfloat16), torch.randn(64, 512, device="cuda", dtype=torch.bfloat16)
    w = torch.rand(512, device="cuda", dtype=torch.bfloat16)
    h, y = op("res_rmsnorm")(x, r, w)
    torch.testing.assert_close(h, x + r)
    torch.testing.assert_close(y, rms_ref(x + r, w), atol=2e-2, rtol=2e-2)


def test_strided_and_offset_inputs():
    base = torch.randn(40, 300, device="cuda")
    x = base[3:35, 10:266]  # offset, row stride 300
    w = torch.rand(512, device="cuda")[::2]  # stride 2
    torch.testing.assert_close(op("rmsnorm")(x, w), rms_ref(x, w), atol=1e-5, rtol=1e-5)
    xt = torch.randn(256, 32, device="cuda").t()  # transposed
    torch.testing.assert_close(op("rmsnorm")(xt, w), rms_ref(xt, w), atol=1e-5, rtol=1e-5)


def test_out_variant_and_a_non_default_stream():
    x, w = torch.randn(128, 1024, device="cuda"), torch.rand(1024, device="cuda")
    out = torch.empty_like(x)
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        op("rmsnorm").out(x, w, out=out)
    s.synchronize()
    torch.testing.assert_close(out, rms_ref(x, w), atol=1e-5, rtol=1e-5)


def test_run_time_error_is_the_evaluators_and_writes_nothing():
    a = torch.full((4, 16), 7, dtype=torch.int32, device="cuda")
    b = torch.full((4, 16), 2, dtype=torch.int32, device="cuda")
    torch.testing.assert_close(op("idiv")(a, -b), torch.div(a, -b, rounding_mode="floor"))
    b[2, 3] = 0
    out = torch.full_like(a, -5)
    with pytest.raises(RuntimeError, match="division by zero"):
        op("idiv").out(a, b, out=out)
    assert bool((out == -5).all())


def test_torchscript_and_torch_compile():
    x, w = torch.randn(64, 512, device="cuda"), torch.rand(512, device="cuda")
    want = rms_ref(x, w)
    rms = op("rmsnorm")

    @torch.jit.script
    def scripted(x, w):
        return torch.ops.tilefoundry.cudadev_rmsnorm(x, w) * 2.0

    torch.testing.assert_close(scripted(x, w), want * 2.0, atol=1e-5, rtol=1e-5)
    compiled = torch.compile(lambda x, w: rms(x, w) + 1.0, fullgraph=True)
    torch.testing.assert_close(compiled(x, w), want + 1.0, atol=1e-5, rtol=1e-5)


def test_cuda_graph_capture_and_replay():
    x, w = torch.randn(256, 1024, device="cuda"), torch.rand(1024, device="cuda")
    rms = op("rmsnorm")
    rms(x, w)  # compile and load before capture
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        rms(x, w)
    torch.cuda.current_stream().wait_stream(s)
    with torch.cuda.graph(g):
        y = rms(x, w)
    x.copy_(torch.randn_like(x))
    g.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(y, rms_ref(x, w), atol=1e-5, rtol=1e-5)


def tiles_ref(x):
    acc = torch.zeros(x.shape[0], device=x.device)
    for t in x.split(128, dim=1):
        acc = acc * 0.5 + t.sum(1)
    return acc


def test_a_loop_runs_eagerly_and_in_a_cuda_graph():
    for n, d in [(1, 128), (40, 1024)]:
        x = torch.randn(n, d, device="cuda")
        torch.testing.assert_close(op("tiles")(x), tiles_ref(x), atol=1e-4, rtol=1e-5)
    x = torch.randn(64, 512, device="cuda")
    tiles = op("tiles")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        tiles(x)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = tiles(x)
    x.copy_(torch.randn_like(x))
    g.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(y, tiles_ref(x), atol=1e-4, rtol=1e-5)


def test_conv2d_matches_torch_cuda_and_the_cpu_op():
    torch.backends.cudnn.allow_tf32 = False  # the evaluator multiplies in full float
    x, w, b = torch.randn(3, 8, 32, 32, device="cuda"), torch.randn(16, 4, 3, 3, device="cuda"), torch.randn(16, device="cuda")
    got = op("conv")(x, w, b)
    want = torch.nn.functional.conv2d(x, w, b, stride=2, padding=1, groups=2)
    torch.testing.assert_close(got, want, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(got.cpu(), op("conv")(x.cpu(), w.cpu(), b.cpu()), atol=1e-4, rtol=1e-4)
