"""In-place results (@func(inplace=...)): the Kernel API, the torch op (a
mutating schema: eager, TorchScript, meta, autograd's refusal; torch.compile
and opcheck on torch 2.x) and what is refused."""
import numpy as np
import pytest
import torch

import tilefoundry as tf
from conftest import HERE, compile_on, unique_op

needs_opcheck = pytest.mark.skipif(not hasattr(torch.library, "opcheck"),
                                   reason="torch.library.opcheck needs torch >= 2.4")
needs_compile = pytest.mark.skipif(int(torch.__version__.split(".")[0]) < 2,
                                   reason="torch.compile needs torch 2.x")


@pytest.fixture(scope="module")
def kernels():
    return tf.load(str(HERE / "inplace_kernels.py"))


def appended(cache, new, pos):
    """torch's per-row write: index_copy_ into the flattened [B * L, ...] cache."""
    want = cache.clone()
    b, length, s = cache.shape[0], cache.shape[1], new.shape[1]
    rows = torch.cat([torch.arange(s) + i * length + int(p) for i, p in enumerate(pos)])
    want.view(b * length, *cache.shape[2:]).index_copy_(0, rows, new.reshape(b * s, *new.shape[2:]))
    return want


def sample(b=3, length=12, s=2, seed=0):
    g = torch.Generator().manual_seed(seed)
    cache = torch.randn(b, length, 2, 16, generator=g)
    new = torch.randn(b, s, 2, 16, generator=g)
    pos = torch.randint(0, length - s + 1, (b,), generator=g, dtype=torch.int32)
    return cache, new, pos


def test_the_kernel_says_which_input_each_output_is_written_into(kernels):
    assert kernels.compile("kv_append", backend="evaluator").inplace == [0]
    assert kernels.compile("k_and_score", backend="evaluator").inplace == [0, None]


def test_run_writes_the_callers_cache(kernels, backend):
    k = compile_on(kernels, "kv_append", backend)
    cache, new, pos = sample()
    want, ptr = appended(cache, new, pos), cache.data_ptr()
    k.run([cache, new, pos], [cache])
    assert cache.data_ptr() == ptr
    assert torch.equal(cache, want)


def test_calling_returns_the_input_itself_written(kernels, backend):
    k = compile_on(kernels, "k_and_score", backend)
    cache, new, _ = sample(s=1)
    cache, new = cache.bfloat16(), new.bfloat16()
    pos = torch.tensor([0, 5, 11])
    want = appended(cache, new, pos)
    got, score = k(cache, new, pos)
    assert got is cache and torch.equal(cache, want)
    torch.testing.assert_close(score, (new.float() ** 2).sum(3, keepdim=True).bfloat16())
    arr = np.zeros((4, 8), np.float32) + 1.5  # numpy: the array object comes back
    s = compile_on(kernels, "scale_", backend)
    assert s(arr) is arr and (arr == 3.0).all()


def test_dlpack_call_hands_out_a_view_of_the_input(kernels):
    k = kernels.compile("scale_")
    arr = np.arange(16, dtype=np.float32).reshape(2, 8)
    out = np.from_dlpack(k.call_dlpack(arr))
    assert np.shares_memory(out, arr)
    assert (arr == np.arange(16).reshape(2, 8) * 2).all()


def test_torch_op_mutates_and_returns_only_its_fresh_results(kernels):
    op = tf.register(kernels.compile("kv_append"), unique_op("kv_append"))
    assert "(Tensor(a!) cache, Tensor new, Tensor pos) -> ()" in str(op.default._schema)
    assert "out" not in op.overloads()
    cache, new, pos = sample()
    want, version = appended(cache, new, pos), cache._version
    assert op(cache, new, pos) is None
    assert torch.equal(cache, want)
    assert cache._version > version, "autograd must see the write"
    mixed = tf.register(kernels.compile("k_and_score"), unique_op("k_and_score"))
    assert str(mixed.default._schema).endswith("(Tensor(a!) k, Tensor new, Tensor pos) -> Tensor")
    k16, n16 = cache.bfloat16(), new[:, :1].bfloat16()
    score = mixed(k16, n16, pos.long())
    assert score.shape == (3, 1, 2, 1)


def test_a_strided_cache_view_is_written_through(kernels):
    op = tf.register(kernels.compile("kv_append"), unique_op("kv_append_view"))
    _, new, pos = sample()
    big = torch.randn(3, 12, 2, 32)
    view = big[..., 8:24]  # not contiguous: computed, then copied into the view
    want = appended(view, new, pos)
    untouched = big[..., :8].clone()
    op(view, new, pos)
    assert torch.equal(view, want) and torch.equal(big[..., :8], untouched)


