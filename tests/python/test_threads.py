"""Kernels called through torch.ops.tilefoundry run on torch's intra-op
thread count (torch.set_num_threads), applied to the OpenMP runtime the
kernels link, whichever OpenMP torch itself uses (pip torch bundles its own).
tf.set_num_threads sets the count for other callers."""
import os
import subprocess
import sys

import pytest
import torch

import tilefoundry as tf
from conftest import KERNELS, compile_on, subprocess_env, unique_op


@pytest.fixture
def restore_threads():
    torch_before, tf_before = torch.get_num_threads(), tf.get_num_threads()
    yield
    torch.set_num_threads(torch_before)
    tf.set_num_threads(tf_before)


def test_the_op_follows_torch_set_num_threads(module, restore_threads):
    op = tf.register(compile_on(module, "scale2", "native"), unique_op("threads_scale2"))
    x = torch.randn(8, 8)
    for n in (1, 3, 2):
        torch.set_num_threads(n)
        op(x)
        assert tf.get_num_threads() == n
    # A C ABI caller's setting is replaced at the next torch call.
    tf.set_num_threads(5)
    op(x)
    assert tf.get_num_threads() == 2


def test_set_num_threads_arguments(restore_threads):
    tf.set_num_threads(4)
    assert tf.get_num_threads() == 4
    tf.set_num_threads(0)
    assert tf.get_num_threads() == 0
    with pytest.raises(tf.TileFoundryError, match="must be >= 0"):
        tf.set_num_threads(-2)


def test_threads_started_follow_the_setting():
    """In a fresh process: one torch thread starts no OpenMP workers for a
    large kernel; three start (at least) two. Threads are compared by id, not
    counted: a helper thread of torch or of the loader may end meanwhile."""
    code = (
        "import os, torch, tilefoundry as tf, sys\n"
        "m = tf.load(sys.argv[1])\n"
        "op = tf.register(m.compile('scale2'), 'threads_probe')\n"
        "x = torch.randn(4096, 1024)\n"
        "tids = lambda: set(os.listdir('/proc/self/task'))\n"
        "torch.set_num_threads(1)\n"
        "alone = tids()\n"
        "op(x)\n"
        "one = tids()\n"
        "torch.set_num_threads(3)\n"
        "op(x)\n"
        "three = tids()\n"
        "print(len(one - alone), len(three - one))\n")
    env = subprocess_env()
    env.pop("OMP_NUM_THREADS", None)
    out = subprocess.run([sys.executable, "-c", code, str(KERNELS)], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    started_by_one, started_by_three = map(int, out.stdout.split()[-2:])
    assert started_by_one == 0
    assert started_by_three >= 2
