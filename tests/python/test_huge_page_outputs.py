"""Large outputs of a torch op come from their own 2 MiB-aligned mapping
advised for transparent huge pages (torch_ext/src/huge_pages.h); small ones
from torch's allocator. Either way the tensor is an ordinary, resizable
CPU tensor with the right values."""
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import tilefoundry as tf
from conftest import KERNELS, compile_on, subprocess_env, swiglu_ref, unique_op

HUGE = 2 << 20
THP = Path("/sys/kernel/mm/transparent_hugepage/enabled")


@pytest.fixture(scope="module")
def swiglu(module, backend):
    return tf.register(compile_on(module, "swiglu", backend), unique_op("huge_swiglu"))


def anon_huge_kib(addr):
    """AnonHugePages of the /proc/self/smaps entry holding addr."""
    inside = False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        m = re.match(r"([0-9a-f]+)-([0-9a-f]+) ", line)
        if m:
            inside = int(m.group(1), 16) <= addr < int(m.group(2), 16)
        elif inside and line.startswith("AnonHugePages:"):
            return int(line.split()[1])
    return None


def test_a_large_output_is_huge_page_aligned_and_correct(swiglu):
    a, b = torch.randn(1024, 2048), torch.randn(1024, 2048)  # 8 MiB
    y = swiglu(a, b)
    assert y.data_ptr() % HUGE == 0
    torch.testing.assert_close(y, swiglu_ref(a, b), rtol=1e-5, atol=1e-5)


@pytest.mark.skipif(not THP.exists() or "[never]" in THP.read_text(),
                    reason="transparent huge pages are off on this kernel")
def test_a_large_output_is_backed_by_huge_pages(swiglu):
    a, b = torch.randn(1024, 2048), torch.randn(1024, 2048)
    y = swiglu(a, b)
    assert anon_huge_kib(y.data_ptr()) > 0


def test_a_small_output_is_correct_and_resizable(swiglu):
    a, b = torch.randn(4, 8), torch.randn(4, 8)
    y = swiglu(a, b)
    torch.testing.assert_close(y, swiglu_ref(a, b), rtol=1e-5, atol=1e-5)
    y.resize_(100, 100).fill_(2.0)
    assert y.sum().item() == 20000.0


def test_a_large_output_stays_resizable_and_its_views_outlive_it(swiglu):
    a, b = torch.randn(1024, 2048), torch.randn(1024, 2048)
    y = swiglu(a, b)
    want = swiglu_ref(a, b)
    y.resize_(2048, 2048)  # grows: moves to torch's allocator, unmaps the old block
    torch.testing.assert_close(y[:1024], want, rtol=1e-5, atol=1e-5)
    y.fill_(1.0)
    assert y.sum().item() == 2048 * 2048
    views = [swiglu(a, b)[::2] for _ in range(3)]  # the storage outlives the op's tensor
    for v in views:
        torch.testing.assert_close(v, want[::2], rtol=1e-5, atol=1e-5)


def test_tf_huge_pages_0_turns_the_policy_off():
    code = (
        "import torch, tilefoundry as tf, sys\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "from conftest import swiglu_ref\n"
        "m = tf.load(sys.argv[2])\n"
        "op = tf.register(m.compile('swiglu'), 'huge_off')\n"
        "a, b = torch.randn(1024, 2048), torch.randn(1024, 2048)\n"
        "ys = [op(a, b) for _ in range(4)]\n"
        "torch.testing.assert_close(ys[0], swiglu_ref(a, b), rtol=1e-5, atol=1e-5)\n"
        "print(sum(y.data_ptr() % (2 << 20) != 0 for y in ys))\n")
    env = dict(subprocess_env(), TF_HUGE_PAGES="0")
    out = subprocess.run([sys.executable, "-c", code, str(KERNELS.parent), str(KERNELS)],
                         env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    # torch's allocator aligns to 64 bytes; four 8 MiB blocks all landing on
    # 2 MiB boundaries by chance would be a coincidence of 1 in 2^60.
    assert int(out.stdout.split()[-1]) > 0