def test_bad_calls_are_refused_and_write_nothing(kernels):
    op = tf.register(kernels.compile("kv_append"), unique_op("kv_append_bad"))
    cache, new, pos = sample()
    before = cache.clone()
    with pytest.raises(RuntimeError, match=r"'cache_scatter': pos\[1\] = 11 puts the window \[11, 13\)"):
        op(cache, new, torch.tensor([0, 11, 0], dtype=torch.int32))
    with pytest.raises(RuntimeError, match="shares memory with input #1 \\(new\\); an in-place tensor must not"):
        op(cache, cache[:, :2], pos)
    assert torch.equal(cache, before)
    k = kernels.compile("kv_append")
    with pytest.raises(tf.TileFoundryError, match="must be that tensor itself"):
        k.run([cache, new, pos], [cache.clone()])


def test_autograd_refuses_a_leaf_and_a_backward(kernels):
    op = tf.register(kernels.compile("kv_append"), unique_op("kv_append_grad"))
    cache, new, pos = sample()
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        op(cache.requires_grad_(), new, pos)
    with pytest.raises(tf.TileFoundryError, match="writes a result in place of an input"):
        tf.register(kernels.compile("scale_"), unique_op("scale_grad"), backward=kernels.compile("scale_"))


def test_torchscript_and_meta(kernels):
    name = unique_op("kv_append_ts")
    op = tf.register(kernels.compile("kv_append"), name)
    unit = torch.jit.CompilationUnit(
        f"def step(c, n, p):\n    torch.ops.tilefoundry.{name}(c, n, p)\n    return c\n")
    cache, new, pos = sample()
    want = appended(cache, new, pos)
    assert torch.equal(unit.step(cache, new, pos), want)
    assert f"tilefoundry::{name}" in str(unit.step.graph)
    meta = [t.to("meta") for t in sample()]
    assert op(*meta) is None
    mixed = tf.register(kernels.compile("k_and_score"), unique_op("k_and_score_meta"))
    out = mixed(torch.empty(2, 4, 2, 16, dtype=torch.bfloat16, device="meta"),
                torch.empty(2, 1, 2, 16, dtype=torch.bfloat16, device="meta"),
                torch.empty(2, dtype=torch.int64, device="meta"))
    assert out.shape == (2, 1, 2, 1) and out.device.type == "meta"


def test_decorated_function_with_inplace(tmp_path):
    path = tmp_path / "deco_inplace.py"
    name = unique_op("deco_scale")
    path.write_text(
        "import tilefoundry as tf\nfrom tilefoundry.dsl import *\nN = DimVar('N', 1, 1024)\n\n"
        f"@tf.func(name='{name}', inplace='x')\n"
        "def halve(x: Tensor[(N, 4), f32]) -> Tensor[(N, 4), f32]:\n    return x * 0.5\n")
    import importlib.util
    spec = importlib.util.spec_from_file_location("deco_inplace", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    x = torch.full((3, 4), 8.0)
    assert mod.halve(x) is None and (x == 4.0).all()


@needs_compile
def test_torch_compile_sees_the_mutation(kernels):
    name = unique_op("kv_append_compiled")
    tf.register(kernels.compile("kv_append"), name)
    op = getattr(torch.ops.tilefoundry, name)

    def step(cache, new, pos):
        op(cache, new, pos)
        return cache.sum(dim=(2, 3))

    compiled = torch.compile(step, fullgraph=True)
    cache, new, pos = sample()
    want = appended(cache, new, pos)
    got = compiled(cache, new, pos)
    assert torch.equal(cache, want)
    torch.testing.assert_close(got, want.sum(dim=(2, 3)))


@needs_opcheck
@pytest.mark.parametrize("name", ["kv_append", "k_and_score", "scale_"])
def test_opcheck(kernels, name):
    op = tf.register(kernels.compile(name, backend="evaluator"), unique_op(f"oc_{name}"))
    cache, new, pos = sample(s=1)
    args = {"kv_append": (cache, new, pos),
            "k_and_score": (cache.bfloat16(), new.bfloat16(), pos.long()),
            "scale_": (torch.randn(5, 8),)}[name]
    results = torch.library.opcheck(op.default, args, test_utils=(
        "test_schema", "test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic"))
    assert results and set(results.values()) == {"SUCCESS"}, results
