"""The Python package as a user meets it: importing it loads the library and
checks its ABI, never imports torch, runs kernels on numpy arrays and other
__dlpack__ objects, and says where its C/C++ parts are installed."""
import ctypes
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import tilefoundry as tf
from conftest import INSTALLED, KERNELS, REPO, subprocess_env
from tilefoundry import _lib

HEADER = REPO / "include" / "tilefoundry" / "tilefoundry.h"


def run_python(code, env=None, cwd=None):
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env or subprocess_env(),
                          cwd=cwd, capture_output=True, text=True, timeout=300)


def header_version():
    text = HEADER.read_text()
    return tuple(int(re.search(r"#define TF_VERSION_%s (\d+)" % k, text).group(1)) for k in ("MAJOR", "MINOR"))


def test_bindings_are_written_for_the_headers_abi():
    # Bumping the header's version is a change the ctypes bindings must follow.
    assert (_lib.ABI_MAJOR, _lib.ABI_MINOR) == header_version()
    assert tf.abi_version() == (_lib.ABI_MAJOR << 16) | _lib.ABI_MINOR


def test_package_version_follows_the_abi():
    # The wheel's version comes from CMakeLists.txt's project(); its major.minor is the ABI's.
    version = re.search(r"project\(TileFoundry VERSION (\d+)\.(\d+)\.\d+", (REPO / "CMakeLists.txt").read_text())
    assert (int(version.group(1)), int(version.group(2))) == header_version()


