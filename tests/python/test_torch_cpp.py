"""A libtorch C++ program (tests/python/cpp/dispatcher_call.cc, built as
tf_torch_cpp_example) parses, compiles, registers and calls a kernel through
c10::Dispatcher, and checks the result against ATen and that the kernel runs
on the backend asked for."""
import subprocess

import pytest

from conftest import lib_dir, require_build_tree, require_native_compiler, subprocess_env


@pytest.mark.parametrize("backend", ["evaluator", "native"])
def test_cpp_program_calls_the_op_through_the_dispatcher(backend):
    require_build_tree()
    if backend == "native":
        require_native_compiler()
    exe = lib_dir().parent / "bin" / "tf_torch_cpp_example"
    assert exe.is_file(), f"{exe} is missing: build the tf_torch_cpp_example target"
    proc = subprocess.run([str(exe), backend], env=subprocess_env(), capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"backend: {backend}\n" in proc.stdout
    assert "schema: tilefoundry::cpp_rmsnorm(Tensor x, Tensor w) -> Tensor" in proc.stdout
    assert "bad dtype -> c10::Error" in proc.stdout
    assert proc.stdout.rstrip().endswith("OK")
