"""Sharded kernels across processes: torch.distributed jobs of 2 and 4
ranks over Gloo on loopback (dist_worker.py is one rank). Each rank checks
its results against plain PyTorch on the logical tensors and reports; these
tests start the job and read the reports."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from conftest import subprocess_env

WORKER = Path(__file__).with_name("dist_worker.py")


def run_job(tmp_path, scenario, world, timeout_s=60):
    out = tmp_path / "out"
    out.mkdir()
    env = dict(subprocess_env(), OMP_NUM_THREADS="1", TF_DIST_TIMEOUT=str(timeout_s))
    procs = [subprocess.Popen([sys.executable, str(WORKER), scenario, str(r), str(world), str(tmp_path / "rdv"),
                               str(out)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for r in range(world)]
    logs = []
    for p in procs:
        try:
            logs.append(p.communicate(timeout=300))
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            pytest.fail(f"the {scenario} job hung")
    results = []
    for r in range(world):
        report = out / f"rank{r}.json"
        assert report.exists(), f"rank {r} wrote no report:\n{logs[r][1][-4000:]}"
        results.append(json.loads(report.read_text()))
        # A clean exit too: a process group still referenced at interpreter
        # shutdown (a communicator left to the garbage collector) aborts it.
        assert procs[r].returncode == 0, f"rank {r} exited with {procs[r].returncode}:\n{logs[r][1][-4000:]}"
    return results


def test_tensor_parallel_mlp_on_two_ranks(tmp_path):
    for r, res in enumerate(run_job(tmp_path, "mlp", 2)):
        assert res["ok"], (r, res)
        assert res["maxdiff"] < 1e-4 and res["ranks_agree"], res
        # One kernel with DimVars B, D, F serves a second set of extents.
        assert res["maxdiff_other_size"] < 1e-4, res
        assert res["backend"] == "native", res
        # [3, 12] f32 all-reduced: 144 bytes; the check adds an 8-byte all-gather.
        assert res["collectives_checked"] == [2, 144 + 8], res
        assert res["collectives_trusted"] == [1, 144], res
        assert res["groups_kept"] == 0, res
        # A Partial result is this rank's share; their sum is the product.
        assert res["partial_is_share"] and res["partial_diff"] < 1e-4, res
        assert "has no device mesh" in res["errors"][0], res["errors"]
        assert "has 1 axes ('tp',), but 2 process group(s)" in res["errors"][1], res["errors"]


def test_every_reshard_direction_on_four_ranks(tmp_path):
    for res in run_job(tmp_path, "reshard", 4):
        assert res["ok"], res


def test_reshards_on_a_two_by_two_mesh(tmp_path):
    for res in run_job(tmp_path, "mesh22", 4):
        assert res["ok"], res


def test_collectives_inside_loops_and_called_functions(tmp_path):
    for res in run_job(tmp_path, "loop", 2):
        assert res["ok"], res


def test_a_failing_rank_is_an_error_on_the_others_not_a_hang(tmp_path):
    rank0, rank1 = run_job(tmp_path, "fail", 2, timeout_s=4)
    # Its w2 share of 9 rows gives F = 18 against w1's F = 16 (2 ranks x 8).
    assert rank1["error"].startswith("TF_ERR_INVALID_ARGUMENT"), rank1
    assert "this rank's shares do not bind the signature" in rank1["error"], rank1
    assert "argument #2 (w2): axis 0 is 18, but DimVar F = 16" in rank1["error"], rank1
    # Rank 0 waited in the first collective (the ranks' agreement check) that
    # its peer never joined: Gloo's timeout reached it as the kernel's error.
    assert rank0["error"].startswith("TF_ERR_RUNTIME"), rank0
    assert "the communicator's all_gather failed" in rank0["error"], rank0
    assert rank0["seconds"] < 30, rank0


def test_ranks_that_call_different_kernels_fail_together(tmp_path):
    for r, res in enumerate(run_job(tmp_path, "mismatch", 2)):
        assert "TF_ERR_INVALID_ARGUMENT" in res["error"] and "do not make the same call" in res["error"], (r, res)
        assert res["seconds"] < 30, res


def test_dtensors_in_and_out(tmp_path):
    pytest.importorskip("torch.distributed.tensor", reason="DTensor needs torch >= 2.4")
    from torch.distributed.tensor import DTensor  # noqa: F401
    for res in run_job(tmp_path, "dtensor", 2):
        assert res["ok"], res
        assert res["vs_dtensor"] < 1e-4 and res["vs_plain"] < 1e-4, res
        assert res["partial_placement"] in ("P(sum)", "Partial(sum)"), res
        assert "argument #0 (x) on mesh axis 0 ('tp'): the kernel declares Broadcast()" in res["errors"][0]
        assert "is a DTensor, but the kernel has no device mesh" in res["errors"][1]
        assert "argument #1 (w1) is a plain tensor among DTensors" in res["errors"][2]


def test_a_tensor_subclass_without_data_is_refused_by_name():
    import tilefoundry as tf
    k = tf.load("from tilefoundry.dsl import *\n@func\ndef f(x: Tensor[(4,), f32]) -> Tensor[(4,), f32]:\n"
                "    return x * 2.0\n").compile("f")

    class Wrapper(torch.Tensor):  # a subclass whose data TileFoundry cannot read
        @staticmethod
        def __new__(cls, size):
            return torch.Tensor._make_wrapper_subclass(cls, size)

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            raise RuntimeError(f"Wrapper does not compute ({func})")
    with pytest.raises(TypeError, match=r"argument #0 \(x\) is a Wrapper, a tensor subclass without data"):
        k(Wrapper((4,)))


def test_the_bench_runs_the_tensor_parallel_block():
    pytest.importorskip("torch.distributed.tensor", reason="DTensor needs torch >= 2.4")
    bench = Path(__file__).resolve().parents[2] / "bench" / "tp_mlp.py"
    r = subprocess.run([sys.executable, str(bench), "--quick"], env=subprocess_env(), capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-4000:]
    rows = json.loads(r.stdout.strip().splitlines()[-1])["rows"]
    for row in rows.values():
        # One all-reduce of [B, D], and the 8-byte fingerprint of the ranks' agreement check.
        assert row["tf_bytes"] == row["min_bytes"] + 8, row
        assert row["max_diff"] < 1e-4 and row["dtensor_collectives"] >= 1, row
        # check_calls=False: the all-reduce alone.
        assert row["tf_trusted_bytes"] == row["min_bytes"], row
