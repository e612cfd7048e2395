"""torch 2.x's checks over every op a module registers, and torch.export of a
model that calls them (TorchScript keeps working: test_torchscript.py).
Skipped on torch 1.x, which has neither opcheck nor export; `make
test-torch2` runs them."""
import subprocess
import sys
import textwrap

import pytest
import torch

import tilefoundry as tf
from conftest import KERNELS, rmsnorm_ref, subprocess_env, swiglu_ref, unique_op

needs_opcheck = pytest.mark.skipif(not hasattr(torch.library, "opcheck"),
                                   reason="torch.library.opcheck needs torch >= 2.4")
needs_export = pytest.mark.skipif(not hasattr(torch, "export") or not hasattr(torch.export, "save"),
                                  reason="torch.export needs torch >= 2.1")


def _f32(*shape):
    return lambda: torch.randn(*shape)


# Sample inputs for every function of tests/python/kernels.py: a function
# added there without a sample fails test_every_function_has_a_sample.
SAMPLES = {
    "rmsnorm": (_f32(5, 64), _f32(64)),
    "rmsnorm_bf16": (lambda: torch.randn(5, 64).bfloat16(), lambda: torch.randn(64).bfloat16()),
    "rmsnorm64": (_f32(3, 64), _f32(64)),
    "swiglu": (_f32(4, 40), _f32(4, 40)),
    "swiglu_bf16": (lambda: torch.randn(4, 40).bfloat16(), lambda: torch.randn(4, 40).bfloat16()),
    "resnorm": (_f32(4, 32), _f32(4, 32), _f32(32)),
    "scale2": (_f32(3, 7),),
    "positive": (_f32(3, 7),),
    "band": (lambda: torch.rand(9) > 0.5, lambda: torch.rand(9) > 0.5),
    "iadd": (lambda: torch.randint(-50, 50, (6,)), lambda: torch.randint(-50, 50, (6,))),
    "u8_mask": (lambda: torch.randint(0, 256, (6,), dtype=torch.uint8), lambda: torch.rand(6) > 0.5),
    "to_fp8": (lambda: torch.randn(6) * 8,),
    "from_fp8": (lambda: (torch.randn(6) * 8).to(torch.float8_e4m3fn),),
}


@pytest.fixture(scope="module")
def registered(module):
    """Every function of the module as a torch op (evaluator: opcheck's many
    calls need no compiler), by function name."""
    return {name: tf.register(module.compile(name, backend="evaluator"), unique_op(f"t2_{name}"))
            for name in module.functions}


def test_every_function_has_a_sample(module):
    assert sorted(SAMPLES) == sorted(module.functions)


@needs_opcheck
@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_opcheck_every_op(registered, name):
    torch.manual_seed(0)
    args = tuple(make() for make in SAMPLES[name])
    utils = ("test_schema", "test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic")
    if any(a.dtype == torch.float8_e4m3fn for a in args):
        # opcheck's schema check compares inputs before and after with
        # arithmetic torch has no float8 kernel for ("mul_cpu_reduced_float"
        # not implemented): the other checks run on the float8 input, and the
        # schema check on the same bytes as uint8, which the op also takes.
        utils = utils[1:]
        as_bytes = tuple(a.view(torch.uint8) if a.dtype == torch.float8_e4m3fn else a for a in args)
        results = torch.library.opcheck(registered[name].default, as_bytes, test_utils=("test_schema",))
        assert results and set(results.values()) == {"SUCCESS"}, results
    results = torch.library.opcheck(registered[name].default, args, test_utils=utils)
    assert results and set(results.values()) == {"SUCCESS"}, results


class Block(torch.nn.Module):
    """A pre-norm SwiGLU block's data path, through two registered ops."""

    def __init__(self, norm_op, swiglu_op, d=64):
        super().__init__()
        self.norm_op, self.swiglu_op = norm_op, swiglu_op
        self.w = torch.nn.Parameter(torch.randn(d))
        self.up = torch.nn.Linear(d, 2 * d, bias=False)

    def forward(self, x):
        h = self.norm_op(x, self.w)
        gate, value = self.up(h).chunk(2, dim=-1)
        return x + self.swiglu_op(gate.contiguous(), value.contiguous()).sum(-1, keepdim=True)


def _reference(block, x):
    h = rmsnorm_ref(x, block.w)
    gate, value = block.up(h).chunk(2, dim=-1)
    return x + swiglu_ref(gate, value).sum(-1, keepdim=True)


@needs_export
def test_export_save_load_runs_with_the_same_results(module, tmp_path):
    norm_name, swiglu_name = unique_op("export_rmsnorm"), unique_op("export_swiglu")
    norm = tf.register(module.compile("rmsnorm"), norm_name)
    swiglu = tf.register(module.compile("swiglu"), swiglu_name)
    torch.manual_seed(0)
    block = Block(norm, swiglu).eval()
    x = torch.randn(7, 64)
    rows = torch.export.Dim("rows", min=2, max=4096)
    ep = torch.export.export(block, (x,), dynamic_shapes={"x": {0: rows}})
    targets = {str(n.target) for n in ep.graph.nodes if n.op == "call_function"}
    assert any(norm_name in t for t in targets) and any(swiglu_name in t for t in targets), targets

    path = tmp_path / "block.pt2"
    torch.export.save(ep, str(path))
    loaded = torch.export.load(str(path)).module()
    with torch.no_grad():
        for n in (7, 3, 100):  # the row count stayed symbolic
            x = torch.randn(n, 64)
            torch.testing.assert_close(loaded(x), block(x))
            torch.testing.assert_close(loaded(x), _reference(block, x), rtol=1e-4, atol=1e-4)

    # A fresh process that registers the same ops loads and runs the saved program.
    torch.save({"x": x, "want": block(x).detach()}, str(tmp_path / "io.pt"))
    child = textwrap.dedent(f"""
        import torch, tilefoundry as tf
        m = tf.load({str(KERNELS)!r})
        tf.register(m.compile("rmsnorm"), {norm_name!r})
        tf.register(m.compile("swiglu"), {swiglu_name!r})
        prog = torch.export.load({str(path)!r}).module()
        io = torch.load({str(tmp_path / 'io.pt')!r})
        torch.testing.assert_close(prog(io["x"]), io["want"])
        print("ok")
        """)
    r = subprocess.run([sys.executable, "-c", child], env=subprocess_env(), capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr
