"""Outputs of a torch op come from TileFoundry's caching pool when they are
128 KiB or more (tilefoundry.h, "output memory"): a freed output's block is
reused by the next call of its size class, so a model's steady loop touches
warm pages; large blocks are 2 MiB-aligned mappings advised for transparent
huge pages (TF_HUGE_PAGES=0 turns that off). Small outputs come from torch's
allocator. Either way the tensor is an ordinary, resizable CPU tensor with
the right values."""
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import tilefoundry as tf
from conftest import KERNELS, compile_on, subprocess_env, swiglu_ref, unique_op

HUGE = 2 << 20
MIB = 1 << 20
THP = Path("/sys/kernel/mm/transparent_hugepage/enabled")


@pytest.fixture(scope="module")
def swiglu(module, backend):
    return tf.register(compile_on(module, "swiglu", backend), unique_op("pool_swiglu"))


@pytest.fixture(autouse=True)
def generous_limit():
    tf.set_memory_cache_limit(256 * MIB)
    yield
    tf.set_memory_cache_limit(256 * MIB)


def smaps_field(addr, field):
    """The value of `field` in the /proc/self/smaps entry holding addr."""
    inside = False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        m = re.match(r"([0-9a-f]+)-([0-9a-f]+) ", line)
        if m:
            inside = int(m.group(1), 16) <= addr < int(m.group(2), 16)
        elif inside and line.startswith(field + ":"):
            return line.split(":", 1)[1].split()
    return None


def anon_huge_kib(addr):
    return int(smaps_field(addr, "AnonHugePages")[0])


def advised_huge(addr):
    """Whether the mapping holding addr was madvise(MADV_HUGEPAGE)d ("hg")."""
    return "hg" in smaps_field(addr, "VmFlags")


def test_a_steady_loop_reuses_one_block(swiglu):
    a, b = torch.randn(512, 1024), torch.randn(512, 1024)  # 2 MiB outputs
    want = swiglu_ref(a, b)
    first = swiglu(a, b)
    addr = first.data_ptr()
    del first
    before = tf.memory_stats()
    for _ in range(5):
        y = swiglu(a, b)
        assert y.data_ptr() == addr
        torch.testing.assert_close(y, want, rtol=1e-5, atol=1e-5)
        del y
    after = tf.memory_stats()
    assert after["hits"] == before["hits"] + 5
    assert after["misses"] == before["misses"]
    assert after["bytes_in_use"] == before["bytes_in_use"]


def test_live_outputs_never_share_a_block(swiglu):
    a, b = torch.randn(512, 1024), torch.randn(512, 1024)
    ys = [swiglu(a + i, b) for i in range(4)]
    assert len({y.data_ptr() for y in ys}) == 4
    for i, y in enumerate(ys):
        torch.testing.assert_close(y, swiglu_ref(a + i, b), rtol=1e-5, atol=1e-5)
    assert tf.memory_stats()["bytes_in_use"] >= 4 * 2 * MIB


def test_the_limit_bounds_what_is_kept(swiglu):
    a, b = torch.randn(512, 1024), torch.randn(512, 1024)
    ys = [swiglu(a, b) for _ in range(3)]
    tf.set_memory_cache_limit(3 * MIB)
    released = tf.memory_stats()["bytes_released"]
    del ys
    stats = tf.memory_stats()
    assert stats["cache_limit"] == 3 * MIB
    assert stats["bytes_cached"] <= 3 * MIB
    assert stats["bytes_released"] >= released + 4 * MIB
    tf.empty_cache()
    assert tf.memory_stats()["bytes_cached"] == 0
    with pytest.raises(ValueError, match="must be >= 0"):
        tf.set_memory_cache_limit(-1)


def test_a_large_output_is_advised_for_huge_pages_and_correct(swiglu):
    a, b = torch.randn(1024, 2048), torch.randn(1024, 2048)  # 8 MiB
    y = swiglu(a, b)
    assert y.data_ptr() % HUGE == 0
    assert advised_huge(y.data_ptr())
    torch.testing.assert_close(y, swiglu_ref(a, b), rtol=1e-5, atol=1e-5)
    small = swiglu(a[:128], b[:128])  # 1 MiB: plain pages
    assert not advised_huge(small.data_ptr())


@pytest.mark.skipif(not THP.exists() or "[never]" in THP.read_text(),
                    reason="transparent huge pages are off on this kernel")
