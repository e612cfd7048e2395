"""Shared fixtures. Needs PYTHONPATH=torch_ext/python and TILEFOUNDRY_LIB_DIR
pointing at the build's lib/ (the Makefile sets both), or, with
TF_TEST_INSTALLED=1, runs against the tilefoundry package installed in this
Python (tests/install/test_wheel.sh) and refuses the source tree's."""
import itertools
import os
import shlex
import shutil
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
INSTALLED = os.environ.get("TF_TEST_INSTALLED") == "1"
if not INSTALLED:
    sys.path.insert(0, str(REPO / "torch_ext" / "python"))

import tilefoundry as tf  # noqa: E402

if INSTALLED:
    assert Path(tf.__file__).resolve().parent != REPO / "torch_ext" / "python" / "tilefoundry", (
        f"TF_TEST_INSTALLED=1, but tilefoundry was imported from the source tree ({tf.__file__})")

KERNELS = HERE / "kernels.py"
EPS = 1e-6
_ids = itertools.count()


def rmsnorm_ref(x, w, eps=EPS):
    """The Llama RMSNorm in eager torch: statistics in f32, result in x's dtype, times w."""
    import torch
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype) * w


def swiglu_ref(a, b):
    import torch
    return torch.nn.functional.silu(a) * b


def unique_op(prefix: str) -> str:
    """torch ops live for the whole process: each test registers under a fresh name."""
    return f"{prefix}_{os.getpid()}_{next(_ids)}"


def lib_dir() -> Path:
    if INSTALLED:
        return Path(tf.library_dir())
    return Path(os.environ.get("TILEFOUNDRY_LIB_DIR", REPO / "build" / "lib")).resolve()


def require_build_tree():
    """Skips the calling test for an installed package: the programs it runs
    (tf_torch_cpp_example, ...) live only in a build tree."""
    if INSTALLED:
        pytest.skip("needs the build tree's programs; the installed package has none")


@pytest.fixture(scope="session")
def module():
    return tf.load(str(KERNELS))


def native_compiler():
    """The C++ compiler the native backend runs (TF_CC, else c++) when it is on
    PATH, else None. TF_CC may carry arguments ("ccache g++"): the first word
    is the program."""
    words = shlex.split(os.environ.get("TF_CC") or "c++")
    return shutil.which(words[0]) if words else None


def require_native_compiler():
    """Skips the calling test when the native backend cannot compile here."""
    if native_compiler() is None:
        pytest.skip("no C++ compiler: '%s' is not on PATH (set TF_CC), so the native backend "
                    "can only fall back to the evaluator" % (os.environ.get("TF_CC") or "c++"))


def compile_on(module, name, backend):
    """module.compile(name, backend=backend), checked to run on that backend:
    a native compile that fell back to the evaluator fails the test (and a
    test that needs native code skips where there is no C++ compiler)."""
    if backend == "native":
        require_native_compiler()
    kernel = module.compile(name, backend=backend)
    assert kernel.backend == backend, (
        f"{name}: compiled for {backend!r}, but the kernel runs on {kernel.backend!r}")
    return kernel


@pytest.fixture(scope="session", params=["evaluator", "native"])
def backend(request):
    """Both backends; compile with compile_on(), which checks the kernel runs on it."""
    if request.param == "native":
        require_native_compiler()
    return request.param


def subprocess_env():
    """Environment for child Pythons: same package and library as this process."""
    env = dict(os.environ)
    if not INSTALLED:
        env["PYTHONPATH"] = os.pathsep.join([str(REPO / "torch_ext" / "python"),
                                             env.get("PYTHONPATH", "")])
        env["TILEFOUNDRY_LIB_DIR"] = str(lib_dir())  # absolute: children may run elsewhere
    return env
