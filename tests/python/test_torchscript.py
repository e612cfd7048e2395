"""TorchScript: a scripted module calling torch.ops.tilefoundry.* is saved,
then loaded and run in a fresh process that registers the op first."""
import subprocess
import sys

import torch

import tilefoundry as tf
from conftest import KERNELS, subprocess_env

OP = "ts_rmsnorm"

CHILD = """
import sys, torch, tilefoundry as tf
tf.register(tf.load({kernels!r}).compile("rmsnorm", backend="evaluator"), {op!r})
m = torch.jit.load({path!r})
torch.manual_seed(0)
x, w = torch.randn(4, 32), torch.randn(32)
xf = x.float()
ref = (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)).to(x.dtype) * w
y = m(x, w)
err = (y - ref).abs().max().item()
print("max_abs_err", err)
sys.exit(0 if err < 1e-5 else 1)
"""


class Block(torch.nn.Module):
    def forward(self, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return torch.ops.tilefoundry.ts_rmsnorm(x, w) + 0.0


def test_scripted_module_round_trips_through_a_file(module, tmp_path):
    tf.register(module.compile("rmsnorm", backend="evaluator"), OP)
    scripted = torch.jit.script(Block())
    assert "tilefoundry::ts_rmsnorm" in str(scripted.graph)
    path = tmp_path / "block.pt"
    scripted.save(str(path))

    code = CHILD.format(kernels=str(KERNELS), op=OP, path=str(path))
    proc = subprocess.run([sys.executable, "-c", code], env=subprocess_env(),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "max_abs_err" in proc.stdout


def test_loading_without_registration_fails(module, tmp_path):
    """The negative twin: the saved graph really needs the tilefoundry op."""
    tf.register(module.compile("rmsnorm", backend="evaluator"), "ts_rmsnorm_neg")

    class Neg(torch.nn.Module):
        def forward(self, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
            return torch.ops.tilefoundry.ts_rmsnorm_neg(x, w)

    path = tmp_path / "neg.pt"
    torch.jit.script(Neg()).save(str(path))
    proc = subprocess.run([sys.executable, "-c", f"import torch; torch.jit.load({str(path)!r})"],
                          env=subprocess_env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "ts_rmsnorm_neg" in proc.stderr
