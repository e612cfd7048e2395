"""tf.load / Module / Kernel basics over the C ABI (ctypes)."""
import importlib.util

import pytest

import tilefoundry as tf
from conftest import KERNELS, compile_on

SRC = '''from tilefoundry.dsl import *

N = DimVar("N", 1, 4096)

@func
def double(x: Tensor[(N, 8), f32]) -> Tensor[(N, 8), f32]:
    return x + x
'''


def test_kernel_file_is_importable_python():
    spec = importlib.util.spec_from_file_location("tf_test_kernels", KERNELS)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.rmsnorm.__name__ == "rmsnorm"
    with pytest.raises(TypeError, match="DSL function"):
        mod.rmsnorm(1, 2)


def test_load_source_text_lists_functions():
    m = tf.load(SRC)
    assert m.functions == ["double"]


def test_load_path_lists_all_functions(module):
    assert module.functions == ["rmsnorm", "rmsnorm_bf16", "rmsnorm64", "swiglu", "swiglu_bf16",
                                "resnorm", "scale2", "positive", "band", "u8_mask", "to_fp8", "from_fp8", "iadd"]


def test_print_round_trips():
    text = str(tf.load(SRC))
    assert "def double" in text
    again = tf.load(text)
    assert again.functions == ["double"]
    assert str(again) == text


def test_signature_names_types(module):
    sig = module.signature("rmsnorm64")
    assert "rmsnorm64" in sig and "f32" in sig and "64" in sig


def test_missing_file_raises():
    with pytest.raises(FileNotFoundError):
        tf.load("/nonexistent/kernels.tf")


def test_parse_error_has_status_and_location():
    with pytest.raises(tf.TileFoundryError) as e:
        tf.load("from tilefoundry.dsl import *\n\n@func\ndef bad(x: Tensor[(4,), f32]) -> :\n")
    assert e.value.status == "TF_ERR_PARSE"
    assert ":4:" in e.value.message  # line 4 of <string>


def test_compile_unknown_function_is_not_found(module):
    with pytest.raises(tf.TileFoundryError) as e:
        module.compile("no_such_fn")
    assert e.value.status == "TF_ERR_NOT_FOUND"
    assert "no_such_fn" in e.value.message


def test_compile_rejects_unknown_backend(module):
    with pytest.raises(ValueError, match="backend"):
        module.compile("rmsnorm", backend="gpu")


def test_kernel_attributes(module):
    k = module.compile("resnorm", backend="evaluator")
    assert (k.name, k.num_inputs, k.num_outputs, k.backend) == ("resnorm", 3, 2, "evaluator")
    assert k.input_names() == ["x", "r", "w"]


def test_native_compile_reports_the_native_backend(module):
    native = compile_on(module, "rmsnorm", "native")
    assert (native.name, native.num_inputs, native.num_outputs) == ("rmsnorm", 2, 1)


def test_native_compile_falls_back_to_the_evaluator_and_says_so(monkeypatch, tmp_path):
    """A C++ compiler that fails (TF_CC=false) makes the native compile fall
    back: the kernel reports the evaluator and still computes the result."""
    import torch
    monkeypatch.setenv("TF_CC", "false")
    monkeypatch.setenv("TF_CACHE_DIR", str(tmp_path))  # no kernel cached by an earlier run
    m = tf.load(SRC.replace("def double", "def triple").replace("x + x", "x + x + x"))
    k = m.compile("triple", backend="native")
    assert k.backend == "evaluator"
    x = torch.randn(3, 8)
    torch.testing.assert_close(k(x), x * 3)


def test_abi_version_matches_header():
    import pathlib
    import re
    header = (pathlib.Path(__file__).parents[2] / "include/tilefoundry/tilefoundry.h").read_text()
    major, minor = (int(re.search(r"#define TF_VERSION_%s (\d+)" % p, header).group(1))
                    for p in ("MAJOR", "MINOR"))
    assert tf.abi_version() == (major << 16) | minor
