"""@tf.func: a DSL function in an ordinary Python module becomes a torch op."""
import importlib.util

import torch

from tilefoundry.decorator import dsl_subset
from tilefoundry.module import Module
from conftest import HERE, require_native_compiler, rmsnorm_ref, unique_op

import decorated_kernels as dk  # noqa: E402  (import registers the ops)


def test_decorated_function_is_the_torch_op():
    a, b = torch.randn(3, 48), torch.randn(3, 48)
    assert dk.deco_gate == torch.ops.tilefoundry.deco_gate
    torch.testing.assert_close(dk.deco_gate(a, b), dk.eager_gate(a, b), rtol=1e-5, atol=1e-5)


def test_decorator_name_option_names_the_torch_op():
    x, w = torch.randn(2, 48), torch.randn(48)
    torch.testing.assert_close(torch.ops.tilefoundry.deco_norm_eval(x, w), rmsnorm_ref(x, w),
                               rtol=1e-5, atol=1e-5)
    assert dk.deco_norm == torch.ops.tilefoundry.deco_norm_eval


def test_constant_from_the_module_resolves():
    """HIDDEN = 48 is a module-level constant: a 47-wide input is refused."""
    import pytest
    with pytest.raises(RuntimeError, match="48"):
        dk.deco_gate(torch.randn(2, 47), torch.randn(2, 47))


def test_dsl_subset_keeps_lines_and_drops_plain_python():
    src = (HERE / "decorated_kernels.py").read_text()
    sub = dsl_subset(src)
    assert len(sub.splitlines()) == len(src.splitlines())
    assert "HELPER_TABLE" not in sub and "import torch" not in sub and "eager_gate" not in sub
    assert "@tf.func" not in sub and sub.count("@func") == 2
    assert 'ROWS = DimVar("ROWS", 1, 1 << 16)' in sub and "HIDDEN = 48" in sub
    for i, (a, b) in enumerate(zip(src.splitlines(), sub.splitlines())):
        if b and not b.startswith("@func"):
            assert a == b, f"line {i + 1} changed"


DECORATED = """import tilefoundry as tf
from tilefoundry.dsl import *

R = DimVar("R", 1, 64)

@tf.func(name={default!r})
def deco_default(x: Tensor[(R, 4), f32]) -> Tensor[(R, 4), f32]:
    return x * 3.0

@tf.func(name={evaluator!r}, backend="evaluator")
def deco_evaluator(x: Tensor[(R, 4), f32]) -> Tensor[(R, 4), f32]:
    return x * 3.0
"""


def test_decorator_compiles_native_code_by_default_and_honours_backend(tmp_path, monkeypatch):
    """The kernels @tf.func compiles, recorded as Module.compile returns them:
    the default runs native code (no fallback), backend="evaluator" the evaluator."""
    require_native_compiler()
    compiled = []
    real_compile = Module.compile

    def recording_compile(self, name, backend="native"):
        kernel = real_compile(self, name, backend=backend)
        compiled.append(kernel)
        return kernel

    monkeypatch.setattr(Module, "compile", recording_compile)
    names = dict(default=unique_op("deco_default"), evaluator=unique_op("deco_evaluator"))
    path = tmp_path / "deco_backends.py"
    path.write_text(DECORATED.format(**names))
    spec = importlib.util.spec_from_file_location("deco_backends", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert [(k.name, k.backend) for k in compiled] == [("deco_default", "native"),
                                                       ("deco_evaluator", "evaluator")]
    x = torch.randn(5, 4)
    for op in (mod.deco_default, mod.deco_evaluator):
        torch.testing.assert_close(op(x), x * 3.0)
