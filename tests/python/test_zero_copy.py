"""Zero copy: what crosses the C ABI points at torch's own memory.

Two observations of the pointers tf_kernel_run actually receives:
* torch.ops path (C++, at::toDLPack): an LD_PRELOAD shim interposes
  tf_kernel_run between libtilefoundry_torch.so and libtilefoundry.so and
  logs every DLTensor's data pointer and strides; they must equal the input
  view's data_ptr()/stride() and the returned output's data_ptr().
* Kernel path (ctypes): the DLTensor array handed to tf_kernel_run is
  captured the same way from Python, and outputs preallocated by the caller
  are written in place.
A wrapper that copied (e.g. .contiguous()) would show a different address
or strides.
"""
import json
import shutil
import subprocess
import sys

import pytest
import torch

import tilefoundry as tf
from tilefoundry import kernel as kernel_mod
from conftest import HERE, KERNELS, REPO, subprocess_env

CHILD = """
import json, torch, tilefoundry as tf
k = tf.load({kernels!r}).compile("scale2", backend="evaluator")
op = tf.register(k, "zero_copy_scale2")
base = torch.randn(9, 16)
x = base[1:, ::2]                       # storage offset and a stride of 2
y = op(x)
assert torch.equal(y, x * 2.0)
print(json.dumps(dict(x=x.data_ptr(), xs=list(x.stride()), y=y.data_ptr(), ys=list(y.stride()))))
"""


def _build_shim(tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler to build the LD_PRELOAD shim")
    shim = tmp_path / "shim.so"
    subprocess.run([cc, "-shared", "-fPIC", "-O1", f"-I{REPO / 'include'}",
                    str(HERE / "shim_record_run.c"), "-o", str(shim), "-ldl"], check=True)
    return shim


def test_torch_op_passes_tensor_memory_itself(tmp_path):
    shim, log = _build_shim(tmp_path), tmp_path / "run.log"
    env = subprocess_env()
    env.update(LD_PRELOAD=str(shim), TF_SHIM_LOG=str(log))
    proc = subprocess.run([sys.executable, "-c", CHILD.format(kernels=str(KERNELS))], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    rows = [line.split() for line in log.read_text().splitlines()]
    assert [r[0] for r in rows] == ["in", "out"], "the shim saw exactly one run"
    (_, in_data, in_off, *in_strides), (_, out_data, out_off, *out_strides) = rows
    assert int(in_data) + int(in_off) == seen["x"]
    assert [int(s) for s in in_strides] == seen["xs"] == [16, 2]
    assert int(out_data) + int(out_off) == seen["y"]
    assert [int(s) for s in out_strides] == seen["ys"]


class _RecordingLib:
    """Forwards to the real library, recording the DLTensors given to tf_kernel_run."""

    def __init__(self, real):
        self._real, self.calls = real, []

    def __getattr__(self, name):
        return getattr(self._real, name)

    def tf_kernel_run(self, k, ins, n_in, outs, n_out):
        self.calls.append(([(ins[i].data or 0) + ins[i].byte_offset for i in range(n_in)],
                           [tuple(ins[i].strides[d] for d in range(ins[i].ndim)) for i in range(n_in)],
                           [(outs[i].data or 0) + outs[i].byte_offset for i in range(n_out)]))
        return self._real.tf_kernel_run(k, ins, n_in, outs, n_out)


def test_kernel_call_passes_tensor_memory_itself(module, monkeypatch):
    k = module.compile("scale2", backend="evaluator")
    rec = _RecordingLib(kernel_mod._lib.lib())
    monkeypatch.setattr(kernel_mod._lib, "lib", lambda: rec)
    x = torch.randn(10, 12)[2:, 1::3]
    y = k(x)
    (in_ptrs, in_strides, out_ptrs), = rec.calls
    assert in_ptrs == [x.data_ptr()] and in_strides == [x.stride()]
    assert out_ptrs == [y.data_ptr()]
    torch.testing.assert_close(y, x * 2.0)


def test_run_writes_caller_outputs_in_place(module):
    k = module.compile("scale2", backend="evaluator")
    x = torch.randn(4, 5)
    out = torch.full((4, 5), float("nan"))
    ptr = out.data_ptr()
    k.run([x], [out])
    assert out.data_ptr() == ptr
    torch.testing.assert_close(out, x * 2.0)
