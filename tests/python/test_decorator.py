"""@tf.func: a DSL function in an ordinary Python module becomes a torch op."""
import torch

from tilefoundry.decorator import dsl_subset
from conftest import HERE, rmsnorm_ref

import decorated_kernels as dk  # noqa: E402  (import registers the ops)


def test_decorated_function_is_the_torch_op():
    a, b = torch.randn(3, 48), torch.randn(3, 48)
    assert dk.deco_gate == torch.ops.tilefoundry.deco_gate
    torch.testing.assert_close(dk.deco_gate(a, b), dk.eager_gate(a, b), rtol=1e-5, atol=1e-5)


def test_decorator_options_name_and_backend():
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
