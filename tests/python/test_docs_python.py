"""docs/python.md: every ```python block runs, in order, as one script in a
fresh process (its torch op names would clash with other tests' otherwise)
and in a scratch directory (the examples write kernel files)."""
import os
import re
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "python.md"


def python_blocks(text):
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_the_page_has_examples_for_every_section():
    text = DOC.read_text()
    blocks = python_blocks(text)
    assert len(blocks) >= 6
    for name in ("tf.load", "Kernel", "tf.register", "replace=True", "@tf.func", "memory_stats",
                 "TF_DUMP_DIR", "TF_CACHE_DIR", "TF_CC", "TF_HUGE_PAGES", "TileFoundryError"):
        assert name in text, name


def test_every_example_runs(tmp_path):
    script = tmp_path / "doc_examples.py"
    script.write_text("\n".join(python_blocks(DOC.read_text())))
    # The package this test imports, found from the scratch directory too
    # (a relative PYTHONPATH would not be).
    import tilefoundry
    env = dict(os.environ)
    paths = [str(Path(tilefoundry.__file__).resolve().parents[1])]
    paths += [os.path.abspath(p) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    if "TILEFOUNDRY_LIB_DIR" in env:
        env["TILEFOUNDRY_LIB_DIR"] = os.path.abspath(env["TILEFOUNDRY_LIB_DIR"])
    r = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr


OPS_DOC = DOC.parent / "ops.md"


def test_the_op_catalog_module_compiles():
    """docs/ops.md ends with every example of the page as one module: it
    parses, type-checks, and each function compiles natively."""
    import tilefoundry as tf
    blocks = python_blocks(OPS_DOC.read_text())
    assert len(blocks) == 1
    m = tf.load(blocks[0])
    assert len(m.functions) >= 14
    for name in m.functions:
        k = m.compile(name)
        assert k.num_outputs >= 1, name
        # Every op of the catalog has a native lowering: none of the examples
        # may quietly fall back to the evaluator.
        assert k.backend == "native", name
