"""Shared fixtures. Needs PYTHONPATH=torch_ext/python and TILEFOUNDRY_LIB_DIR
pointing at the build's lib/ (the Makefile sets both)."""
import itertools
import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "torch_ext" / "python"))

import tilefoundry as tf  # noqa: E402

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
    return Path(os.environ.get("TILEFOUNDRY_LIB_DIR", REPO / "build" / "lib")).resolve()


@pytest.fixture(scope="session")
def module():
    return tf.load(str(KERNELS))


@pytest.fixture(scope="session", params=["evaluator", "native"])
def backend(request):
    return request.param


def subprocess_env():
    """Environment for child Pythons: same package and library as this process."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "torch_ext" / "python"),
                                         env.get("PYTHONPATH", "")])
    env["TILEFOUNDRY_LIB_DIR"] = str(lib_dir())  # absolute: children may run elsewhere
    return env