def test_a_large_output_is_backed_by_huge_pages(swiglu):
    tf.empty_cache()  # a fresh mapping, faulted in by this call
    a, b = torch.randn(1024, 2048), torch.randn(1024, 2048)
    y = swiglu(a, b)
    assert anon_huge_kib(y.data_ptr()) > 0


def test_a_small_output_is_correct_and_resizable(swiglu):
    before = tf.memory_stats()
    a, b = torch.randn(4, 8), torch.randn(4, 8)
    y = swiglu(a, b)
    torch.testing.assert_close(y, swiglu_ref(a, b), rtol=1e-5, atol=1e-5)
    after = tf.memory_stats()
    assert (after["hits"], after["misses"]) == (before["hits"], before["misses"])  # not pooled
    y.resize_(100, 100).fill_(2.0)
    assert y.sum().item() == 20000.0


def test_a_large_output_stays_resizable_and_its_views_outlive_it(swiglu):
    a, b = torch.randn(1024, 2048), torch.randn(1024, 2048)
    y = swiglu(a, b)
    want = swiglu_ref(a, b)
    y.resize_(2048, 2048)  # grows: moves to torch's allocator, returns the pooled block
    torch.testing.assert_close(y[:1024], want, rtol=1e-5, atol=1e-5)
    y.fill_(1.0)
    assert y.sum().item() == 2048 * 2048
    views = [swiglu(a, b)[::2] for _ in range(3)]  # the storage outlives the op's tensor
    for v in views:
        torch.testing.assert_close(v, want[::2], rtol=1e-5, atol=1e-5)


def _child(code, **env):
    out = subprocess.run([sys.executable, "-c", code, str(KERNELS.parent), str(KERNELS)],
                         env=dict(subprocess_env(), **env), capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def test_tf_huge_pages_0_turns_huge_pages_off():
    code = (
        "import torch, tilefoundry as tf, sys\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "from conftest import swiglu_ref\n"
        "from test_output_memory import advised_huge\n"
        "m = tf.load(sys.argv[2])\n"
        "op = tf.register(m.compile('swiglu'), 'huge_off')\n"
        "a, b = torch.randn(1024, 2048), torch.randn(1024, 2048)\n"
        "ys = [op(a, b) for _ in range(4)]\n"
        "torch.testing.assert_close(ys[0], swiglu_ref(a, b), rtol=1e-5, atol=1e-5)\n"
        "print(sum(advised_huge(y.data_ptr()) for y in ys))\n")
    assert int(_child(code, TF_HUGE_PAGES="0")[-1]) == 0
    assert int(_child(code)[-1]) == 4


@pytest.mark.parametrize("value, want", [("5M", 5 << 20), ("1g", 1 << 30), ("123456", 123456),
                                         ("0", 0)])
def test_the_environment_sets_the_limit(value, want):
    code = "import tilefoundry as tf\nprint(tf.memory_stats()['cache_limit'])\n"
    assert int(_child(code, TF_MEMORY_CACHE_LIMIT=value)[-1]) == want


def test_a_malformed_limit_keeps_the_default():
    code = "import tilefoundry as tf\nprint(tf.memory_stats()['cache_limit'])\n"
    default = int(_child(code)[-1])
    assert 0 < default <= 4 << 30
    assert int(_child(code, TF_MEMORY_CACHE_LIMIT="lots")[-1]) == default


def test_a_kernels_temporaries_come_from_the_pool():
    """A value the compiled code materializes (here the scaled operand of a
    MatMul, 512 KiB) lives in pooled memory: from the second call on it is a
    warm hit, even when the outputs are the caller's."""
    src = """from tilefoundry.dsl import *
N = DimVar("N", 1, 4096)

@func
def scaled_mm(x: Tensor[(N, 256), f32], w: Tensor[(256, 256), f32]) -> Tensor[(N, 256), f32]:
    return matmul(x * 2.0, w)
"""
    k = compile_on(tf.load(src), "scaled_mm", "native")
    x, w, y = torch.randn(512, 256), torch.randn(256, 256), torch.empty(512, 256)
    k.run([x, w], [y])
    before = tf.memory_stats()
    for _ in range(3):
        k.run([x, w], [y])
    after = tf.memory_stats()
    assert after["hits"] == before["hits"] + 3
    assert after["misses"] == before["misses"]
    assert after["bytes_in_use"] == before["bytes_in_use"]
    torch.testing.assert_close(y, (x * 2.0) @ w, rtol=1e-4, atol=1e-3)
