"""The Llama block example and the benchmark run end to end."""
import re
import subprocess
import sys

from conftest import REPO, require_native_compiler, subprocess_env


def _run(*args):
    return subprocess.run([sys.executable, *args], cwd=REPO, env=subprocess_env(),
                          capture_output=True, text=True, timeout=120)


def test_llama_block_matches_eager_on_native_code():
    require_native_compiler()  # the example compiles for the native backend
    proc = _run("examples/python/llama_block.py")
    assert proc.returncode == 0, proc.stdout + proc.stderr  # nonzero: error above tolerance
    assert "tilefoundry backend: native" in proc.stdout, proc.stdout
    assert "max abs error vs eager" in proc.stdout and "median time" in proc.stdout


def test_bench_prints_a_markdown_table():
    require_native_compiler()  # the table measures native kernels (checked below)
    proc = _run("bench/bench.py", "--quick", "--torch2-python=")  # no torch.compile: minutes
    assert proc.returncode == 0, proc.stdout + proc.stderr
    tables = {}  # first header cell -> (header cells, data rows as cell lists)
    for line in proc.stdout.splitlines():
        if not line.startswith("| "):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] in ("op", "matmul", "composition", "kv cache", "other op") and cells[1] == "shape":
            current = tables.setdefault(cells[0], (cells, []))
        else:
            current[1].append(cells)
    header, rows = tables["op"]
    for col in ("eager", "eager fresh", "tf", "tf .out", "x eager", "x eager fresh", "% triad tf",
                "% triad .out", "triad GB/s", "max err"):
        assert col in header, (col, header)
    measured = {r[0]: r for r in rows}
    assert set(measured) == {"rmsnorm", "residual+rmsnorm", "silu*mul", "gelu-tanh", "softmax", "layer_norm",
                             "RoPE rotate-half"}
    for op, r in measured.items():  # one tiny shape each: ratios are real numbers, results agree
        for col in ("x eager", "x eager fresh", "GB/s tf", "GB/s .out", "triad GB/s"):
            assert float(r[header.index(col)]) > 0, (op, col, r)
        assert float(r[header.index("max err")]) < 1e-4, (op, r)
    mm_header, mm_rows = tables["matmul"]
    assert len(mm_rows) == 1 and "tf / OpenBLAS" in mm_header
    assert float(mm_rows[0][mm_header.index("tf / OpenBLAS")]) > 0
    # hand-written compositions beside their built-ins, both native
    comp_header, comp_rows = tables["composition"]
    assert {r[0] for r in comp_rows} == {"rmsnorm f32", "rmsnorm bf16", "layer_norm f32", "softmax f32",
                                        "RoPE rotate-half f32"}
    for r in comp_rows:
        assert float(r[comp_header.index("composed / built-in")]) > 0, r
        bound = 0.1 if "bf16" in r[0] else 1e-4  # the built-in and the composition round differently
        assert float(r[comp_header.index("max diff")]) < bound, r
    # ops beyond the row kernels, each native and agreeing with eager
    other_header, other_rows = tables["other op"]
    assert {r[0] for r in other_rows} == {"transpose", "amax over rows", "sum over axis 0", "sum of a transpose",
                                          "sum of a scaled transpose", "mse loss", "row sums of squares",
                                          "sum of g * m over axis 0", "sum of all", "masked softmax", "softmax over axis 0",
                                          "softmax of a transpose", "tanh", "log", "gelu (erf)",
                                          "batched transpose bf16", "conv2d 3x3", "matmul bf16", "linear x @ w.T"}
    for r in other_rows:
        assert float(r[other_header.index("x eager")]) > 0, r
        bound = 0.1 if "bf16" in r[0] else 1e-4  # a sum of products rounded to bf16 once, eager's order or ours
        assert float(r[other_header.index("max diff")]) < bound, r
        assert r[other_header.index("backend")] == "native", r
    # one token appended in place, as index_copy_ does, with the same result
    kv_header, kv_rows = tables["kv cache"]
    assert len(kv_rows) == 1 and kv_rows[0][kv_header.index("exact")] == "True", kv_rows
    assert float(kv_rows[0][kv_header.index("tf / index_copy_")]) > 0
    assert "Per-call overhead" in proc.stdout
    # each row's % triad is against a triad measured beside it; the headings give their range
    assert re.search(r"STREAM triad [0-9.]+ GB/s at the start; [0-9.]+-[0-9.]+ beside the rows", proc.stdout)
    # the native backend was measured, not the evaluator
    assert "'softmax': 'native'" in proc.stdout and "'layer_norm': 'native'" in proc.stdout


def test_bench_only_runs_the_named_ops():
    require_native_compiler()
    proc = _run("bench/bench.py", "--quick", "--torch2-python=", "--only", "softmax")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = [[c.strip() for c in line.split("|")[1:3]] for line in proc.stdout.splitlines()
            if line.startswith("| ") and "|---" not in line]
    ops = {op for op, second in rows if second != "shape"}  # data rows, not the tables' headers
    assert "softmax" in ops and not ops & {"rmsnorm", "matmul", "kv append", "rmsnorm f32"}, ops
    bad = _run("bench/bench.py", "--quick", "--torch2-python=", "--only", "sofmax")
    assert bad.returncode != 0 and "unknown op(s) ['sofmax']" in bad.stderr, bad.stderr


def test_bench_takes_each_rows_pair_from_one_run():
    sys.path.insert(0, str(REPO / "bench"))
    import bench
    row = lambda eager, tf, triad: {"eager": eager, "tf": tf, "tf_out": tf + 1, "triad": triad}  # noqa: E731
    runs = [{"triad_gbs": 40.0, "ops": {"a": row(5.0, 2.0, 90.0), "b": row(3.0, 4.0, 45.0)},
             "compositions": {"c": {"composed": 1.0, "builtin": 3.0}},
             "overhead_tf_us": 2.0, "overhead_add_us": 1.0, "overhead_ops_add_us": 3.0},
            {"triad_gbs": 80.0, "ops": {"a": row(4.0, 3.5, 45.0), "b": row(6.0, 1.0, 97.0)},
             "compositions": {"c": {"composed": 1.5, "builtin": 1.0}}}]  # a rows-only run
    got = bench.merge_child(runs)
    # eager, tf, .out and triad together from the run where eager + tf took least:
    # neither side's fastest run alone (a: eager 4.0, tf 2.0 in different runs)
    assert got["ops"]["a"] == {"eager": 5.0, "tf": 2.0, "tf_out": 3.0, "triad": 90.0}
    assert got["ops"]["b"] == {"eager": 3.0, "tf": 4.0, "tf_out": 5.0, "triad": 45.0}
    assert got["compositions"]["c"] == {"composed": 1.5, "builtin": 1.0}  # a pair stays a pair
    assert got["overhead_tf_us"] == 2.0  # from the run that measured it
    assert got["triad_gbs"] == 40.0  # the heading's start triad: the first run's
    # rows of eager alone (eager fresh): each the fastest of the runs
    alone = bench.merge_child([{"ops": {"a": {"eager": 3.0, "bytes": 8}}}, {"ops": {"a": {"eager": 2.0, "bytes": 8}}}])
    assert alone["ops"]["a"] == {"eager": 2.0, "bytes": 8}
    ind = bench.merge_inductor([{"ops": {"a": {"inductor": 2.0, "mm": 5.0}}},
                                {"ops": {"a": {"inductor": 3.0, "mm": 4.0}}}])
    assert ind["ops"]["a"] == {"inductor": 2.0, "mm": 4.0}