def test_a_library_directory_relative_to_the_process_still_compiles_natively(tmp_path):
    """TILEFOUNDRY_LIB_DIR=build/lib from the repository: the library is opened
    by a relative name, and the precompiled prelude beside it must still be
    found by the compiler, which works from the kernel cache's directory (it
    was not: every compile failed and every kernel ran on the evaluator)."""
    from conftest import lib_dir, require_build_tree, require_native_compiler
    require_build_tree()
    require_native_compiler()
    env = subprocess_env()
    env["TILEFOUNDRY_LIB_DIR"] = os.path.relpath(lib_dir(), tmp_path)
    env["TF_CACHE_DIR"] = str(tmp_path / "cache")
    env.pop("TF_PCH_DIR", None)
    assert (lib_dir() / "tilefoundry-pch").is_dir(), "the build puts the precompiled prelude beside the library"
    r = run_python(f"""
        import tilefoundry as tf
        k = tf.load({str(KERNELS)!r}).compile("rmsnorm")
        print(k.backend)
        """, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip() == "native", r.stdout + r.stderr


def test_import_and_numpy_kernels_never_import_torch(tmp_path):
    pytest.importorskip("numpy")
    r = run_python(f"""
        import sys
        import numpy as np
        import tilefoundry as tf
        assert "torch" not in sys.modules, "import tilefoundry imported torch"
        k = tf.load({str(KERNELS)!r}).compile("rmsnorm")
        x = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
        y = k(x, np.ones(4, np.float32))
        assert type(y) is np.ndarray and y.dtype == np.float32 and y.shape == (3, 4)
        want = x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6)
        assert np.abs(y - want).max() < 1e-5, np.abs(y - want).max()
        assert "torch" not in sys.modules, "calling a kernel on numpy imported torch"
        print("ok")
        """, cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr


def test_numpy_results_are_writable_numpy_arrays(module):
    np = pytest.importorskip("numpy")
    a = np.random.default_rng(0).standard_normal((256, 512)).astype(np.float32)
    y = module.compile("swiglu")(a, np.ones_like(a))
    assert type(y) is np.ndarray and y.flags.writeable and y.flags.owndata
    np.testing.assert_allclose(y, a / (1 + np.exp(-a)), rtol=1e-5, atol=1e-6)
    y[0, 0] = 7.0  # a user's array like any other
    assert y[0, 0] == 7.0


def test_call_dlpack_results_are_library_memory_without_copies(module):
    np = pytest.importorskip("numpy")
    a = np.random.default_rng(0).standard_normal((256, 512)).astype(np.float32)  # 512 KiB: pooled
    before = tf.memory_stats()["bytes_in_use"]
    out = module.compile("swiglu").call_dlpack(a, np.ones_like(a))
    y = np.from_dlpack(out)
    assert tf.memory_stats()["bytes_in_use"] - before == y.nbytes  # numpy holds the pool's block
    np.testing.assert_allclose(y, a / (1 + np.exp(-a)), rtol=1e-5, atol=1e-6)
    del out  # ownership went to numpy with the capsule
    assert tf.memory_stats()["bytes_in_use"] - before == y.nbytes
    del y  # numpy calls the DLPack deleter: the block goes back to the pool
    assert tf.memory_stats()["bytes_in_use"] == before


def test_call_dlpack_hands_each_result_to_one_consumer(module):
    np = pytest.importorskip("numpy")
    x = np.random.default_rng(1).standard_normal((4, 96)).astype(np.float32)
    out = module.compile("rmsnorm").call_dlpack(x, np.ones(96, np.float32))
    assert out.shape == (4, 96) and out.__dlpack_device__() == (1, 0)
    first = np.from_dlpack(out)
    with pytest.raises(BufferError, match="already handed"):
        np.from_dlpack(out)
    assert first.shape == (4, 96)


def test_an_unconsumed_result_is_freed_when_collected(module):
    np = pytest.importorskip("numpy")
    a = np.ones((256, 512), np.float32)
    before = tf.memory_stats()["bytes_in_use"]
    out = module.compile("swiglu").call_dlpack(a, a)
    assert tf.memory_stats()["bytes_in_use"] > before
    del out
    assert tf.memory_stats()["bytes_in_use"] == before


def test_bool_results_come_back_as_numpy_bool(module):
    np = pytest.importorskip("numpy")
    y = module.compile("positive")(np.array([[1, -5], [0, 3]], np.float32))
    assert y.dtype == np.bool_ and y.tolist() == [[True, False], [False, True]]
    z = module.compile("band")(np.array([True, False, True]), np.array([True, True, False]))
    assert z.dtype == np.bool_ and z.tolist() == [True, False, False]  # bool inputs too


def _fake_library(tmp_path, version):
    """A libtilefoundry.so whose tf_abi_version() answers `version`."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler to build the fake library")
    (tmp_path / "fake.c").write_text("unsigned tf_abi_version(void) { return %du; }\n" % version)
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(tmp_path / "libtilefoundry.so"),
                    str(tmp_path / "fake.c")], check=True)
    return tmp_path


@pytest.mark.parametrize("major,minor", [(_lib.ABI_MAJOR + 1, 0), (_lib.ABI_MAJOR, _lib.ABI_MINOR - 1)])
def test_a_mismatched_library_is_refused_at_import(tmp_path, major, minor):
    if minor < 0:
        pytest.skip("no older minor of this major exists")
    env = subprocess_env()
    env["TILEFOUNDRY_LIB_DIR"] = str(_fake_library(tmp_path, (major << 16) | minor))
    r = run_python("import tilefoundry", env=env, cwd=tmp_path)
    assert r.returncode != 0
    assert "AbiMismatchError" in r.stderr
    assert f"has C ABI {major}.{minor}, but this tilefoundry Python package needs " \
           f"{_lib.ABI_MAJOR}.{_lib.ABI_MINOR}" in r.stderr, r.stderr


def test_a_newer_minor_is_accepted(tmp_path):
    # Minor versions only add: a library newer than the bindings still serves them.
    handle = ctypes.CDLL(str(_fake_library(tmp_path, (_lib.ABI_MAJOR << 16) | (_lib.ABI_MINOR + 1))
                             / "libtilefoundry.so"))
    _lib._check_abi(handle, "newer")


def test_an_extension_built_for_another_torch_is_refused(tmp_path):
    from tilefoundry.torch_ops import check_torch_version
    lib = tmp_path / "libtilefoundry_torch.so"
    (tmp_path / "libtilefoundry_torch.torch-version").write_text("2.15.0\n")
    check_torch_version(str(lib), "2.15.0+cu132")  # same release: loads
    check_torch_version(str(lib), "2.15.1")         # patch releases keep the C++ ABI
    with pytest.raises(tf.AbiMismatchError, match=r"built against torch 2\.15\.0, but this process "
                                                  r"runs torch 2\.16\.0"):
        check_torch_version(str(lib), "2.16.0")


def test_the_loaded_extension_records_the_torch_it_was_built_for():
    torch = pytest.importorskip("torch")
    from tilefoundry.torch_ops import _release
    record = Path(tf.torch_library_path()).with_suffix(".torch-version")
    assert record.is_file(), f"{record} is missing"
    assert _release(record.read_text().strip()) == _release(torch.__version__)


def test_module_entry_point_reports_versions():
    r = subprocess.run([sys.executable, "-m", "tilefoundry", "--version"], env=subprocess_env(),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert f"(C ABI {_lib.ABI_MAJOR}.{_lib.ABI_MINOR})" in r.stdout


def test_module_entry_point_locates_the_cmake_package():
    r = subprocess.run([sys.executable, "-m", "tilefoundry", "--cmake-dir"], env=subprocess_env(),
                       capture_output=True, text=True, timeout=60)
    if INSTALLED:
        assert r.returncode == 0, r.stderr
        assert (Path(r.stdout.strip()) / "TileFoundryConfig.cmake").is_file()
        assert (Path(tf.include_dir()) / "tilefoundry" / "tilefoundry.h").is_file()
        assert (Path(tf.include_dir()) / "dlpack" / "dlpack.h").is_file()
        # One file per library: a wheel turns symlinks into copies.
        assert sorted(p.name for p in Path(tf.library_dir()).glob("libtilefoundry.so*")) == ["libtilefoundry.so"]
    else:
        # A source tree has no installed CMake package: a clear error, not a wrong path.
        assert r.returncode == 1
        assert "runs from a source tree" in r.stderr
