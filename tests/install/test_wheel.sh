#!/usr/bin/env bash
# The pip path, as a user takes it: `pip install --no-build-isolation` from the
# clone into the given Python's environment (a venv), then, from a scratch
# directory and with no TileFoundry variables set:
#   * the precompiled kernel prelude is installed beside the library;
#   * a kernel runs on numpy arrays and, when torch is installed, through
#     torch.ops.tilefoundry (compared with eager torch);
#   * a C program built with find_package(TileFoundry) from the installed
#     package runs a kernel through the C ABI;
#   * the Python suite runs against the installed package (TF_TEST_INSTALLED=1).
# Usage: test_wheel.sh <python of the venv> <source dir> <wheel build dir>
set -euo pipefail
py=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")  # absolute, links kept: a venv's python is one
src=$(cd "$2" && pwd)
wheel_build=$(mkdir -p "$3" && cd "$3" && pwd)
unset PYTHONPATH TILEFOUNDRY_LIB_DIR

# The build backend and the test tools; the venv's pip uses the machine's
# index configuration. A --system-site-packages venv over Debian's Python
# already has pytest and numpy.
"$py" -m pip install -q 'scikit-build-core>=0.10' pytest numpy
"$py" -m pip install -q --no-build-isolation --config-settings=build-dir="$wheel_build" "$src"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"

"$py" - "$src" <<'PY'
import sys
from pathlib import Path

import numpy as np
import tilefoundry as tf

src = Path(sys.argv[1])
assert Path(tf.__file__).resolve().parent != src / "torch_ext" / "python" / "tilefoundry", \
    f"imported the clone's package, not the installed one: {tf.__file__}"
assert "torch" not in sys.modules
# The kernel prelude precompiled by the build, installed beside the library.
pch = list((Path(tf.__file__).parent / "lib" / "tilefoundry-pch").glob("pch-*.h.gch"))
assert len(pch) == 1, f"expected one precompiled prelude, found {pch}"
k = tf.load(str(src / "tests" / "python" / "kernels.py")).compile("rmsnorm")
x = np.random.default_rng(0).standard_normal((8, 96)).astype(np.float32)
w = np.full(96, 0.5, np.float32)
want = x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6) * w
assert np.abs(k(x, w) - want).max() < 1e-5
print(f"wheel: tilefoundry {tf.__version__} from {Path(tf.__file__).parent}, kernel on numpy OK "
      f"({k.backend})")
try:
    import torch
except ImportError:
    print("wheel: no torch in this environment: torch.ops not checked")
else:
    tf.register(k, "wheel_rmsnorm")
    xt, wt = torch.from_numpy(x), torch.from_numpy(w)
    got = torch.ops.tilefoundry.wheel_rmsnorm(xt, wt)
    ref = (xt * torch.rsqrt(xt.pow(2).mean(-1, keepdim=True) + 1e-6)) * wt
    torch.testing.assert_close(got, ref)
    print(f"wheel: torch.ops.tilefoundry.wheel_rmsnorm OK on torch {torch.__version__}")
PY

prefix=$("$py" -m tilefoundry --cmake-prefix-path)
cmake -S "$src/tests/install/consumer" -B "$tmp/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$tmp/consumer" >/dev/null
"$tmp/consumer/consumer"

TF_TEST_INSTALLED=1 "$py" -m pytest -q -p no:cacheprovider --rootdir "$src" "$src/tests/python"
