"""The C ABI from languages other than C: the Python
ctypes example (no torch) and the Rust example (rustc only) each run kernels
on their own buffers and check the answer against their own reference."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import lib_dir, require_native_compiler

REPO = Path(__file__).resolve().parents[2]
LIB_DIR = lib_dir()


def test_python_ctypes_example_without_torch():
    require_native_compiler()
    # -S -I: no site packages and no user paths, so torch cannot even be found.
    env = dict(os.environ, TILEFOUNDRY_LIB_DIR=str(LIB_DIR))
    script = REPO / "examples" / "python_ctypes" / "rmsnorm.py"
    probe = "import sys, runpy; runpy.run_path(%r, run_name='__main__'); " \
            "assert 'torch' not in sys.modules and 'numpy' not in sys.modules" % str(script)
    r = subprocess.run([sys.executable, "-S", "-I", "-c", probe], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "all kernels match the reference" in r.stdout
    # The default backend is native; a fallback to the evaluator must show.
    assert "backends: rmsnorm native, swiglu native" in r.stdout, r.stdout


@pytest.mark.skipif(shutil.which("rustc") is None, reason="rustc is not installed")
def test_rust_example(tmp_path):
    # Builds into a scratch "build dir" whose lib/ is the real one.
    (tmp_path / "lib").symlink_to(LIB_DIR)
    r = subprocess.run(["bash", str(REPO / "examples" / "rust" / "run.sh"), str(tmp_path)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "bad shape refused: true" in r.stdout
    assert "all kernels match the reference" in r.stdout
