"""The CUDA backend from Python, on machines without a GPU.

Each case runs in a fresh interpreter, since the CUDA driver is loaded once
per process: with no driver to load, and with the emulated device's driver
(tests/cuda_emulation, built beside libtilefoundry.so in a source tree), on
which tf.register gives each op its CUDA kernel. Running the ops on CUDA
tensors needs a GPU (`make test-cuda`)."""
import os
import subprocess
import sys
import textwrap

import pytest

import tilefoundry as tf
from tilefoundry import _lib

KERNELS = '''
from tilefoundry.dsl import *
N = DimVar("N", 1, 1024)

@func
def rmsnorm(x: Tensor[(N, 8), f32], w: Tensor[(8,), f32]) -> Tensor[(N, 8), f32]:
    return rms_norm(x, w, eps=1e-6)

@func
def mm(a: Tensor[(N, 8), f32], b: Tensor[(8, 4), f32]) -> Tensor[(N, 4), f32]:
    return matmul(a, b)

@func
def conv(x: Tensor[(1, 1, 4, 4), f32], w: Tensor[(1, 1, 3, 3), f32]) -> Tensor[(1, 1, 2, 2), f32]:
    return conv2d(x, w, None)

@func
def mm8(a: Tensor[(N, 8), fp8e4m3], b: Tensor[(8, 4), fp8e4m3]) -> Tensor[(N, 4), fp8e4m3]:
    return matmul(a, b)

@func
def halves(x: Tensor[(N, 8), f32]) -> Tensor[(N, 8), f32]:
    y = x
    for i in range(3):
        y = y * 0.5 + x
    return y
'''


def emulated_driver():
    try:
        return str(_lib.find_library("libtf_emulated_cuda.so"))
    except OSError:
        pytest.skip("the emulated CUDA driver is built by the source tree's tests, not shipped in a wheel")


def run(code, driver):
    package_root = os.path.dirname(os.path.dirname(tf.__file__))  # this tilefoundry, wherever it is
    env = dict(os.environ, TF_CUDA_DRIVER_LIBRARY=driver,
               PYTHONPATH=os.pathsep.join([package_root] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    prelude = f"import tilefoundry as tf\nimport torch\nKERNELS = {KERNELS!r}\n"
    r = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)], env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_without_a_driver_the_backend_says_why_and_ops_stay_on_the_cpu():
    out = run('''
        print(tf.cuda_is_available())
        print(tf.cuda_unavailable_reason())
        m = tf.Module(KERNELS)
        try:
            m.compile("rmsnorm", backend="cuda")
        except tf.TileFoundryError as e:
            print(e.status)
        op = tf.register(m.compile("rmsnorm"), name="rms_nodrv")
        print(torch._C._dispatch_has_kernel_for_dispatch_key("tilefoundry::rms_nodrv", "CUDA"))
        print(tf.cuda_unsupported_reason("rms_nodrv"))
        x, w = torch.randn(3, 8), torch.rand(8)
        print(torch.allclose(op(x, w), x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w, atol=1e-6))
    ''', "libtf-no-cuda-driver-here.so.1").splitlines()
    assert out[0] == "False"
    assert "the CUDA driver could not be loaded" in out[1]
    assert out[2] == "TF_ERR_UNSUPPORTED"
    assert out[3] == "False"
    assert "the CUDA driver could not be loaded" in out[4]
    assert out[5] == "True"


def test_on_a_device_register_gives_the_op_a_cuda_kernel():
    out = run('''
        has = lambda name: torch._C._dispatch_has_kernel_for_dispatch_key("tilefoundry::" + name, "CUDA")
        print(tf.cuda_is_available(), repr(tf.cuda_unavailable_reason()))
        m = tf.Module(KERNELS)
        print(m.compile("rmsnorm", backend="cuda").backend)
        tf.register(m.compile("rmsnorm"), name="rms_dev")
        print(has("rms_dev"), has("rms_dev.out"), repr(tf.cuda_unsupported_reason("rms_dev")))
        # Replaced with the same schema: the CUDA kernel is replaced too.
        tf.register(tf.Module(KERNELS.replace("1e-6", "1e-5")).compile("rmsnorm"), name="rms_dev", replace=True)
        print(has("rms_dev"))
        # A MatMul and a Conv2D (cuBLAS) and a loop have one; what is not
        # compiled natively (an 8-bit float MatMul: the CPU kernel runs the
        # evaluator) gets a CPU kernel only, and says why.
        tf.register(m.compile("mm"), name="mm_dev")
        tf.register(m.compile("conv"), name="conv_dev")
        tf.register(m.compile("halves"), name="loop_dev")
        tf.register(m.compile("mm8"), name="mm8_dev")
        print(has("mm_dev") and has("conv_dev") and has("loop_dev"), has("mm8_dev"),
              tf.cuda_unsupported_reason("mm8_dev"))
        # A CUDA kernel refuses CPU tensors, naming them.
        k = m.compile("rmsnorm", backend="cuda")
        try:
            k(torch.randn(3, 8), torch.rand(8))
        except tf.TileFoundryError as e:
            print(e.message)
    ''', emulated_driver()).splitlines()
    assert out[0] == "True ''"
    assert out[1] == "cuda"
    assert out[2] == "True True ''"
    assert out[3] == "True"
    assert out[4].startswith("True False ") and "fp8 MatMul is not compiled" in out[4]
    assert "a cpu tensor, but 'rmsnorm' runs on cuda:0" in out[5]


def test_replacing_a_cuda_op_with_a_function_without_a_cuda_form_is_refused():
    out = run('''
        head = "\\n@func\\ndef f(a: Tensor[(N, 8), f32], b: Tensor[(8, 4), f32]) -> Tensor[(N, 4), f32]:\\n"
        tf.register(tf.Module(KERNELS + head + "    return a[:, 0:4] * b[0:1, :]\\n").compile("f"), name="swap")
        # An 8-bit float MatMul inside (no native form) of the same signature.
        mm8 = "    return cast(matmul(cast(a, fp8e4m3), cast(b, fp8e4m3)), f32)\\n"
        try:
            tf.register(tf.Module(KERNELS + head + mm8).compile("f"), name="swap", replace=True)
        except tf.TileFoundryError as e:
            print(e.status, e.message)
    ''', emulated_driver()).splitlines()
    assert out[0].startswith("TF_ERR_UNSUPPORTED tilefoundry::swap had a CUDA kernel")
    assert "fp8 MatMul" in out[0]


def test_the_gpu_bench_says_what_it_is_missing():
    """bench/bench_cuda.py (make bench-cuda) needs a GPU; without one it
    names what is missing and fails, rather than printing an empty table."""
    bench = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "bench_cuda.py")
    package_root = os.path.dirname(os.path.dirname(tf.__file__))
    env = dict(os.environ, TF_CUDA_DRIVER_LIBRARY="libtf-no-cuda-driver-here.so.1",
               PYTHONPATH=os.pathsep.join([package_root] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    r = subprocess.run([sys.executable, bench], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.startswith("bench-cuda: ") and ("no CUDA device" in r.stderr or "unavailable" in r.stderr
                                                   or "not installed" in r.stderr)
