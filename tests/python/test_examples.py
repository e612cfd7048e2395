"""The Llama block example and the benchmark run end to end."""
import subprocess
import sys

from conftest import REPO, subprocess_env


def _run(*args):
    return subprocess.run([sys.executable, *args], cwd=REPO, env=subprocess_env(),
                          capture_output=True, text=True, timeout=120)


def test_llama_block_matches_eager():
    proc = _run("examples/python/llama_block.py")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "max abs error vs eager" in proc.stdout and "median time" in proc.stdout


def test_bench_prints_a_markdown_table():
    proc = _run("bench/bench.py", "--runs", "1")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = [line for line in proc.stdout.splitlines() if line.startswith("| ")]
    assert rows[0].startswith("| op | shape |")
    assert len(rows) == 1 + 4  # header + {rmsnorm, silu*mul} x {small, large}
